package worker

import (
	"context"
	"io"
	"log/slog"
	"testing"

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
