package measure

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestCheckWire: the slot accounts against the server's per-connection
// counts, summed over attempts: exact when the client read what the server
// wrote before the client's close (the echo unread) or all of it (the echo
// read); any other count is a mismatch, by the bytes it differs.
func TestCheckWire(t *testing.T) {
	server := []store.ServerWire{
		// gorilla slot 0: two attempts, the first closed by the server (all
		// readable), the second by the client (the 13-byte echo after).
		{Tag: "gorilla/0/1", WireBytes: 1000, Readable: 1000},
		{Tag: "gorilla/0/2", WireBytes: 513, Readable: 500},
		{Tag: "gorilla/1/1", WireBytes: 213, Readable: 200},
		{Tag: "coder/0/1", WireBytes: 313, Readable: 300},
		{Tag: "gws/0/1", WireBytes: 413, Readable: 400},
		{Tag: "gws/1/1", WireBytes: 113, Readable: 100},
		{Tag: "preflight", WireBytes: 99, Readable: 99}, // not a slot's: left out
	}
	dials := []store.SlotDials{
		{Lib: "gorilla", Slot: 0, WireBytes: 1500},
		{Lib: "gorilla", Slot: 1, WireBytes: 200},
		{Lib: "coder", Slot: 0, WireBytes: 313},
		{Lib: "gws", Slot: 0, WireBytes: 406}, // neither 400 nor 413
		{Lib: "gws", Slot: 1, WireBytes: 90},  // short of both
		{Lib: "fasthttp", Slot: 0, WireBytes: 0},
	}
	got := CheckWire(server, dials)
	tests := []struct {
		lib                         string
		ok                          bool
		exact, echoRead, echoUnread int
		echoBytes, absDiff, diff    int64
		text                        string
	}{
		{"gorilla", true, 2, 0, 2, 26, 0, 0, "✓ 1.7 kB on 2 slots; close echo unread ×2 (26 B)"},
		{"coder", true, 1, 1, 0, 0, 0, 0, "✓ 313 B on 1 slot; close echo read ×1"},
		{"gws", false, 0, 0, 0, 0, 16, -4, "✗ 2 of 2 slots differ: client -4 B (slot 0: read 406, server wrote 413, 400 before the client's close; slot 1: read 90"},
		{"fasthttp", true, 1, 0, 0, 0, 0, 0, "✓ 0 B on 1 slot"}, // never connected: nothing on either side
	}
	if len(got) != len(tests) {
		t.Fatalf("%d checks, want %d: %+v", len(got), len(tests), got)
	}
	for i, tc := range tests {
		w := got[i]
		if w.Lib != tc.lib || w.OK() != tc.ok || w.Exact != tc.exact || w.EchoRead != tc.echoRead || w.EchoUnread != tc.echoUnread ||
			w.EchoBytes != tc.echoBytes || w.AbsDiff() != tc.absDiff || w.Diff() != tc.diff {
			t.Errorf("%s: got %+v (ok %v, abs diff %d, diff %d)", tc.lib, w, w.OK(), w.AbsDiff(), w.Diff())
		}
		if !strings.HasPrefix(w.String(), tc.text) {
			t.Errorf("%s: %q, want it to start with %q", tc.lib, w.String(), tc.text)
		}
	}
	if s := (WireCheck{}).String(); s != NotMeasured {
		t.Errorf("no slots: %q", s)
	}
}

// TestWireCheckAfterResume: a resumed run compares what the workers read
// since the resume with the replay server the resume started, and says so;
// a slot's interim account (recorded during the run, its bytes as of then:
// a worker that died at the end) is not compared; a worker restarted before
// the resume does not stop the comparison of the part after it, one
// restarted after it does.
func TestWireCheckAfterResume(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "w", Name: "w", Target: "local", Started: start, Planned: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for _, lib := range []string{"gorilla", "coder", "gws"} {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "m", SampledCPU: math.NaN()}); err != nil {
			t.Fatal(err)
		}
		b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: 1, TS: start, HasWorker: true})
	}
	b.Events = []store.Event{
		{Lib: "gorilla", TS: start.Add(2 * time.Second), Sec: 2, Kind: wire.EventWorkerRestart},
		{TS: start.Add(5 * time.Second), Sec: 5, Kind: wire.EventOutage, DurMs: 7000},
		{Lib: "gws", TS: start.Add(14 * time.Second), Sec: 14, Kind: wire.EventWorkerRestart},
	}
	b.Dials = []store.SlotDials{{Lib: "coder", Slot: 0, Group: "g", Dials: 2, WireBytes: 50, Interim: true}}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveTruth(nil, []store.SlotDials{{Lib: "gorilla", Slot: 0, Group: "g", Dials: 3, WireBytes: 500},
		{Lib: "gws", Slot: 0, Group: "g", Dials: 3, WireBytes: 400}}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveServerWire([]store.ServerWire{{Tag: "gorilla/0/0", WireBytes: 500, Readable: 500},
		{Tag: "coder/0/0", WireBytes: 90, Readable: 90}, {Tag: "gws/0/0", WireBytes: 400, Readable: 400}}); err != nil {
		t.Fatal(err)
	}
	r, err := Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	for lib, want := range map[string]string{
		"gorilla": "✓ 500 B on 1 slot, since the resume at 12 s",
		"coder":   NotMeasured,
		"gws":     Restarted(1),
	} {
		if c, ok := r.Get("wire_truth", Dims{Lib: lib}); !ok || c.Text != want {
			t.Errorf("%s: %q, want %q", lib, c.Text, want)
		}
	}
	if c, _ := r.Get("dials", Dims{Lib: "coder"}); c.Text != "2 / 0" {
		t.Errorf("coder's dials %q: its interim account counts", c.Text)
	}
}

// TestCPUUnreaped: the CPU sampled of processes never reaped (a resumed
// run's dead workers) is left out of the comparison with the rusage, and
// the cell says how much.
func TestCPUUnreaped(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(store.Run{ID: "u", Name: "u", Target: "local", Planned: 20 * time.Second}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", SampledCPU: 3.5, CPUUnreaped: 1.5, RusageUser: 1.5, RusageSys: 0.5}); err != nil {
		t.Fatal(err)
	}
	r, err := Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := r.Get("cpu_seconds", Dims{Lib: "gws"}); c.Text != "3.50 / 2.00 (+0.0 %; 1.50 s before a resume, not in rusage)" || c.Num != 3.5 {
		t.Errorf("cpu_seconds %+v", c)
	}
}
