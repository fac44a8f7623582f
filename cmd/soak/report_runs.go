package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// defaultRunsReport is the page soak report writes over several runs
// without -o: in the current directory, as no run's directory is its own.
const defaultRunsReport = "runs-report.html"

// reportRuns writes one page over several soak runs (report.WriteRuns),
// each named by its directory or database; a run of another profile than
// the first's is warned about on stderr (refused, exit code 2, with -strict).
func reportRuns(args []string, a *reportArgs, stdout, stderr io.Writer) error {
	if *a.baseline != "" {
		return usageError{errors.New("flag -baseline: a baseline is a column of one run: give one run, or none")}
	}
	dbs, err := openRuns("report", args)
	if err != nil {
		return err
	}
	defer closeAll(dbs)
	in := make([]report.RunInput, len(dbs))
	for i, db := range dbs {
		in[i] = report.RunInput{Arg: args[i], DB: db}
	}
	path := *a.o
	if path == "" {
		path = defaultRunsReport
	}
	var warnings []string
	err = rundir.WriteFile(path, func(w io.Writer) error {
		var err error
		warnings, err = report.WriteRuns(w, in, report.RunsOptions{Strict: *a.strict})
		return err
	})
	if err != nil {
		if *a.strict {
			return usageError{err}
		}
		return err
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "soak report: warning:", w)
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%d runs, %.1f MB)\n", path, len(dbs), float64(st.Size())/1e6)
	return nil
}

// openRuns opens, read-only, the soak runs args name (run directories or
// databases; benches are refused); on error none is left open.
func openRuns(cmd string, args []string) ([]*store.DB, error) {
	if len(args) > maxCompared {
		return nil, usageError{fmt.Errorf("%s: %d runs: at most %d at once", cmd, len(args), maxCompared)}
	}
	var dbs []*store.DB
	for _, arg := range args {
		if arg == "" {
			closeAll(dbs)
			return nil, usageError{fmt.Errorf("%s: a run is an empty name", cmd)}
		}
		path, err := runDB(arg, "")
		if err == nil && isBench(path) {
			err = usageError{fmt.Errorf("%s: %s is a bench: several runs are soak runs", cmd, arg)}
		}
		var db *store.DB
		if err == nil {
			db, err = store.OpenReadOnly(path)
		}
		if err != nil {
			closeAll(dbs)
			return nil, err
		}
		dbs = append(dbs, db)
	}
	return dbs, nil
}

func closeAll(dbs []*store.DB) {
	for _, db := range dbs {
		db.Close()
	}
}
