package bench

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
	"golang.org/x/perf/benchmath"
)

// Stat is the summary of a cell's counted runs.
type Stat struct {
	N                int // valid counted runs
	Invalid          int // counted runs that broke the truth check
	Median, Min, Max float64
}

// summarize returns the median, min and max of xs.
func summarize(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Stat{N: len(s), Median: med, Min: s[0], Max: s[len(s)-1]}
}

// Significant reports whether samples a and b differ (Mann-Whitney U test
// of benchmath, as benchstat does, at alpha 0.05), with the p-value.
func Significant(a, b []float64) (bool, float64) {
	th := benchmath.DefaultThresholds
	c := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), &th), benchmath.NewSample(slices.Clone(b), &th))
	return c.P < c.Alpha, c.P
}

// Cell is the counted runs of one scenario × path × library.
type Cell struct {
	Scenario, Path, Lib string
	Rate, CPU           Stat   // msgs/s, CPU µs/msg
	Reads, ReadBytes    Stat   // reads/msg, bytes/read
	RSS, Allocs         Stat   // peak RSS KiB, allocs/msg
	MBps                Stat   // payload MB/s (10^6 bytes)
	Wire, Payload       Stat   // frame bytes read per message, payload bytes per message
	Extensions          string // what the library negotiated (the last counted run's answer)
	Invalid             int
	rates, cpus         []float64
	cpuByRound          map[int]float64 // CPU µs/msg of each valid counted run
}

// Table is the bench's results, summarized.
type Table struct {
	Scenarios, Paths, Libs []string
	Cells                  map[string]*Cell // by key(scenario, path, lib)
	// Encoded: rows are scenario × encoding (-encodings), and the table
	// compares the encodings' wire bytes per message.
	Encoded bool
	// The scenarios, encodings and compression settings of the rows, for
	// the comparison of sizes.
	scenarios, encodings []string
	compressions         []wire.Compression
}

func key(sc, path, lib string) string { return sc + "/" + path + "/" + lib }

// Summarize groups the counted rounds' results (round ≥ 1) by cell.
func Summarize(cfg Config, rs []Result) *Table {
	t := &Table{Scenarios: cfg.Rows(), Paths: cfg.Paths, Libs: cfg.Libs, Cells: map[string]*Cell{}, Encoded: len(cfg.Encodings) > 0,
		scenarios: cfg.Scenarios, encodings: cfg.Encodings, compressions: cfg.compressions()}
	vals := map[string]map[string][]float64{}
	for _, r := range rs {
		if r.Round < 1 {
			continue
		}
		k := key(r.Scenario, r.Path, r.Lib)
		c := t.Cells[k]
		if c == nil {
			c = &Cell{Scenario: r.Scenario, Path: r.Path, Lib: r.Lib}
			t.Cells[k] = c
			vals[k] = map[string][]float64{}
		}
		if !r.Valid {
			c.Invalid++
			continue
		}
		if c.cpuByRound == nil {
			c.cpuByRound = map[int]float64{}
		}
		c.cpuByRound[r.Round] = r.CPUPerMsg()
		v := vals[k]
		v["rate"] = append(v["rate"], r.MsgsPerSec())
		v["cpu"] = append(v["cpu"], r.CPUPerMsg())
		v["reads"] = append(v["reads"], r.ReadsPerMsg())
		v["rb"] = append(v["rb"], r.BytesPerRead())
		v["rss"] = append(v["rss"], float64(r.MaxRSSKiB))
		v["allocs"] = append(v["allocs"], r.AllocsPerMsg())
		v["mbps"] = append(v["mbps"], r.MBPerSec())
		if r.WireBytes > 0 {
			v["wire"] = append(v["wire"], r.WirePerMsg())
			v["payload"] = append(v["payload"], float64(r.PayloadBytes)/float64(max(r.Messages, 1)))
		}
		c.Extensions = r.Extensions
	}
	for k, c := range t.Cells {
		v := vals[k]
		c.rates, c.cpus = v["rate"], v["cpu"]
		c.Rate, c.CPU = summarize(v["rate"]), summarize(v["cpu"])
		c.Reads, c.ReadBytes = summarize(v["reads"]), summarize(v["rb"])
		c.RSS, c.Allocs = summarize(v["rss"]), summarize(v["allocs"])
		c.MBps = summarize(v["mbps"])
		c.Wire, c.Payload = summarize(v["wire"]), summarize(v["payload"])
		c.Rate.Invalid = c.Invalid
	}
	return t
}

// Cell returns a cell, nil when it was not run.
func (t *Table) Cell(sc, path, lib string) *Cell { return t.Cells[key(sc, path, lib)] }

func (c *Cell) text(ceiling float64) string {
	if c == nil {
		return "-"
	}
	if c.Rate.N == 0 {
		return fmt.Sprintf("INVALID (%d run(s))", c.Invalid)
	}
	s := fmt.Sprintf("%s %s–%s (%.3f µs)", unit.Rate(c.Rate.Median), unit.Rate(c.Rate.Min), unit.Rate(c.Rate.Max), c.CPU.Median)
	if ceiling > 0 && c.Rate.Median*5 > ceiling {
		s += " S"
	}
	if c.Invalid > 0 {
		s += fmt.Sprintf(" [%d invalid]", c.Invalid)
	}
	return s
}

// best names the fastest library of a row when its msgs/s differ
// significantly from the second's.
func (t *Table) best(sc, path string) string {
	var cells []*Cell
	for _, lib := range t.Libs {
		if c := t.Cell(sc, path, lib); c != nil && c.Rate.N > 0 {
			cells = append(cells, c)
		}
	}
	if len(cells) < 2 {
		return ""
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].Rate.Median > cells[j].Rate.Median })
	sig, p := Significant(cells[0].rates, cells[1].rates)
	if !sig {
		return fmt.Sprintf("no significant difference (%s vs %s, p=%.2f)", cells[0].Lib, cells[1].Lib, p)
	}
	return fmt.Sprintf("best %s (vs %s p=%.3f)", cells[0].Lib, cells[1].Lib, p)
}

// Print writes the table: the host and runtime header, then one row per
// scenario × path, one column per library and raw, each cell
// "median msgs/s min–max (CPU µs/msg median)"; then the ceiling, the harness
// cost per library, and why a number is what it is (reads, RSS, allocs).
func (t *Table) Print(w io.Writer, header []string) {
	for _, h := range header {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tpath\t%s\t%s\tverdict\n", strings.Join(t.Libs, "\t"), RawLib)
	for _, sc := range t.Scenarios {
		ceil := t.ceiling(sc)
		for i, p := range t.Paths {
			row := []string{sc, p}
			for _, lib := range t.Libs {
				row = append(row, t.Cell(sc, p, lib).text(ceil))
			}
			raw := ""
			if i == 0 {
				raw = t.Cell(sc, PathRaw, RawLib).text(0)
			}
			row = append(row, raw, t.best(sc, p))
			fmt.Fprintln(tw, strings.Join(row, "\t"))
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "\ncells: median %s, min–max over the counted runs, (median %s, user+sys of the client process).\n",
		measure.BenchByID("bench_msg_rate").Title, measure.BenchByID("bench_cpu_per_msg").Title)
	fmt.Fprintln(w, "S: server-limited, within 5× of the firehose's ceiling; the number is then the firehose's as much as the library's.")
	if t.Encoded {
		fmt.Fprintln(w, "rows are scenario-encoding (json text, msgpack or packed binary frames, chosen by subprotocol); decode decodes in that encoding.")
	}
	if len(t.compressions) > 1 || (len(t.compressions) == 1 && t.compressions[0].Enabled()) {
		fmt.Fprintln(w, "rows +deflate, +deflate_nct: the library asked for permessage-deflate (with, without context takeover); raw and the ceiling run only on plain frames.")
	}
	if t.Encoded {
		t.printSizes(w)
	}
	fmt.Fprintln(w, "\nfirehose ceiling (the firehose into a reader that only counts bytes):")
	limited := 0
	for _, sc := range t.Scenarios {
		c := t.Cell(sc, PathCeiling, RawLib)
		fastest := 0.0
		for _, p := range t.Paths {
			for _, lib := range t.Libs {
				if x := t.Cell(sc, p, lib); x != nil && x.Rate.Median > fastest {
					fastest = x.Rate.Median
				}
			}
		}
		state := ""
		if c != nil && c.Rate.N > 0 && fastest*5 > c.Rate.Median {
			state = fmt.Sprintf(": only %.1f× the fastest library path, server-limited", c.Rate.Median/fastest)
			limited++
		}
		fmt.Fprintf(w, "  %-10s %s%s\n", sc, c.text(0), state)
	}
	if limited > 0 {
		fmt.Fprintln(w, "  On a machine with few cores the firehose and the client share them, and the loopback copy bounds the server")
		fmt.Fprintln(w, "  at a small multiple of the fastest library: the small-message rows measure both ends (use -cpus on a larger machine).")
	}
	fmt.Fprintln(w, "\nharness cost per library: full / bare (ratio of the median CPU µs/msg), and full − bare (µs/msg) paired by round:")
	fmt.Fprintln(w, "the median of the rounds' differences, min–max; ~ where full and bare do not differ significantly:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\t%s\n", strings.Join(t.Libs, "\t"))
	for _, sc := range t.Scenarios {
		row := []string{sc}
		for _, lib := range t.Libs {
			b, f := t.Cell(sc, PathBare, lib), t.Cell(sc, PathFull, lib)
			if b == nil || f == nil || b.CPU.N == 0 || f.CPU.N == 0 || b.CPU.Median == 0 {
				row = append(row, "-")
				continue
			}
			d, sig, _ := t.HarnessCost(sc, lib)
			mark := ""
			if !sig {
				mark = " ~"
			}
			row = append(row, fmt.Sprintf("%.2f× %+.3f µs (%+.3f…%+.3f)%s", f.CPU.Median/b.CPU.Median, d.Median, d.Min, d.Max, mark))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	t.printWire(w)
	fmt.Fprintln(w, "\nwhy (medians): reads/msg, bytes/read, peak RSS, allocs/msg:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\tpath\t%s\t%s\n", strings.Join(t.Libs, "\t"), RawLib)
	for _, sc := range t.Scenarios {
		for i, p := range t.Paths {
			row := []string{sc, p}
			for _, lib := range t.Libs {
				row = append(row, t.Cell(sc, p, lib).why())
			}
			raw := ""
			if i == 0 {
				raw = t.Cell(sc, PathRaw, RawLib).why()
			}
			fmt.Fprintln(tw, strings.Join(append(row, raw), "\t"))
		}
	}
	_ = tw.Flush()
}

func (c *Cell) why() string {
	if c == nil || c.Rate.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f r/m %.0fKiB/r %.0fMiB %.2f a/m", c.Reads.Median, c.ReadBytes.Median/1024, c.RSS.Median/1024, c.Allocs.Median)
}

// HarnessCost is full − bare CPU µs/msg of a library on a scenario, paired
// by round (the two ran back to back): the median of the rounds' differences
// with their min–max, and whether full and bare differ significantly. N is 0
// when no round has both.
func (t *Table) HarnessCost(sc, lib string) (Stat, bool, float64) {
	b, f := t.Cell(sc, PathBare, lib), t.Cell(sc, PathFull, lib)
	if b == nil || f == nil {
		return Stat{}, false, 1
	}
	var diffs []float64
	for round, fc := range f.cpuByRound {
		if bc, ok := b.cpuByRound[round]; ok {
			diffs = append(diffs, fc-bc)
		}
	}
	if len(diffs) == 0 {
		return Stat{}, false, 1
	}
	sig, p := Significant(f.cpus, b.cpus)
	return summarize(diffs), sig, p
}

// printSizes writes, per scenario and compression setting, each encoding's
// wire bytes per message and how it compares with json's.
func (t *Table) printSizes(w io.Writer) {
	fmt.Fprintln(w, "\nwire bytes per message by encoding (vs json; the median over the libraries, frame bytes each read ÷ messages):")
	for _, sc := range t.scenarios {
		for _, m := range t.compressions {
			json := t.wireValue(RowLabel(sc, "json", m))
			var parts []string
			for _, e := range t.encodings {
				v := t.wireValue(RowLabel(sc, e, m))
				switch {
				case v == 0:
					parts = append(parts, e+" -")
				case e == "json" || json == 0:
					parts = append(parts, fmt.Sprintf("%s %.0f B", e, v))
				default:
					parts = append(parts, fmt.Sprintf("%s %.0f B (%+.0f %%)", e, v, (v-json)/json*100))
				}
			}
			fmt.Fprintf(w, "  %-26s %s\n", Label(sc, m), strings.Join(parts, ", "))
		}
		// What deflate did to each encoding: its row against the same
		// encoding's without compression.
		for _, m := range t.compressions {
			if !m.Enabled() || !slices.Contains(t.compressions, wire.CompressionOff) {
				continue
			}
			var parts []string
			for _, e := range t.encodings {
				off, on := t.wireValue(RowLabel(sc, e, wire.CompressionOff)), t.wireValue(RowLabel(sc, e, m))
				if off == 0 || on == 0 {
					parts = append(parts, e+" -")
					continue
				}
				parts = append(parts, fmt.Sprintf("%s %+.0f %%", e, (on-off)/off*100))
			}
			fmt.Fprintf(w, "  %-26s %s\n", Label(sc, m)+" vs off", strings.Join(parts, ", "))
		}
	}
}

// wireValue is a row's frame bytes per message: the median over its
// libraries' cells (without compression every client of a row reads the
// same frames; with it a library's context takeover changes them).
func (t *Table) wireValue(sc string) float64 {
	var xs []float64
	for _, c := range t.Cells {
		if c.Scenario == sc && c.Wire.N > 0 {
			xs = append(xs, c.Wire.Median)
		}
	}
	return summarize(xs).Median
}

// ceiling returns the median ceiling msgs/s of a scenario, 0 if unknown.
func (t *Table) ceiling(sc string) float64 {
	if c := t.Cell(sc, PathCeiling, RawLib); c != nil {
		return c.Rate.Median
	}
	return 0
}
