package main

import (
	"context"
	"fmt"
	"io"

	"github.com/wssoak/wssoak/internal/compare"
	"github.com/wssoak/wssoak/internal/store"
)

// compareHelp is what soak compare -h prints.
var compareHelp = help{
	synopsis: "soak compare RUN_A RUN_B",
	about:    `Print two runs' end tables side by side, with their differences (each run a run directory or its soak.db).`,
	examples: []example{
		{"soak compare out/20261201-100000-local out/20261201-233000-local", "the later run beside the earlier one"},
	},
	args: 2,
}

// compareCmd prints two runs' end tables side by side with their
// differences, or two benches' cells (median msgs/s and CPU µs/msg).
func compareCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	pos, err := parseInterspersed(newFlagSet("compare", stdout, stderr), args)
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
	compare.Write(stdout, sides[0], sides[1])
	return nil
}
