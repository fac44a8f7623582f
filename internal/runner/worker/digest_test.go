package worker

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestHistFrames: the latency of every message is in exactly one hist
// frame: the minute's at its 60th second, the part minute's at stop, so
// the digests merged count what the final frame counts. The plan started
// 57 s ago, so the minute ends 3 s into the test: time for a slow machine
// to connect and drain the first messages before it.
func TestHistFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("drives a real connection")
	}
	t.Parallel()
	srv, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 1, Start: time.Now().Add(time.Hour), Symbols: []string{"btcusdt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	start := time.Now().Add(-57 * time.Second)
	plan := &wire.Plan{Version: wire.PlanVersion, RunID: "hist", Column: wire.LibraryColumn("gorilla"), Target: srv.URL(), Local: true, TimeUnit: "MICROSECOND",
		Start: start, End: start.Add(2 * time.Minute), PingInterval: time.Minute, PongTimeout: time.Minute,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond, HandshakeTimeout: 2 * time.Second,
		ReadLimit: 1 << 20, StallFactor: 10, StallMin: 3 * time.Second, StallRealTime: time.Minute, UnrepairableDial: 20, SubsEvery: 10,
		Slots: []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}}
	tr, err := transport.Lookup("gorilla")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu      sync.Mutex
		hists   = map[int64]*sampler.Digest{}
		drained int64 // latency values in the sec frames so far
		final   *wire.FinalReport
	)
	tw := newTestWorker(t, plan, tr, func(f *wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		switch f.Type {
		case wire.FrameHist:
			d, err := sampler.DecodeDigest(f.Hist)
			if err != nil {
				t.Errorf("hist frame at %d: %v", f.Sec, err)
				return
			}
			hists[f.Sec] = d
		case wire.FrameSec:
			drained += f.Stat.LatN
		case wire.FrameFinal:
			final = f.Fin
		}
	})
	tw.start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := srv.WaitConn(ctx, "gorilla/0/0")
	if err != nil {
		t.Fatal(err)
	}
	send := func(from, n int) {
		for i := range n {
			if err := c.SendText(trade(int64(from+i), "")); err != nil {
				t.Fatal(err)
			}
		}
	}
	locked := func(f func() bool) func() bool {
		return func() bool { mu.Lock(); defer mu.Unlock(); return f() }
	}
	send(1, 100)
	if err := waitFor(5*time.Second, "100 latencies drained", locked(func() bool { return drained >= 100 })); err != nil {
		t.Fatal(err)
	}
	if err := waitFor(5*time.Second, "the minute's hist frame", locked(func() bool { return hists[60] != nil })); err != nil {
		t.Fatal(err)
	}
	send(101, 50)
	if err := waitFor(5*time.Second, "150 latencies drained", locked(func() bool { return drained >= 150 })); err != nil {
		t.Fatal(err)
	}
	tw.stop(t)

	if final == nil || final.LatN != 150 {
		t.Fatalf("final frame %+v, want 150 latencies", final)
	}
	all := sampler.NewDigest()
	for sec, d := range hists {
		if sec < 60 {
			t.Errorf("a hist frame at second %d, before the minute ended", sec)
		}
		all.Merge(d)
	}
	if n := hists[60].Count(); n != 100 {
		t.Errorf("the minute's digest holds %d values, want the 100 sent before it ended", n)
	}
	if len(hists) != 2 || all.Count() != final.LatN {
		t.Errorf("%d hist frames holding %d values; want 2 holding the final frame's %d", len(hists), all.Count(), final.LatN)
	}
}
