package bench

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
)

// The client bench's measures the tables lead with.
const (
	rateID = "bench_msg_rate"
	cpuID  = "bench_cpu_per_msg"
)

// Aggregate is the client bench's results as the catalogue aggregates them
// (measure.Aggregate): what its tables, its page, export, compare and the
// Go benchmark lines show.
func Aggregate(rs []Result) *measure.Agg {
	rows := make([]store.BenchResult, len(rs))
	for i, r := range rs {
		rows[i] = r.Row()
	}
	return measure.AggregateBench(rows)
}

// layout is a bench's aggregated results laid out as its configuration
// ran them: rows, paths and libraries in their order.
type layout struct {
	cfg  Config
	wide bool // every cell in full, however wide the tables grow
	a    *measure.Agg
	rows []measure.Dims // a row (Config.Rows) as its dimensions, without path and library
}

func newLayout(cfg Config, a *measure.Agg, wide bool) *layout {
	t := &layout{cfg: cfg, a: a, wide: wide}
	for _, sc := range cfg.Scenarios {
		for _, m := range cfg.compressions() {
			for _, e := range cfg.encodings() {
				t.rows = append(t.rows, measure.Dims{Side: measure.SideClient, Scenario: sc, Encoding: e, Compression: m.String()})
			}
		}
	}
	return t
}

// cell is the cell of lib on path p in row, nil when it has no counted run.
func (t *layout) cell(row measure.Dims, p, lib string) *measure.BenchCell {
	row.Path, row.Lib = p, lib
	return t.a.Cell(row)
}

// cellText is a cell as the table shows it: "median msgs/s min–max (median
// CPU µs/msg)", S when within 5× of the firehose's ceiling, and its invalid
// runs.
func cellText(c *measure.BenchCell, ceiling float64) string {
	if c == nil {
		return "-"
	}
	if c.Runs == 0 {
		return invalidText(c)
	}
	r := c.Stat(rateID)
	s := fmt.Sprintf("%s %s–%s (%.3f µs)", unit.Rate(r.Median), unit.Rate(r.Min), unit.Rate(r.Max), c.Stat(cpuID).Median)
	if ceiling > 0 && r.Median*5 > ceiling {
		s += " S"
	}
	return s + invalidNote(c)
}

// shortCellText is a cell in a few columns: "median msgs/s CPU µs/msg",
// S and the invalid runs as cellText says them.
func shortCellText(c *measure.BenchCell, ceiling float64) string {
	if c == nil {
		return "-"
	}
	if c.Runs == 0 {
		return invalidText(c)
	}
	r := c.Stat(rateID)
	s := fmt.Sprintf("%s %.3fµs", unit.Rate(r.Median), c.Stat(cpuID).Median)
	if ceiling > 0 && r.Median*5 > ceiling {
		s += " S"
	}
	if c.Invalid > 0 {
		s += fmt.Sprintf(" [%d inv.]", c.Invalid)
	}
	return s
}

// invalidText is a cell without a valid counted run.
func invalidText(c *measure.BenchCell) string { return fmt.Sprintf("INVALID (%d run(s))", c.Invalid) }

// invalidNote counts a cell's invalid runs beside its valid ones.
func invalidNote(c *measure.BenchCell) string {
	if c.Invalid == 0 {
		return ""
	}
	return fmt.Sprintf(" [%d invalid]", c.Invalid)
}

// verdict names the cell of cells fastest by measure rate when its runs
// differ significantly from the second's (measure.Versus); none when fewer
// than two cells have valid runs.
func verdict(cells []*measure.BenchCell, rate, none string) string {
	var ok []*measure.BenchCell
	for _, c := range cells {
		if c != nil && c.Runs > 0 {
			ok = append(ok, c)
		}
	}
	if len(ok) < 2 {
		return none
	}
	sort.Slice(ok, func(i, j int) bool { return ok[i].Stat(rate).Median > ok[j].Stat(rate).Median })
	sig, p := measure.Versus(ok[0], ok[1], rate)
	if !sig {
		return fmt.Sprintf("no significant difference (%s vs %s, p=%.2f)", ok[0].Lib, ok[1].Lib, p)
	}
	return fmt.Sprintf("best %s (vs %s p=%.3f)", ok[0].Lib, ok[1].Lib, p)
}

// best is the verdict of a row and path over the libraries.
func (t *layout) best(row measure.Dims, p string) string {
	var cells []*measure.BenchCell
	for _, lib := range t.cfg.Libs {
		cells = append(cells, t.cell(row, p, lib))
	}
	v := verdict(cells, rateID, "")
	if !t.wide {
		v = shortVerdict(v)
	}
	return v
}

// shortVerdict is a verdict in a few columns: "gws p=0.032" for "best gws
// (vs gobwas p=0.032)", "= p=0.41" for no significant difference.
func shortVerdict(v string) string {
	p := ""
	if i := strings.LastIndex(v, "p="); i >= 0 {
		p = strings.TrimSuffix(v[i:], ")")
	}
	switch {
	case strings.HasPrefix(v, "best "):
		lib, _, _ := strings.Cut(strings.TrimPrefix(v, "best "), " ")
		return lib + " " + p
	case strings.HasPrefix(v, "no significant difference"):
		return "= " + p
	}
	return v
}

// header writes the table's header lines and a blank line.
func header(w io.Writer, lines []string) {
	for _, h := range lines {
		fmt.Fprintln(w, h)
	}
	fmt.Fprintln(w)
}

// PrintTable writes the bench's table of a: the header, then one row per
// scenario × path, one column per library and raw, each cell "median
// msgs/s min–max (CPU µs/msg median)"; then the ceiling, the harness cost
// per library, the wire bytes and why a number is what it is (reads, RSS,
// allocs). Unless wide every line fits 120 columns: the cells without
// their min–max, the verdicts short, a table too wide in parts.
func PrintTable(w io.Writer, cfg Config, a *measure.Agg, lines []string, wide bool) {
	folded(w, wide, func(w io.Writer) { printTable(w, cfg, a, lines, wide) })
}

func printTable(w io.Writer, cfg Config, a *measure.Agg, lines []string, wide bool) {
	t := newLayout(cfg, a, wide)
	header(w, lines)
	tw := newGrid(w, wide, 2)
	fmt.Fprintf(tw, "scenario\tpath\t%s\t%s\tverdict\n", strings.Join(cfg.Libs, "\t"), RawLib)
	text := cellText
	if !wide {
		text = shortCellText
	}
	for _, row := range t.rows {
		ceil := t.ceiling(row)
		for i, p := range cfg.Paths {
			cols := []string{row.Row(), p}
			for _, lib := range cfg.Libs {
				cols = append(cols, text(t.cell(row, p, lib), ceil))
			}
			raw := ""
			if i == 0 {
				raw = text(t.cell(row, PathRaw, RawLib), 0)
			}
			cols = append(cols, raw, t.best(row, p))
			fmt.Fprintln(tw, strings.Join(cols, "\t"))
		}
	}
	_ = tw.Flush()
	if wide {
		fmt.Fprintf(w, "\ncells: median %s, min–max over the counted runs, (median %s, user+sys of the client process).\n",
			measure.BenchByID(rateID).Title, measure.BenchByID(cpuID).Title)
	} else {
		fmt.Fprintf(w, "\ncells: median %s (median %s, user+sys of the client process); -wide adds the min–max over the counted runs.\n",
			measure.BenchByID(rateID).Title, measure.BenchByID(cpuID).Title)
	}
	fmt.Fprintln(w, "S: server-limited, within 5× of the firehose's ceiling; the number is then the firehose's as much as the library's.")
	encoded := len(cfg.Encodings) > 0
	if encoded {
		fmt.Fprintln(w, "rows are scenario-encoding (json text, msgpack or packed binary frames, chosen by subprotocol); decode decodes in that encoding.")
	}
	if cs := cfg.compressions(); len(cs) > 1 || (len(cs) == 1 && cs[0].Enabled()) {
		fmt.Fprintln(w, "rows +deflate, +deflate_nct: the library asked for permessage-deflate (with, without context takeover); raw and the ceiling run only on plain frames.")
	}
	if encoded {
		t.printSizes(w)
	}
	if cfg.EncodeEach {
		t.printGrid(w)
	}
	t.printCeiling(w)
	t.printHarness(w)
	t.printWire(w)
	t.printWhy(w)
}

// printCeiling writes each row's ceiling and whether the firehose, not the
// library, was the limit.
func (t *layout) printCeiling(w io.Writer) {
	fmt.Fprintln(w, "\nfirehose ceiling (the firehose into a reader that only counts bytes):")
	limited := 0
	for _, row := range t.rows {
		c := t.cell(row, PathCeiling, RawLib)
		fastest := 0.0
		for _, p := range t.cfg.Paths {
			for _, lib := range t.cfg.Libs {
				if x := t.cell(row, p, lib); x != nil && x.Stat(rateID).Median > fastest {
					fastest = x.Stat(rateID).Median
				}
			}
		}
		state := ""
		if c != nil && c.Runs > 0 && fastest*5 > c.Stat(rateID).Median {
			state = fmt.Sprintf(": only %.1f× the fastest library path, server-limited", c.Stat(rateID).Median/fastest)
			limited++
		}
		fmt.Fprintf(w, "  %-10s %s%s\n", row.Row(), cellText(c, 0), state)
	}
	if limited > 0 {
		fmt.Fprintln(w, "  On a machine with few cores the firehose and the client share them, and the loopback copy bounds the server")
		fmt.Fprintln(w, "  at a small multiple of the fastest library: the small-message rows measure both ends (use -cpus on a larger machine).")
	}
}

// printHarness writes the harness cost per library: full against bare.
func (t *layout) printHarness(w io.Writer) {
	fmt.Fprintln(w, "\nharness cost per library: full / bare (ratio of the median CPU µs/msg), and full − bare (µs/msg) paired by round:")
	fmt.Fprintln(w, "the median of the rounds' differences, min–max; ~ where full and bare do not differ significantly:")
	tw := newGrid(w, t.wide, 1)
	fmt.Fprintf(tw, "scenario\t%s\n", strings.Join(t.cfg.Libs, "\t"))
	for _, row := range t.rows {
		cols := []string{row.Row()}
		for _, lib := range t.cfg.Libs {
			b, f := t.cell(row, PathBare, lib), t.cell(row, PathFull, lib)
			if b == nil || f == nil || b.Runs == 0 || f.Runs == 0 || b.Stat(cpuID).Median == 0 {
				cols = append(cols, "-")
				continue
			}
			d, sig, _ := measure.Paired(f, b, cpuID)
			mark := ""
			if !sig {
				mark = " ~"
			}
			cols = append(cols, fmt.Sprintf("%.2f× %+.3f µs (%+.3f…%+.3f)%s", f.Stat(cpuID).Median/b.Stat(cpuID).Median, d.Median, d.Min, d.Max, mark))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	_ = tw.Flush()
}

// printWhy writes the medians that explain a cell: reads/msg, bytes/read,
// peak RSS, allocs/msg.
func (t *layout) printWhy(w io.Writer) {
	fmt.Fprintln(w, "\nwhy (medians): reads/msg, bytes/read, peak RSS, allocs/msg:")
	tw := newGrid(w, t.wide, 2)
	fmt.Fprintf(tw, "scenario\tpath\t%s\t%s\n", strings.Join(t.cfg.Libs, "\t"), RawLib)
	for _, row := range t.rows {
		for i, p := range t.cfg.Paths {
			cols := []string{row.Row(), p}
			for _, lib := range t.cfg.Libs {
				cols = append(cols, why(t.cell(row, p, lib)))
			}
			raw := ""
			if i == 0 {
				raw = why(t.cell(row, PathRaw, RawLib))
			}
			fmt.Fprintln(tw, strings.Join(append(cols, raw), "\t"))
		}
	}
	_ = tw.Flush()
}

func why(c *measure.BenchCell) string {
	if c == nil || c.Runs == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f r/m %.0fKiB/r %.0fMiB %.2f a/m", c.Stat("bench_reads_per_msg").Median, c.Stat("bench_bytes_per_read").Median/1024,
		c.Stat("bench_peak_rss").Median/1024, c.Stat("bench_allocs_per_msg").Median)
}

// ceiling returns the median ceiling msgs/s of a row, NaN if unknown.
func (t *layout) ceiling(row measure.Dims) float64 {
	if c := t.cell(row, PathCeiling, RawLib); c != nil {
		return c.Stat(rateID).Median
	}
	return math.NaN()
}
