package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// runDB resolves a RUN_DIR|DB argument to a database path: a soak.db file, a
// run directory holding one, or "" for the latest run under outDir (run
// directories are named by their UTC start time, so the greatest name is the
// latest).
func runDB(arg, outDir string) (string, error) {
	if arg == "" {
		dbs, err := filepath.Glob(filepath.Join(outDir, "*", "soak.db"))
		if err != nil || len(dbs) == 0 {
			return "", usageError{fmt.Errorf("no run found under %s: give a run directory or a soak.db", outDir)}
		}
		slices.Sort(dbs)
		return dbs[len(dbs)-1], nil
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
