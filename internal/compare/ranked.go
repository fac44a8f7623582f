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
			fmt.Fprintf(w, "%s: %s  (run %s, %s, %s, %s)\n", name, side.Path, r.ID, r.Target, r.Planned, r.Status)
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
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "B against A\t%s\n", strings.Join(cols, "\t"))
	rows, few := 0, false
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
			rows++
			fmt.Fprintf(tw, "%s\t%s\n", m.Rank.Name, strings.Join(cells, "\t"))
		}
	}
	tw.Flush()
	if rows == 0 {
		return false
	}
	basis := "the batch means within each run, pooled per side: within-run noise only (two runs of one profile differ by more; give " +
		fmt.Sprint(RunsAreUnit) + " or more runs a side, A1 A2 A3 -- B1 B2 B3, to test the runs)"
	if runs {
		basis = "each run's level, one a run: the runs are the unit"
	}
	fmt.Fprintf(w, "\nRanked measures, B − A (medians; Mann–Whitney at 5 %% on %s; = not significant):\n", basis)
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(line, " \n"), strings.Repeat("\n", strings.Count(line, "\n")))
	}
	if few {
		fmt.Fprintln(w, "note: with fewer than 4 values a side the test cannot reach 5 %: such cells are = whatever the values")
	}
	return true
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
