package measure

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShortForms are a cell's shorter texts, for a table that must fit a
// terminal, the most telling first: the table takes the first that fits
// its columns, with the full text in a note under it. A measure may say
// what they are (its short); the rule for the others:
//   - a check's ✓ or ✗ alone; a comparison not made "unchecked";
//   - else what precedes the first " (" or "; " (where, why, how), then
//     the same step by step narrower: the spaces around "/" and "→" left
//     out, then those between a number and its unit, then a unit said
//     twice said once ("240ms/332ms" → "240/332ms"), then the thousands
//     separators.
//
// The text of an unknown measure (id "") follows the rule too.
func ShortForms(id, text string) []string {
	if text == NotMeasured {
		return []string{text}
	}
	if m := ByID(id); m != nil && m.short != nil {
		return m.short(text)
	}
	return shortForms(text)
}

func shortForms(text string) []string {
	switch {
	case strings.HasPrefix(text, "✓"):
		return []string{"✓"}
	case strings.HasPrefix(text, "✗"):
		return []string{"✗"}
	case strings.HasPrefix(text, "not compared"):
		return []string{"unchecked"}
	}
	return narrower(cut(text))
}

// cut is text before its first " (" or "; ".
func cut(text string) string {
	for _, sep := range []string{" (", "; "} {
		if i := strings.Index(text, sep); i > 0 {
			text = text[:i]
		}
	}
	return text
}

// narrower is text, then each step of the rule that changes it.
func narrower(text string) []string {
	out := []string{text}
	for _, step := range []func(string) string{
		strings.NewReplacer(" / ", "/", " → ", "→").Replace,
		unitsJoined,
		unitOnce,
		func(s string) string { return strings.ReplaceAll(s, ",", "") },
	} {
		if next := step(out[len(out)-1]); next != out[len(out)-1] {
			out = append(out, next)
		}
	}
	return out
}

// unitsJoined leaves out the space between a number and its unit ("1.2 s"
// → "1.2s").
func unitsJoined(s string) string {
	r := []rune(s)
	out := make([]rune, 0, len(r))
	for i, c := range r {
		if c == ' ' && i > 0 && i+1 < len(r) && unicode.IsDigit(r[i-1]) && unicode.IsLetter(r[i+1]) {
			continue
		}
		out = append(out, c)
	}
	return string(out)
}

// twoUnits is two numbers of one unit, as unitsJoined leaves them.
var twoUnits = regexp.MustCompile(`^([-+]?[\d.,]+)([a-zA-Zµ%]+)([/→])([-+]?[\d.,]+)([a-zA-Zµ%]+)$`)

// unitOnce says a unit shared by two numbers once, after the second.
func unitOnce(s string) string {
	m := twoUnits.FindStringSubmatch(s)
	if m == nil || m[2] != m[5] {
		return s
	}
	return m[1] + m[3] + m[4] + m[5]
}

// firstValue is the short form of a cell whose first value matters most:
// the text before " / " (the others are in the note).
func firstValue(text string) []string {
	v, _, _ := strings.Cut(cut(text), " / ")
	return narrower(v)
}

// withoutUnit is the short forms of a cell whose unit its short title
// names: the text, then without the unit.
func withoutUnit(unit string) func(string) []string {
	return func(text string) []string {
		return append(shortForms(text), strings.TrimSuffix(cut(text), " "+unit))
	}
}

// rssForms are an RSS start → end (peak) cell's: start → end, narrower
// and narrower, then the end alone.
func rssForms(text string) []string {
	out := narrower(cut(text))
	out = append(out, strings.TrimSuffix(out[len(out)-1], "MB"))
	if _, end, ok := strings.Cut(cut(text), " → "); ok {
		out = append(out, "→ "+strings.TrimSuffix(end, " MB"))
	}
	return slices.Compact(out)
}

// cpuForms are a CPU s sampled / rusage cell's: both, narrower, then the
// difference alone, what the check is about.
func cpuForms(text string) []string {
	out := narrower(cut(text))
	if _, d, ok := strings.Cut(text, " ("); ok {
		d, _, _ = strings.Cut(strings.TrimSuffix(d, ")"), ";")
		out = append(out, d)
	}
	return out
}

// ShortTitle is a row's name where the table must fit a terminal: its
// measure's Short, with what the run adds to the title (the connection
// groups) when that stays short, else as it is.
func ShortTitle(id, title string) string {
	m := ByID(id)
	if m == nil || m.Short == "" {
		return title
	}
	if m.label != nil && title != m.Title && !strings.HasPrefix(title, m.Title+" (") && utf8.RuneCountInString(title) <= shortTitleWidth {
		return title // the run's own wording of the row ("Client reconnects"), short already
	}
	if m.label != nil && strings.HasPrefix(title, m.Title+" (") {
		if s := m.Short + " (" + strings.ReplaceAll(strings.TrimPrefix(title, m.Title+" ("), " / ", "/"); utf8.RuneCountInString(s) <= shortTitleWidth {
			return s
		}
	}
	return m.Short
}

// shortTitleWidth is the widest a short title grows with what a run adds.
const shortTitleWidth = 26

// vals is a cell's values (Cell.Vals).
func vals(xs ...float64) []float64 { return xs }
