package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"time"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// reportRefresher rewrites the run's report.html every interval while the
// run goes on (a controller.Observer: it starts when the run directory exists).
type reportRefresher struct {
	every time.Duration
	log   *slog.Logger
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

func (r *reportRefresher) RunStarted(dir, dbPath string) {
	if r.every <= 0 {
		return
	}
	r.wg.Go(func() {
		report.Refresh(r.ctx, dbPath, filepath.Join(dir, "report.html"), r.every, func(err error) {
			r.log.Warn("refresh report", "err", err)
		})
	})
}

func (r *reportRefresher) Observe(*store.Batch) {}

// close stops the refresher and waits for a rewrite in progress.
func (r *reportRefresher) close() {
	r.stop()
	r.wg.Wait()
}

// fanOut hands the run's notifications to several observers in turn.
type fanOut []controller.Observer

func (f fanOut) RunStarted(dir, dbPath string) {
	for _, o := range f {
		o.RunStarted(dir, dbPath)
	}
}

func (f fanOut) Observe(b *store.Batch) {
	for _, o := range f {
		o.Observe(b)
	}
}

// RunRecorded and RunState go to the observers that watch the run's state
// (controller.StateObserver: the live view).
func (f fanOut) RunRecorded(r store.Run) {
	for _, o := range f {
		if so, ok := o.(controller.StateObserver); ok {
			so.RunRecorded(r)
		}
	}
}

func (f fanOut) RunState(s wire.RunState) {
	for _, o := range f {
		if so, ok := o.(controller.StateObserver); ok {
			so.RunState(s)
		}
	}
}
