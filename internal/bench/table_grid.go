package bench

import (
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
)

// printGrid writes seed 003's grid, for a bench whose firehose encoded each
// message as it sent it (Config.EncodeEach): per scenario and library a row
// per encoding × deflate, with the messages per second, the CPU per message
// of the server (the firehose: encoding, compressing, writing), of the
// client and their sum (the seed measured both ends in one process), the
// bytes on the wire, and the encode and decode time per message. The
// client's side is the decode path's when the bench ran it (a client that
// reads and decodes, as the seed's), else its first path; decode ns/msg is
// the decode path's CPU less the full path's, when it ran both.
func (t *layout) printGrid(w io.Writer) {
	path := t.cfg.Paths[0]
	if slices.Contains(t.cfg.Paths, PathDecode) {
		path = PathDecode
	}
	decode := slices.Contains(t.cfg.Paths, PathDecode) && slices.Contains(t.cfg.Paths, PathFull)
	fmt.Fprintf(w, "\nencodings × deflate, each message encoded (and compressed) by the firehose as it sent it; client: the %s path:\n", path)
	tw := newGrid(w, t.wide, 4)
	fmt.Fprintln(tw, "scenario\tlibrary\tformat\tdeflate\tmsgs/s (min–max)\tserver CPU µs/msg\tclient CPU µs/msg\tsum (min–max)\twire B/msg\tencode ns/msg\tdecode ns/msg")
	for _, sc := range t.cfg.Scenarios {
		for _, lib := range t.cfg.Libs {
			for _, row := range t.rows {
				if row.Scenario != sc {
					continue
				}
				c := t.cell(row, path, lib)
				if c == nil || c.Runs == 0 {
					continue
				}
				med := func(id string) float64 { return c.Stat(id).Median }
				r, sum := c.Stat(rateID), c.Stat("bench_both_cpu_per_msg")
				dec := math.NaN()
				if f := t.cell(row, PathFull, lib); decode && f != nil && f.Runs > 0 {
					dec = (med(cpuID) - f.Stat(cpuID).Median) * 1e3
				}
				format := row.Encoding
				if format == "" {
					format = "json"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s %s–%s%s\t%s\t%.2f\t%s\t%s\t%s\t%s\n", sc, lib, format, deflateWord(row.Compression),
					unit.Rate(r.Median), unit.Rate(r.Min), unit.Rate(r.Max), invalidNote(c), orNot(med("bench_server_cpu_per_msg"), "%.2f"),
					med(cpuID), spread(sum), orNot(med("bench_wire_per_msg"), "%.0f"), orNot(med("bench_encode_per_msg"), "%.0f"), orNot(dec, "%.0f"))
			}
		}
	}
	_ = tw.Flush()
	fmt.Fprintln(w, "server CPU: the firehose's getrusage while it sent to the run's connection (one connection at a time); sum: server + client, run by run;")
	fmt.Fprintln(w, "encode: the firehose's wall time encoding, compressing and framing, per message (a busy machine stretches it);")
	fmt.Fprintln(w, "decode: the decode path's CPU less the full path's (two medians: noise where decoding is cheap).")
}

// deflateWord is a compression setting as the grid names it.
func deflateWord(c string) string {
	switch c {
	case wire.CompressionOn.String():
		return "on"
	case wire.CompressionNoContextTakeover.String():
		return "on, no context takeover"
	}
	return "off"
}

// spread is a Stat as "median (min–max)" in µs.
func spread(s measure.Stat) string {
	if s.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f (%.2f–%.2f)", s.Median, s.Min, s.Max)
}

// orNot formats v, or "-" when it was not measured.
func orNot(v float64, format string) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf(format, v)
}
