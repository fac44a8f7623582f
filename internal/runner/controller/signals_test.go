package controller

import (
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// exitedChild is a finished process standing for a worker's, with exit code 3.
func exitedChild(t *testing.T, dir string) *child.Process {
	t.Helper()
	ch, err := child.Start(child.Options{Name: "worker test", Exe: "/bin/sh", Args: []string{"-c", "cat >/dev/null; exit 3"}, Spec: struct{}{},
		Log: filepath.Join(dir, "worker-test.log")})
	if err != nil {
		t.Skipf("no /bin/sh: %v", err)
	}
	ch.CloseStdin()
	_, _ = io.Copy(io.Discard, ch.Out())
	<-ch.Done()
	return ch
}

// TestWorkerSignalsStored: what a worker computes reaches the database. The
// events it dropped (its channel full) are counted from its sec frames when
// it dies without a final report, and go on across the restart; the final
// report's p99.9 and negative latencies, a subscription's regressions and
// ids lost across reconnects are stored.
func TestWorkerSignalsStored(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c := &controller{Lifecycle: &Lifecycle{o: Options{Log: slog.New(slog.DiscardHandler), Now: time.Now}, db: db, epoch: time.Now(),
		batch: new(store.Batch)}, restarts: make(chan *workerProc, 16)}
	w := &workerProc{lib: "gws", secs: map[int64]*wire.SecStat{}, procs: map[int64]ProcAt{}, res: WorkerResult{Lib: "gws"}}
	stored := func() store.Worker {
		t.Helper()
		ws, err := db.Workers()
		if err != nil || len(ws) != 1 {
			t.Fatalf("workers %+v, %v", ws, err)
		}
		return ws[0]
	}

	// The first process drops 4 events, then dies before its final report.
	w.ch = exitedChild(t, dir)
	c.onFrame(w, &wire.Frame{Type: wire.FrameSec, Sec: 1, Stat: &wire.SecStat{Dropped: 1}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSec, Sec: 2, Stat: &wire.SecStat{Dropped: 4}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 2, Subs: []wire.SubStat{{Stream: "s@trade", Lost: 6, LostAcross: 4, Regress: 1}}})
	c.onExit(w, false)
	if got := stored(); got.DroppedEvents != 4 || got.ExitCode != 3 {
		t.Fatalf("after the death: dropped %d exit %d, want 4, 3", got.DroppedEvents, got.ExitCode)
	}

	// Its restart drops 3 more and stops normally.
	w.ch, w.final, w.exited = exitedChild(t, dir), nil, false
	c.onFrame(w, &wire.Frame{Type: wire.FrameSec, Sec: 3, Stat: &wire.SecStat{Dropped: 2}})
	if st := w.secs[3]; st.Dropped != 6 {
		t.Errorf("second 3: %d dropped, want 6 (4 before the restart)", st.Dropped)
	}
	c.onFrame(w, &wire.Frame{Type: wire.FrameSubs, Sec: 3, Subs: []wire.SubStat{{Stream: "s@trade", Lost: 2, LostAcross: 1, Regress: 2}}})
	c.onFrame(w, &wire.Frame{Type: wire.FrameFinal, Fin: &wire.FinalReport{LatN: 10, LatP999: 900, LatNeg: 2, Dropped: 3}})
	c.onExit(w, true)
	got := stored()
	if got.DroppedEvents != 7 || got.LatP999 != 900 || got.LatNeg != 2 || got.LatCount != 10 {
		t.Errorf("stored %+v: want 7 dropped, p99.9 900, 2 negative", got)
	}
	ss := c.batch.StreamSamples
	if len(ss) != 2 || ss[0].RegressTotal != 1 || ss[0].LostAcrossTotal != 4 ||
		ss[1].LostTotal != 8 || ss[1].LostAcrossTotal != 5 || ss[1].RegressTotal != 3 {
		t.Errorf("stream samples %+v: want regressions and lost across carried over the restart (1/4, then 3/5 of 8)", ss)
	}
}
