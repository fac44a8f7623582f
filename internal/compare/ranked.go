package compare

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/stats"
	"github.com/wssoak/wssoak/internal/terminal"
)

// RunsAreUnit is the fewest runs a side from which runs, not the batches
// within them, are what the comparison tests.
const RunsAreUnit = 3

// WriteHeader prints the runs of each side, one line each.
func WriteHeader(w io.Writer, as, bs []Side) {
	for _, s := range []struct {
		name  string
		sides []Side
	}{{"A", as}, {"B", bs}} {
		for i, side := range s.sides {
			name := s.name
			if len(s.sides) > 1 {
				name += fmt.Sprint(i + 1)
			}
			r := side.Run
			terminal.Println(w, fmt.Sprintf("%s: %s  (run %s, %s, %s, %s)", name, side.Path, r.ID, r.Target, r.Planned, r.Status))
		}
	}
}

// WriteRanked prints, for every ranked measure and column, B − A and
// whether the two sides differ (Mann–Whitney, benchmath, at 5 %): "=" when
// they do not. With fewer than RunsAreUnit runs a side it tests the
// batch means (or values per fault) within the runs, pooled per side,
// which shows only the noise within a run; with RunsAreUnit or more it
// tests the runs' levels, one a run. Nothing is printed, and false
// returned, when no ranked measure has a value on both sides.
func WriteRanked(w io.Writer, as, bs []Side) bool {
	runs := len(as) >= RunsAreUnit && len(bs) >= RunsAreUnit
	cols := columns(as, bs)
	type row struct {
		name  string
		cells []string
	}
	var rows []row
	few := false
	for _, m := range measure.Catalogue {
		if m.Rank.Kind != measure.Ranked {
			continue
		}
		cells := make([]string, len(cols))
		measured := false
		for j, col := range cols {
			xa, xb := values(as, m, col, runs), values(bs, m, col, runs)
			if len(xa) == 0 || len(xb) == 0 {
				cells[j] = measure.NotMeasured
				continue
			}
			measured = true
			few = few || max(len(xa), len(xb)) < 4
			sig, p := measure.Significant(xa, xb)
			d := stats.Median(xb) - stats.Median(xa)
			if !sig {
				cells[j] = fmt.Sprintf("= (p %.2f)", p)
				continue
			}
			cells[j] = fmt.Sprintf("%s (p %.3f)", ranking.Signed(d, m.Unit), p)
		}
		if measured {
			rows = append(rows, row{m.Rank.Name, cells})
		}
	}
	if len(rows) == 0 {
		return false
	}
	// As many columns a part as fit the width: all of them, most often.
	render := func(from, to int) string {
		var table strings.Builder
		tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "B against A\t%s\n", strings.Join(cols[from:to], "\t"))
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\n", r.name, strings.Join(r.cells[from:to], "\t"))
		}
		tw.Flush()
		return table.String()
	}
	var parts []string
	for from := 0; from < len(cols); {
		to := len(cols)
		for ; to > from+1 && widest(render(from, to)) > terminal.Width; to-- {
		}
		parts = append(parts, render(from, to))
		from = to
	}
	// The basis of the test on a line of its own, short enough not to be
	// folded.
	basis := []string{"tested on the batch means within each run, pooled per side: within-run noise only",
		"(two runs of one profile differ by more; give " + fmt.Sprint(RunsAreUnit) + " or more runs a side, A1 A2 A3 -- B1 B2 B3, to test the runs)"}
	if runs {
		basis = []string{"tested on each run's level, one a run: the runs are the unit"}
	}
	fmt.Fprintln(w, "\nRanked measures, B − A (medians; Mann–Whitney at 5 %; = not significant):")
	for _, l := range basis {
		terminal.Println(w, l)
	}
	for i, p := range parts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		terminal.Trimmed(w, p)
	}
	if few {
		terminal.Println(w, "note: with fewer than 4 values a side the test cannot reach 5 %: such cells are = whatever the values")
	}
	return true
}

// widest is the columns of the widest line of s, its trailing spaces left out.
func widest(s string) int {
	n := 0
	for line := range strings.Lines(s) {
		n = max(n, terminal.Columns(strings.TrimRight(line, " \n")))
	}
	return n
}

// SetWarnings are Warnings of every run of either side against the first
// run of A (A1, or A), each said once, the runs named as WriteHeader names
// them.
func SetWarnings(as, bs []Side) []string {
	if len(as) == 0 {
		return nil
	}
	first := "A"
	if len(as) > 1 {
		first = "A1"
	}
	var out []string
	for _, s := range []struct {
		name  string
		sides []Side
	}{{"A", as}, {"B", bs}} {
		for i, side := range s.sides {
			if s.name == "A" && i == 0 {
				continue
			}
			name := s.name
			if len(s.sides) > 1 {
				name += fmt.Sprint(i + 1)
			}
			for _, warn := range warnings(as[0], side, first, name) {
				if !slices.Contains(out, warn) {
					out = append(out, warn)
				}
			}
		}
	}
	return out
}

// columns are the columns of either side, A's first, in their order.
func columns(as, bs []Side) []string {
	var out []string
	for _, s := range append(slices.Clone(as), bs...) {
		if s.Ranking == nil {
			continue
		}
		for _, c := range s.Ranking.Cols {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// values are what the side offers of measure m for column col: each run's
// level (runs), or the samples within its runs, pooled.
func values(sides []Side, m *measure.Measure, col string, runs bool) []float64 {
	var out []float64
	for _, s := range sides {
		if s.Ranking == nil {
			continue
		}
		i := s.Ranking.Col(col)
		st := s.Ranking.Stat(m.ID)
		if i < 0 || st == nil {
			continue
		}
		if runs {
			if v := st.Levels[i].Value; !math.IsNaN(v) {
				out = append(out, v)
			}
			continue
		}
		if per := s.Samples[m.ID]; i < len(per) {
			out = append(out, per[i]...)
		}
	}
	return out
}
