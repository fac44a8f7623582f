package main

import (
	"context"
	"fmt"
	"io"

	"github.com/wssoak/wssoak/internal/compare"
	"github.com/wssoak/wssoak/internal/store"
)

// compareCmd prints two runs' end tables side by side with their differences.
func compareCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	pos, err := parseInterspersed(newFlagSet("compare", stdout, stderr), args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usageError{fmt.Errorf("compare: want two runs (RUN_A RUN_B), got %d", len(pos))}
	}
	var sides [2]compare.Side
	for i, arg := range pos {
		if arg == "" {
			return usageError{fmt.Errorf("compare: run %d is an empty name", i+1)}
		}
		path, err := runDB(arg, "")
		if err != nil {
			return err
		}
		db, err := store.OpenReadOnly(path)
		if err != nil {
			return fmt.Errorf("%s: %w", arg, err)
		}
		sides[i], err = compare.Load(db, arg)
		db.Close()
		if err != nil {
			return err
		}
	}
	compare.Write(stdout, sides[0], sides[1])
	return nil
}
