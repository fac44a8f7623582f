package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/store"
)

// reportCmd renders report.html beside a run's database and, for a finished
// run, exits with exitThreshold when a library broke a threshold of its
// profile (the report shows the verdicts).
func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.String("out", "out", "where runs are looked for when no RUN is given")
	dest := fs.String("o", "", "write the report here (default: report.html beside the database)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: soak report [-o FILE] [RUN_DIR|DB]   (default RUN: the latest under -out)")
		fs.PrintDefaults()
	}
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	arg, err := oneArg("report", args)
	if err != nil {
		return err
	}
	dbPath, err := runDB(arg, *runs)
	if err != nil {
		return err
	}
	htmlPath := *dest
	if htmlPath == "" {
		htmlPath = filepath.Join(filepath.Dir(dbPath), "report.html")
	}
	running, stored, err := runState(dbPath)
	if err != nil {
		return err
	}
	// A finished run is judged against its profile's thresholds: by the
	// verdicts soak run stored, else checked now (and stored). A run still
	// going (or crashed) has no verdict yet.
	var verdicts error
	switch {
	case len(stored) > 0:
		verdicts = printVerdicts(stdout, stored)
	case !running:
		verdicts = checkThresholds(stdout, dbPath, nil)
		if _, broken := verdicts.(thresholdError); verdicts != nil && !broken {
			return verdicts
		}
	}
	t0 := time.Now()
	if err := report.WriteFile(ctx, dbPath, htmlPath, report.Options{}); err != nil {
		return err
	}
	st, err := os.Stat(htmlPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%.1f MB, %s)\n", htmlPath, float64(st.Size())/1e6, time.Since(t0).Round(time.Millisecond))
	return verdicts
}

// runState tells whether the run in the database is still recorded as
// running (going on, or crashed), and returns its stored verdicts.
func runState(dbPath string) (bool, []store.Verdict, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return false, nil, err
	}
	defer db.Close()
	r, err := db.Run()
	if err != nil {
		return false, nil, err
	}
	vs, err := db.Verdicts()
	return r.Status == "running", vs, err
}
