// Package export writes a run's database as flat files: one CSV file or one
// NDJSON file (one JSON object per line) per table, with units in the column
// names. Tables are streamed row by row, so a day-long run exports in
// constant memory.
package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// Formats are the values Write accepts: json is ndjson's older name.
var Formats = []string{"csv", "ndjson", "json"}

// Columns are the header of each exported table, in file order; docs/reference.md's
// "Export" section defines every one.
var Columns = map[string][]string{
	"samples": {"t_unix_ms", "time_utc", "run_s", "phase", "lib", "msgs_per_s", "bytes_per_s", "msgs_total", "bytes_total",
		"goroutines", "heap_bytes", "conns_up", "reconnects_total", "lost_total", "dup_total",
		"lat_p50_us", "lat_p99_us", "lat_max_us", "rss_bytes", "cpu_user_s_total", "cpu_sys_s_total",
		"cpu_pct", "fds", "threads", "wire_bytes_per_s", "wire_bytes_total", "drops_per_s", "writes_per_s"},
	"stream_samples": {"t_unix_ms", "time_utc", "run_s", "lib", "grp", "slot", "stream", "msgs_total", "bytes_total",
		"lost_total", "dup_total", "ooo_total", "max_silence_ms", "last_seq", "stalls_total", "stalled"},
	"events":       {"t_unix_ms", "time_utc", "run_s", "lib", "kind", "slot", "grp", "stream", "code", "detail", "dur_ms"},
	"host_samples": {"t_unix_ms", "time_utc", "run_s", "phase", "load1", "load5", "load15", "cpu_pct", "steal_pct", "iowait_pct", "mem_used_bytes", "mem_avail_bytes"},
	// The end table, a row per measure and column: the cell, its number,
	// and each of its values with what it is and its unit (summaryColumns:
	// more than three when a cell has more).
	"summary":       append([]string{"ord", "id", "metric", "lib", "value", "num", "num_unit"}, valueColumns(3)...),
	"clock_samples": {"t_unix_ms", "time_utc", "run_s", "synced", "state", "status", "esterror_us", "maxerror_us"},
	// The run's columns: every lib of the other tables, the library behind
	// it and what a variant sets (wire.Column).
	"columns": {"lib", "library", "settings", "module", "version", "runtime"},
	// A bench's client runs (soak bench), the warm-up round included, then
	// the bench measures of the run (measureColumns).
	"bench_results": append([]string{"scenario", "encoding", "compression", "path", "lib", "version", "round", "warmup", "valid", "reason", "err",
		"msgs", "payload_bytes", "sent_msgs", "sent_payload_bytes", "wall_ns", "user_cpu_ns", "sys_cpu_ns",
		"read_syscalls", "read_bytes", "maxrss_kib", "mallocs", "lost", "dup", "rcvbuf_bytes", "runtime",
		"wire_bytes", "extensions", "server_user_cpu_ns", "server_sys_cpu_ns", "server_encode_ns"}, measureColumns(measure.Bench)...),
	// A server bench's load runs (soak bench -side server), the warm-up
	// round included, then the server bench measures of the run.
	"chat_results": append([]string{"lib", "strategy", "clients", "round", "warmup", "valid", "reason", "err", "rounds", "per_round", "sent",
		"deliveries", "server_deliveries", "wall_ns", "server_user_cpu_ns", "server_sys_cpu_ns", "server_maxrss_kib", "server_writes",
		"drops", "client_user_cpu_ns", "client_sys_cpu_ns", "client_maxrss_kib", "client_reads", "lat_p50_us", "lat_p99_us", "lat_max_us"},
		measureColumns(measure.Chat)...),
}

// valueColumns are the summary's columns of a cell's values 1 to n: what
// each is (part_k), its number (num_k) and unit (unit_k).
func valueColumns(n int) []string {
	var out []string
	for k := 1; k <= n; k++ {
		out = append(out, fmt.Sprintf("part_%d", k), fmt.Sprintf("num_%d", k), fmt.Sprintf("unit_%d", k))
	}
	return out
}

// measureColumns are the export columns of a bench's measures: those the
// catalogue names a column for, in its order.
func measureColumns(ms []*measure.Measure) []string {
	var out []string
	for _, m := range ms {
		if m.Column != "" {
			out = append(out, m.Column)
		}
	}
	return out
}

// Tables is the order in which Write writes the tables.
var Tables = []string{"samples", "stream_samples", "events", "host_samples", "clock_samples", "summary", "columns"}

// BenchTables are the tables of a bench's database: Write writes those
// that hold its runs (bench_results alone for a bench without runs).
var BenchTables = []string{"bench_results", "chat_results"}

// File returns the file name of a table in a format.
func File(table, format string) string {
	if format == "csv" {
		return table + ".csv"
	}
	return table + ".ndjson"
}

// Write exports every table of db into dir (created if missing) in format
// ("csv", or "ndjson" and its older name "json") and returns the number of
// rows written per table: Tables for a soak, BenchTables for a bench.
func Write(db *store.DB, dir, format string) (map[string]int64, error) {
	if !slices.Contains(Formats, format) {
		return nil, fmt.Errorf("unknown format %q: want csv or ndjson", format)
	}
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create export dir: %w", err)
	}
	kind, err := db.Kind()
	if err != nil {
		return nil, err
	}
	tables := Tables
	if kind == store.KindBench {
		if tables, err = benchTables(db); err != nil {
			return nil, err
		}
	}
	counts := map[string]int64{}
	for _, table := range tables {
		n, err := writeTable(db, filepath.Join(dir, File(table, format)), format, table, run)
		if err != nil {
			return counts, fmt.Errorf("export %s: %w", table, err)
		}
		counts[table] = n
	}
	return counts, nil
}

// benchTables are the tables of BenchTables that hold a bench's runs.
func benchTables(db *store.DB) ([]string, error) {
	rs, err := db.BenchResults()
	if err != nil {
		return nil, err
	}
	cs, err := db.ChatResults()
	if err != nil {
		return nil, err
	}
	var out []string
	if len(rs) > 0 || len(cs) == 0 {
		out = append(out, "bench_results")
	}
	if len(cs) > 0 {
		out = append(out, "chat_results")
	}
	return out, nil
}

// writeTable writes one table's file through rundir.WriteFile: a temporary
// file renamed over path once complete (mode 0600), so a failed export
// leaves the previous file and a symlink at path is replaced, not followed.
func writeTable(db *store.DB, path, format, table string, run store.Run) (int64, error) {
	var rows int64
	cols := Columns[table]
	var sum []summaryRow
	if table == "summary" { // its columns are as many as its cells have values
		var err error
		if sum, err = summaryRows(db); err != nil {
			return 0, err
		}
		cols = summaryColumns(sum, cols)
	}
	err := rundir.WriteFile(path, func(f io.Writer) error {
		bw := bufio.NewWriterSize(f, 256<<10)
		w := &rowWriter{w: bw, cols: cols, json: format != "csv"}
		if !w.json {
			w.header()
		}
		var err error
		if table == "summary" {
			err = fillSummary(w, sum)
		} else {
			err = fill(db, table, w, run)
		}
		if ferr := bw.Flush(); ferr != nil && err == nil {
			err = ferr
		}
		rows = w.rows
		return err
	})
	return rows, err
}

// unixMs is t in Unix milliseconds.
func unixMs(t time.Time) int64 { return t.UnixMilli() }

// instant writes t as t_unix_ms and time_utc: Unix milliseconds, and the
// same as ISO 8601 in UTC to the millisecond (what a spreadsheet reads as a
// time).
func (w *rowWriter) instant(t time.Time) {
	ms := unixMs(t)
	w.int(ms)
	w.sep()
	var tmp [32]byte
	b := time.UnixMilli(ms).UTC().AppendFormat(tmp[:0], "2006-01-02T15:04:05.000Z")
	if w.json {
		w.buf = append(append(append(w.buf, '"'), b...), '"')
	} else {
		w.buf = append(w.buf, b...)
	}
}

// phase is what a second of the run is: the warm-up's (second 0 and
// before), the window's, or the drain's after it (flagged in the database:
// the workers read on while nothing is sent; not a window second).
func phase(sec int64, drain bool) string {
	switch {
	case drain:
		return "drain"
	case sec < 1:
		return "warmup"
	}
	return "window"
}

func fill(db *store.DB, table string, w *rowWriter, run store.Run) error {
	start, planned := run.Started, int64(run.Planned/time.Second)
	switch table {
	case "bench_results":
		rs, err := db.BenchResults()
		if err != nil {
			return err
		}
		for i, smp := range measure.BenchSamples(rs) {
			r := rs[i]
			w.str(smp.Scenario)
			w.str(smp.Encoding)
			w.str(smp.Compression)
			w.str(r.Path)
			w.str(r.Lib)
			w.str(r.Version)
			w.int(int64(r.Round))
			w.bool(r.Round == 0)
			w.bool(r.Valid)
			w.str(r.Reason)
			w.str(r.Err)
			for _, v := range []int64{r.Msgs, r.Bytes, r.SentMsgs, r.SentBytes, r.WallNS, r.UserNS, r.SysNS, r.Syscr, r.Rchar,
				r.MaxRSSKiB, int64(r.Mallocs), r.Lost, r.Dup, int64(r.RcvBuf)} {
				w.int(v)
			}
			w.str(r.Runtime)
			w.int(r.WireBytes)
			w.str(r.Extensions)
			// The firehose's side, empty where it was not measured (a bench
			// recorded before, or a run it has no stats of).
			w.ints(r.ServerMeasured, r.ServerUserNS, r.ServerSysNS, r.EncodeNS)
			w.measures(measure.Bench, &smp)
			if err := w.end(); err != nil {
				return err
			}
		}
		return nil
	case "chat_results":
		rs, err := db.ChatResults()
		if err != nil {
			return err
		}
		for i, smp := range measure.ChatSamples(rs) {
			r := rs[i]
			w.str(r.Lib)
			w.str(r.Strategy) // "" for a bench recorded before strategies
			w.int(int64(r.Clients))
			w.int(int64(r.Round))
			w.bool(r.Round == 0)
			w.bool(r.Valid)
			w.str(r.Reason)
			w.str(r.Err)
			// What a run recorded before chat_results did not record is
			// empty (Partial), never zero.
			w.ints(!r.Partial, int64(r.Rounds), int64(r.PerRound), r.Sent)
			w.ints(true, r.Deliveries, r.ServerDeliveries, r.WallNS, r.ServerUserNS, r.ServerSysNS, r.ServerMaxRSSKiB)
			w.ints(!r.Partial, r.ServerWrites, r.Drops, r.ClientUserNS, r.ClientSysNS, r.ClientMaxRSSKiB, r.ClientReads)
			for _, v := range []float64{r.P50us, r.P99us, r.MaxUs} {
				if r.Partial {
					v = math.NaN()
				}
				w.float(v, -1)
			}
			w.measures(measure.Chat, &smp)
			if err := w.end(); err != nil {
				return err
			}
		}
		return nil
	case "samples":
		return db.EachSample(func(x *store.Sample) error {
			w.instant(x.TS)
			w.int(x.Sec)
			w.str(phase(x.Sec, x.Drain))
			w.str(x.Lib)
			if x.HasWorker {
				w.int(x.Msgs)
				w.int(x.Bytes)
				w.int(x.MsgsTotal)
				w.int(x.BytesTotal)
				w.int(int64(x.Goroutines))
				w.int(x.HeapBytes)
				w.int(int64(x.ConnsUp))
				w.int(x.ReconnectsTotal)
				w.int(x.LostTotal)
				w.int(x.DupTotal)
				w.ints(!x.NoLat, x.LatP50, x.LatP99, x.LatMax) // a second without a latency sample: empty
			} else {
				w.nulls(13)
			}
			if x.HasProc {
				w.int(x.RSS)
				w.float(x.CPUUser, 3)
				w.float(x.CPUSys, 3)
				w.float(x.CPUPct, 2)
				w.int(int64(x.FDs))
				w.int(int64(x.Threads))
			} else {
				w.nulls(6)
			}
			if x.HasWorker {
				w.int(x.WireBytes)
				w.int(x.WireBytesTotal)
			} else {
				w.nulls(2)
			}
			w.ints(x.HasDrops, x.Drops, x.Writes)
			return w.end()
		})
	case "stream_samples":
		return db.EachStreamSample(func(x *store.StreamSample) error {
			w.instant(start.Add(time.Duration(x.Sec) * time.Second))
			w.int(x.Sec)
			w.str(x.Lib)
			w.str(x.Group)
			w.int(int64(x.Slot))
			w.str(x.Stream)
			w.int(x.MsgsTotal)
			w.int(x.BytesTotal)
			w.int(x.LostTotal)
			w.int(x.DupTotal)
			w.int(x.OOOTotal)
			w.int(x.MaxSilenceMs)
			w.int(x.LastSeq)
			w.int(x.StallsTotal)
			w.bool(x.Stalled)
			return w.end()
		})
	case "events":
		return db.EachEvent(func(e *store.Event) error {
			w.instant(e.TS)
			w.float(e.Sec, 6)
			w.str(e.Lib)
			w.str(string(e.Kind))
			w.int(int64(e.Slot))
			w.str(e.Group)
			w.str(e.Stream)
			w.int(int64(e.Code))
			w.str(e.Detail)
			w.float(e.DurMs, 3)
			return w.end()
		})
	case "host_samples":
		return db.EachHostSample(func(h *store.HostSample) error {
			w.instant(h.TS)
			w.int(h.Sec)
			w.str(phase(h.Sec, planned > 0 && h.Sec > planned))
			w.float(h.Load1, 2)
			w.float(h.Load5, 2)
			w.float(h.Load15, 2)
			w.float(h.CPUPct, 2)
			w.float(h.StealPct, 2)
			w.float(h.IOWaitPct, 2)
			w.int(h.MemUsed)
			w.int(h.MemAvail)
			return w.end()
		})
	case "clock_samples":
		cs, err := db.ClockSamples()
		if err != nil {
			return err
		}
		for _, c := range cs {
			w.instant(c.TS)
			w.int(c.Sec)
			w.bool(c.Synced)
			w.int(int64(c.State))
			w.int(int64(c.Status))
			w.int(c.EstErrorUs)
			w.int(c.MaxErrorUs)
			if err := w.end(); err != nil {
				return err
			}
		}
		return nil
	case "columns":
		cols, err := RunColumns(db)
		if err != nil {
			return err
		}
		for _, c := range cols {
			w.str(c.Name)
			w.str(c.Lib)
			w.str(c.Settings)
			w.str(c.Module)
			w.str(c.Version)
			w.str(c.Runtime)
			if err := w.end(); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown table %q", table)
}

// summaryColumns are cols, the summary's columns, with as many columns of
// values as the cells of rows have, at least as many as cols has.
func summaryColumns(rows []summaryRow, cols []string) []string {
	n := (len(cols) - 7) / 3
	for _, r := range rows {
		n = max(n, len(r.vals))
	}
	return append(Columns["summary"][:7:7], valueColumns(n)...)
}

// summaryRow is a cell of the end table as exported: as stored, with its
// values and what they are when it shows several.
type summaryRow struct {
	store.SummaryRow
	vals  []float64
	parts []measure.Part
}

// summaryRows returns the stored end table, or the one computed now when
// the run has none stored yet (a run still going, or one that crashed);
// each cell with its values, from the table computed now where it shows
// the same text.
func summaryRows(db *store.DB) ([]summaryRow, error) {
	t, err := measure.Summarize(db)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	rows, err := db.Summary()
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		rows = t.SummaryRows()
	}
	out := make([]summaryRow, len(rows))
	for i, r := range rows {
		out[i].SummaryRow = r
		if m := measure.Find(r.ID, r.Metric); m != nil {
			out[i].vals, out[i].parts = t.ValuesOf(m.ID, r.Lib, r.Value)
		}
	}
	return out, nil
}

// fillSummary writes the summary's rows. A row stored without an id
// (before the ids) is matched to its measure by name; a cell of one value
// has it as num_1 too.
func fillSummary(w *rowWriter, rows []summaryRow) error {
	n := (len(w.cols) - len(w.prefix) - 7) / 3
	for _, r := range rows {
		var id, unit string
		m := measure.Find(r.ID, r.Metric)
		if m != nil {
			id, unit = m.ID, m.Unit
		}
		w.int(int64(r.Ord))
		w.str(id)
		w.str(r.Metric)
		w.str(r.Lib)
		w.str(r.Value)
		w.float(r.Num, -1)
		w.str(unit)
		vals, parts := r.vals, r.parts
		if vals == nil && m != nil && m.Parts == nil {
			vals, parts = []float64{r.Num}, []measure.Part{{Name: m.ID, Unit: m.Unit}}
		}
		for k := range n {
			if k >= len(vals) || math.IsNaN(vals[k]) {
				if k < len(parts) {
					w.str(parts[k].Name)
					w.nulls(1)
					w.str(parts[k].Unit)
				} else {
					w.nulls(3)
				}
				continue
			}
			w.str(parts[k].Name)
			w.float(vals[k], -1)
			w.str(parts[k].Unit)
		}
		if err := w.end(); err != nil {
			return err
		}
	}
	return nil
}

// rowWriter encodes one row at a time as CSV or as a JSON object keyed by
// the column names. Numbers are written with strconv into one reused buffer.
type rowWriter struct {
	w    *bufio.Writer
	cols []string
	json bool
	buf  []byte
	col  int
	rows int64
	// prefix are cells written first on every row (WriteRuns: the run and
	// its host), not counted by the table's own cells.
	prefix []string
}

func (w *rowWriter) header() {
	for i, c := range w.cols {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, c...)
	}
	w.buf = append(w.buf, '\n')
	w.w.Write(w.buf)
	w.buf = w.buf[:0]
}

// sep starts the next cell: a comma, or the JSON key.
func (w *rowWriter) sep() {
	if w.col == 0 && w.prefix != nil {
		p := w.prefix
		w.prefix = nil // its own cells start no prefix
		for _, c := range p {
			w.str(c)
		}
		w.prefix = p
	}
	if w.json {
		if w.col == 0 {
			w.buf = append(w.buf, '{')
		} else {
			w.buf = append(w.buf, ',')
		}
		w.buf = append(w.buf, '"')
		w.buf = append(w.buf, w.cols[w.col]...)
		w.buf = append(w.buf, '"', ':')
	} else if w.col > 0 {
		w.buf = append(w.buf, ',')
	}
	w.col++
}

func (w *rowWriter) int(v int64) {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, v, 10)
}

// ints writes vs, or as many missing cells when not recorded.
func (w *rowWriter) ints(recorded bool, vs ...int64) {
	if !recorded {
		w.nulls(len(vs))
		return
	}
	for _, v := range vs {
		w.int(v)
	}
}

// measures writes the sample's value of each measure of ms that has a
// column (measureColumns), missing where not measured.
func (w *rowWriter) measures(ms []*measure.Measure, s *measure.Sample) {
	for _, m := range ms {
		if m.Column != "" {
			w.float(s.Value(m.ID), -1)
		}
	}
}

// float writes v with prec decimals (-1: its shortest form at 15
// significant digits, so that the noise of float arithmetic, as in
// 1.5899999999999999, is not written); NaN and infinities are written as
// missing.
func (w *rowWriter) float(v float64, prec int) {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		w.nulls(1)
		return
	}
	w.sep()
	if prec < 0 {
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64) // cannot fail: a float's own text
	}
	w.buf = strconv.AppendFloat(w.buf, v, 'f', prec, 64)
}

// bool writes 1 or 0, in CSV and JSON alike.
func (w *rowWriter) bool(v bool) {
	w.sep()
	if v {
		w.buf = append(w.buf, '1')
	} else {
		w.buf = append(w.buf, '0')
	}
}

func (w *rowWriter) nulls(n int) {
	for range n {
		w.sep()
		if w.json {
			w.buf = append(w.buf, "null"...)
		}
	}
}

func (w *rowWriter) str(s string) {
	w.sep()
	if w.json {
		b, _ := json.Marshal(s) // a string always marshals
		w.buf = append(w.buf, b...)
		return
	}
	w.buf = appendCSV(w.buf, s)
}

// end finishes the row and hands it to the buffered file.
func (w *rowWriter) end() error {
	if w.col != len(w.cols) {
		return fmt.Errorf("row has %d cells, header %d", w.col, len(w.cols))
	}
	if w.json {
		w.buf = append(w.buf, '}')
	}
	w.buf = append(w.buf, '\n')
	_, err := w.w.Write(w.buf)
	w.buf, w.col = w.buf[:0], 0
	w.rows++
	return err
}

// appendCSV appends s as one CSV field (RFC 4180): quoted when it holds a
// comma, a quote, a line break or leading/trailing space.
func appendCSV(b []byte, s string) []byte {
	need := s != "" && (s[0] == ' ' || s[len(s)-1] == ' ')
	for i := 0; i < len(s) && !need; i++ {
		switch s[i] {
		case ',', '"', '\n', '\r':
			need = true
		}
	}
	if !need {
		return append(b, s...)
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			b = append(b, '"')
		}
		b = append(b, s[i])
	}
	return append(b, '"')
}
