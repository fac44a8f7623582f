package bench

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/wire"
)

// permessage-deflate in the bench: each scenario runs once per compression
// setting of Config.Compression (a firehose process each), in every encoding
// of Config.Encodings; its rows are labelled scenario[-encoding]+suffix.

// labelSuffix is what a compression setting adds to a scenario's name in the
// results and the table ("" for off, so that a bench without compression
// keeps its names).
func labelSuffix(c wire.Compression) string {
	switch c {
	case wire.CompressionOn:
		return "+deflate"
	case wire.CompressionNoContextTakeover:
		return "+deflate_nct"
	}
	return ""
}

// Label is the row name of scenario sc under compression c.
func Label(sc string, c wire.Compression) string { return sc + labelSuffix(c) }

// compressions is the configured list, off when none.
func (c *Config) compressions() []wire.Compression {
	if len(c.Compression) == 0 {
		return []wire.Compression{wire.CompressionOff}
	}
	return c.Compression
}

// RowLabel is the table row of scenario sc read in encoding enc ("": no
// encoding dimension) under compression c: EncodingLabel, then Label's
// suffix, such as depth20, depth20-msgpack, depth20+deflate,
// depth20-msgpack+deflate.
func RowLabel(sc, enc string, c wire.Compression) string { return Label(EncodingLabel(sc, enc), c) }

// WirePerMsg is the frame bytes read per message (0 when not counted).
func (r Result) WirePerMsg() float64 {
	if r.Messages == 0 || r.WireBytes == 0 {
		return 0
	}
	return float64(r.WireBytes) / float64(r.Messages)
}

// printWire writes the frame bytes per message of every row and library, the
// payload bytes per message beside them, and what each library negotiated
// where it is not what the row asked for.
func (t *Table) printWire(w io.Writer) {
	counted := false
	for _, c := range t.Cells {
		if c.Wire.N > 0 {
			counted = true
		}
	}
	if !counted {
		return
	}
	fmt.Fprintln(w, "\nwire bytes per message (WebSocket frame bytes the client read ÷ messages, median; payload bytes per message in brackets):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "scenario\t%s\n", strings.Join(t.Libs, "\t"))
	var notes []string
	starred := false
	for _, sc := range t.Scenarios {
		row := []string{sc}
		for _, lib := range t.Libs {
			c := t.cellAnyPath(sc, lib)
			if c == nil || c.Wire.N == 0 {
				row = append(row, "-")
				continue
			}
			s := fmt.Sprintf("%.1f (%.1f)", c.Wire.Median, c.Payload.Median)
			if c.Payload.Median > 0 {
				s += fmt.Sprintf(" %.2f×", c.Wire.Median/c.Payload.Median)
			}
			if strings.HasSuffix(sc, "+deflate") && strings.Contains(c.Extensions, "server_no_context_takeover") {
				s += " *"
				starred = true
			}
			row = append(row, s)
			if c.Extensions != "" {
				notes = append(notes, fmt.Sprintf("%s %s: %s", sc, lib, c.Extensions))
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
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

// cellAnyPath is the row's cell of lib on the first path that has one.
func (t *Table) cellAnyPath(sc, lib string) *Cell {
	for _, p := range t.Paths {
		if c := t.Cell(sc, p, lib); c != nil && c.Rate.N > 0 {
			return c
		}
	}
	return nil
}
