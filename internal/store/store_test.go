package store

import (
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
	"golang.org/x/sys/unix"
)

var t0 = time.Unix(0, 1_784_563_200_123_456_789)

func at(sec float64) time.Time { return t0.Add(time.Duration(sec * float64(time.Second))) }

func open(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func TestOpenSchema(t *testing.T) {
	db, path := open(t)
	var v int
	var mode string
	if err := db.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != schemaVersion || v < 1 {
		t.Errorf("user_version = %d, %v; want %d", v, err, schemaVersion)
	}
	if err := db.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	var fk int
	if err := db.db.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys = %d, %v; want 1", fk, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopening an up-to-date database changes nothing; a newer one is refused.
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db2.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db2.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Errorf("Open of a newer schema: err = %v", err)
	}
	if _, err := OpenReadOnly(path); err == nil {
		t.Errorf("OpenReadOnly of a newer schema: no error")
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing", "soak.db")); err == nil || !strings.HasPrefix(err.Error(), "open db: ") {
		t.Errorf("Open in a missing dir: err = %v", err)
	}
}

func TestRun(t *testing.T) {
	db, _ := open(t)
	if err := db.FinishRun(at(1), "done"); err == nil {
		t.Errorf("FinishRun without a run: no error")
	}
	r := Run{
		ID: "20260721-120000-local", Name: "local", Target: "local", ProfileText: "name: local\n",
		Status: "running", GoVersion: "go1.26.8", Started: at(0), Planned: 2*time.Minute + 500*time.Millisecond,
		Host:     map[string]string{"kernel": "6.8", "cpus": "8"},
		Settings: map[string]string{"rcvbuf": "0"},
	}
	if err := db.CreateRun(r); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(r); err == nil {
		t.Errorf("second CreateRun: no error")
	}
	got, err := db.Run()
	if err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("Run() = %+v, %v\nwant %+v", got, err, r)
	}
	if err := db.FinishRun(at(125), "done"); err != nil {
		t.Fatal(err)
	}
	r.Ended, r.Status = at(125), "done"
	if got, err := db.Run(); err != nil || !reflect.DeepEqual(got, r) {
		t.Fatalf("after FinishRun: %+v, %v\nwant %+v", got, err, r)
	}
}

func TestWorkers(t *testing.T) {
	db, _ := open(t)
	ws := []Worker{
		{Lib: "gws", Module: "github.com/lxzan/gws", Version: "v1.8.9", Pid: 12, Started: at(0)},
		{Lib: "coder", Module: "github.com/coder/websocket", Version: "v1.8.15", Pid: 11, Started: at(0)},
	}
	for _, w := range ws {
		if err := db.UpsertWorker(w); err != nil {
			t.Fatal(err)
		}
	}
	ws[0].Ended, ws[0].ExitCode, ws[0].RusageUser, ws[0].RusageSys, ws[0].SampledCPU, ws[0].MaxRSS =
		at(120), 2, 10.25, 1.5, 11.7, 130<<20
	ws[0].LatCount, ws[0].LatP50, ws[0].LatP99, ws[0].LatMax = 138_800_000, 850, 4_100, 250_000
	if err := db.UpsertWorker(ws[0]); err != nil {
		t.Fatal(err)
	}
	got, err := db.Workers()
	if want := []Worker{ws[1], ws[0]}; err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("Workers() = %+v, %v\nwant %+v", got, err, want)
	}
}

func full(lib string, sec int64) Sample {
	return Sample{
		Lib: lib, Sec: sec, TS: at(float64(sec)),
		HasWorker: true, Msgs: 1600 + sec, Bytes: 580_000, MsgsTotal: 1600 * (sec + 1), BytesTotal: 580_000 * (sec + 1),
		Goroutines: 42, HeapBytes: 9 << 20, ConnsUp: 3, ReconnectsTotal: 1, LostTotal: 2, DupTotal: 0,
		LatP50: 850, LatP99: 4_100, LatMax: 31_000,
		HasProc: true, RSS: 62 << 20, CPUUser: 1.234, CPUSys: 0.5, CPUPct: 9.53, FDs: 11, Threads: 9,
	}
}

func workerHalf(s Sample) Sample {
	s.HasProc, s.RSS, s.CPUUser, s.CPUSys, s.CPUPct, s.FDs, s.Threads = false, 0, 0, 0, 0, 0, 0
	return s
}

func procHalf(s Sample) Sample {
	p := Sample{Lib: s.Lib, Sec: s.Sec, TS: s.TS, HasProc: true, NoLat: true} // no worker half: no latency
	p.RSS, p.CPUUser, p.CPUSys, p.CPUPct, p.FDs, p.Threads = s.RSS, s.CPUUser, s.CPUSys, s.CPUPct, s.FDs, s.Threads
	return p
}

// withDrops gives x a server's drops for its second.
func withDrops(x Sample, n int64) Sample {
	x.HasDrops, x.Drops = true, n
	return x
}

func TestSamples(t *testing.T) {
	tests := []struct {
		name    string
		batches [][]Sample
		lib     string
		want    []Sample
	}{
		{"full", [][]Sample{{full("gws", 1), full("coder", 1), full("gws", 2)}}, "gws",
			[]Sample{full("gws", 1), full("gws", 2)}},
		{"all libs by sec then lib", [][]Sample{{full("gws", 2), full("gws", 1), full("coder", 2)}}, "",
			[]Sample{full("gws", 1), full("coder", 2), full("gws", 2)}},
		{"worker half only", [][]Sample{{workerHalf(full("gws", 1))}}, "",
			[]Sample{workerHalf(full("gws", 1))}},
		{"process half only", [][]Sample{{procHalf(full("gws", 1))}}, "",
			[]Sample{procHalf(full("gws", 1))}},
		{"halves merge across batches", [][]Sample{{workerHalf(full("gws", 1))}, {procHalf(full("gws", 1))}}, "gws",
			[]Sample{full("gws", 1)}},
		{"halves merge in one batch", [][]Sample{{procHalf(full("gws", 1)), workerHalf(full("gws", 1))}}, "gws",
			[]Sample{full("gws", 1)}},
		{"a later half replaces", [][]Sample{{full("gws", 1)}, {procHalf(full("gws", 7))}}, "",
			[]Sample{full("gws", 1), procHalf(full("gws", 7))}},
		{"a server's drops", [][]Sample{{withDrops(full("gws", 1), 2), withDrops(full("gws", 2), 0)}}, "",
			[]Sample{withDrops(full("gws", 1), 2), withDrops(full("gws", 2), 0)}},
		{"drops kept when a half without them merges", [][]Sample{{withDrops(procHalf(full("gws", 1)), 3)}, {workerHalf(full("gws", 1))}}, "",
			[]Sample{withDrops(full("gws", 1), 3)}},
		// Zero counts are not NULL; a latency of 0 is no latency sample (a
		// recorded one is at least 1 µs): NULL (TestDrainAndNoLatency).
		{"zero values are not NULL", [][]Sample{{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true, HasProc: true}}}, "",
			[]Sample{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true, HasProc: true, NoLat: true}}},
		// A second that counted no message has no latency of its own, even
		// when its frame carried the previous second's latencies.
		{"a later frame of a second with no message, no latency", [][]Sample{
			{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true, Msgs: 5, LatP50: 500, LatP99: 900, LatMax: 1000}},
			{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true}}}, "",
			[]Sample{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true, NoLat: true}}},
		{"no message, no latency", [][]Sample{{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true, HasProc: true, LatP50: 500, LatP99: 900, LatMax: 1000}}}, "",
			[]Sample{{Lib: "gws", Sec: 3, TS: at(3), HasWorker: true, HasProc: true, NoLat: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, _ := open(t)
			for _, b := range tt.batches {
				if err := db.Write(&Batch{Samples: b}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.Samples(tt.lib)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Samples(%q) = %+v, %v\nwant %+v", tt.lib, got, err, tt.want)
			}
		})
	}
}

func TestStreamSamplesLatest(t *testing.T) {
	db, path := open(t)
	ss := func(lib string, slot int, stream string, sec, msgs int64) StreamSample {
		return StreamSample{Lib: lib, Slot: slot, Group: "markets", Stream: stream, Sec: sec,
			MsgsTotal: msgs, BytesTotal: msgs * 135, LostTotal: 1, DupTotal: 2, OOOTotal: 3, MaxSilenceMs: 1250, LastSeq: 5_234_567_890 + msgs}
	}
	batches := [][]StreamSample{
		{ss("gws", 0, "btcusdt@trade", 10, 100), ss("gws", 0, "ethusdt@trade", 10, 50), ss("coder", 0, "btcusdt@trade", 10, 99)},
		{ss("gws", 0, "btcusdt@trade", 20, 210), ss("coder", 0, "btcusdt@trade", 20, 205)}, // ethusdt stopped
		{ss("gws", 1, "btcusdt@trade", 20, 7)}, // same stream on another slot (a second connection)
	}
	for _, b := range batches {
		if err := db.Write(&Batch{StreamSamples: b}); err != nil {
			t.Fatal(err)
		}
	}
	want := []StreamSample{
		ss("coder", 0, "btcusdt@trade", 20, 205),
		ss("gws", 0, "btcusdt@trade", 20, 210),
		ss("gws", 0, "ethusdt@trade", 10, 50),
		ss("gws", 1, "btcusdt@trade", 20, 7),
	}
	got, err := db.LatestStreamSamples()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("LatestStreamSamples() = %+v, %v\nwant %+v", got, err, want)
	}
	// A late row for an older second does not move "latest" back.
	if err := db.Write(&Batch{StreamSamples: []StreamSample{ss("gws", 0, "ethusdt@trade", 5, 20)}}); err != nil {
		t.Fatal(err)
	}
	// A new writer on the same file finds the existing stream ids.
	db.Close()
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if err := db2.Write(&Batch{StreamSamples: []StreamSample{ss("coder", 0, "btcusdt@trade", 30, 300)}}); err != nil {
		t.Fatal(err)
	}
	want[0] = ss("coder", 0, "btcusdt@trade", 30, 300)
	got, err = db2.LatestStreamSamples()
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopen: %+v, %v\nwant %+v", got, err, want)
	}
	var n int
	if err := db2.db.QueryRow("SELECT count(*) FROM streams").Scan(&n); err != nil || n != 4 {
		t.Errorf("streams rows = %d, %v; want 4", n, err)
	}
}

func TestEventsAndHost(t *testing.T) {
	db, _ := open(t)
	evs := []Event{
		{Lib: "gws", TS: at(2.5), Sec: 2.5, Kind: "disconnected", Slot: 1, Group: "markets", Code: 1006, Detail: "EOF"},
		{Lib: "", TS: at(1), Sec: 1, Kind: "fault", Detail: "reset all", Fault: wire.FaultReset},
		{Lib: "gws", TS: at(8.25), Sec: 8.25, Kind: "first_data", Slot: 1, Group: "markets", Stream: "btcusdt@trade", DurMs: 5750.5},
		{Lib: "coder", TS: at(3), Sec: 3, Kind: "stall", Slot: 0, Group: "depth", Stream: "btcusdt@depth@100ms", DurMs: 3000},
	}
	host := []HostSample{
		{Sec: 2, TS: at(2), Load1: 0.5, Load5: 0.25, Load15: 0.125, CPUPct: 12.5, StealPct: 0.75, IOWaitPct: 0.01, MemUsed: 2 << 30, MemAvail: 6 << 30},
		{Sec: 1, TS: at(1), Load1: 0.4, CPUPct: 10, MemUsed: 2 << 30, MemAvail: 6 << 30},
	}
	if err := db.Write(&Batch{Events: evs, Host: host}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		lib  string
		want []Event
	}{
		{"", []Event{evs[1], evs[0], evs[3], evs[2]}},
		{"gws", []Event{evs[0], evs[2]}},
		{"fasthttp", nil},
	}
	for _, tt := range tests {
		if got, err := db.Events(tt.lib); err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Events(%q) = %+v, %v\nwant %+v", tt.lib, got, err, tt.want)
		}
	}
	if got, err := db.HostSamples(); err != nil || !reflect.DeepEqual(got, []HostSample{host[1], host[0]}) {
		t.Errorf("HostSamples() = %+v, %v", got, err)
	}
}

func TestServerCountsAndSummary(t *testing.T) {
	db, _ := open(t)
	cs := []ServerCount{
		{Tag: "markets", Stream: "btcusdt@trade", Sent: 1000, Bytes: 135_000, FirstSeq: 5_000_000_001, LastSeq: 5_000_001_000},
		{Tag: "arr", Stream: "!miniTicker@arr", Sent: 120, Bytes: 9_000_000},
	}
	if err := db.SaveServerCounts(cs); err != nil {
		t.Fatal(err)
	}
	cs[0].Sent = 1001
	if err := db.SaveServerCounts(cs[:1]); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ServerCounts(); err != nil || !reflect.DeepEqual(got, []ServerCount{cs[1], cs[0]}) {
		t.Errorf("ServerCounts() = %+v, %v", got, err)
	}

	if err := db.SaveSummary([]SummaryRow{{Metric: "old", Lib: "gws", Value: "x", Num: 1}}); err != nil {
		t.Fatal(err)
	}
	rows := []SummaryRow{
		{Metric: "messages", Lib: "gws", Value: "138.8 M", Num: 138.8e6, Ord: 1},
		{Metric: "messages", Lib: "coder", Value: "137.9 M", Num: 137.9e6, Ord: 1},
		{Metric: "cpu", Lib: "gws", Value: "9.5 %", Num: 9.5, Ord: 0},
		{Metric: "note", Lib: "", Value: "no number", Num: math.NaN(), Ord: 2},
	}
	if err := db.SaveSummary(rows); err != nil {
		t.Fatal(err)
	}
	got, err := db.Summary()
	if err != nil || len(got) != 4 {
		t.Fatalf("Summary() = %+v, %v", got, err)
	}
	if !math.IsNaN(got[3].Num) {
		t.Errorf("NaN num read back as %v", got[3].Num)
	}
	got[3].Num, rows[3].Num = 0, 0
	if want := []SummaryRow{rows[2], rows[1], rows[0], rows[3]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Summary() = %+v\nwant %+v", got, want)
	}
}

func count(t *testing.T, db *DB, table string) int {
	t.Helper()
	var n int
	if err := db.db.QueryRow("SELECT count(*) FROM " + table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestWriteIsAllOrNothing(t *testing.T) {
	db, _ := open(t)
	good := Batch{
		Samples:       []Sample{full("gws", 1), full("coder", 1)},
		StreamSamples: []StreamSample{{Lib: "gws", Group: "g", Stream: "btcusdt@trade", Sec: 1, MsgsTotal: 5}},
		Events:        []Event{{Lib: "gws", TS: at(1), Kind: "connected"}},
		Host:          []HostSample{{Sec: 1, TS: at(1)}},
	}
	tests := []struct {
		name string
		bad  func(b *Batch)
	}{
		{"bad event last", func(b *Batch) { b.Events = append(b.Events, Event{Lib: "gws", TS: at(1)}) }}, // empty kind
		{"bad sample last", func(b *Batch) { b.Samples = append(b.Samples, Sample{Sec: 2, TS: at(2)}) }}, // empty lib
		{"bad stream sample", func(b *Batch) {
			b.StreamSamples = append(b.StreamSamples, StreamSample{Lib: "gws", Group: "g", Sec: 1}) // empty stream
		}},
	}
	for _, tt := range tests {
		b := good
		b.Samples = append([]Sample(nil), good.Samples...)
		b.StreamSamples = append([]StreamSample(nil), good.StreamSamples...)
		b.Events = append([]Event(nil), good.Events...)
		tt.bad(&b)
		if err := db.Write(&b); err == nil || !strings.HasPrefix(err.Error(), "write batch: ") {
			t.Fatalf("%s: err = %v, want write batch: ...", tt.name, err)
		}
		for _, table := range []string{"samples", "stream_samples", "streams", "events", "host_samples"} {
			if n := count(t, db, table); n != 0 {
				t.Errorf("%s: %d rows in %s after a failed batch, want 0", tt.name, n, table)
			}
		}
	}
	// The stream id handed out in the rolled-back transactions is not reused from the cache.
	if err := db.Write(&good); err != nil {
		t.Fatal(err)
	}
	if got, err := db.LatestStreamSamples(); err != nil || len(got) != 1 || got[0].MsgsTotal != 5 {
		t.Fatalf("after a good batch: %+v, %v", got, err)
	}
	if n := count(t, db, "samples"); n != 2 {
		t.Errorf("samples = %d, want 2", n)
	}
}

func TestReaderWhileWriterOpen(t *testing.T) {
	db, path := open(t)
	if err := db.CreateRun(Run{ID: "r1", Name: "local", Status: "running", Started: at(0)}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(&Batch{Samples: []Sample{full("gws", 1)}}); err != nil {
		t.Fatal(err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	for sec := int64(2); sec <= 4; sec++ {
		if err := db.Write(&Batch{Samples: []Sample{full("gws", sec)}}); err != nil {
			t.Fatal(err)
		}
		got, err := ro.Samples("gws")
		if err != nil || len(got) != int(sec) || got[len(got)-1] != full("gws", sec) {
			t.Fatalf("reader after sec %d: %d samples, %v", sec, len(got), err)
		}
		if sec == 3 {
			if err := db.Checkpoint(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if r, err := ro.Run(); err != nil || r.ID != "r1" {
		t.Errorf("reader Run() = %+v, %v", r, err)
	}
	if err := ro.Write(&Batch{Samples: []Sample{full("gws", 9)}}); err == nil {
		t.Errorf("Write on a read-only db: no error")
	}
	if err := ro.CreateRun(Run{ID: "r2"}); err == nil {
		t.Errorf("CreateRun on a read-only db: no error")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The writer's close leaves one self-contained file a new reader can open.
	if fi, err := os.Stat(path + "-wal"); err == nil && fi.Size() != 0 {
		t.Errorf("WAL is %d bytes after Close, want 0 or gone", fi.Size())
	}
	ro2, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro2.Close()
	if got, err := ro2.Samples(""); err != nil || len(got) != 4 {
		t.Errorf("reader after writer closed: %d samples, %v", len(got), err)
	}
	if _, err := OpenReadOnly(filepath.Join(t.TempDir(), "none.db")); err == nil {
		t.Errorf("OpenReadOnly of a missing file: no error")
	}
}

// secondBatch is what the controller writes for second sec: nLibs samples and,
// every streamEvery seconds, nStreams stream samples spread over the libs.
func secondBatch(sec int64, libs []string, nStreams int, streamEvery int64) *Batch {
	b := &Batch{Host: []HostSample{{Sec: sec, TS: at(float64(sec)), Load1: 1.25 + float64(sec%7)/100,
		Load5: 1.1, Load15: 1.0, CPUPct: 23.4 + float64(sec%13)/10, StealPct: 0.12, IOWaitPct: 0.03,
		MemUsed: 3<<30 + sec*4096, MemAvail: 5<<30 - sec*4096}}}
	for i, lib := range libs {
		s := full(lib, sec)
		s.Msgs = 1400 + (sec*7919+int64(i)*104729)%900
		s.Bytes = s.Msgs * 360
		s.MsgsTotal, s.BytesTotal = 1600*sec+int64(i), 580_000*sec
		s.RSS = 62<<20 + sec*700 + int64(i)<<20
		s.CPUUser, s.CPUSys = float64(sec)*0.085, float64(sec)*0.012
		s.CPUPct = 9 + float64((sec*31+int64(i))%150)/100
		s.HeapBytes = 9<<20 + (sec%600)*1024
		s.LatP50, s.LatP99, s.LatMax = 700+sec%300, 4000+sec%2000, 20000+sec%30000
		b.Samples = append(b.Samples, s)
	}
	if sec%streamEvery == 0 {
		for j := range nStreams {
			lib := libs[j%len(libs)]
			b.StreamSamples = append(b.StreamSamples, StreamSample{
				Lib: lib, Slot: j / len(libs) / 25, Group: "markets", Stream: fmt.Sprintf("sym%03dusdt@trade", j/len(libs)), Sec: sec,
				MsgsTotal: 30 * sec, BytesTotal: 30 * 135 * sec, MaxSilenceMs: 900 + sec%700, LastSeq: 5_234_567_890 + 30*sec,
			})
		}
	}
	return b
}

var libs5 = []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}

// BenchmarkWrite writes one second: 5 samples, 300 stream samples, a host sample.
func BenchmarkWrite(b *testing.B) {
	db, _ := open(b)
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		if err := db.Write(secondBatch(int64(i), libs5, 300, 1)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/batch")
}

// TestSizePerHour writes one hour as a run would and checks the 24 h
// projection against the 200 MB budget.
func TestSizePerHour(t *testing.T) {
	if testing.Short() {
		t.Skip("writes an hour of data")
	}
	tests := []struct {
		name     string
		nStreams int     // stream samples per 10 s, all libraries together
		maxDay   float64 // bytes per 24 h; 0 = only report
	}{
		{"samples only", 0, 100e6},
		{"300 streams", 300, 200e6},
		{"1500 streams", 1500, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db, path := open(t)
			start := time.Now()
			for sec := int64(1); sec <= 3600; sec++ {
				if err := db.Write(secondBatch(sec, libs5, tt.nStreams, 10)); err != nil {
					t.Fatal(err)
				}
				if sec%300 == 0 {
					if err := db.Checkpoint(); err != nil {
						t.Fatal(err)
					}
				}
			}
			elapsed := time.Since(start)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			perHour := float64(fi.Size())
			t.Logf("%s: %.1f MB/hour, %.0f MB per 24 h; %.0f µs per batch", tt.name,
				perHour/1e6, perHour*24/1e6, float64(elapsed.Microseconds())/3600)
			if tt.maxDay > 0 && perHour*24 > tt.maxDay {
				t.Errorf("24 h projection %.0f MB is over %.0f MB", perHour*24/1e6, tt.maxDay/1e6)
			}
			sizes(t, path)
		})
	}
}

// sizes logs the bytes per table when the dbstat table is compiled in.
func sizes(t *testing.T, path string) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		return // dbstat not available
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if rows.Scan(&name, &n) == nil {
			t.Logf("  %-40s %8.2f MB", name, float64(n)/1e6)
		}
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Log(err)
	}
}

// TestReadOnlyAfterWriterLeavesNoFiles: reading a finished run's database
// (no -wal beside it) leaves the run directory as the writer left it, and
// a reader opened while the writer runs still sees its commits.
func TestReadOnlyAfterWriterLeavesNoFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "soak.db")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateRun(Run{ID: "r", Name: "n", Target: "t", Status: "running"}); err != nil {
		t.Fatal(err)
	}
	r, err := OpenReadOnly(path) // the writer is open: -wal exists, a normal reader
	if err != nil {
		t.Fatal(err)
	}
	if run, err := r.Run(); err != nil || run.ID != "r" {
		t.Fatalf("reader during the run: %+v, %v", run, err)
	}
	r.Close()
	if err := w.FinishRun(time.Now(), "done"); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err = OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	if run, err := r.Run(); err != nil || run.Status != "done" {
		t.Fatalf("reader after the run: %+v, %v", run, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err == nil {
			t.Errorf("reading the finished database left %s behind", filepath.Base(path+suffix))
		}
	}
}

// TestCopyWithoutWAL: a copy of a running database made without its -wal file
// holds no tables (everything is still in the WAL). Reading it, or opening
// it to write (resume, thresholds), says so instead of "schema version 0",
// and leaves the copy as it was; with the -wal copied too, the run is there.
func TestCopyWithoutWAL(t *testing.T) {
	db, path := open(t)
	if err := db.CreateRun(Run{ID: "r1", Name: "r", Status: "running", Started: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(&Batch{Samples: []Sample{{Sec: 1, Lib: "gorilla", TS: at(1), HasWorker: true, Msgs: 5}}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cp := filepath.Join(dir, "soak.db")
	for _, ext := range []string{"", "-wal"} {
		b, err := os.ReadFile(path + ext)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "soak.db"+ext+".keep"), b, 0o600); err != nil {
			t.Fatal(err)
		}
		if ext == "" {
			if err := os.WriteFile(cp, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	orig, _ := os.ReadFile(cp)
	for _, o := range []struct {
		name string
		open func(string) (*DB, error)
	}{{"OpenReadOnly", OpenReadOnly}, {"Open", Open}} {
		name := o.name
		d, err := o.open(cp)
		if err == nil {
			d.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "no tables") || !strings.Contains(err.Error(), "soak.db-wal") {
			t.Errorf("%s of a copy without its WAL: %v; want an error saying it has no tables and needs its -wal", name, err)
		}
		if now, _ := os.ReadFile(cp); !reflect.DeepEqual(now, orig) {
			t.Errorf("%s changed the copy", name)
		}
	}
	// With its WAL, the copy is the run.
	for _, ext := range []string{"", "-wal"} {
		if err := os.Rename(filepath.Join(dir, "soak.db"+ext+".keep"), cp+ext); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(cp + "-shm")
	ro, err := OpenReadOnly(cp)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if r, err := ro.Run(); err != nil || r.ID != "r1" {
		t.Errorf("the copy with its WAL: run %+v, %v", r, err)
	}
}

// signalWriter calls fn with every log line written to it.
type signalWriter func(line string)

func (f signalWriter) Write(p []byte) (int, error) { f(string(p)); return len(p), nil }

// TestCloseRetriesCheckpoint: the writer's final checkpoint fails for real
// (EFBIG: RLIMIT_FSIZE below the size the database grows to) and is retried;
// once the limit is lifted, after the first retry is logged, it succeeds:
// the WAL is folded in and removed, every row is in soak.db.
func TestCloseRetriesCheckpoint(t *testing.T) {
	db, path := open(t)
	if err := db.CreateRun(Run{ID: "r1", Name: "r", Status: "running", Started: t0}); err != nil {
		t.Fatal(err)
	}
	const secs = 200
	for sec := int64(1); sec <= secs; sec++ {
		if err := db.Write(&Batch{Samples: []Sample{{Sec: sec, Lib: "gorilla", TS: at(float64(sec)), HasWorker: true, Msgs: sec}}}); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(fi.Size()), Max: old.Max}); err != nil {
		t.Skipf("cannot set RLIMIT_FSIZE: %v", err)
	}
	lifted := false
	lift := func() {
		if !lifted {
			lifted = true
			if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
				t.Error(err)
			}
		}
	}
	defer lift()
	var retries int
	log := slog.New(slog.NewTextHandler(signalWriter(func(line string) {
		if strings.Contains(line, `msg="checkpoint failed; retrying"`) && strings.Contains(line, "too large") {
			retries++
			lift() // the disk has room again
		}
	}), nil))
	if err := db.CloseWith(&Retry{Budget: time.Minute, Log: log}); err != nil {
		t.Fatalf("close: %v", err)
	}
	if retries != 1 {
		t.Errorf("%d retries logged, want 1", retries)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the WAL is still there after the checkpoint: %v", err)
	}
	ro, err := OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if n, err := ro.Count("samples"); err != nil || n != secs {
		t.Errorf("%d samples in soak.db, %v; want %d", n, err, secs)
	}
}
