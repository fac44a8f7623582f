package measure

import (
	"slices"

	"github.com/wssoak/wssoak/internal/store"
)

// BenchRun is one client run of soak bench as its measures read it.
type BenchRun struct {
	Messages, PayloadBytes int64
	WallNS, UserNS, SysNS  int64
	Syscr, Rchar           int64 // read syscalls and the bytes they returned
	MaxRSSKiB              int64
	Mallocs                uint64
	WireBytes              int64 // WebSocket frame bytes read (0: not counted)
}

// Bench is the catalogue of soak bench's measures: one value per client run,
// a column per Dims{Scenario, Path, Lib}. The bench table, the bench page,
// export and compare take their titles, units and formulas from here.
var Bench = []*Measure{
	{ID: "bench_msg_rate", Title: "msgs/s", Unit: "msgs/s", Better: Higher,
		Run: func(r BenchRun) float64 { return per(float64(r.Messages), float64(r.WallNS)/1e9) }},
	{ID: "bench_mb_rate", Title: "MB/s", Unit: "MB/s", Better: Higher,
		Run: func(r BenchRun) float64 { return per(float64(r.PayloadBytes)*1e3, float64(r.WallNS)) }},
	{ID: "bench_cpu_per_msg", Title: "CPU µs/msg", Unit: "µs/msg", Better: Lower,
		Run: func(r BenchRun) float64 { return per(float64(r.UserNS+r.SysNS)/1e3, float64(r.Messages)) }},
	{ID: "bench_reads_per_msg", Title: "reads/msg", Unit: "reads/msg", Better: Lower,
		Run: func(r BenchRun) float64 { return per(float64(r.Syscr), float64(r.Messages)) }},
	{ID: "bench_bytes_per_read", Title: "bytes/read", Unit: "bytes/read", Better: NoRank,
		Run: func(r BenchRun) float64 { return per(float64(r.Rchar), float64(r.Syscr)) }},
	{ID: "bench_allocs_per_msg", Title: "allocs/msg", Unit: "allocs/msg", Better: Lower,
		Run: func(r BenchRun) float64 { return per(float64(r.Mallocs), float64(r.Messages)) }},
	{ID: "bench_peak_rss", Title: "peak RSS", Unit: "KiB", Better: Lower,
		Run: func(r BenchRun) float64 { return float64(r.MaxRSSKiB) }},
	{ID: "bench_wire_per_msg", Title: "wire bytes/msg", Unit: "bytes/msg", Better: Lower,
		Run: func(r BenchRun) float64 { return per(float64(r.WireBytes), float64(r.Messages)) }},
}

// BenchByID returns the bench measure with that id, or nil.
func BenchByID(id string) *Measure {
	for _, m := range Bench {
		if m.ID == id {
			return m
		}
	}
	return nil
}

// BenchValue is the value of the bench measure id for one run; it panics on
// an unknown id (a programming error).
func BenchValue(id string, r BenchRun) float64 {
	m := BenchByID(id)
	if m == nil || m.Run == nil {
		panic("measure: no bench measure " + id)
	}
	return m.Run(r)
}

// per is a / b, 0 when b is 0 (nothing to divide by: a run that failed).
func per(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Spread is the median, min and max of a cell's counted runs (NaN when it
// has none).
type Spread struct{ Median, Min, Max float64 }

// SpreadOf summarizes vs.
func SpreadOf(vs []float64) Spread {
	if len(vs) == 0 {
		return Spread{nan, nan, nan}
	}
	s := slices.Sorted(slices.Values(vs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{m, s[0], s[len(s)-1]}
}

// BenchCell is one column of bench results, Dims{Scenario, Path, Lib}: its
// counted runs (valid, after the warm-up round) summarized per measure of
// Bench (by id), and how many counted runs were invalid.
type BenchCell struct {
	Dims
	Runs, Invalid int
	Payload       float64 // mean payload bytes a message over the counted runs
	Values        map[string]Spread
}

// BenchRunOf is a stored result as the bench measures read it.
func BenchRunOf(r store.BenchResult) BenchRun {
	return BenchRun{Messages: r.Msgs, PayloadBytes: r.Bytes, WallNS: r.WallNS, UserNS: r.UserNS, SysNS: r.SysNS,
		Syscr: r.Syscr, Rchar: r.Rchar, MaxRSSKiB: r.MaxRSSKiB, Mallocs: r.Mallocs, WireBytes: r.WireBytes}
}

// BenchCells summarizes a bench's stored results into its cells, in the
// order they first ran.
func BenchCells(rs []store.BenchResult) []*BenchCell {
	var out []*BenchCell
	byKey := map[Dims]*BenchCell{}
	values := map[Dims]map[string][]float64{}
	payload := map[Dims][2]int64{}
	for _, r := range rs {
		k := Dims{Scenario: r.Scenario, Path: r.Path, Lib: r.Lib}
		c := byKey[k]
		if c == nil {
			c = &BenchCell{Dims: k}
			byKey[k], values[k] = c, map[string][]float64{}
			out = append(out, c)
		}
		switch {
		case r.Round == 0:
			continue
		case !r.Valid:
			c.Invalid++
			continue
		}
		c.Runs++
		br := BenchRunOf(r)
		for _, m := range Bench {
			values[k][m.ID] = append(values[k][m.ID], m.Run(br))
		}
		p := payload[k]
		payload[k] = [2]int64{p[0] + r.Bytes, p[1] + r.Msgs}
	}
	for _, c := range out {
		c.Values = map[string]Spread{}
		for _, m := range Bench {
			c.Values[m.ID] = SpreadOf(values[c.Dims][m.ID])
		}
		if p := payload[c.Dims]; p[1] > 0 {
			c.Payload = float64(p[0]) / float64(p[1])
		}
	}
	return out
}
