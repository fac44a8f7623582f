package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestWallClockJump runs with a wall clock (Options.Now) that jumps an hour
// forward 2.5 s into the run and two hours back (to an hour behind) at 5 s.
// Durations and the seconds grid run on the monotonic clock, so the run ends
// on time, every second of the window has exactly one row, one second apart,
// and event seconds stay inside the window; only the stored wall instants
// (the run's end) show the jump.
func TestWallClockJump(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	p, err := profile.Parse("clock.yaml", []byte("name: clock\nduration: 5s\nwarmup: 1s\nlibraries: [gorilla, gws]\nsymbols: [btcusdt]\nreplay:\n  speed: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	now := func() time.Time {
		switch el := time.Since(t0); {
		case el > 5*time.Second:
			return time.Now().Add(-time.Hour)
		case el > 2500*time.Millisecond:
			return time.Now().Add(time.Hour)
		}
		return time.Now()
	}
	exe, _ := os.Executable()
	out := t.TempDir()
	res, err := controller.Run(context.Background(), controller.Options{Profile: p, OutDir: out, Exe: exe, Now: now,
		Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	// The wall clock jumped an hour forward and back: a run that timed itself
	// by it would end at once or go on for an hour. Any bound far below the
	// hour tells, and a loaded machine cannot reach it.
	took := time.Since(t0)
	if took > 2*time.Minute {
		t.Errorf("the run took %v for a 1 s warm-up, a 5 s window and a 2 s drain", took)
	}
	db, err := store.OpenReadOnly(filepath.Join(res.Dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, _ := db.Run()
	if d := run.Ended.Sub(run.Started); d > -50*time.Minute {
		t.Errorf("stored end - start = %v: want the injected wall clock's jump (about -1 h) to show there", d)
	}
	samples, _ := db.Samples("")
	byLib := map[string][]store.Sample{}
	for _, s := range samples {
		if s.HasWorker {
			byLib[s.Lib] = append(byLib[s.Lib], s)
		}
	}
	for _, lib := range []string{"gorilla", "gws"} {
		rows := byLib[lib]
		var secs []int64
		for i, s := range rows {
			secs = append(secs, s.Sec)
			if i > 0 && s.TS.Sub(rows[i-1].TS) != time.Duration(s.Sec-rows[i-1].Sec)*time.Second {
				t.Errorf("%s: rows %d and %d are %v apart", lib, rows[i-1].Sec, s.Sec, s.TS.Sub(rows[i-1].TS))
			}
			if (s.Sec <= 5 && s.Msgs <= 0) || s.Sec > 5+3 {
				t.Errorf("%s second %d: %d msgs", lib, s.Sec, s.Msgs)
			}
		}
		// Seconds in order, none twice, the first 1 (2 when a loaded machine
		// started the worker late), through 5; a gap only as the rows' times say.
		if len(secs) == 0 || secs[0] > 2 || !slices.Contains(secs, 5) || !slices.IsSorted(secs) || len(slices.Compact(slices.Clone(secs))) != len(secs) {
			t.Errorf("%s: seconds %v, want each from 1 (or 2) to 5 once (and the drain)", lib, secs)
		}
	}
	events, _ := db.Events("")
	for _, e := range events {
		if e.Sec < -2 || e.Sec > 9 {
			t.Errorf("event %s %s at second %.1f: outside the run", e.Lib, e.Kind, e.Sec)
		}
		if e.Kind == wire.EventDisconnected || e.Kind == wire.EventStall {
			t.Errorf("unexpected %+v", e)
		}
	}
}
