package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/report"
)

// reportCmd renders report.html beside a run's database.
func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "out", "directory holding the run directories (to find the latest run)")
	dest := fs.String("o", "", "write the report here (default: report.html beside the database)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: soak report [-out DIR] [-o FILE] [RUN_DIR|DB]   (default: the latest run under -out)")
		fs.PrintDefaults()
	}
	// One optional positional argument, before or after the flags.
	var target string
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		target, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	switch {
	case fs.NArg() == 1 && target == "":
		target = fs.Arg(0)
	case fs.NArg() > 0:
		return usageError{fmt.Errorf("report: unexpected argument %q (want one RUN_DIR or DB)", fs.Arg(fs.NArg()-1))}
	}
	dbPath, err := findDB(target, *out)
	if err != nil {
		return err
	}
	htmlPath := *dest
	if htmlPath == "" {
		htmlPath = filepath.Join(filepath.Dir(dbPath), "report.html")
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
	return nil
}

// findDB resolves a RUN_DIR or DB argument; empty means the latest run
// directory under outDir (run ids begin with their UTC start time).
func findDB(target, outDir string) (string, error) {
	if target == "" {
		dbs, err := filepath.Glob(filepath.Join(outDir, "*", "soak.db"))
		if err != nil {
			return "", fmt.Errorf("find runs: %w", err)
		}
		if len(dbs) == 0 {
			return "", usageError{fmt.Errorf("report: no run under %s (give RUN_DIR or DB, or -out DIR)", outDir)}
		}
		slices.Sort(dbs)
		return dbs[len(dbs)-1], nil
	}
	st, err := os.Stat(target)
	if err != nil {
		return "", usageError{fmt.Errorf("report: %w", err)}
	}
	if !st.IsDir() {
		return target, nil
	}
	db := filepath.Join(target, "soak.db")
	if _, err := os.Stat(db); err != nil {
		return "", usageError{fmt.Errorf("report: %s holds no soak.db", target)}
	}
	return db, nil
}
