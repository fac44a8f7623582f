package measure

// BenchRun is one client run of soak bench as its measures read it.
type BenchRun struct {
	Messages, PayloadBytes int64
	WallNS, UserNS, SysNS  int64
	Syscr, Rchar           int64 // read syscalls and the bytes they returned
	MaxRSSKiB              int64
	Mallocs                uint64
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
