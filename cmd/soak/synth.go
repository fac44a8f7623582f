package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/report/synth"
	"github.com/wssoak/wssoak/internal/store"
)

// synthCmd (hidden) writes a synthetic run database, to measure the report
// on a day-long run: soak synth out/synth24 && soak report out/synth24.
func synthCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("synth", stdout, stderr)
	a := synthFlags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	dir := *a.o
	switch {
	case len(pos) > 1:
		return usageError{fmt.Errorf("synth: want one RUN_DIR, got %d arguments", len(pos))}
	case len(pos) == 1 && dir != "":
		return usageError{fmt.Errorf("synth: the run directory is given twice (-o and RUN_DIR): give RUN_DIR alone")}
	case len(pos) == 1:
		dir = pos[0]
	}
	if dir == "" {
		return usageError{fmt.Errorf("synth: RUN_DIR is required (soak synth RUN_DIR)")}
	}
	if *a.duration < time.Second {
		return usageError{fmt.Errorf("flag -duration: %s is shorter than a second", *a.duration)}
	}
	t0 := time.Now()
	path := filepath.Join(dir, "soak.db")
	if err := synth.Write(path, synth.Config{Duration: *a.duration, Symbols: *a.symbols, Seed: *a.seed}); err != nil {
		return err
	}
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	// The end table computed and stored, as soak run does at the end.
	t, err := measure.Summarize(db)
	if err != nil {
		db.Close()
		return fmt.Errorf("summarize: %w", err)
	}
	if err := db.SaveSummary(t.SummaryRows()); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "synth: %s (%s)\n", path, time.Since(t0).Round(time.Millisecond))
	return nil
}
