package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/report/synth"
	"github.com/wssoak/wssoak/internal/store"
)

// synthCmd (hidden) writes a synthetic run database, to measure the report
// on a day-long run: soak synth -o out/synth24 && soak report out/synth24.
func synthCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("o", "", "run directory to create (required); the database is DIR/soak.db")
	duration := fs.Duration("duration", 24*time.Hour, "length of the synthetic window")
	symbols := fs.Int("symbols", 50, "markets per library (5 streams each, plus arr and 20 depth streams)")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{fmt.Errorf("synth: -o DIR is required")}
	}
	if *duration < time.Second {
		return usageError{fmt.Errorf("flag -duration: %s is shorter than a second", *duration)}
	}
	t0 := time.Now()
	path := filepath.Join(*dir, "soak.db")
	if err := synth.Write(path, synth.Config{Duration: *duration, Symbols: *symbols, Seed: *seed}); err != nil {
		return err
	}
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	if _, err := report.SummarizeAndSave(db); err != nil { // as soak run does at the end
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "synth: %s (%s)\n", path, time.Since(t0).Round(time.Millisecond))
	return nil
}
