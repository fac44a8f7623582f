package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/verdict"
)

// WriteText prints the end table with aligned columns.
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
// every cell marked), then the Checks block and the Summary.
func WriteFindings(w io.Writer, f Findings) {
	if h := verdict.Headline(f.Checks); h != "" {
		fmt.Fprintln(w, h)
		fmt.Fprintln(w)
	}
	rows := bestRows(f)
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\tcall\n", strings.Join(f.Table.Libs, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r.Cells))
		for i, c := range r.Cells {
			cells[i] = c.Text
			switch {
			case c.Star:
				cells[i] = "★ " + c.Text
			case c.Mark != "" && c.Mark != "=":
				cells[i] = c.Text + " (" + c.Mark + ")"
			case c.Mark == "=":
				cells[i] = c.Text + " (=)"
			}
		}
		call := r.Call
		if strings.HasPrefix(call, "★ ") {
			call = "★"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, strings.Join(cells, "\t"), call)
	}
	tw.Flush()
	for line := range strings.Lines(table.String()) { // a row without a call ends in the padding of its last cell
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
	writeChecks(w, f.Checks)
	writeSummary(w, f)
}

// writeChecks prints the Checks block: one line per check, ✓ ✗ or -
// (not checked), with what failed or why nothing was checked.
func writeChecks(w io.Writer, cs []verdict.Item) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nChecks")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range cs {
		text := c.Note
		if c.State == verdict.Fail {
			text = strings.Join(c.Failed, "; ")
		}
		fmt.Fprintf(tw, "  %s %s\t%s\n", c.State, c.Name, text)
	}
	tw.Flush()
}

// writeSummary prints the Summary: a line per dimension.
func writeSummary(w io.Writer, f Findings) {
	lines := summaryLines(f)
	if len(lines) == 0 {
		return
	}
	head := "Summary (paired over the window's seconds, or by fault; 95 % intervals; ★ only when called against every other column)"
	if f.Baseline != "" {
		head = "Summary (against " + f.Baseline + ", Holm's correction over the columns; see the marks in the table)"
	}
	fmt.Fprintln(w, "\n"+head)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintf(tw, "  %s\t%s\n", l.K, l.V)
	}
	tw.Flush()
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
