package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/store"
)

// runDB resolves a RUN_DIR|DB argument to a database path: a soak.db file, a
// run directory holding one, or "" for the latest soak run under outDir (run
// directories are named by their UTC start time, so the greatest name is the
// latest). A bench's directory (soak bench: out/bench-<time>, its soak.db of
// kind bench) is never the latest run: it is read when given explicitly.
func runDB(arg, outDir string) (string, error) {
	if arg == "" {
		dbs, err := filepath.Glob(filepath.Join(outDir, "*", "soak.db"))
		if err != nil || len(dbs) == 0 {
			return "", usageError{fmt.Errorf("no run found under %s: give a run directory or a soak.db", outDir)}
		}
		slices.Sort(dbs)
		for i := len(dbs) - 1; i >= 0; i-- {
			if !isBench(dbs[i]) {
				return dbs[i], nil
			}
		}
		return "", usageError{fmt.Errorf("no soak run found under %s, only benches: give a bench's directory (%s) to read it",
			outDir, filepath.Dir(dbs[len(dbs)-1]))}
	}
	fi, err := os.Stat(arg)
	if err != nil {
		return "", usageError{fmt.Errorf("run %s: %w", arg, err)}
	}
	if !fi.IsDir() {
		return arg, nil
	}
	db := filepath.Join(arg, "soak.db")
	if _, err := os.Stat(db); err != nil {
		return "", usageError{fmt.Errorf("run %s: no soak.db in this directory", arg)}
	}
	return db, nil
}

// oneArg returns the only positional argument of a subcommand, or "".
func oneArg(name string, args []string) (string, error) {
	switch len(args) {
	case 0:
		return "", nil
	case 1:
		return args[0], nil
	}
	return "", usageError{fmt.Errorf("%s: want at most one RUN_DIR or DB, got %d arguments", name, len(args))}
}

// isBench says whether the database at path is a bench's: its directory is
// named bench-<time>, or its run is of kind bench. A database that cannot be
// read is not one (the command that opens it says why it cannot).
func isBench(path string) bool {
	if strings.HasPrefix(filepath.Base(filepath.Dir(path)), "bench-") {
		return true
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return false
	}
	defer db.Close()
	k, err := db.Kind()
	return err == nil && k == store.KindBench
}
