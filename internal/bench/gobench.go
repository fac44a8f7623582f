package bench

import (
	"fmt"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
)

// WriteGobench writes the counted, valid runs of a as Go benchmark lines
// (one per run, in the order they ran, one op being one message) that
// benchstat reads:
//
//	BenchmarkSoak/scenario=aggTrade/path=full/lib=gorilla 1 812 ns/op 1231000 msgs/s 0.95 cpu-µs/msg ...
//
// Configuration lines (goos, goarch, pkg, cpu, and the libraries' versions)
// come first, so that two files from two machines or two versions compare.
func WriteGobench(w io.Writer, host map[string]string, versions map[string]string, a *measure.Agg) error {
	fmt.Fprintf(w, "goos: %s\ngoarch: %s\npkg: github.com/wssoak/wssoak/bench\n", runtime.GOOS, runtime.GOARCH)
	if m := host["cpu_model"]; m != "" {
		fmt.Fprintf(w, "cpu: %s\n", m)
	}
	for _, k := range []string{"kernel", "clocksource"} {
		if v := host[k]; v != "" {
			fmt.Fprintf(w, "%s: %s\n", k, strings.ReplaceAll(v, " ", "_"))
		}
	}
	for _, lib := range slices.Sorted(maps.Keys(versions)) {
		fmt.Fprintf(w, "version-%s: %s\n", lib, versions[lib])
	}
	for i := range a.Samples {
		s := &a.Samples[i]
		ns := s.Value("bench_wall_per_msg")
		if !s.Counted() || ns == 0 || math.IsNaN(ns) { // no message: no op
			continue
		}
		_, err := fmt.Fprintf(w, "BenchmarkSoak/scenario=%s/path=%s/lib=%s 1 %.2f ns/op %.0f msgs/s %.4f cpu-µs/msg %.4f reads/msg %.3f allocs/msg %d peak-RSS-B\n",
			s.Row(), s.Path, s.Lib, ns, s.Value(rateID), s.Value(cpuID), s.Value("bench_reads_per_msg"), s.Value("bench_allocs_per_msg"),
			int64(s.Value("bench_peak_rss"))*1024)
		if err != nil {
			return fmt.Errorf("write gobench: %w", err)
		}
	}
	return nil
}
