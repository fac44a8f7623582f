package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/runner/outcome"
	"github.com/wssoak/wssoak/internal/runner/serverside"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/terminal"
)

// runCmd runs a soak and prints the comparison table.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("run", stdout, stderr)
	a := runFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p, err := runProfile(fs, a)
	if err != nil {
		return err
	}
	ls, err := liveFlags(fs, a)
	if err != nil {
		return err
	}
	level := slog.LevelInfo
	if *a.verbose {
		level = slog.LevelDebug
	}
	// On a terminal the progress is a block redrawn in place: everything
	// else written to the terminal goes through it, so that a log line or
	// the table is never drawn over.
	var progress io.Writer = stdout
	inPlace := isTerminal(stdout)
	if inPlace {
		term := controller.NewTerminal(stdout)
		progress, stdout = term, term
		if isTerminal(stderr) {
			stderr = term.Beside(stderr)
		}
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

	opts := controller.Options{Profile: p, OutDir: *a.out, Log: log, Progress: progress, Abort: abort, WorkerTimeout: *a.workerTimeout,
		ProgressInPlace: inPlace, Resume: *a.resume, WriteBacklog: *a.backlog, RunDir: *a.dir}
	every := profile.Default().Report.Every // a resumed run: the default
	if p != nil {
		src := p.Path
		if src == "" {
			src = "built-in (as profiles/local.yaml)"
		}
		terminal.Println(stdout, fmt.Sprintf("soak run: profile %s, %s, libraries %s", src, time.Duration(p.Duration), strings.Join(p.ColumnNames(), ", ")))
		every = p.Report.Every
	} else {
		fmt.Fprintf(stdout, "soak run: resuming %s\n", *a.resume)
		if a.resumesDir {
			log.Info("-dir holds an unfinished run: resuming it with its own settings", "dir", *a.dir)
		}
	}
	// report.html is rewritten every report.every during the run (from a
	// read-only connection) and written once more at the end.
	refresh := &reportRefresher{every: time.Duration(every), log: log}
	refresh.ctx, refresh.stop = context.WithCancel(ctx)
	defer refresh.close()
	observers := fanOut{refresh}
	lingering := false
	if ls.addr != "" {
		lv, stop, err := startLive(ls, log)
		if err != nil {
			return err
		}
		defer stop()
		observers = append(observers, lv)
		lingering = *a.linger > 0
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
	// Whatever failed, the table is printed and the report attempted.
	if err = outcome.End(stdout, res, retry, err, *a.baseline, report.TextOptions{Wide: *a.wide}); err == nil && interrupted {
		id := ""
		if res != nil {
			id = res.RunID
		}
		err = interruptedError{id}
	}
	if lingering {
		linger(ctx, *a.linger, interrupted, abort, log)
	}
	return err
}

// linger keeps the live view up for d after the run's end, so that a
// Prometheus scraping every few seconds gets the final state and counts
// (a controller gone at once leaves the last scrape a second or more behind).
// A Ctrl-C skips it: the first one when the run ended by itself, the second
// when the first interrupted the run.
func linger(ctx context.Context, d time.Duration, interrupted bool, abort <-chan struct{}, log *slog.Logger) {
	var stop <-chan struct{}
	if !interrupted {
		stop = ctx.Done()
	}
	log.Info("live view: serving the final state", "for", d, "skip", "Ctrl-C")
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-stop:
	case <-abort:
	}
}
