package measure

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ShortWidth is the most columns a short cell takes (ShortCell): what
// seven columns of the end table leave each in 120.
const ShortWidth = 10

// ShortCell is a cell's text in a few columns, for a table that must fit a
// terminal: the value that matters with the rest left to a note (the full
// text, which the table prints under it). A measure may say how (its
// short); the rule for the others:
//   - a check's ✓ or ✗ alone; a comparison not made "unchecked";
//   - what follows the first " (" or "; " left out (where, why, how);
//   - then, while still wider than ShortWidth: the spaces around "/" and
//     "→" left out, then those between a number and its unit, then the
//     thousands separators.
//
// Text of one unknown measure (id "") follows the rule too. The result may
// still be wider than ShortWidth: the table cuts it.
func ShortCell(id, text string) string {
	if m := ByID(id); m != nil && m.short != nil {
		return m.short(text)
	}
	return shorten(text)
}

func shorten(text string) string {
	switch {
	case text == NotMeasured:
		return text
	case strings.HasPrefix(text, "✓"):
		return "✓"
	case strings.HasPrefix(text, "✗"):
		return "✗"
	case strings.HasPrefix(text, "not compared"):
		return "unchecked"
	}
	return compact(cut(text))
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

// compact makes text narrower, step by step, until it fits ShortWidth.
func compact(text string) string {
	steps := []func(string) string{
		func(s string) string {
			return strings.NewReplacer(" / ", "/", " → ", "→").Replace(s)
		},
		unitsJoined,
		func(s string) string { return strings.ReplaceAll(s, ",", "") },
	}
	for _, step := range steps {
		if utf8.RuneCountInString(text) <= ShortWidth {
			break
		}
		text = step(text)
	}
	return text
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

// firstValue is the short cell of a measure whose first value matters
// most: the text before " / " (the others are in the note).
func firstValue(text string) string {
	if text == NotMeasured {
		return text
	}
	v, _, _ := strings.Cut(cut(text), " / ")
	return compact(v)
}

// ShortTitle is a row's name where the table must fit a terminal: its
// measure's Short, with what the run adds to the title (the connection
// groups) when that stays short, else as it is.
func ShortTitle(id, title string) string {
	m := ByID(id)
	if m == nil || m.Short == "" {
		return title
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
