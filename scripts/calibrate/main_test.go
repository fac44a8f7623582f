package main

import (
	"database/sql"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
)

var testCols = columns{aa: []string{"a1", "a2", "a3"}, cost: "cost", gc: []string{"gc25", "gc400"}, cpu: "cpu_avg", memory: []string{"rss", "latency"}}

// TestJudge: calls counted from a hand-made ranking.
func TestJudge(t *testing.T) {
	nan := math.NaN()
	rows := []rankRow{
		// cpu_avg (lower is better): a1 − a2 called (a1 lower), a1 − a3 called (a1 lower), a2 − a3 not:
		// a1 has a ★ among the A/A columns.
		{stat: "cpu_avg", a: "a1", b: "a2", est: -0.5, lo: -0.8, hi: -0.2},
		{stat: "cpu_avg", a: "a3", b: "a1", est: 0.4, lo: 0.1, hi: 0.7}, // stored the other way round
		{stat: "cpu_avg", a: "a2", b: "a3", est: 0.1, lo: -0.2, hi: 0.4},
		// latency: nothing called; a figure that cannot be called (note) is not a call.
		{stat: "latency", a: "a1", b: "a2", est: 1e6, lo: 5e5, hi: 2e6, note: "too short to call"},
		{stat: "latency", a: "a1", b: "a3", est: nan, lo: nan, hi: nan},
		{stat: "latency", a: "a2", b: "a3", est: 1, lo: -1, hi: 3},
		// the cost: higher than a1 and a2, not called against a3.
		{stat: "cpu_avg", a: "cost", b: "a1", est: 2, lo: 1.5, hi: 2.5},
		{stat: "cpu_avg", a: "a2", b: "cost", est: -2, lo: -2.5, hi: -1.5},
		{stat: "cpu_avg", a: "cost", b: "a3", est: 2, lo: -0.5, hi: 4.5},
		// GOGC: called on RSS only.
		{stat: "rss", a: "gc25", b: "gc400", est: -4e6, lo: -5e6, hi: -3e6},
		{stat: "latency", a: "gc25", b: "gc400", est: -1, lo: -3, hi: 1},
	}
	var r runResult
	r.judge(rows, testCols)
	if r.aaPairs != 6 || r.aaCallable != 4 || r.aaExcl != 2 || !slices.Equal(r.aaCalled, []string{"cpu_avg a1 a2", "cpu_avg a1 a3"}) {
		t.Errorf("A/A: %d pairs, %d with an interval, called %q", r.aaPairs, r.aaCallable, r.aaCalled)
	}
	if !slices.Equal(r.aaStars, []string{"cpu_avg a1"}) {
		t.Errorf("A/A stars %q", r.aaStars)
	}
	if r.costOver != 2 || r.aa != 3 {
		t.Errorf("cost called higher than %d of %d A/A columns, want 2 of 3", r.costOver, r.aa)
	}
	if !slices.Equal(r.costMissed, []string{"a3: interval [-0.5, 4.5] includes 0"}) {
		t.Errorf("the cost not called higher than %q, want a3 by its interval", r.costMissed)
	}
	if !slices.Equal(r.gcCalledOn, []string{"rss"}) || !slices.Equal(r.gcMissed, []string{"latency: interval [-3, 1] includes 0"}) {
		t.Errorf("GOGC called different on %q, not on %q", r.gcCalledOn, r.gcMissed)
	}
	var tl tally
	r.status, r.ranked = "done", true
	tl.add(r)
	r.costOver = 3
	tl.add(r)
	if tl.ranked != 2 || tl.aaRunsStarred != 2 || tl.called != 4 || tl.aaPairs != 12 || tl.costRuns != 1 || tl.gcRuns != 2 {
		t.Errorf("tally %+v", tl)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	for _, tt := range []struct{ p, want float64 }{{50, 5}, {95, 10}, {90, 9}, {10, 1}, {100, 10}} {
		if got := percentile(xs, tt.p); got != tt.want {
			t.Errorf("p%v = %v, want %v", tt.p, got, tt.want)
		}
	}
	if !math.IsNaN(percentile(nil, 95)) || median([]float64{4, 1, 3}) != 3 || median([]float64{4, 1, 3, 2}) != 2.5 {
		t.Error("percentile of none, or median")
	}
}

// TestReadRun: a run's database, read back: the RSS levels of the second
// half of the window, and its ranking table.
func TestReadRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "r", Name: "calibration", Status: "done", Started: t0, Planned: 10 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= 12; sec++ { // 11 and 12: the drain, left out
		for i, c := range testCols.aa {
			rss := int64(20e6 + 1e6*float64(i))
			if sec <= 5 || sec > 10 {
				rss = 99e6 // the first half and the drain: not the level
			}
			b.Samples = append(b.Samples, store.Sample{Lib: c, Sec: sec, TS: t0.Add(time.Duration(sec) * time.Second), HasProc: true, RSS: rss})
		}
	}
	for sec := int64(0); sec <= 12; sec++ { // the window's seconds at load 2, the others at 9
		load := 9.0
		if sec >= 1 && sec <= 10 {
			load = 2
		}
		b.Host = append(b.Host, store.HostSample{Sec: sec, TS: t0.Add(time.Duration(sec) * time.Second), Load1: load, CPUPct: 10 * load})
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	db.Close()
	sq, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE IF NOT EXISTS ranking (stat TEXT NOT NULL, a TEXT NOT NULL, b TEXT NOT NULL, n INTEGER NOT NULL, est REAL, lo REAL, hi REAL,
			p REAL, sd REAL, span REAL, note TEXT NOT NULL, PRIMARY KEY (stat, a, b))`,
		`INSERT INTO ranking VALUES ('cpu_avg', 'a1', '', 12, 6.3, 6.1, 6.5, NULL, NULL, 10, '')`,
		`INSERT INTO ranking VALUES ('cpu_avg', 'a1', 'a2', 12, 0.1, -0.1, 0.3, 0.3, 0.2, 10, '')`,
		`INSERT INTO ranking VALUES ('heap', 'gc25', 'gc400', 12, -4e6, NULL, NULL, NULL, NULL, 10, 'too short to call')`,
	} {
		if _, err := sq.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	sq.Close()

	r, err := readRun(dir, testCols)
	if err != nil {
		t.Fatal(err)
	}
	if !r.ranked || r.aaPairs != 1 || len(r.aaCalled) != 0 || len(r.gcCalledOn) != 0 {
		t.Errorf("ranking read back as %+v", r)
	}
	slices.Sort(r.rssDiffs)
	if !slices.Equal(r.rssDiffs, []float64{1e6, 1e6, 2e6}) {
		t.Errorf("RSS level differences %v, want 1, 1 and 2 MB", r.rssDiffs)
	}
	var out strings.Builder
	csvPath := filepath.Join(t.TempDir(), "runs.csv")
	if err := run([]string{"-aa", "a1,a2,a3", "-cost", "cost", "-gc", "gc25,gc400", "-csv", csvPath, dir}, &out); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(csvPath); err != nil || !strings.Contains(string(b), "\n001,done,2.00,20.0,1,,,0,3,\n") {
		t.Errorf("CSV: %q, %v", b, err)
	}
	for _, want := range []string{"mean over each run's window): median 2.0, 2.0 to 2.0\n", "runs: 1\n", "(measure, pair) differences called: 0 of the 1 with an interval", "    001: heap: too short to call\n", "    001: no such pair in the ranking\n", "3 pairs: p50 1.00 MB, p95 2.00 MB", "a3 ", "RSS  22.00 MB"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
