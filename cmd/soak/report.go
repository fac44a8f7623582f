package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// reportCmd renders report.html beside a run's database and, for a finished
// run, exits with exitThreshold when a library broke a threshold of its
// profile (the report shows the verdicts).
func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stdout, stderr)
	a := reportFlags(fs)
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	arg, err := oneArg("report", args)
	if err != nil {
		return err
	}
	dbPath, err := runDB(arg, *a.out)
	if err != nil {
		return err
	}
	// The run's database is only read: a run on a read-only volume, or
	// another user's, is reported like any other, into -o when its
	// directory cannot take report.html.
	htmlPath := *a.o
	if htmlPath == "" {
		dir := filepath.Dir(dbPath)
		if err := rundir.Writable(dir); err != nil {
			return fmt.Errorf("report: cannot write report.html into the run directory %s (%v): give -o FILE to write the report elsewhere",
				dir, errors.Unwrap(err))
		}
		htmlPath = filepath.Join(dir, "report.html")
	}
	run, stored, err := runState(dbPath)
	if err != nil {
		return err
	}
	if isBench(dbPath) { // the bench page: no thresholds to judge
		return writeReport(ctx, stdout, dbPath, htmlPath, report.Options{})
	}
	running := run.Status == "running"
	// A finished run is judged against its profile's thresholds: by the
	// verdicts soak run stored, else checked now (and stored when the
	// database may be written, else shown in the page only). A run still
	// going (or crashed) has no verdict yet.
	var verdicts error
	var opts report.Options
	switch {
	case len(stored) > 0:
		verdicts = printVerdicts(stdout, stored)
	case !running:
		var vs []store.Verdict
		vs, verdicts = checkRun(stdout, dbPath)
		if _, broken := verdicts.(thresholdError); verdicts != nil && !broken {
			return verdicts
		}
		if len(vs) > 0 && rundir.Writable(dbPath) == nil && rundir.Writable(filepath.Dir(dbPath)) == nil {
			if err := saveVerdicts(dbPath, vs); err != nil {
				return err
			}
		} else {
			opts.Verdicts = vs
		}
	}
	if err := writeReport(ctx, stdout, dbPath, htmlPath, opts); err != nil {
		return err
	}
	if verdicts == nil && run.Status == "interrupted" {
		return interruptedError{run.ID} // as soak run exited
	}
	return verdicts
}

// runState returns the run's record (status "running" while it goes on, or
// after a crash) and its stored verdicts.
func runState(dbPath string) (store.Run, []store.Verdict, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return store.Run{}, nil, err
	}
	defer db.Close()
	r, err := db.Run()
	if err != nil {
		return store.Run{}, nil, err
	}
	vs, err := db.Verdicts()
	return r, vs, err
}

// checkRun checks the thresholds of the run in the database at dbPath, read-only.
func checkRun(w io.Writer, dbPath string) ([]store.Verdict, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return checkThresholds(w, db, nil)
}

// saveVerdicts stores verdicts in the database at dbPath.
func saveVerdicts(dbPath string, vs []store.Verdict) error {
	db, err := store.Open(dbPath)
	if err != nil {
		return err
	}
	if err := db.SaveVerdicts(vs); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

// writeReport renders the database at dbPath into htmlPath and says where.
func writeReport(ctx context.Context, stdout io.Writer, dbPath, htmlPath string, opts report.Options) error {
	t0 := time.Now()
	if err := report.WriteFile(ctx, dbPath, htmlPath, opts); err != nil {
		return err
	}
	st, err := os.Stat(htmlPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%.1f MB, %s)\n", htmlPath, float64(st.Size())/1e6, time.Since(t0).Round(time.Millisecond))
	return nil
}
