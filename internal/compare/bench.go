package compare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
)

// BenchSide is one bench (soak bench) of a comparison: its record and its
// cells.
type BenchSide struct {
	Path  string // what the user named
	Run   store.Run
	Cells []*measure.BenchCell
}

// LoadBench reads a bench's record and results.
func LoadBench(db *store.DB, path string) (BenchSide, error) {
	run, err := db.Run()
	if err != nil {
		return BenchSide{}, err
	}
	rs, err := db.BenchResults()
	if err != nil {
		return BenchSide{}, err
	}
	return BenchSide{Path: path, Run: run, Cells: measure.BenchCells(rs)}, nil
}

// benchCompared are the measures WriteBench puts side by side.
var benchCompared = []string{"bench_msg_rate", "bench_cpu_per_msg"}

// WriteBench prints two benches' cells side by side: per scenario, path and
// library (A's order, then cells only in B), the median msgs/s and CPU
// µs/msg of each with (B − A) / |A| in %; "-" where a side has no counted
// run.
func WriteBench(w io.Writer, a, b BenchSide) {
	for _, s := range []struct {
		name string
		side BenchSide
	}{{"A", a}, {"B", b}} {
		r := s.side.Run
		fmt.Fprintf(w, "%s: %s  (bench %s, %s)\n", s.name, s.side.Path, r.ID, r.Status)
	}
	fmt.Fprintln(w)
	bm := map[measure.Dims]*measure.BenchCell{}
	for _, c := range b.Cells {
		bm[c.Dims] = c
	}
	type pair struct{ a, b *measure.BenchCell }
	var pairs []pair
	seen := map[measure.Dims]bool{}
	for _, c := range a.Cells {
		pairs = append(pairs, pair{c, bm[c.Dims]})
		seen[c.Dims] = true
	}
	for _, c := range b.Cells {
		if !seen[c.Dims] {
			pairs = append(pairs, pair{nil, c})
		}
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	head := []string{"scenario", "path", "lib"}
	for _, id := range benchCompared {
		t := measure.BenchByID(id).Title
		head = append(head, "A "+t, "B "+t, "Δ %")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range pairs {
		d := p.a
		if d == nil {
			d = p.b
		}
		row := []string{d.Scenario, d.Path, d.Lib}
		for _, id := range benchCompared {
			av, bv := median(p.a, id), median(p.b, id)
			pct := "-"
			if !math.IsNaN(av) && !math.IsNaN(bv) && av != 0 {
				pct = fmt.Sprintf("%+.1f %%", 100*(bv-av)/math.Abs(av))
			}
			row = append(row, benchNum(av), benchNum(bv), pct)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(table.String(), "\n") {
		fmt.Fprint(w, strings.TrimRight(line, " \n"), strings.Repeat("\n", strings.Count(line, "\n")))
	}
	fmt.Fprintln(w, "\nmedians over the counted runs (valid, after the warm-up); - : no counted run.")
}

// median is the cell's median of measure id, NaN without a counted run.
func median(c *measure.BenchCell, id string) float64 {
	if c == nil || c.Runs == 0 {
		return math.NaN()
	}
	return c.Values[id].Median
}

// benchNum formats a median: rates as integers with separators, CPU µs with
// three decimals.
func benchNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v >= 100:
		return unit.Num(v)
	}
	return fmt.Sprintf("%.3f", v)
}
