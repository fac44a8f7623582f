package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/runner/serverside"
	"github.com/wssoak/wssoak/internal/store"
)

const defaultProfile = "profiles/local.yaml"

// runCmd runs a soak and prints the comparison table.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stdout, stderr)
	a := runFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	profilePath, duration, out, libs, workerTimeout, verbose := a.profile, a.duration, a.out, a.libs, a.workerTimeout, a.verbose
	backlog, resume, httpAddr, httpPublic := a.backlog, a.resume, a.http, a.httpPublic
	if *httpAddr != "" {
		if err := httpFlag.check(*httpAddr, *httpPublic); err != nil {
			return err
		}
	}
	var p *profile.Profile
	var err error
	if *resume != "" {
		var set []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "profile" || f.Name == "duration" || f.Name == "libs" || f.Name == "out" {
				set = append(set, "-"+f.Name)
			}
		})
		if len(set) > 0 {
			return usageError{fmt.Errorf("flag -resume: %s cannot be changed when resuming: the run keeps its own settings", strings.Join(set, ", "))}
		}
	} else if p, err = loadProfile(*profilePath); err != nil {
		return err
	}
	if *duration != "" || given(fs, "duration") {
		d, err := time.ParseDuration(*duration)
		if err != nil || d <= 0 {
			return usageError{fmt.Errorf("flag -duration: bad duration %q: want a positive number with a unit such as 30s, 2m, 24h", *duration)}
		}
		if d < time.Second {
			return usageError{fmt.Errorf("flag -duration: %s is shorter than one second: a run is recorded second by second", d)}
		}
		p.Duration = profile.Duration(d)
	}
	if *libs != "" || given(fs, "libs") { // an empty -libs is refused, not the profile's list used
		if err := p.SetLibraries(strings.Split(*libs, ",")); err != nil {
			return usageError{fmt.Errorf("flag -libs: %w", err)}
		}
	}
	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := newLogger(stderr, level)

	// First SIGINT/SIGTERM: stop the workers, flush, print the table. Second: abort.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	abort := make(chan struct{})
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	handled := make(chan struct{})
	defer close(handled) // the signal goroutine ends with the run (run is called again by tests)
	go func() {
		n := 0
		for {
			select {
			case <-sigs:
			case <-handled:
				return
			}
			n++
			if n == 1 {
				log.Warn("signal: stopping the run (again to abort)")
				cancel()
				continue
			}
			close(abort)
			return
		}
	}()

	if *workerTimeout < 2*time.Second {
		return usageError{fmt.Errorf("flag -worker-timeout: %s is too short: workers report every second; want at least 2s", *workerTimeout)}
	}
	opts := controller.Options{Profile: p, OutDir: *out, Log: log, Progress: stdout, Abort: abort, WorkerTimeout: *workerTimeout,
		ProgressInPlace: isTerminal(stdout), Resume: *resume, WriteBacklog: *backlog}
	every := profile.Default().Report.Every // a resumed run: the default
	if p != nil {
		src := p.Path
		if src == "" {
			src = "built-in (as profiles/local.yaml)"
		}
		fmt.Fprintf(stdout, "soak run: profile %s, %s, libraries %s\n", src, time.Duration(p.Duration), strings.Join(p.Libraries, ", "))
		every = p.Report.Every
	} else {
		fmt.Fprintf(stdout, "soak run: resuming %s\n", *resume)
	}
	// report.html is rewritten every report.every during the run (from a
	// read-only connection) and written once more at the end.
	refresh := &reportRefresher{every: time.Duration(every), log: log}
	refresh.ctx, refresh.stop = context.WithCancel(ctx)
	defer refresh.close()
	observers := fanOut{refresh}
	if *httpAddr != "" {
		lv, stop, err := startLive(*httpAddr, *httpPublic, log)
		if err != nil {
			return err
		}
		defer stop()
		observers = append(observers, lv)
	}
	opts.Observer = observers
	// The end's writes (the controller's, then the table and verdicts) are
	// retried within one budget when they fail (a full disk).
	retry := &store.Retry{Budget: store.DefaultRetryBudget, Log: log}
	opts.EndRetry = retry
	start := controller.Run
	if p != nil && p.Server() {
		start = serverside.Run // the libraries as chat servers (a resumed run is the controller's to refuse)
	}
	res, err := start(ctx, opts)
	defer res.Release() // the run directory stays ours until its report is written
	// Stopped by a signal (or the caller) before the end: the controller recorded
	// the run as interrupted; the exit code says so too.
	interrupted := err == nil && ctx.Err() != nil
	refresh.close()
	if res != nil && res.DBPath != "" {
		// Whatever failed, the table is printed and the report attempted.
		closed, ferr := finish(stdout, res, retry, err == nil)
		if closed {
			err = dropCheckpoint(err) // finish closed the database again: its checkpoint is the one that counts
		}
		err = errors.Join(err, ferr)
		html := filepath.Join(res.Dir, "report.html")
		if rerr := report.WriteFile(context.Background(), res.DBPath, html, report.Options{}); rerr != nil {
			err = errors.Join(err, rerr)
		} else {
			fmt.Fprintf(stdout, "report: %s\n", html)
		}
	}
	if err == nil && interrupted {
		id := ""
		if res != nil {
			id = res.RunID
		}
		err = interruptedError{id}
	}
	return err
}

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

func loadProfile(path string) (*profile.Profile, error) {
	if path == "" {
		if _, err := os.Stat(defaultProfile); err != nil {
			return profile.Default(), nil
		}
		path = defaultProfile
	}
	return profile.Load(path)
}

// finish summarises the run from its database, prints the table and stores
// it; when the run succeeded (thresholds) it also checks the profile's
// thresholds, prints the broken ones and stores the verdicts the report
// shows. What is printed does not wait for the database: a write that fails
// (a full disk) is retried with retry and then reported, and the final
// checkpoint too (a *store.CheckpointError: nothing is lost). closed tells
// that it opened and closed the database, checkpointing it once more.
func finish(w io.Writer, res *controller.Result, retry *store.Retry, thresholds bool) (closed bool, err error) {
	db, err := store.Open(res.DBPath)
	if err != nil {
		return false, err
	}
	// The measures are computed once, for the table and the verdicts.
	results, err := measure.Compute(db)
	if err != nil {
		return true, errors.Join(fmt.Errorf("summarize: %w", err), db.CloseWith(retry))
	}
	t := results.EndTable()
	printTable(w, res, t)
	errs := []error{retry.Do("store the table", func() error { return db.SaveSummary(t.SummaryRows()) })}
	if len(t.Libs) == 0 {
		errs = append(errs, errors.New("no worker recorded anything"))
	} else if thresholds {
		vs, verr := judgeThresholds(w, db, results, res.Profile)
		if _, broken := verr.(thresholdError); verr == nil || broken {
			errs = append(errs, retry.Do("store the verdicts", func() error { return db.SaveVerdicts(vs) }))
		}
		errs = append(errs, verr)
	}
	return true, errors.Join(append(errs, db.CloseWith(retry))...)
}

// dropCheckpoint removes the *store.CheckpointError from the errors joined in err.
func dropCheckpoint(err error) error {
	var keep []error
	for _, e := range flatten(err) {
		if _, ok := e.(*store.CheckpointError); !ok {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

// flatten lists the errors joined in err (errors.Join), recursively.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// printTable prints the table, the workers' notes and the run directory.
func printTable(w io.Writer, res *controller.Result, t *measure.EndTable) {
	fmt.Fprintln(w)
	report.WriteText(w, t)
	for _, wr := range res.Workers {
		if wr.Err != nil {
			fmt.Fprintf(w, "note: %v\n", wr.Err)
		}
	}
	fmt.Fprintf(w, "\nrun directory: %s\n", res.Dir)
}
