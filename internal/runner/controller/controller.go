// Package controller is the controller role of a client soak: it plans the
// run, starts the replay server (local target) and one worker process per
// library (package child), supervises and samples them, and records
// everything in the run's database. It speaks to its workers only through
// package wire. Its Lifecycle (the run directory, the database and its one
// writer, the end and its status) is every run's: the server-side soak
// (package serverside) lives by it too.
package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Options configure one soak run: the client soak's (Run) or the
// server-side soak's (package serverside), which share its lifecycle.
type Options struct {
	Profile  *profile.Profile
	OutDir   string          // parent of the run directory; default "out"
	Exe      string          // the soak binary to re-execute; default os.Executable()
	Log      *slog.Logger    // default: discard
	Progress io.Writer       // a progress line every 10 s; nil = none
	Abort    <-chan struct{} // closed on a second signal: kill the children at once
	Now      func() time.Time
	// WorkerTimeout: a worker that sent no frame for this long is killed
	// (event worker_hung) and restarted. Default 30 s. The client soak's.
	WorkerTimeout time.Duration
	// Resume is the directory of a run whose controller died: the run goes
	// on in the same database up to its original end instant, with an
	// outage event for the time nothing was recorded. Profile is then
	// taken from the run, and OutDir is not used. The client soak's: a
	// side: server run is not resumed.
	Resume string
	// RunDir, when set, is the new run's directory itself (soak run -dir),
	// made if missing, instead of OutDir/<run-id>; it must hold no run.
	RunDir string
	// WriteBacklog is how many batches (about one a second) are kept in
	// memory while database writes fail; beyond it the oldest is dropped and
	// recorded as missing. Default 600.
	WriteBacklog int
	// ProgressInPlace draws the progress as a block of a line per column,
	// redrawn in place (for a terminal: Progress a *Terminal shared with
	// the log, or any writer), instead of a line every 10 s.
	ProgressInPlace bool
	// Observer, if set, is told where the run writes, then sees every batch
	// once it is committed to the database.
	Observer Observer
	// EndRetry retries the writes at the end of the run (the last batches,
	// lost charges, server counts, worker records, the run's status, the
	// final checkpoint) within one budget; the caller may go on using it
	// for its own (the table). Default: store.DefaultRetryBudget.
	EndRetry *store.Retry
}

// Observer watches a run from the outside (the live view). Its methods run
// on the controller's writer goroutine, once a second: they must be quick
// and must not keep the batch, which is not changed after the call.
type Observer interface {
	RunStarted(dir, dbPath string)
	Observe(b *store.Batch)
}

// Result describes a finished run.
type Result struct {
	RunID   string
	Dir     string
	DBPath  string
	Workers []WorkerResult
	Profile *profile.Profile // the profile the run used (resumed: the one stored with it), not parsed again after the run

	lock *rundir.Lock
}

// Release gives up the run directory, which Run leaves locked so that the
// caller can finish writing into it (the table, the report) before another
// process may take it (a -resume). Safe on nil.
func (r *Result) Release() {
	if r != nil {
		r.lock.Release()
	}
}

// WorkerResult is one column's process account.
type WorkerResult struct {
	Lib                   string  // the column's name
	SampledCPU, RusageCPU float64 // seconds: last gopsutil sample vs the kernel's rusage at exit
	Restarts              int
	Err                   error
}

type controller struct {
	*Lifecycle
	plan     *wire.Plan
	workers  []*workerProc
	frames   chan frameMsg
	exits    chan *workerProc
	restarts chan *workerProc
	server   *child.Process
	addr     string
	resumed  *resumed // set when continuing a crashed run
	// resumedAt is the second of the window the resume began at (0: not resumed).
	resumedAt float64
	ca        *cert.Authority // the replay server's throwaway CA (replay.tls)

	local      *http.Client        // to the local replay server; made by the main goroutine
	faultLogs  chan []wire.Applied // the server's fault log, polled during the run
	faultPoll  bool                // a poll is in flight
	faultsSeen int                 // entries of the server's fault log already recorded
	rejects    []pendingReject     // its reject faults, recorded per library as they hit

	net *netLink // the replay server's link (link:), nil without one
}

// Run performs one soak run: it starts the replay server (local target), one
// worker per column (a library, or a variant of one), samples them every second, and records everything in
// <OutDir>/<run-id>/soak.db. ctx cancellation stops the run gracefully. A
// side: server profile is package serverside's to run; resuming one is
// refused.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	if o.Resume == "" && o.Profile != nil && o.Profile.Server() {
		return nil, errors.New("a side: server profile is run by the server-side soak (package serverside), not the client soak's controller")
	}
	var (
		runID, dir string
		db         *store.DB
		rs         *resumed
		lock       *rundir.Lock // held until the caller's Result.Release
		err        error
	)
	if o.Resume != "" {
		if rs, err = openResumed(o.Resume); err != nil {
			return nil, err
		}
		o.Profile, db, dir, runID, lock = rs.profile, rs.db, o.Resume, rs.run.ID, rs.lock
	}
	p := o.Profile
	err = preflight(ctx, p.Target, p.Proxy)
	if err == nil {
		err = preflightLink(p)
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		lock.Release()
		return nil, err
	}
	var l *Lifecycle
	if rs == nil {
		if l, err = Begin(o); err != nil {
			return nil, err
		}
	} else {
		l = begin(o, runID, dir, lock, db)
	}
	c := &controller{Lifecycle: l, frames: make(chan frameMsg, 1024), exits: make(chan *workerProc, 16), restarts: make(chan *workerProc, 16), resumed: rs}
	res, err := c.run(ctx, l.ID())
	return l.End(ctx, res, err)
}

func (c *controller) run(ctx context.Context, runID string) (*Result, error) {
	p := c.o.Profile
	local := p.Target == "" || p.Target == "local"
	warmup := time.Duration(p.Warmup)
	// Wall clock (Options.Now) for the instants stored and shown; the
	// monotonic clock (mono) for every duration and for the seconds grid.
	mono, wall := time.Now(), c.o.Now()
	start := wall.Add(warmup).Truncate(time.Millisecond)
	end := start.Add(time.Duration(p.Duration))
	var faultsFrom time.Time // faults due before it are not injected (zero: all)
	if rs := c.resumed; rs != nil {
		// The window stays the original one, and so does the replay server's
		// schedule: the streams go on as they would have (the events due
		// during the outage skipped), and the faults fire at their planned
		// instants, those due during the outage dropped.
		start, end, faultsFrom = rs.plan.Start, rs.plan.End, wall
	}
	c.epoch = mono.Add(start.Sub(wall))
	if rs := c.resumed; rs != nil && !wall.Add(warmup).Before(end) {
		// Too late to go on: record the outage up to the end instead.
		c.addOutage(c.epoch.Add(end.Sub(start)), "the run's end passed before the resume")
		c.Flush()
		return nil, fmt.Errorf("resume: run %s ended at %s; nothing is left to run (outage recorded)", runID, end.Format(time.RFC3339))
	}

	hostInfo, err := sampler.HostInfo()
	if err != nil {
		c.o.Log.Warn("host info", "err", err)
	}
	target := p.Target
	var caFile string
	if local {
		if err := c.reserveLink(); err != nil {
			return nil, err
		}
		defer c.closeLink() // after the server stopped
		if p.Replay.TLS {
			if caFile, err = c.makeCA(end); err != nil {
				return nil, err
			}
		}
		if err := c.startServer(ctx, start, end, faultsFrom); err != nil {
			return nil, err
		}
		defer c.stopServer()
		target = "ws://" + c.addr
		if c.ca != nil {
			target = "wss://" + c.addr
		}
	}
	for _, w := range p.Warnings {
		c.o.Log.Warn("profile", "warning", w)
	}
	if c.resumed != nil {
		c.plan = c.resumed.plan
		c.plan.Target = target
		if err := c.reopen(mono); err != nil {
			return nil, err
		}
	} else if err := c.create(ctx, runID, target, local, start, end, hostInfo, caFile); err != nil {
		return nil, err
	}
	plan := c.plan
	if len(plan.Columns) == 0 { // a resumed run planned before columns
		plan.Columns = p.Columns()
	}
	for _, col := range plan.Columns {
		if err := col.Check(); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	for _, col := range plan.Columns {
		w := &workerProc{lib: col.Name, col: col, secs: map[int64]*wire.SecStat{}, procs: map[int64]ProcAt{}, res: WorkerResult{Lib: col.Name}}
		if c.resumed != nil {
			c.resumed.carry(w)
		}
		if err := c.startWorker(w); err != nil {
			c.killWorkers()
			return nil, err
		}
		c.workers = append(c.workers, w)
	}
	// The run's window, also when resumed: its start and end instants as planned.
	c.o.Log.Info("run started", "run", runID, "dir", c.dir, "target", endpoint.Mask(target), "proxy", endpoint.Mask(plan.Proxy), "columns", wire.Names(plan.Columns),
		"slots", len(plan.Slots), "start", start.Format(time.RFC3339), "end", end.Format(time.RFC3339), "duration", end.Sub(start),
		"resumed", c.resumed != nil)

	c.playNetFaults()
	err = c.loop(ctx, end)
	c.stopNetFaults()
	res := &Result{}
	for _, w := range c.workers {
		res.Workers = append(res.Workers, w.res)
	}
	for _, w := range c.workers {
		if rec := w.unsaved; rec != nil {
			if werr := c.o.EndRetry.Do("record worker "+w.lib, func() error { return c.db.UpsertWorker(*rec) }); werr != nil {
				c.o.Log.Warn("record worker", "lib", w.lib, "err", werr)
			}
		}
	}
	if terr := c.saveTruth(); terr != nil {
		c.o.Log.Warn("lost charges", "err", terr)
	}
	if local && err == nil {
		if serr := c.saveServerCounts(); serr != nil {
			c.o.Log.Warn("server counts", "err", serr)
		}
	}
	if local && c.addr != "" {
		if ferr := c.saveFaults(); ferr != nil {
			c.o.Log.Warn("server faults", "err", ferr)
		}
	}
	if c.local != nil {
		c.local.CloseIdleConnections()
	}
	c.Flush()
	return res, err
}

func sanitize(s string) string {
	if s == "" {
		return "run"
	}
	b := []byte(s)
	for i, ch := range b {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
			b[i] = '-'
		}
	}
	return string(b)
}
