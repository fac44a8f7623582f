package measure

import (
	"math"
	"slices"

	"github.com/wssoak/wssoak/internal/store"
	"golang.org/x/perf/benchmath"
)

// Sample is one run of a bench as the aggregation reads it: its column,
// its round, whether it passed the truth check, and the value of every
// measure of its side's set (NaN: not measured in this run).
type Sample struct {
	Dims
	Round int // 0: the warm-up, not counted
	Valid bool
	// Extensions is what the server answered to the compression a client
	// asked for ("" for the server bench).
	Extensions string
	set        *BenchSet
	values     []float64 // by position in set.Measures
}

// Value is the sample's value of measure id, NaN when its set has no such
// measure.
func (s *Sample) Value(id string) float64 {
	if i := s.set.index(id); i >= 0 {
		return s.values[i]
	}
	return nan
}

// Counted reports whether the sample counts: a valid run after the warm-up.
func (s *Sample) Counted() bool { return s.Round >= 1 && s.Valid }

// Stat is the median, min and max of a cell's counted values of a measure
// over N runs (NaN when N is 0).
type Stat struct {
	N                int
	Median, Min, Max float64
}

// StatOf summarizes xs, leaving out NaN (not measured).
func StatOf(xs []float64) Stat {
	s := slices.Sorted(slices.Values(slices.DeleteFunc(slices.Clone(xs), math.IsNaN)))
	if len(s) == 0 {
		return Stat{Median: nan, Min: nan, Max: nan}
	}
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{N: len(s), Median: m, Min: s[0], Max: s[len(s)-1]}
}

// BenchCell is one column of bench results: its counted runs (round ≥ 1),
// Runs of them valid and Invalid not, and per measure the valid runs'
// values, each with its round, for their Stat, pairing (Paired) and
// significance (Versus).
type BenchCell struct {
	Dims
	Runs, Invalid int
	// Extensions is the last valid counted run's Sample.Extensions.
	Extensions string
	set        *BenchSet
	rounds     []int       // the round of each valid counted run, in run order
	values     [][]float64 // by measure, then as rounds
	stats      []Stat      // by measure
}

// Stat is the summary of measure id over the cell's valid counted runs.
func (c *BenchCell) Stat(id string) Stat {
	if i := c.set.index(id); i >= 0 {
		return c.stats[i]
	}
	return StatOf(nil)
}

// Values are the measured values of id over the valid counted runs, in
// the order they ran.
func (c *BenchCell) Values(id string) []float64 {
	i := c.set.index(id)
	if i < 0 {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(c.values[i]), math.IsNaN)
}

// Agg is a bench's results summarized, the one aggregation every renderer
// shows (the bench's text tables, the bench page, export, compare, the Go
// benchmark lines): a cell per Dims, whatever dimensions the results have.
type Agg struct {
	Set     *BenchSet
	Samples []Sample     // every run, in the order they ran
	Cells   []*BenchCell // the cells with a counted run, in the order their first run ran (warm-up included)
	byDims  map[Dims]*BenchCell
}

// Aggregate groups the samples of a side's set by cell: the warm-up is
// left out, invalid runs are counted apart, and the valid ones' values are
// summarized per measure.
func Aggregate(set *BenchSet, ss []Sample) *Agg {
	a := &Agg{Set: set, Samples: ss, byDims: map[Dims]*BenchCell{}}
	var order []Dims
	seen := map[Dims]bool{}
	for i := range ss {
		s := &ss[i]
		if !seen[s.Dims] {
			seen[s.Dims] = true
			order = append(order, s.Dims)
		}
		if s.Round < 1 {
			continue
		}
		c := a.byDims[s.Dims]
		if c == nil {
			c = &BenchCell{Dims: s.Dims, set: set, values: make([][]float64, len(set.Measures))}
			a.byDims[s.Dims] = c
		}
		if !s.Valid {
			c.Invalid++
			continue
		}
		c.Runs++
		c.Extensions = s.Extensions
		c.rounds = append(c.rounds, s.Round)
		for j := range set.Measures {
			c.values[j] = append(c.values[j], s.values[j])
		}
	}
	for _, d := range order {
		c := a.byDims[d]
		if c == nil {
			continue // a warm-up only
		}
		c.stats = make([]Stat, len(set.Measures))
		for j := range set.Measures {
			c.stats[j] = StatOf(c.values[j])
		}
		a.Cells = append(a.Cells, c)
	}
	return a
}

// AggregateBench aggregates a client bench's stored runs.
func AggregateBench(rs []store.BenchResult) *Agg { return Aggregate(ClientBench, BenchSamples(rs)) }

// AggregateChat aggregates a server bench's stored runs.
func AggregateChat(rs []store.ChatResult) *Agg { return Aggregate(ServerBench, ChatSamples(rs)) }

// Cell returns the cell of d, nil when it has no counted run.
func (a *Agg) Cell(d Dims) *BenchCell { return a.byDims[d] }

// Paired is measure id of cell x minus that of cell y, run by run where
// both ran in the same round (one after the other, on the machine as it
// was then): the Stat of the rounds' differences, and whether x and y
// differ significantly (Versus) with the p-value. N is 0 when no round has
// both.
func Paired(x, y *BenchCell, id string) (Stat, bool, float64) {
	if x == nil || y == nil {
		return StatOf(nil), false, 1
	}
	i := x.set.index(id)
	if i < 0 {
		return StatOf(nil), false, 1
	}
	var diffs []float64
	for k, round := range x.rounds {
		if j := slices.Index(y.rounds, round); j >= 0 {
			diffs = append(diffs, x.values[i][k]-y.values[i][j])
		}
	}
	d := StatOf(diffs)
	if d.N == 0 {
		return d, false, 1
	}
	sig, p := Versus(x, y, id)
	return d, sig, p
}

// Versus reports whether the values of measure id in cells x and y differ
// significantly (Significant), with the p-value.
func Versus(x, y *BenchCell, id string) (bool, float64) {
	return Significant(x.Values(id), y.Values(id))
}

// Significant reports whether samples a and b differ (Mann-Whitney U test
// of benchmath, as benchstat does, at alpha 0.05), with the p-value.
func Significant(a, b []float64) (bool, float64) {
	th := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &th), benchmath.NewSample(slices.Clone(b), &th))
	return c.P < c.Alpha, c.P
}
