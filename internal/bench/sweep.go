package bench

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/unit"
)

// MaxSweepSizes is how many sizes a sweep runs at most.
const MaxSweepSizes = 7

// SweepSizes returns the payload sizes of a sweep from lo to hi bytes, both
// included, in equal log steps: three a decade (2, 7 at most), one size when
// lo equals hi.
func SweepSizes(lo, hi int) ([]int, error) {
	if lo < 1 || hi < lo {
		return nil, errors.New("want LO..HI with LO at most HI")
	}
	if lo == hi {
		return []int{lo}, nil
	}
	ratio := float64(hi) / float64(lo)
	k := min(MaxSweepSizes, max(2, int(math.Round(3*math.Log10(ratio)))+1))
	out := make([]int, 0, k)
	for i := range k {
		s := int(math.Round(float64(lo) * math.Pow(ratio, float64(i)/float64(k-1))))
		if i == k-1 {
			s = hi
		}
		if len(out) == 0 || s > out[len(out)-1] {
			out = append(out, s)
		}
	}
	return out, nil
}

// SweepScenarios returns the sized firehose scenarios of sizes.
func SweepScenarios(sizes []int) ([]string, error) {
	var out []string
	for _, s := range sizes {
		sc, err := firehose.Sized(s)
		if err != nil {
			return nil, err
		}
		out = append(out, sc.Name)
	}
	return out, nil
}

// sweepText is a cell of the sweep: "median msgs/s min–max (median CPU
// µs/msg) MB/s reads/msg".
func sweepText(c *measure.BenchCell) string {
	if c == nil {
		return "-"
	}
	if c.Runs == 0 {
		return invalidText(c)
	}
	r := c.Stat(rateID)
	return fmt.Sprintf("%s %s–%s (%.1f µs) %.0f MB/s %.2f r/m", unit.Rate3(r.Median), unit.Rate3(r.Min), unit.Rate3(r.Max),
		c.Stat(cpuID).Median, c.Stat("bench_mb_rate").Median, c.Stat("bench_reads_per_msg").Median) + invalidNote(c)
}

// PrintSweep writes a message-size sweep of a: the header, then one row
// per size (× path), one column per library and raw, each cell
// "median msgs/s min–max (median CPU µs/msg) MB/s reads/msg", and the
// firehose's ceiling in MB/s.
func PrintSweep(w io.Writer, cfg Config, a *measure.Agg, lines []string, wide bool) {
	folded(w, wide, func(w io.Writer) { printSweep(w, cfg, a, lines, wide) })
}

func printSweep(w io.Writer, cfg Config, a *measure.Agg, lines []string, wide bool) {
	t := newLayout(cfg, a, wide)
	header(w, lines)
	tw := newGrid(w, wide, 3)
	fmt.Fprintf(tw, "size\tlevels\tpath\t%s\t%s\tceiling\tverdict\n", strings.Join(cfg.Libs, "\t"), RawLib)
	for _, row := range t.rows {
		size, levels := row.Row(), "-"
		if sc, err := firehose.Lookup(row.Scenario); err == nil {
			size, levels = unit.Size(float64(sc.Target)), fmt.Sprint(sc.Levels)
		}
		for i, p := range cfg.Paths {
			cols := []string{size, levels, p}
			for _, lib := range cfg.Libs {
				cols = append(cols, sweepText(t.cell(row, p, lib)))
			}
			raw, ceil := "", ""
			if i == 0 {
				raw = sweepText(t.cell(row, PathRaw, RawLib))
				if c := t.cell(row, PathCeiling, RawLib); c != nil && c.Runs > 0 {
					ceil = fmt.Sprintf("%.0f MB/s", c.Stat("bench_mb_rate").Median)
				} else {
					ceil = "-"
				}
			}
			cols = append(cols, raw, ceil, t.best(row, p))
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "\nsize: the payload aimed at (a depth diff of btcusdt with levels a side, combined-stream form).")
	fmt.Fprintln(w, "cells: median msgs/s, min–max over the counted runs, (median CPU µs/msg), median payload MB/s, median read syscalls per message.")
	fmt.Fprintln(w, "ceiling: the firehose into a reader that only counts bytes, median payload MB/s.")
}
