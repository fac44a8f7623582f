package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// testWorker is a Worker run inside a test: its frames go through a pipe to
// onFrame (called on the reader's goroutine, in order).
type testWorker struct {
	*Worker
	cancel   context.CancelFunc
	pw       *io.PipeWriter
	runDone  chan error
	readDone chan error
}

// newTestWorker makes the worker and starts reading its frames; start runs it
// (set hooks such as tap before that).
func newTestWorker(t *testing.T, plan *wire.Plan, tr transport.Transport, onFrame func(*wire.Frame)) *testWorker {
	t.Helper()
	pr, pw := io.Pipe()
	w, err := New(plan, tr, pw, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tw := &testWorker{Worker: w, pw: pw, runDone: make(chan error, 1), readDone: make(chan error, 1)}
	go func() {
		tw.readDone <- wire.ReadFrames(pr, func(f *wire.Frame) error { onFrame(f); return nil })
	}()
	return tw
}

// start runs the worker until stop.
func (tw *testWorker) start() {
	ctx, cancel := context.WithCancel(context.Background())
	tw.cancel = cancel
	go func() { tw.runDone <- tw.Run(ctx) }()
}

// stop ends the run as the controller does (the worker closes its
// connections and sends its final frames) and waits for the last frame.
func (tw *testWorker) stop(t *testing.T) {
	t.Helper()
	tw.cancel()
	if err := <-tw.runDone; err != nil {
		t.Fatal(err)
	}
	tw.pw.Close()
	if err := <-tw.readDone; err != nil {
		t.Fatal(err)
	}
}

// listenReplay starts a replay server on a loopback port, closed when the
// test ends.
func listenReplay(t *testing.T, cfg replay.Config) *replay.Server {
	t.Helper()
	srv, err := replay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// localPlan is a plan of one library against a local server at target,
// starting now for a minute, with quick reconnects and no stall within
// the test; the test adds its slots.
func localPlan(run, lib, target string) *wire.Plan {
	now := time.Now()
	return &wire.Plan{Version: wire.PlanVersion, RunID: run, Column: wire.LibraryColumn(lib), Target: target, Local: true, TimeUnit: "MICROSECOND",
		Start: now, End: now.Add(time.Minute), PingInterval: time.Minute, PongTimeout: time.Minute,
		BackoffMin: 20 * time.Millisecond, BackoffMax: 200 * time.Millisecond, HandshakeTimeout: 2 * time.Second,
		ReadLimit: 1 << 20, StallFactor: 10, StallMin: 3 * time.Second, StallRealTime: time.Minute, UnrepairableDial: 20, SubsEvery: 10}
}
