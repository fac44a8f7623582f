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

// reportCmd renders report.html beside a run's database. For a finished run
// it checks the profile's thresholds first (the report shows the verdicts)
// and exits with exitThreshold when one broke.
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
	running, err := isRunning(dbPath)
	if err != nil {
		return err
	}
	var verdicts error
	if !running { // a run still going has no verdict yet
		if verdicts = checkThresholds(stdout, dbPath); verdicts != nil {
			if _, broken := verdicts.(thresholdError); !broken {
				return verdicts
			}
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

// isRunning tells whether the run in the database is still recorded as
// running (going on, or crashed).
func isRunning(dbPath string) (bool, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return false, err
	}
	defer db.Close()
	r, err := db.Run()
	if err != nil {
		return false, err
	}
	return r.Status == "running", nil
}
