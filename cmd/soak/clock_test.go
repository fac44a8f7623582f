package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/controller"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
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
	took := time.Since(t0)
	if took > 15*time.Second {
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
		if len(secs) < 5 || secs[0] != 1 || secs[4] != 5 {
			t.Errorf("%s: seconds %v, want 1…5 (and the drain)", lib, secs)
		}
	}
	events, _ := db.Events("")
	for _, e := range events {
		if e.Sec < -2 || e.Sec > 9 {
			t.Errorf("event %s %s at second %.1f: outside the run", e.Lib, e.Kind, e.Sec)
		}
		if e.Kind == "disconnected" || e.Kind == "stall" {
			t.Errorf("unexpected %+v", e)
		}
	}
}
