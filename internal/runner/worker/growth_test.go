package worker

import (
	"context"
	"io"
	"log/slog"
	"os"
	"runtime"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// reconnectsPerLib is how often each library reconnects in TestNoGrowth.
const reconnectsPerLib = 500

// openFDs counts this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// settle waits until the goroutine and FD counts are back at most at the
// baseline (connections close asynchronously) and returns the last counts.
func settle(t *testing.T, gBase, fBase int) (int, int) {
	var g, f int
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		g, f = runtime.NumGoroutine(), openFDs(t)
		if g <= gBase && f <= fBase || time.Now().After(deadline) {
			return g, f
		}
	}
}

// TestNoGrowth reconnects every library 500 times in a tight loop (the replay
// server closes each connection 2 ms after its handshake, before any data: a
// failed dial for the backoff, here 0.25–0.5 ms) and checks that goroutines
// and open file descriptors return to their baseline, during the run (at
// 100 and at 500 reconnects) and after it.
func TestNoGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("reconnects 2,500 times")
	}
	defer goleak.VerifyNone(t)
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			gBase, fBase := runtime.NumGoroutine(), openFDs(t)
			srv, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 1, Start: time.Now().Add(time.Hour), Symbols: []string{"btcusdt"}, Lifetime: 2 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			if err := srv.Listen("127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
			now := time.Now()
			plan := &wire.Plan{Version: wire.PlanVersion, RunID: "growth", Column: wire.LibraryColumn(tr.Name()), Target: srv.URL(), Local: true,
				Start: now, End: now.Add(time.Minute), PingInterval: time.Second, PongTimeout: 5 * time.Second,
				BackoffMin: 500 * time.Microsecond, BackoffMax: 500 * time.Microsecond, HandshakeTimeout: 2 * time.Second,
				ReadLimit: 1 << 20, StallFactor: 10, StallMin: 3 * time.Second, StallRealTime: time.Minute, UnrepairableDial: 20, SubsEvery: 10,
				Slots: []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}}
			w, err := New(plan, tr, io.Discard, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			t0 := time.Now()
			go func() { done <- w.Run(ctx) }()
			at := func(n int64) (int, int) {
				for w.reconnects.Load() < n {
					if time.Since(t0) > 20*time.Second {
						t.Errorf("only %d reconnects after %s", w.reconnects.Load(), time.Since(t0).Round(time.Millisecond))
						return 0, 0
					}
					time.Sleep(time.Millisecond)
				}
				return runtime.NumGoroutine(), openFDs(t)
			}
			g100, f100 := at(100)
			g500, f500 := at(reconnectsPerLib)
			took := time.Since(t0)
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			srv.Close()
			g, f := settle(t, gBase, fBase)
			t.Logf("%d reconnects in %s (%.1f ms each); goroutines %d → %d at 100, %d at %d, %d after; fds %d → %d, %d, %d",
				w.reconnects.Load(), took.Round(time.Millisecond), float64(took.Microseconds())/1000/float64(w.reconnects.Load()),
				gBase, g100, g500, reconnectsPerLib, g, fBase, f100, f500, f)
			// In flight a connection may be opening while another closes:
			// allow a few either way, but no trend.
			if g500 > g100+8 || f500 > f100+8 {
				t.Errorf("grew while reconnecting: goroutines %d → %d, fds %d → %d", g100, g500, f100, f500)
			}
			if g > gBase || f > fBase {
				t.Errorf("after the run: goroutines %d (baseline %d), fds %d (baseline %d)", g, gBase, f, fBase)
			}
		})
	}
}
