package bench

import (
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
)

// WriteGobench writes the counted, valid runs as Go benchmark lines (one
// per run, one op being one message) that benchstat reads:
//
//	BenchmarkSoak/scenario=aggTrade/path=full/lib=gorilla 1 812 ns/op 1231000 msgs/s 0.95 cpu-µs/msg ...
//
// Configuration lines (goos, goarch, pkg, cpu, and the libraries' versions)
// come first, so that two files from two machines or two versions compare.
func WriteGobench(w io.Writer, host map[string]string, versions map[string]string, rs []Result) error {
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
	for _, r := range rs {
		if r.Round < 1 || !r.Valid || r.Messages == 0 {
			continue
		}
		_, err := fmt.Fprintf(w, "BenchmarkSoak/scenario=%s/path=%s/lib=%s 1 %.2f ns/op %.0f msgs/s %.4f cpu-µs/msg %.4f reads/msg %.3f allocs/msg %d peak-RSS-B\n",
			r.Scenario, r.Path, r.Lib, float64(r.WallNS)/float64(r.Messages), r.MsgsPerSec(), r.CPUPerMsg(), r.ReadsPerMsg(), r.AllocsPerMsg(), r.MaxRSSKiB*1024)
		if err != nil {
			return fmt.Errorf("write gobench: %w", err)
		}
	}
	return nil
}
