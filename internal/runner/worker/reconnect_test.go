package worker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestWorkerReconnects drives one worker per library against a real replay
// server and breaks its connections at known instants: a close 1001, an abrupt
// reset, and a close 1011 on a connection that subscribes by message. Each
// loss must give one reconnect with its duration, every subscription's count
// must equal what the server sent over all of the slot's connections, and the
// messages lost across each outage must equal the ids the server skipped.
func TestWorkerReconnects(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real connections for several seconds")
	}
	defer goleak.VerifyNone(t)
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Parallel()
			testWorkerReconnects(t, tr)
		})
	}
}

func testWorkerReconnects(t *testing.T, tr transport.Transport) {
	start := time.Now().Add(300 * time.Millisecond)
	stop := start.Add(4500 * time.Millisecond) // the source stops before the worker does: nothing in flight at the end
	srv, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 3, Speed: 10, Start: start, Stop: stop, Symbols: []string{"btcusdt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	plan := &wire.Plan{Version: wire.PlanVersion, RunID: "t", Column: wire.LibraryColumn(tr.Name()), Target: srv.URL(), Local: true, TimeUnit: "MICROSECOND",
		Start: start, End: start.Add(time.Minute), PingInterval: 500 * time.Millisecond, PongTimeout: 5 * time.Second,
		BackoffMin: 50 * time.Millisecond, BackoffMax: 500 * time.Millisecond, HandshakeTimeout: 2 * time.Second,
		StallFactor: 10, StallRealTime: time.Minute, UnrepairableDial: 20, SubsEvery: 10,
		Slots: []wire.Slot{
			{ID: 0, Group: "markets", Subscribe: "url", Streams: []string{"btcusdt@trade", "btcusdt@aggTrade", "btcusdt@bookTicker"}},
			{ID: 1, Group: "depth", Subscribe: "message", Streams: []string{"btcusdt@depth@100ms"}},
		}}
	var mu sync.Mutex
	var events []wire.Event
	var final []wire.SubStat
	w := newTestWorker(t, plan, tr, func(f *wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		switch f.Type {
		case wire.FrameEvent:
			events = append(events, *f.Ev)
		case wire.FrameSubs:
			final = f.Subs
		}
	})
	w.start()

	conn := func(tag string) *replay.Conn {
		wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer wcancel()
		c, err := srv.WaitConn(wctx, tag)
		if err != nil {
			t.Fatalf("wait for connection %s: %v", tag, err)
		}
		return c
	}
	lib := tr.Name()
	time.Sleep(time.Second)
	if err := conn(lib+"/0/0").Close(1001, "going away"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := conn(lib + "/0/1").Reset(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if err := conn(lib+"/1/0").Close(1011, "internal error"); err != nil {
		t.Fatal(err)
	}
	conn(lib + "/1/1")
	conn(lib + "/0/2")
	time.Sleep(time.Until(stop.Add(500 * time.Millisecond)))
	w.stop(t)

	mu.Lock()
	defer mu.Unlock()
	var codes []int
	reconnects := 0
	for _, e := range events {
		switch e.Kind {
		case wire.EventDisconnected:
			codes = append(codes, e.Code)
		case wire.EventReconnect:
			reconnects++
			if e.DurMs <= 0 || e.DurMs > 5000 || !strings.Contains(e.Detail, "first_data=") {
				t.Errorf("reconnect event %+v: want a duration and its phases", e)
			}
		}
	}
	if fmt.Sprint(codes) != "[1001 1006 1011]" {
		t.Errorf("disconnect codes %v, want [1001 1006 1011]", codes)
	}
	if reconnects != 3 || w.reconnects.Load() != 3 {
		t.Errorf("%d reconnect events, counter %d; want 3", reconnects, w.reconnects.Load())
	}

	// The server's truth, per slot and stream, over all of the slot's connections
	// in attempt order: what it sent, and the ids it produced while the slot was
	// away (the first id on a connection minus the last on the one before, minus one).
	type connStat struct {
		attempt int
		st      replay.StreamStats
	}
	byKey := map[string][]connStat{}
	for _, c := range srv.Stats().Conns {
		var l string
		var slot, attempt int
		if _, err := fmt.Sscanf(strings.ReplaceAll(c.Tag, "/", " "), "%s %d %d", &l, &slot, &attempt); err != nil || l != lib {
			continue
		}
		for name, st := range c.Streams {
			if name != "" {
				key := fmt.Sprintf("%d/%s", slot, name)
				byKey[key] = append(byKey[key], connStat{attempt, st})
			}
		}
	}
	if len(final) == 0 {
		t.Fatal("no final subscription totals")
	}
	for _, s := range final {
		key := fmt.Sprintf("%d/%s", s.Slot, s.Stream)
		cs := byKey[key]
		if len(cs) == 0 {
			t.Errorf("%s: the server sent nothing", key)
			continue
		}
		slices.SortFunc(cs, func(a, b connStat) int { return a.attempt - b.attempt })
		var sent, skipped int64
		for i, c := range cs {
			sent += c.st.Sent
			if i > 0 && c.st.Sent > 0 && cs[i-1].st.Sent > 0 {
				skipped += c.st.FirstSeq - cs[i-1].st.LastSeq - 1
			}
		}
		// A reset discards what was still in the client's receive queue: the
		// server wrote it, the client never saw it. Nothing else may differ.
		inflight := sent - s.Msgs
		if inflight < 0 || inflight > 0 && s.Stream == "btcusdt@depth@100ms" {
			t.Errorf("%s: received %d, server sent %d over %d connections", key, s.Msgs, sent, len(cs))
		}
		if s.Dup != 0 || s.OOO != 0 {
			t.Errorf("%s: dup %d ooo %d", key, s.Dup, s.OOO)
		}
		switch s.Stream {
		case "btcusdt@trade", "btcusdt@aggTrade": // one id per message: lost = skipped ids + discarded in flight
			if s.Lost != skipped+inflight {
				t.Errorf("%s: %d lost; the server skipped %d ids across the outages and %d were discarded in flight", key, s.Lost, skipped, inflight)
			}
		}
	}
	if t.Failed() {
		for _, e := range events {
			t.Logf("event %+v", e)
		}
	}
}
