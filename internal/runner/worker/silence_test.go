package worker

import (
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestWorkerStartedMidWindow starts a worker 2.5 s into the window, as the
// controller does when it restarts a worker or resumes a run, against a real
// replay server whose depth@100ms stream begins 1 s after the worker started.
// The worker knows nothing of the window before it started: its silence counts
// from its own start. So no stall (threshold 2 s) may be recorded, though a
// report tick falls into the first second, and the subscription's max silence
// is the real longest gap: from the worker's start to the first message, or
// between two messages (100 ms apart), or after the last one.
func TestWorkerStartedMidWindow(t *testing.T) {
	defer goleak.VerifyNone(t)
	tr, err := transport.Lookup("gorilla")
	if err != nil {
		t.Fatal(err)
	}
	const stream = "btcusdt@depth@100ms"
	now := time.Now()
	dataAt := now.Add(time.Second)
	srv, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 5, Start: dataAt, Symbols: []string{"btcusdt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// The window began 2.5 s ago on the machine's monotonic clock, as the
	// controller hands it to a worker it starts (wire.Plan.StartMono).
	inWindow := 2500 * time.Millisecond
	plan := &wire.Plan{Version: wire.PlanVersion, RunID: "t", Column: wire.LibraryColumn(tr.Name()), Target: srv.URL(), Local: true, TimeUnit: "MICROSECOND",
		Start: now.Add(-inWindow), End: now.Add(time.Minute), PingInterval: time.Second, PongTimeout: 10 * time.Second,
		BackoffMin: 50 * time.Millisecond, BackoffMax: 500 * time.Millisecond, HandshakeTimeout: 2 * time.Second,
		ReadLimit: 1 << 20, StallFactor: 10, StallMin: 2 * time.Second, StallRealTime: time.Minute, UnrepairableDial: 20, SubsEvery: 10,
		Slots: []wire.Slot{{ID: 0, Group: "depth", Subscribe: "url", Streams: []string{stream}}}}
	if m, ok := wire.MonoNow(); ok {
		plan.StartMono = m - int64(inWindow)
	}
	if st, err := binance.ParseStream(stream); err != nil || stallAfter(plan, st) != 2*time.Second {
		t.Fatalf("stall threshold of %s: %v %v, want 2s", stream, stallAfter(plan, st), err)
	}
	var mu sync.Mutex
	var arrivals []time.Time // every message of the stream, as the library handed it over
	var events []wire.Event
	var final []wire.SubStat
	var finalAt time.Time
	secs := 0
	w := newTestWorker(t, plan, tr, func(f *wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		switch f.Type {
		case wire.FrameEvent:
			events = append(events, *f.Ev)
		case wire.FrameSec:
			secs++
		case wire.FrameSubs:
			if f.Slots != nil {
				final, finalAt = f.Subs, time.Now()
			}
		}
	})
	w.tap = func(_ int, p []byte) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		mu.Unlock()
	}
	started := time.Now() // the worker's start is at or after this
	w.start()
	// Data flows, and two report ticks have passed: one in the silent first second, one after data came.
	err = waitFor(10*time.Second, "data and two report ticks", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(arrivals) >= 5 && secs >= 2
	})
	w.stop(t)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range events {
		if e.Kind == wire.EventStall {
			t.Errorf("stall recorded for a worker that started %s into the window: %+v", inWindow, e)
		}
	}
	if len(final) != 1 {
		t.Fatalf("%d final subscription totals, want 1", len(final))
	}
	// The truth: the longest of the gap from the worker's start to the first
	// message (at least the 1 s before the source began), the gaps between
	// messages, and the open gap up to the final account.
	longest := arrivals[0].Sub(started)
	for i := 1; i < len(arrivals); i++ {
		longest = max(longest, arrivals[i].Sub(arrivals[i-1]))
	}
	longest = max(longest, finalAt.Sub(arrivals[len(arrivals)-1]))
	got := time.Duration(final[0].MaxSilenceMs) * time.Millisecond
	lo := dataAt.Sub(started) - 100*time.Millisecond // the first message came after the source began
	if got < lo || got > longest+100*time.Millisecond {
		t.Errorf("max silence %s, want between %s (source start − worker start) and %s (the longest real gap); the window began %s before the worker",
			got, lo.Round(time.Millisecond), longest.Round(time.Millisecond), inWindow)
	}
}
