package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/terminal"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/verdict"
)

// TextWidth is the columns the text a run ends with fits: a terminal of
// 120 columns shows every line of it without wrapping.
const TextWidth = terminal.Width

// TextOptions say how the end table is printed.
type TextOptions struct {
	// Wide prints every cell in full, however wide the table grows (soak
	// run -wide); else the table fits TextWidth: short cells, the full ones
	// in numbered notes under it.
	Wide bool
}

// WriteText prints the end table with aligned columns, every cell in full.
func WriteText(w io.Writer, t *measure.EndTable) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\n", strings.Join(t.Libs, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, strings.Join(r.Cells, "\t"))
	}
	tw.Flush()
}

// WriteFindings prints what soak run prints when a run ends: a line naming
// every failed check (when one failed), the end table with a last column
// saying what each row is to the ranking — ★ and the leader, = (no call),
// ✓ ✗ - (a check) — the leader's cell starred (or, against a baseline,
// every cell marked), then the Checks block and the Summary. The table
// fits TextWidth (fitTable) unless o.Wide.
func WriteFindings(w io.Writer, f Findings, o TextOptions) {
	if h := verdict.Headline(f.Checks); h != "" {
		writeWrapped(w, h, "  ", !o.Wide)
		fmt.Fprintln(w)
	}
	rows := bestRows(f)
	if o.Wide {
		writeWide(w, f, rows)
	} else {
		writeFitted(w, f, rows)
	}
	writeChecks(w, f.Checks, !o.Wide)
	writeSummary(w, f, !o.Wide)
}

// writeWide prints the table with every cell in full.
func writeWide(w io.Writer, f Findings, rows []bestRow) {
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\tcall\n", strings.Join(f.Table.Libs, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			cells[i] = marked(c, c.Text, false)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, strings.Join(cells, "\t"), callOf(r.Call, false))
	}
	tw.Flush()
	terminal.Trimmed(w, table.String())
}

// marked is a cell's text with its mark: the leader's ★ before it, its
// mark against a baseline after it (in a word, or, short, a letter).
func marked(c bestCell, text string, short bool) string {
	switch {
	case c.Star:
		return "★ " + text
	case c.Mark == "":
		return text
	case short:
		return text + " (" + shortMarks[c.Mark] + ")"
	}
	return text + " (" + c.Mark + ")"
}

// shortMarks are the marks against a baseline in the fitted table.
var shortMarks = map[string]string{"better": "b", "worse": "w", "=": "=", "baseline": "base"}

// callOf is a row's call as the table's last column shows it: ★ (the
// leader is in its row), "vs" and the baseline, or, short, "vs" alone.
func callOf(call string, short bool) string {
	switch {
	case strings.HasPrefix(call, "★ "):
		return "★"
	case short && strings.HasPrefix(call, "vs "):
		return "vs"
	}
	return call
}

// minCell is the narrowest a column of the fitted table gets: with more
// columns than leave each that, the table is printed in parts.
const minCell = 8

// writeFitted prints the table within TextWidth: each row's short name
// (measure.ShortTitle); a row whose full cells fit the columns' width in
// full, the others short (measure.ShortCell), numbered, with their full
// cells in a note under the table; a column name wider than its column on
// two lines; and, when even the short cells leave too little room, the
// columns in parts of as many as fit, the names repeated.
func writeFitted(w io.Writer, f Findings, rows []bestRow) {
	t := f.Table
	names := make([]string, len(rows))
	calls := make([]string, len(rows))
	nameW, callW := 0, terminal.Columns("call")
	for i, r := range rows {
		names[i] = t.Rows[i].Short()
		calls[i] = callOf(r.Call, true)
		nameW = max(nameW, terminal.Columns(names[i]))
		callW = max(callW, terminal.Columns(calls[i]))
	}
	// The cells' width, with room for the notes' numbers after the names
	// ("[12]"): what is left of TextWidth for the columns, parted.
	perPart, cellW := len(t.Libs), 0
	for ; perPart > 1; perPart-- {
		if cellW = fitWidth(nameW+5, callW, perPart); cellW >= minCell {
			break
		}
	}
	if perPart <= 1 {
		perPart, cellW = 1, max(fitWidth(nameW+5, callW, 1), minCell)
	}
	// Which rows are short, and their notes.
	short := make([]bool, len(rows))
	var notes []string
	for i, r := range rows {
		for _, c := range r.Cells {
			if terminal.Columns(marked(c, c.Text, true)) > cellW {
				short[i] = true
			}
		}
		if short[i] {
			notes = append(notes, note(len(notes)+1, t.Rows[i].Name, t.Libs, r.Cells))
			names[i] += fmt.Sprintf(" [%d]", len(notes))
		}
	}
	for from := 0; from < len(t.Libs); from += perPart {
		to := min(from+perPart, len(t.Libs))
		if from > 0 {
			fmt.Fprintln(w)
		}
		var table strings.Builder
		tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		head := headLines(t.Libs[from:to], cellW)
		for k, h := range head {
			call := ""
			if k == len(head)-1 {
				call = "call"
			}
			fmt.Fprintf(tw, "\t%s\t%s\n", strings.Join(h, "\t"), call)
		}
		for i, r := range rows {
			var cells []string
			if short[i] {
				cells = shortCells(t.Rows[i], r, cellW)[from:to]
			} else {
				for _, c := range r.Cells[from:to] {
					cells = append(cells, marked(c, c.Text, true))
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", names[i], strings.Join(cells, "\t"), calls[i])
		}
		tw.Flush()
		terminal.Trimmed(w, table.String())
	}
	if f.Baseline != "" {
		fmt.Fprintf(w, "\nmarks against %s: (b) better, (w) worse, (=) no difference; vs: the row is marked so\n", f.Baseline)
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "\nNotes: the cells of the numbered rows in full (-wide prints them in the table)")
		for _, n := range notes {
			writeWrapped(w, n, "    ", true)
		}
	}
}

// shortCells are a row's cells in the first short form that fits cellW in
// every column (measure.ShortForms: one form for the whole row), marked;
// the last form, cut, when none does.
func shortCells(r measure.EndRow, br bestRow, cellW int) []string {
	forms := make([][]string, len(br.Cells))
	levels := 1
	for j := range br.Cells {
		forms[j] = r.ShortForms(j)
		levels = max(levels, len(forms[j]))
	}
	at := func(j, k int) string { return marked(br.Cells[j], forms[j][min(k, len(forms[j])-1)], true) }
	k := 0
	for ; k < levels-1; k++ {
		fits := true
		for j := range forms {
			fits = fits && terminal.Columns(at(j, k)) <= cellW
		}
		if fits {
			break
		}
	}
	out := make([]string, len(forms))
	for j := range forms {
		out[j] = terminal.Cut(at(j, k), cellW)
	}
	return out
}

// fitWidth is the width each of n columns gets within TextWidth beside a
// name column of nameW and a call column of callW, two spaces apart.
func fitWidth(nameW, callW, n int) int {
	return (TextWidth-nameW-2-callW)/n - 2
}

// headLines are the column names over one line, or over two where one is
// wider than cellW: cut after its last '-' or '_' that keeps the first part
// within it.
func headLines(libs []string, cellW int) [][]string {
	one := make([]string, len(libs))
	two := make([]string, len(libs))
	split := false
	for i, l := range libs {
		one[i] = l
		if terminal.Columns(l) <= cellW {
			continue
		}
		split = true
		at := strings.LastIndexAny(string([]rune(l)[:cellW]), "-_")
		if at <= 0 {
			one[i] = terminal.Cut(l, cellW)
			continue
		}
		one[i], two[i] = l[:at+1], terminal.Cut(l[at+1:], cellW)
	}
	if !split {
		return [][]string{one}
	}
	return [][]string{one, two}
}

// note is the note of row name: its cells in full, the columns of one
// text named together ("every column" when all share it).
func note(n int, name string, libs []string, cells []bestCell) string {
	var texts []string
	cols := map[string][]string{}
	for i, c := range cells {
		if !slices.Contains(texts, c.Text) {
			texts = append(texts, c.Text)
		}
		cols[c.Text] = append(cols[c.Text], libs[i])
	}
	var parts []string
	for _, text := range texts {
		who := strings.Join(cols[text], ", ")
		if len(texts) == 1 && len(libs) > 1 {
			who = "every column"
		}
		parts = append(parts, who+": "+text)
	}
	return fmt.Sprintf("[%d] %s — %s", n, name, strings.Join(parts, " · "))
}

// writeWrapped writes line, folded at TextWidth (when wrap) on spaces, the
// lines after the first indented by indent.
func writeWrapped(w io.Writer, line, indent string, wrap bool) {
	if !wrap {
		fmt.Fprintln(w, line)
		return
	}
	for _, l := range terminal.Fold(line, indent) {
		fmt.Fprintln(w, l)
	}
}

// writeChecks prints the Checks block: one line per check, ✓ ✗ or -
// (not checked), with what failed or why nothing was checked; wrapped to
// TextWidth under its text when wrap.
func writeChecks(w io.Writer, cs []verdict.Item, wrap bool) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nChecks")
	var kvs []kv
	for _, c := range cs {
		text := c.Note
		if c.State == verdict.Fail {
			text = strings.Join(c.Failed, "; ")
		}
		kvs = append(kvs, kv{fmt.Sprintf("%s %s", c.State, c.Name), text})
	}
	writeKV(w, kvs, wrap)
}

// writeKV prints key-value lines indented by two, the values aligned; a
// value wrapped (when wrap) continues under itself.
func writeKV(w io.Writer, kvs []kv, wrap bool) {
	keyW := 0
	for _, x := range kvs {
		keyW = max(keyW, terminal.Columns(x.K))
	}
	indent := strings.Repeat(" ", 2+keyW+2)
	for _, x := range kvs {
		line := "  " + x.K + strings.Repeat(" ", keyW-terminal.Columns(x.K)+2) + x.V
		writeWrapped(w, strings.TrimRight(line, " "), indent, wrap)
	}
}

// writeSummary prints the Summary: a line per dimension.
func writeSummary(w io.Writer, f Findings, wrap bool) {
	lines := summaryLines(f)
	if len(lines) == 0 {
		return
	}
	head := "Summary (paired over the window's seconds, or by fault; 95 % intervals; ★ only when called against every other column)"
	if f.Baseline != "" {
		head = "Summary (against " + f.Baseline + ", Holm's correction over the columns; see the marks in the table)"
	}
	fmt.Fprintln(w)
	writeWrapped(w, head, "  ", wrap)
	writeKV(w, lines, wrap)
}

// summaryLines are the summary's dimensions: the ranking's, then
// correctness from the checks.
func summaryLines(f Findings) []kv {
	var out []kv
	if f.Ranking != nil {
		lines := f.Ranking.Summary()
		if b := f.Ranking.Col(f.Baseline); f.Baseline != "" && b >= 0 {
			lines = f.Ranking.SummaryVersus(b)
		}
		for _, l := range lines {
			out = append(out, kv{string(l.Dim), l.Text})
		}
	}
	if len(out) > 0 || len(f.Checks) > 0 {
		out = append(out, kv{string(measure.DimCorrectness), verdict.Correctness(f.Checks)})
	}
	return out
}

// notMeasured is the cell of a value that was not measured.
const notMeasured = measure.NotMeasured

func num(f float64) string { return unit.Num(f) }

func dur(ms float64) string { return unit.Millis(ms) }
