package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/report/synth"
	"github.com/wssoak/wssoak/internal/store"
)

// synthHelp is what soak synth -h prints.
var synthHelp = help{
	synopsis: "soak synth [-duration DURATION] [-symbols N] [-seed N] RUN_DIR",
	about: `(hidden) Write a synthetic five-library run database, RUN_DIR/soak.db, with its end table,
to measure the report and the export on a day-long run.`,
	examples: []example{
		{"soak synth out/synth24", "a synthetic day; then: soak report out/synth24"},
		{"soak synth -duration 40m -symbols 2 -seed 7 /tmp/small", "a small one"},
	},
	args:  1,
	flags: func(fs *flagSet) any { return synthFlags(fs) },
}

// synthArgs are the flags of soak synth.
type synthArgs struct {
	o        *string // the run directory given by the deprecated -o (now the argument)
	duration *time.Duration
	symbols  *int
	seed     *uint64
}

func synthFlags(fs *flagSet) *synthArgs {
	a := &synthArgs{
		o:        new(string),
		duration: fs.Duration("duration", 24*time.Hour, "length of the synthetic window, a `DURATION` such as 40m or 24h"),
		symbols:  fs.Int("symbols", 50, "`N` markets per library (5 streams each, plus arr and 20 depth streams)"),
		seed:     fs.Uint64("seed", 1, "random seed `N` of the generated streams"),
	}
	fs.deprecate("o", "the argument RUN_DIR (soak synth RUN_DIR)", func(s string) error { *a.o = s; return nil })
	return a
}

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
	// The end table and the ranking computed and stored, as soak run does
	// at the end.
	res, err := measure.Compute(db)
	if err != nil {
		db.Close()
		return fmt.Errorf("summarize: %w", err)
	}
	if err := errors.Join(db.SaveSummary(res.EndTable().SummaryRows()), db.SaveRanking(ranking.Compute(res).Rows())); err != nil {
		db.Close()
		return err
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "synth: %s (%s)\n", path, time.Since(t0).Round(time.Millisecond))
	return nil
}
