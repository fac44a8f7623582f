package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/wssoak/wssoak/internal/compare"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/terminal"
)

// compareHelp is what soak compare -h prints.
var compareHelp = help{
	synopsis: "soak compare [-wide] RUN_A RUN_B | soak compare A1 A2 A3 -- B1 B2 B3",
	about: `Print two runs' end tables side by side, with their differences (each run a run directory or its soak.db):
a block per column in the usual order, each value of a cell that shows several compared; a warning
first when the runs differ in profile, window, host or Go version, or are one run. Then test the ranked
measures of each column, B against A (Mann–Whitney): on the batch means within the runs (within-run
noise only), or, with 3 or more runs a side (A… -- B…), on the runs themselves.`,
	examples: []example{
		{"soak compare out/20261201-100000-local out/20261201-233000-local", "the later run beside the earlier one"},
		{"soak compare out/a1 out/a2 out/a3 out/a4 -- out/b1 out/b2 out/b3 out/b4", "four runs of one setting against four of another, runs as the unit"},
	},
	args:  maxCompared,
	flags: func(fs *flagSet) any { return compareFlags(fs) },
}

// compareFlags are the flags of soak compare.
func compareFlags(fs *flagSet) *bool {
	return fs.Bool("wide", false, "print the rows' full names and cells however wide (default: the lines fit 120 columns)")
}

// maxCompared is the most runs soak compare reads at once (each side's
// measures are computed from its samples).
const maxCompared = 100

// compareCmd prints two runs' end tables side by side with their
// differences, or two benches' cells (median msgs/s and CPU µs/msg).
func compareCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	if i := slices.Index(args, "--"); i >= 0 {
		return compareSets(args[:i], args[i+1:], stdout, stderr)
	}
	fs := newFlagSet("compare", stdout, stderr)
	wide := compareFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError{fmt.Errorf("compare: want two runs (RUN_A RUN_B), got %d", len(pos))}
	}
	var paths [2]string
	var benches [2]bool
	for i, arg := range pos {
		if arg == "" {
			return usageError{fmt.Errorf("compare: run %d is an empty name", i+1)}
		}
		path, err := runDB(arg, "")
		if err != nil {
			return err
		}
		paths[i], benches[i] = path, isBench(path)
	}
	if benches[0] != benches[1] {
		kind := [2]string{"soak", "soak"}
		for i, b := range benches {
			if b {
				kind[i] = "bench"
			}
		}
		return usageError{fmt.Errorf("compare: %s is a %s and %s a %s: compare two soaks or two benches", pos[0], kind[0], pos[1], kind[1])}
	}
	if benches[0] {
		var sides [2]compare.BenchSide
		for i, path := range paths {
			db, err := store.OpenReadOnly(path)
			if err != nil {
				return fmt.Errorf("%s: %w", pos[i], err)
			}
			sides[i], err = compare.LoadBench(db, pos[i])
			db.Close()
			if err != nil {
				return err
			}
		}
		if err := compare.CheckBench(sides[0], sides[1]); err != nil {
			return usageError{err}
		}
		compare.WriteBench(stdout, sides[0], sides[1])
		return nil
	}
	var sides [2]compare.Side
	for i, path := range paths {
		db, err := store.OpenReadOnly(path)
		if err != nil {
			return fmt.Errorf("%s: %w", pos[i], err)
		}
		sides[i], err = compare.Load(db, pos[i])
		db.Close()
		if err != nil {
			return err
		}
	}
	if err := compare.Check(sides[0], sides[1]); err != nil {
		return usageError{err}
	}
	compare.Write(stdout, sides[0], sides[1], compare.Options{Wide: *wide})
	return nil
}

// compareSets compares the runs before "--" with those after it: the
// ranked measures per column, runs as the unit when each side has 3 or
// more (compare.RunsAreUnit).
func compareSets(left, right []string, stdout, stderr io.Writer) error {
	if len(left)+len(right) > maxCompared {
		return usageError{fmt.Errorf("compare: %d runs: at most %d", len(left)+len(right), maxCompared)}
	}
	var pos [2][]string
	var wide *bool
	for k, args := range [2][]string{left, right} {
		var err error
		fs := newFlagSet("compare", stdout, stderr)
		if w := compareFlags(fs); k == 0 {
			wide = w
		}
		if pos[k], err = parseInterspersed(fs, args); err != nil {
			return err
		}
		if len(pos[k]) == 0 {
			return usageError{fmt.Errorf("compare: no run %s \"--\" (A1 A2 … -- B1 B2 …)", [2]string{"before", "after"}[k])}
		}
	}
	var sides [2][]compare.Side
	for k := range pos {
		for _, arg := range pos[k] {
			if arg == "" {
				return usageError{fmt.Errorf("compare: a run is an empty name")}
			}
			path, err := runDB(arg, "")
			if err != nil {
				return err
			}
			if isBench(path) {
				return usageError{fmt.Errorf("compare: %s is a bench: compare two benches as BENCH_A BENCH_B", arg)}
			}
			db, err := store.OpenReadOnly(path)
			if err != nil {
				return fmt.Errorf("%s: %w", arg, err)
			}
			side, err := compare.Load(db, arg)
			db.Close()
			if err != nil {
				return err
			}
			sides[k] = append(sides[k], side)
		}
	}
	if len(sides[0]) == 1 && len(sides[1]) == 1 {
		compare.Write(stdout, sides[0][0], sides[1][0], compare.Options{Wide: *wide})
		return nil
	}
	compare.WriteHeader(stdout, sides[0], sides[1])
	for _, warn := range compare.SetWarnings(sides[0], sides[1]) {
		terminal.Println(stdout, "warning: "+warn)
	}
	if !compare.WriteRanked(stdout, sides[0], sides[1]) {
		fmt.Fprintln(stdout, "\nno ranked measure has values on both sides")
	}
	return nil
}
