package bench

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/wire"
)

// The table's parts about the bytes on the wire: the encodings' sizes
// compared (-encodings), what permessage-deflate did (-compression), and
// each library's frame bytes per message with what it negotiated.

const (
	wireID    = "bench_wire_per_msg"
	payloadID = "bench_payload_per_msg"
)

// printSizes writes, per scenario and compression setting, each encoding's
// wire bytes per message and how it compares with json's.
func (t *layout) printSizes(w io.Writer) {
	fmt.Fprintln(w, "\nwire bytes per message by encoding (vs json; the median over the libraries, frame bytes each read ÷ messages):")
	cs := t.cfg.compressions()
	row := func(sc, enc string, c wire.Compression) measure.Dims {
		return measure.Dims{Side: measure.SideClient, Scenario: sc, Encoding: enc, Compression: c.String()}
	}
	for _, sc := range t.cfg.Scenarios {
		for _, m := range cs {
			json := t.wireValue(row(sc, "json", m))
			var parts []string
			for _, e := range t.cfg.Encodings {
				v := t.wireValue(row(sc, e, m))
				switch {
				case math.IsNaN(v):
					parts = append(parts, e+" -")
				case e == "json" || math.IsNaN(json):
					parts = append(parts, fmt.Sprintf("%s %.0f B", e, v))
				default:
					parts = append(parts, fmt.Sprintf("%s %.0f B (%+.0f %%)", e, v, (v-json)/json*100))
				}
			}
			fmt.Fprintf(w, "  %-26s %s\n", Label(sc, m), strings.Join(parts, ", "))
		}
		// What deflate did to each encoding: its row against the same
		// encoding's without compression.
		for _, m := range cs {
			if !m.Enabled() || !slices.Contains(cs, wire.CompressionOff) {
				continue
			}
			var parts []string
			for _, e := range t.cfg.Encodings {
				off, on := t.wireValue(row(sc, e, wire.CompressionOff)), t.wireValue(row(sc, e, m))
				if math.IsNaN(off) || math.IsNaN(on) {
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
// same frames; with it a library's context takeover changes them); NaN
// (not measured) when no cell counted them, or counted none.
func (t *layout) wireValue(row measure.Dims) float64 {
	var xs []float64
	for _, c := range t.a.Cells {
		d := c.Dims
		d.Path, d.Lib = "", ""
		if d == row {
			xs = append(xs, c.Stat(wireID).Median)
		}
	}
	v := measure.StatOf(xs).Median
	if v == 0 {
		return math.NaN()
	}
	return v
}

// printWire writes the frame bytes per message of every row and library, the
// payload bytes per message beside them, and what each library negotiated
// where it is not what the row asked for.
func (t *layout) printWire(w io.Writer) {
	if !slices.ContainsFunc(t.a.Cells, func(c *measure.BenchCell) bool { return c.Stat(wireID).N > 0 }) {
		return
	}
	fmt.Fprintln(w, "\nwire bytes per message (WebSocket frame bytes the client read ÷ messages, median; payload bytes per message in brackets):")
	tw := newGrid(w, t.wide, 1)
	fmt.Fprintf(tw, "scenario\t%s\n", strings.Join(t.cfg.Libs, "\t"))
	var notes []string
	starred := false
	for _, row := range t.rows {
		cols := []string{row.Row()}
		for _, lib := range t.cfg.Libs {
			c := t.cellAnyPath(row, lib)
			if c == nil || c.Stat(wireID).N == 0 {
				cols = append(cols, "-")
				continue
			}
			wb, pb := c.Stat(wireID).Median, c.Stat(payloadID).Median
			s := fmt.Sprintf("%.1f (%.1f)", wb, pb)
			if pb > 0 {
				s += fmt.Sprintf(" %.2f×", wb/pb)
			}
			if row.Compression == wire.CompressionOn.String() && strings.Contains(c.Extensions, "server_no_context_takeover") {
				s += " *"
				starred = true
			}
			cols = append(cols, s)
			if c.Extensions != "" {
				notes = append(notes, fmt.Sprintf("%s %s: %s", row.Row(), lib, c.Extensions))
			}
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	_ = tw.Flush()
	if starred {
		fmt.Fprintln(w, "*: asked for deflate with context takeover, the library can only do without: not the same thing as its neighbours.")
	}
	if len(notes) > 0 {
		fmt.Fprintln(w, "negotiated (the server's Sec-WebSocket-Extensions answer):")
		for _, n := range notes {
			fmt.Fprintln(w, "  "+n)
		}
	}
}

// cellAnyPath is the row's cell of lib on the first path that has a valid
// counted run.
func (t *layout) cellAnyPath(row measure.Dims, lib string) *measure.BenchCell {
	for _, p := range t.cfg.Paths {
		if c := t.cell(row, p, lib); c != nil && c.Runs > 0 {
			return c
		}
	}
	return nil
}
