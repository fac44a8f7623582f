package measure

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestBlackholeFinding: from a run's events with known instants — a
// blackhole that finds three connections of gorilla open and two of gws,
// gorilla's noticed by the pong timeout 1.5, 1.6 and 2.0 s later and back
// with 30, 0 and 12 ids lost, gws's one noticed by the silence watchdog 6 s later and the other
// never (it survived), then a close that ends the watch — the three rows say
// exactly that; the reconnect of a later, unrelated disconnect counts for
// nothing.
func TestBlackholeFinding(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "bh", Name: "bh", Target: "local", Started: start, Planned: 30 * time.Second}); err != nil {
		t.Fatal(err)
	}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	ev := func(lib string, s float64, kind wire.EventKind, slot int, detail string) store.Event {
		return store.Event{Lib: lib, TS: at(s), Sec: s, Kind: kind, Slot: slot, Detail: detail}
	}
	fault := func(lib string, s float64, k wire.FaultKind, conns string) store.Event {
		e := ev(lib, s, wire.EventFault, 0, string(k)+" for=5s; "+conns+" connections (the link's, at once for every column)")
		e.Fault = k
		return e
	}
	b := &store.Batch{Events: []store.Event{
		fault("gorilla", 10, wire.FaultBlackhole, "3"), fault("gws", 10, wire.FaultBlackhole, "2"),
		ev("gorilla", 11.5, wire.EventDisconnected, 0, "pong_timeout: no pong for 1.5s"),
		ev("gorilla", 11.6, wire.EventDisconnected, 2, "pong_timeout: no pong for 1.5s"),
		ev("gorilla", 12, wire.EventDisconnected, 1, "pong_timeout: no pong for 1.5s"),
		ev("gws", 16, wire.EventDisconnected, 1, "stall_abort: all 3 subscriptions silent for 6s or more"),
		ev("gorilla", 15.5, wire.EventReconnect, 0, "detect=0ms backoff=0ms dial=5ms handshake=1ms subscribed=0ms first_data=2ms lost=30 back=3/3"),
		ev("gorilla", 15.6, wire.EventReconnect, 1, "detect=0ms lost=12 back=3/3"),
		ev("gorilla", 15.7, wire.EventReconnect, 2, "lost=0 back=3/3"),
		ev("gws", 16.2, wire.EventReconnect, 1, "lost=7 back=3/3"),
		fault("gorilla", 20, wire.FaultClose, "2"), fault("gws", 20, wire.FaultClose, "2"),
		ev("gws", 20.1, wire.EventDisconnected, 0, "server_close: 1000"),
		ev("gws", 20.3, wire.EventReconnect, 0, "lost=99 back=3/3"),
	}}
	for i, lib := range []string{"gorilla", "gws", "coder"} {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "m", Version: "v", Pid: i + 1, SampledCPU: math.NaN()}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	r, err := Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]string{ // detect, mechanism, lost
		"gorilla": {"1.6 s / 2.0 s", "pong timeout ×3", "42"},
		"gws":     {"6.0 s / 6.0 s (1 survived)", "silence watchdog ×1", "7"},
		"coder":   {NotMeasured, NotMeasured, NotMeasured},
	}
	for lib, w := range want {
		for i, id := range []string{"blackhole_detect", "blackhole_mechanism", "blackhole_lost"} {
			c, ok := r.Get(id, Dims{Lib: lib})
			if !ok || c.Text != w[i] {
				t.Errorf("%s %s: %q, want %q", lib, id, c.Text, w[i])
			}
		}
	}
	if c, _ := r.Get("blackhole_detect", Dims{Lib: "gorilla"}); c.Num != 2 {
		t.Errorf("gorilla's detection number %v, want the slowest, 2 s", c.Num)
	}
	tbl := r.EndTable()
	n := 0
	for _, row := range tbl.Rows {
		if ByID(row.ID).WhenMeasured {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d blackhole rows in the end table of a run with a blackhole, want 3", n)
	}
}

// TestMechanism names the mechanism of every cause a worker records.
func TestMechanism(t *testing.T) {
	for detail, want := range map[string]string{
		"pong_timeout: no pong for 1.5s":                                                     "pong timeout",
		"stall_abort: all 3 subscriptions silent for 6s or more":                             "silence watchdog",
		"abnormal: gws read: read tcp 1.2.3.4:5->6.7.8.9:10: read: connection reset by peer": "kernel: reset",
		"abnormal: read tcp 1.2.3.4:5->6.7.8.9:10: read: connection timed out":               "kernel: timed out",
		"abnormal: read tcp 1.2.3.4:5->6.7.8.9:10: i/o timeout":                              "read deadline",
		"abnormal: eof":                   "end of stream",
		"abnormal: no close frame":        "kernel error",
		"server_close: 1008 pong timeout": "server close",
		"read_limit: message too big":     "read_limit",
	} {
		if got := Mechanism(detail); got != want {
			t.Errorf("%q: %q, want %q", detail, got, want)
		}
	}
}
