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
// runs aggregated, one aggregation per side of the bench it holds (client
// runs, the server bench's runs).
type BenchSide struct {
	Path string // what the user named
	Run  store.Run
	Aggs []*measure.Agg
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
	cs, err := db.ChatResults()
	if err != nil {
		return BenchSide{}, err
	}
	side := BenchSide{Path: path, Run: run}
	if len(rs) > 0 {
		side.Aggs = append(side.Aggs, measure.AggregateBench(rs))
	}
	if len(cs) > 0 {
		side.Aggs = append(side.Aggs, measure.AggregateChat(cs))
	}
	return side, nil
}

// agg is the side's aggregation of set, nil when it has no such runs.
func (s BenchSide) agg(set *measure.BenchSet) *measure.Agg {
	for _, a := range s.Aggs {
		if a.Set == set {
			return a
		}
	}
	return nil
}

// WriteBench prints two benches' cells side by side: per row, path and
// library (A's order, then cells only in B), the medians of the rate and
// the CPU its side leads with (measure.BenchSet) with (B − A) / |A| in %;
// "-" where a side has no counted run. A table per side of bench the two
// hold.
func WriteBench(w io.Writer, a, b BenchSide) {
	for _, s := range []struct {
		name string
		side BenchSide
	}{{"A", a}, {"B", b}} {
		r := s.side.Run
		fmt.Fprintf(w, "%s: %s  (bench %s, %s)\n", s.name, s.side.Path, r.ID, r.Status)
	}
	for _, set := range []*measure.BenchSet{measure.ClientBench, measure.ServerBench} {
		if x, y := a.agg(set), b.agg(set); x != nil || y != nil {
			fmt.Fprintln(w)
			writeBenchTable(w, set, x, y)
		}
	}
	fmt.Fprintln(w, "\nmedians over the counted runs (valid, after the warm-up); - : no counted run.")
}

// writeBenchTable is WriteBench's table of one side of bench; x or y is
// nil when that bench has no runs of it.
func writeBenchTable(w io.Writer, set *measure.BenchSet, x, y *measure.Agg) {
	type pair struct{ a, b *measure.BenchCell }
	var pairs []pair
	seen := map[measure.Dims]bool{}
	paths := false
	for _, g := range []*measure.Agg{x, y} {
		if g == nil {
			continue
		}
		for _, c := range g.Cells {
			paths = paths || c.Path != ""
			if seen[c.Dims] {
				continue
			}
			seen[c.Dims] = true
			p := pair{c, nil}
			if g == y {
				p = pair{nil, c}
			} else if y != nil {
				p.b = y.Cell(c.Dims)
			}
			pairs = append(pairs, p)
		}
	}
	var table strings.Builder
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	head := []string{"scenario"}
	if paths {
		head = append(head, "path")
	}
	head = append(head, "lib")
	ids := []string{set.Rate, set.CPU}
	for _, id := range ids {
		t := measure.BenchByID(id).Title
		head = append(head, "A "+t, "B "+t, "Δ %")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, p := range pairs {
		d := p.a
		if d == nil {
			d = p.b
		}
		row := []string{d.Row()}
		if paths {
			row = append(row, d.Path)
		}
		row = append(row, d.Lib)
		for _, id := range ids {
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
}

// median is the cell's median of measure id, NaN without a counted run.
func median(c *measure.BenchCell, id string) float64 {
	if c == nil || c.Runs == 0 {
		return math.NaN()
	}
	return c.Stat(id).Median
}

// benchNum formats a median: rates as integers with separators, CPU µs with
// three decimals.
func benchNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return unit.NotMeasured
	case v >= 100:
		return unit.Num(v)
	}
	return fmt.Sprintf("%.3f", v)
}
