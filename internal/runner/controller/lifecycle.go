package controller

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Lifecycle is a run's life in its directory and database, one for every
// kind of run: the client soak (Run) and the server-side soak (package
// serverside) each begin with it, fill its batches, and end with End. It
// holds the run directory and its lock, the database with its one writer
// goroutine (writer.go), the batch being filled, the host's sampler and the
// progress line.
type Lifecycle struct {
	o       Options
	id, dir string
	db      *store.DB
	lock    *rundir.Lock // held until the caller's Result.Release
	epoch   time.Time    // the window's start on the monotonic clock: second k ends at epoch + k s
	batch   *store.Batch
	writes  chan *store.Batch
	written chan error
	host    *sampler.Host
	// progressed: a progress report was printed
	progressed bool
}

// defaults fills in what the caller left unset.
func (o *Options) defaults() error {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.OutDir == "" {
		o.OutDir = "out"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.WorkerTimeout <= 0 {
		o.WorkerTimeout = 30 * time.Second
	}
	if o.WriteBacklog <= 0 {
		o.WriteBacklog = defaultWriteBacklog
	}
	if o.EndRetry == nil {
		o.EndRetry = &store.Retry{Budget: store.DefaultRetryBudget, Log: o.Log}
	}
	if o.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find executable: %w", err)
		}
		o.Exe = exe
	}
	return nil
}

// Begin begins a new run of o.Profile: it creates the run directory (under
// o.OutDir) and its database, takes the directory's lock and starts the
// writer. The caller records the run (store.DB.CreateRun), fills batches
// and ends with End, whatever happened.
func Begin(o Options) (*Lifecycle, error) {
	if err := o.defaults(); err != nil {
		return nil, err
	}
	runID, dir, lock, db, err := createRun(o)
	if err != nil {
		return nil, err
	}
	return begin(o, runID, dir, lock, db), nil
}

// begin starts the life of a run whose directory and database are open (a
// new one, or a resumed one).
func begin(o Options, runID, dir string, lock *rundir.Lock, db *store.DB) *Lifecycle {
	l := &Lifecycle{o: o, id: runID, dir: dir, db: db, lock: lock, batch: new(store.Batch), writes: make(chan *store.Batch, 8),
		written: make(chan error, 1), host: sampler.NewHost()}
	if o.Observer != nil {
		o.Observer.RunStarted(dir, l.DBPath())
	}
	go l.writer()
	return l
}

// createRun makes a new run's directory (private: see rundir), takes its
// lock and creates its database, mode 0600 like every file of the run.
func createRun(o Options) (runID, dir string, lock *rundir.Lock, db *store.DB, err error) {
	runID = o.Now().UTC().Format("20060102-150405") + "-" + sanitize(o.Profile.Name)
	if o.RunDir != "" {
		dir, err = rundir.Use(o.RunDir)
	} else {
		dir, err = rundir.Create(o.OutDir, runID)
	}
	if err != nil {
		return "", "", nil, nil, err
	}
	if lock, err = rundir.TakeLock(dir); err != nil {
		return "", "", nil, nil, err
	}
	path := filepath.Join(dir, "soak.db")
	if err = rundir.CreateEmpty(path); err != nil {
		lock.Release()
		return "", "", nil, nil, fmt.Errorf("create db: %w", err)
	}
	if db, err = store.Open(path); err != nil {
		lock.Release()
		return "", "", nil, nil, err
	}
	return runID, dir, lock, db, nil
}

// Options are the run's options, defaults filled in.
func (l *Lifecycle) Options() Options { return l.o }

// ID is the run's id (the name of its directory).
func (l *Lifecycle) ID() string { return l.id }

// Dir is the run directory.
func (l *Lifecycle) Dir() string { return l.dir }

// DBPath is the run's database file.
func (l *Lifecycle) DBPath() string { return filepath.Join(l.dir, "soak.db") }

// DB is the run's database: written by the writer goroutine, and by the
// caller only for what is not a batch (the run's row, worker records).
func (l *Lifecycle) DB() *store.DB { return l.db }

// Epoch is the window's start on the monotonic clock.
func (l *Lifecycle) Epoch() time.Time { return l.epoch }

// SetEpoch sets the window's start, once the role knows it.
func (l *Lifecycle) SetEpoch(t time.Time) { l.epoch = t }

// Batch is the batch being filled; Flush hands it to the writer.
func (l *Lifecycle) Batch() *store.Batch { return l.batch }

// AddEvent adds events to the batch.
func (l *Lifecycle) AddEvent(evs ...store.Event) { l.batch.Events = append(l.batch.Events, evs...) }

// AddSample adds samples rows to the batch.
func (l *Lifecycle) AddSample(rows ...store.Sample) {
	l.batch.Samples = append(l.batch.Samples, rows...)
}

// Flush hands the batch filled so far to the writer (one transaction) and
// starts a new one.
func (l *Lifecycle) Flush() {
	b := l.batch
	if b.Empty() {
		return
	}
	l.batch = new(store.Batch)
	l.writes <- b
}

// SampleHost adds the host's second k, sampled at now, to the batch; on
// the window's first second and then every minute, the clock's sync state
// too (latency depends on it).
func (l *Lifecycle) SampleHost(k int64, now time.Time) {
	if hs, err := l.host.Sample(); err == nil {
		l.batch.Host = append(l.batch.Host, store.HostSample{Sec: k, TS: now, Load1: hs.Load1, Load5: hs.Load5, Load15: hs.Load15,
			CPUPct: hs.CPUPct, StealPct: hs.StealPct, IOWaitPct: hs.IOWaitPct, MemUsed: int64(hs.MemUsed), MemAvail: int64(hs.MemAvailable)})
	}
	if k%60 == 1 {
		if cs, err := sampler.ReadClock(); err == nil {
			l.batch.Clock = append(l.batch.Clock, store.ClockSample{Sec: k, TS: now, Synced: cs.Synced, State: cs.State,
				Status: cs.Status, EstErrorUs: cs.EstErrorUs, MaxErrorUs: cs.MaxErrorUs})
		}
	}
}

// End ends the run, whatever happened: it lets the writer write what is
// left, records the run's status (done, interrupted when ctx ended first,
// or failed with runErr, any secret masked) and end instant, closes the
// database and fills in res (nil: a Result of its own) with where the run
// is. The run directory stays locked until Result.Release. The error
// returned is runErr joined with what failed at the end.
func (l *Lifecycle) End(ctx context.Context, res *Result, runErr error) (*Result, error) {
	l.Flush()
	close(l.writes)
	err := runErr
	if werr := <-l.written; werr != nil && err == nil {
		err = werr
	}
	status, state := "done", wire.StateDone
	switch {
	case err != nil:
		status, state = "failed: "+endpoint.Mask(err.Error()), wire.StateFailed
	case ctx.Err() != nil:
		status, state = "interrupted", wire.StateInterrupted
	}
	// A full disk at the end: retried, then reported with the rest; the
	// caller still prints the table.
	ended := l.o.Now()
	err = joinErrs(err, l.o.EndRetry.Do("record the run's end", func() error { return l.db.FinishRun(ended, status) }))
	err = joinErrs(err, l.db.CloseWith(l.o.EndRetry))
	if res == nil {
		res = &Result{}
	}
	res.RunID, res.Dir, res.DBPath, res.lock, res.Profile = l.id, l.dir, l.DBPath(), l.lock, l.o.Profile
	l.SetState(state) // after the last batch was observed: the live view's final state
	return res, err
}

// ProcAt is a child's process sample at an instant, with its CPU in % of
// one core since the sample before.
type ProcAt struct {
	sampler.ProcSample
	At  time.Time
	OK  bool // taken
	Pct float64
}

// Next samples p at now, after prev (the same process's last sample).
func (prev ProcAt) Next(p *sampler.Proc, now time.Time) (ProcAt, error) {
	s, err := p.Sample()
	if err != nil {
		return ProcAt{}, err
	}
	pa := ProcAt{ProcSample: s, At: now, OK: true}
	if prev.OK {
		if dt := now.Sub(prev.At).Seconds(); dt > 0 {
			pa.Pct = 100 * (s.CPUUser + s.CPUSys - prev.CPUUser - prev.CPUSys) / dt
		}
	}
	return pa, nil
}

// CPU is the process's CPU seconds (user + system) at the sample.
func (pa ProcAt) CPU() float64 { return pa.CPUUser + pa.CPUSys }

// Fill sets the process half of a samples row.
func (pa ProcAt) Fill(row *store.Sample) {
	row.HasProc = true
	row.RSS, row.CPUUser, row.CPUSys, row.CPUPct = int64(pa.RSS), pa.CPUUser, pa.CPUSys, pa.Pct
	row.FDs, row.Threads = int(pa.FDs), int(pa.Threads)
}

// errList is errors joined on one line ("a; b"): what a run ends with is
// printed and logged as one line, not one with newlines escaped. Unwrap
// gives them back (errors.Is, errors.As, and a caller's own joining).
type errList []error

// joinErrs joins the errors that are not nil (those of an errList or of
// errors.Join one by one): nil when none is, the error itself when one is.
func joinErrs(es ...error) error {
	var out errList
	for _, e := range es {
		switch j := e.(type) {
		case nil:
		case errList:
			out = append(out, j...)
		case interface{ Unwrap() []error }:
			out = append(out, j.Unwrap()...)
		default:
			out = append(out, e)
		}
	}
	switch len(out) {
	case 0:
		return nil
	case 1:
		return out[0]
	}
	return out
}

func (e errList) Error() string {
	parts := make([]string, len(e))
	for i, x := range e {
		parts[i] = x.Error()
	}
	return strings.Join(parts, "; ")
}

func (e errList) Unwrap() []error { return e }
