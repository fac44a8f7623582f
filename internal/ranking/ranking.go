// Package ranking says which column of a run is better on each ranked
// measure of the catalogue, by how much and how sure: every column's level
// and every two columns' paired difference with its 95 % interval
// (internal/stats), computed once from the run's series (measure.Series)
// and stored with the run (store.RankRow). From those it calls a leader —
// a ★ only when its interval against every other column excludes 0 and the
// difference clears the measure's practical floor (intersection–union) —
// or marks every column better, worse or = against a baseline column with
// Holm's correction, and writes the summary's lines.
//
// A column is whatever the run compared: a library today, a variant of one
// tomorrow; nothing here depends on its name.
package ranking

import (
	"math"
	"slices"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/stats"
	"github.com/wssoak/wssoak/internal/store"
)

// Ranking is a run's ranked measures.
type Ranking struct {
	Cols  []string
	Stats []*Stat // in catalogue order
	// Window is the seconds the per-second statistics were taken over.
	Window int64
}

// Stat is one ranked measure of a run.
type Stat struct {
	Measure *measure.Measure
	Levels  []Level // per column: NaN when not measured
	pairs   map[[2]int]Pair
	cols    []string // the ranking's, for the reasons' wording
}

// Level is one column's value of a ranked measure: the mean of its
// seconds, its steady level, its growth rate or its mean per fault.
type Level struct {
	N     int // seconds, batches or faults it rests on
	Value float64
}

// Pair is column a's difference from column b on one measure, a − b in the
// measure's unit: the mean of the paired batch means' differences (or of
// the per-fault differences; for a growth rate the Theil–Sen slope of the
// differences), its 95 % interval and p-value.
type Pair struct {
	N            int // batches or faults
	Diff, Lo, Hi float64
	P            float64
	SD           float64 // spread of the paired differences (NaN when unknown)
	Span         float64 // seconds per batch; 0 for pairs by fault
	Note         string  // why the difference cannot be called ("" when it can)
}

// Callable says whether the pair has an interval to call a difference by.
func (p Pair) Callable() bool { return p.Note == "" && !math.IsNaN(p.Lo) && !math.IsNaN(p.Hi) }

// Excludes0 says whether the interval lies wholly on one side of 0.
func (p Pair) Excludes0() bool { return p.Callable() && (p.Lo > 0 || p.Hi < 0) }

// flip is the pair seen from b: b − a.
func (p Pair) flip() Pair {
	p.Diff, p.Lo, p.Hi = -p.Diff, -p.Hi, -p.Lo
	return p
}

// Pair returns column i's difference from column j (i − j).
func (s *Stat) Pair(i, j int) Pair {
	if p, ok := s.pairs[[2]int{i, j}]; ok {
		return p
	}
	if p, ok := s.pairs[[2]int{j, i}]; ok {
		return p.flip()
	}
	return Pair{Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), SD: math.NaN(), Note: "not measured"}
}

// Stat returns the ranked measure id, nil when the ranking has none.
func (r *Ranking) Stat(id string) *Stat {
	for _, s := range r.Stats {
		if s.Measure.ID == id {
			return s
		}
	}
	return nil
}

// Col returns the index of column name, -1 when the run has none.
func (r *Ranking) Col(name string) int { return slices.Index(r.Cols, name) }

// MinFaults is the fewest paired faults a per-fault difference is called on.
const MinFaults = 6

// faultWindow is how long after a fault its reconnects are charged to it
// (the report's fault table charges the same).
const faultWindow = 30.0

// Compute ranks the columns of a run from its measures' series.
func Compute(res *measure.Results) *Ranking {
	r := &Ranking{Cols: res.Libs()}
	for _, s := range res.Series {
		r.Window = max(r.Window, int64(len(s.RSS)))
	}
	for _, m := range measure.Catalogue {
		if m.Rank.Kind != measure.Ranked {
			continue
		}
		st := &Stat{Measure: m, pairs: map[[2]int]Pair{}, cols: r.Cols}
		vals := make([]values, len(res.Series)) // per column: what its pairs compare
		for i, s := range res.Series {
			var lv Level
			vals[i], lv = prepare(m.Rank, s, res.Series)
			st.Levels = append(st.Levels, lv)
		}
		for i := range vals {
			for j := i + 1; j < len(vals); j++ {
				p := pair(m.Rank, vals[i], vals[j])
				if m.Rank.Of == measure.SeriesLatP99 && (res.Series[i].LatSuspect || res.Series[j].LatSuspect) {
					p.Note = "latency measured across an unsynchronised clock"
				}
				st.pairs[[2]int{i, j}] = p
			}
		}
		r.Stats = append(r.Stats, st)
	}
	return r
}

// values are what a column's pairs compare: the seconds of its series the
// statistic is taken over, or its value per fault of the run; and, for a
// measure taken about a shared series (Rank.About), that series.
type values struct {
	xs, about []float64
}

// prepare returns what a column's pairs compare — the seconds of its
// series the statistic is taken over, or its value per fault of the run
// (NaN for a fault that did not hit it or left nothing to compare) — and
// its level.
func prepare(rule measure.RankRule, s *measure.Series, all []*measure.Series) (values, Level) {
	switch rule.Stat {
	case measure.BatchMeans:
		xs := s.Of(rule.Of)
		var about []float64
		if rule.About != "" {
			about = s.Of(rule.About)
		}
		return values{xs: xs, about: about}, level(stats.Mean(finite(xs)), len(finite(xs)))
	case measure.SteadyLevel:
		xs := measure.SecondHalf(s.Of(rule.Of))
		return values{xs: xs}, level(stats.Median(xs), len(finite(xs)))
	case measure.Growth:
		xs := measure.AfterWarmUp(s.Of(rule.Of))
		g := measure.GrowthPerHour(xs)
		return values{xs: xs}, level(g.Slope, g.N)
	case measure.PerFault:
		vs := perFault(rule.Of, s, faults(all))
		return values{xs: vs}, level(stats.Mean(finite(vs)), len(finite(vs)))
	}
	return values{}, level(math.NaN(), 0)
}

func level(v float64, n int) Level {
	if n == 0 {
		v = math.NaN()
	}
	return Level{N: n, Value: v}
}

// pair compares two columns' prepared values.
func pair(rule measure.RankRule, a, b values) Pair {
	n := min(len(a.xs), len(b.xs))
	d := make([]float64, n)
	for k := range d {
		d[k] = a.xs[k] - b.xs[k] // NaN where either has none: unpaired
	}
	p := Pair{Diff: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: math.NaN(), SD: math.NaN()}
	switch rule.Stat {
	case measure.BatchMeans, measure.SteadyLevel:
		var bm stats.Batches
		if x := shared(a.about, b.about, n); x != nil {
			bm = stats.BatchMeansAbout(d, x)
		} else {
			bm = stats.BatchMeans(d, false)
		}
		p.N, p.Span, p.Note = len(bm.Means), bm.Len, bm.Short
		iv := bm.Interval(stats.Confidence)
		p.Diff, p.SD = iv.Mean, iv.SD
		if p.Note == "" {
			p.Lo, p.Hi, p.P = iv.Lo, iv.Hi, iv.P
		}
	case measure.Growth:
		b := stats.BatchMeans(d, true)
		p.N, p.Span, p.Note = len(b.Means), b.Len, b.Short
		s := stats.TheilSen(b.Mids, b.Means, stats.Confidence)
		const perHour = 3600 / 1e6 // bytes a second → MB an hour
		p.Diff = s.Slope * perHour
		if p.Note == "" {
			p.Lo, p.Hi, p.P = s.Lo*perHour, s.Hi*perHour, s.P
			if math.IsNaN(p.Lo) {
				p.Note = "too short to call: too few batches for an interval of the slope"
			}
		}
	case measure.PerFault:
		var ds []float64
		for k := range d {
			if !math.IsNaN(d[k]) {
				ds = append(ds, d[k])
			}
		}
		iv := stats.TInterval(ds, stats.Confidence)
		p.N, p.Diff, p.SD = iv.N, iv.Mean, iv.SD
		switch {
		case iv.N == 0:
			p.Note = "no fault to compare by"
		case iv.N < MinFaults:
			p.Note = "too few faults to call: " + itoa(iv.N) + " paired, " + itoa(MinFaults) + " needed"
		default:
			p.Lo, p.Hi, p.P = iv.Lo, iv.Hi, iv.P
		}
	}
	return p
}

// shared is the series two columns share second by second (the messages
// a second each received: the same traffic), as the mean of theirs where
// both have it, else the one that has it, for n seconds; nil when neither
// has any: then there is nothing to take their difference about.
func shared(a, b []float64, n int) []float64 {
	if len(finite(a)) == 0 && len(finite(b)) == 0 {
		return nil
	}
	out := make([]float64, n)
	for k := range out {
		x, y := at(a, k), at(b, k)
		switch {
		case math.IsNaN(x):
			out[k] = y
		case math.IsNaN(y):
			out[k] = x
		default:
			out[k] = (x + y) / 2
		}
	}
	return out
}

// at is xs[k], NaN beyond it.
func at(xs []float64, k int) float64 {
	if k >= len(xs) {
		return math.NaN()
	}
	return xs[k]
}

// faults are the run's fault instants, in time order: each fault the
// server played once, whichever columns it hit.
func faults(all []*measure.Series) []int64 {
	var at []int64
	for _, s := range all {
		for _, f := range s.Faults {
			at = append(at, f.At)
		}
	}
	slices.Sort(at)
	return slices.Compact(at)
}

// perFault is a column's value per fault of the run (the same index in
// every column: paired by fault): the longest of the reconnects it caused
// (ms), or the ids they found lost. NaN for a fault that did not hit the
// column or caused it no reconnect: two columns are compared on the faults
// after which both reconnected. A fault's reconnects are those that ended
// within faultWindow of it, before the next fault that hit the column.
func perFault(of measure.SeriesID, s *measure.Series, runFaults []int64) []float64 {
	out := make([]float64, len(runFaults))
	for i := range out {
		out[i] = math.NaN()
	}
	for fi, f := range s.Faults {
		end := f.Sec + faultWindow
		for _, next := range s.Faults[fi+1:] {
			if next.Sec > f.Sec {
				end = min(end, next.Sec)
				break
			}
		}
		longest, lost, n := 0.0, int64(0), 0
		for _, rc := range s.Reconnects {
			if rc.Sec < f.Sec || rc.Sec >= end {
				continue
			}
			n++
			longest = max(longest, rc.DurMs)
			if rc.Lost < 0 || lost < 0 {
				lost = -1 // a reconnect that did not say what it lost
			} else {
				lost += rc.Lost
			}
		}
		if n == 0 {
			continue
		}
		k, _ := slices.BinarySearch(runFaults, f.At)
		switch {
		case of == measure.SeriesReconnect:
			out[k] = longest
		case of == measure.SeriesLostAcross && lost >= 0:
			out[k] = float64(lost)
		}
	}
	return out
}

func finite(xs []float64) []float64 {
	if !slices.ContainsFunc(xs, math.IsNaN) {
		return xs
	}
	return slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
}

func itoa(n int) string { return format(float64(n), 0) }

// Rows flattens the ranking for storage (store.DB.SaveRanking).
func (r *Ranking) Rows() []store.RankRow {
	var out []store.RankRow
	for _, s := range r.Stats {
		id := s.Measure.ID
		for i, lv := range s.Levels {
			out = append(out, store.RankRow{Stat: id, A: r.Cols[i], N: lv.N, Est: lv.Value, Lo: math.NaN(), Hi: math.NaN(),
				P: math.NaN(), SD: math.NaN(), Span: math.NaN()})
		}
		for i := range r.Cols {
			for j := i + 1; j < len(r.Cols); j++ {
				p := s.Pair(i, j)
				out = append(out, store.RankRow{Stat: id, A: r.Cols[i], B: r.Cols[j], N: p.N, Est: p.Diff, Lo: p.Lo, Hi: p.Hi,
					P: p.P, SD: p.SD, Span: p.Span, Note: p.Note})
			}
		}
	}
	return out
}

// FromRows is the inverse of Rows: the ranking a finished run stored, for
// the columns cols (in their order). Rows of a measure no longer ranked,
// or of a column not in cols, are left out; nil when none is left.
func FromRows(cols []string, window int64, rows []store.RankRow) *Ranking {
	r := &Ranking{Cols: cols, Window: window}
	for _, m := range measure.Catalogue {
		if m.Rank.Kind != measure.Ranked {
			continue
		}
		st := &Stat{Measure: m, pairs: map[[2]int]Pair{}, Levels: make([]Level, len(cols)), cols: cols}
		for i := range st.Levels {
			st.Levels[i] = level(math.NaN(), 0)
		}
		seen := false
		for _, row := range rows {
			if row.Stat != m.ID {
				continue
			}
			a, b := slices.Index(cols, row.A), slices.Index(cols, row.B)
			switch {
			case a < 0:
				continue
			case row.B == "":
				st.Levels[a] = level(row.Est, row.N)
			case b >= 0:
				st.pairs[[2]int{a, b}] = Pair{N: row.N, Diff: row.Est, Lo: row.Lo, Hi: row.Hi, P: row.P, SD: row.SD, Span: row.Span, Note: row.Note}
			default:
				continue
			}
			seen = true
		}
		if seen {
			r.Stats = append(r.Stats, st)
		}
	}
	if len(r.Stats) == 0 {
		return nil
	}
	return r
}

// Samples are, per ranked measure (by id) and column, what a comparison of
// two runs tests when each side is one run: the column's own batch means
// over the window (over its second half for a steady level), or its values
// per fault; none for a growth rate, one value a run. They show only the
// noise within a run: two runs of one profile differ by more.
func Samples(res *measure.Results) map[string][][]float64 {
	out := map[string][][]float64{}
	for _, m := range measure.Catalogue {
		if m.Rank.Kind != measure.Ranked {
			continue
		}
		per := make([][]float64, len(res.Series))
		for i, s := range res.Series {
			switch m.Rank.Stat {
			case measure.BatchMeans:
				per[i] = stats.BatchMeans(s.Of(m.Rank.Of), false).Means
			case measure.SteadyLevel:
				per[i] = stats.BatchMeans(measure.SecondHalf(s.Of(m.Rank.Of)), false).Means
			case measure.PerFault:
				per[i] = finite(perFault(m.Rank.Of, s, faults(res.Series)))
			}
		}
		out[m.ID] = per
	}
	return out
}
