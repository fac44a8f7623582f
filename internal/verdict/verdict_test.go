package verdict

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

const knownProfile = `name: v
duration: 3s
thresholds:
  max_lost: 5
  max_dup: 1
  max_reconnects: 1
  max_reconnect_p99: 10s
  max_silence: 2s
  max_stalls: 0
  max_errors: 2
  max_rss_growth: 2MB
  max_cpu_avg: 5
  max_latency_p99: 10ms
`

// knownRun: a 3-second window (second 4 is the drain), gws with every kind
// of trouble, coder with none.
func knownRun(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "v", Name: "v", Target: "local", ProfileText: knownProfile, Started: start,
		Planned: 3 * time.Second, Settings: map[string]string{"profile_path": "profiles/v.yaml"}}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for _, lib := range []string{"gws", "coder"} {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "m", Version: "v", Pid: 1, LatCount: 10, LatP99: 12_000}); err != nil {
			t.Fatal(err)
		}
		for sec, x := range map[int64]struct {
			rss int64
			cpu float64
		}{0: {1e6, 90}, 1: {10e6, 100}, 2: {11e6, 4}, 3: {13e6, 6}, 4: {50e6, 80}} {
			if lib == "coder" {
				x.rss = 10e6
			}
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
				HasProc: true, RSS: x.rss, CPUPct: x.cpu})
		}
		b.StreamSamples = append(b.StreamSamples, store.StreamSample{Lib: lib, Group: "g", Stream: "btcusdt@trade", Sec: 3, MsgsTotal: 30, MaxSilenceMs: 900})
	}
	// Lost and duplicate ids are counted from the messages received.
	b.StreamSamples = append(b.StreamSamples,
		store.StreamSample{Lib: "gws", Group: "g", Stream: "ethusdt@trade", Sec: 3, MsgsTotal: 20, LostTotal: 4, DupTotal: 1, MaxSilenceMs: 2500},
		store.StreamSample{Lib: "gws", Group: "g", Stream: "solusdt@trade", Sec: 3, MsgsTotal: 10, LostTotal: 3})
	ev := func(kind wire.EventKind, code int, dur float64) store.Event {
		return store.Event{Lib: "gws", TS: start.Add(time.Second), Sec: 1, Kind: kind, Code: code, DurMs: dur}
	}
	b.Events = []store.Event{ev("disconnected", 1006, 0), ev("reconnect", 0, 100), ev("disconnected", 1001, 0),
		ev("reconnect", 0, 5000), ev("dial_error", 503, 0), ev("stall", 0, 0), {Lib: "", TS: start, Kind: "fault"}}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestFromRun(t *testing.T) {
	vs, err := FromRun(knownRun(t))
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		value  float64
		broken bool
	}
	wants := map[string][2]want{ // gws, coder
		"max_lost":          {{7, true}, {0, false}},
		"max_dup":           {{1, false}, {0, false}},
		"max_reconnects":    {{2, true}, {0, false}},
		"max_reconnect_p99": {{5, false}, {0, false}},
		"max_silence":       {{2.5, true}, {0.9, false}},
		"max_stalls":        {{1, true}, {0, false}},
		"max_errors":        {{2, false}, {0, false}}, // the 1006 loss and the failed dial; 1001 is no error
		"max_rss_growth":    {{3e6, true}, {0, false}},
		"max_cpu_avg":       {{5, false}, {5, false}}, // seconds 2 and 3: the first second and the drain are left out
		"max_latency_p99":   {{0.012, true}, {0.012, true}},
	}
	if len(vs) != 2*len(profile.ThresholdKeys) {
		t.Fatalf("%d verdicts, want %d", len(vs), 2*len(profile.ThresholdKeys))
	}
	for i, v := range vs {
		key := profile.ThresholdKeys[i/2].Key
		w := wants[key][map[string]int{"gws": 0, "coder": 1}[v.Lib]]
		if m := measure.ByThreshold(key); m == nil || v.Unit != m.Unit {
			t.Errorf("verdict %d: unit %q, want its measure's", i, v.Unit)
		}
		if v.Threshold != key || v.Ord != i/2 || v.Value != w.value || v.Broken != w.broken {
			t.Errorf("verdict %d: %+v, want %s value %v broken %v", i, v, key, w.value, w.broken)
		}
	}
}

func TestNoThresholdsNoVerdicts(t *testing.T) {
	vs, err := Check(knownRun(t), nil)
	if err != nil || vs != nil {
		t.Errorf("Check without thresholds = %v, %v", vs, err)
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		v    store.Verdict
		want string
	}{
		{store.Verdict{Lib: "gws", Threshold: "max_lost", Value: 7, Limit: 0, Unit: "messages", Broken: true}, "gws max_lost: 7 messages > limit 0 messages"},
		{store.Verdict{Lib: "gws", Threshold: "max_reconnect_p99", Value: 0.25, Limit: 10, Unit: "s"}, "gws max_reconnect_p99: 250ms ≤ limit 10s"},
		{store.Verdict{Lib: "coder", Threshold: "max_rss_growth", Value: 61.2e6, Limit: 50e6, Unit: "bytes", Broken: true}, "coder max_rss_growth: 61.2 MB > limit 50.0 MB"},
		{store.Verdict{Lib: "coder", Threshold: "max_cpu_avg", Value: 3.14159, Limit: 5, Unit: "%"}, "coder max_cpu_avg: 3.14 % ≤ limit 5.00 %"},
	} {
		if got := Format(tt.v); got != tt.want {
			t.Errorf("Format = %q, want %q", got, tt.want)
		}
	}
}

func TestFormatSmallSize(t *testing.T) {
	if !strings.Contains(Format(store.Verdict{Unit: "bytes", Value: 12}), "12 B") {
		t.Errorf("small sizes lose their bytes")
	}
}

// BenchmarkCheckDB checks every threshold against the database named by
// SOAK_BENCH_DB (e.g. a synthetic 24 h run from soak synth).
func BenchmarkCheckDB(b *testing.B) {
	path := os.Getenv("SOAK_BENCH_DB")
	if path == "" {
		b.Skip("set SOAK_BENCH_DB to a run database")
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var ts []profile.Threshold
	for _, k := range profile.ThresholdKeys {
		ts = append(ts, profile.Threshold{Key: k.Key, Limit: 1})
	}
	for b.Loop() {
		if _, err := Check(db, ts); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFromRunWithoutProfile(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(store.Run{ID: "s", Name: "s", Target: "local"}); err != nil {
		t.Fatal(err)
	}
	if vs, err := FromRun(db); err != nil || vs != nil {
		t.Errorf("FromRun without profile text = %v, %v; want nothing", vs, err)
	}
}

// TestNotMeasuredIsSkipped: a library whose worker was never sampled, sent no
// frame and recorded no latency (the run was interrupted during the warm-up)
// has no RSS growth, CPU average, loss, silence or latency: those checks are
// skipped (NaN, stored as NULL, not broken), never measured as 0 and passed;
// counts of events (none) are still 0 and checked.
func TestNotMeasuredIsSkipped(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.CreateRun(store.Run{ID: "w", Name: "w", Target: "local", ProfileText: knownProfile,
		Started: time.Unix(1_800_000_000, 0), Planned: 3 * time.Second, Status: "interrupted"}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1, RusageUser: 0.04}); err != nil {
		t.Fatal(err)
	}
	vs, err := FromRun(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SaveVerdicts(vs); err != nil {
		t.Fatal(err)
	}
	stored, err := db.Verdicts()
	if err != nil {
		t.Fatal(err)
	}
	skipped := map[string]bool{"max_lost": true, "max_dup": true, "max_silence": true, "max_rss_growth": true,
		"max_cpu_avg": true, "max_latency_p99": true}
	if len(stored) != len(profile.ThresholdKeys) {
		t.Fatalf("%d verdicts stored, want %d", len(stored), len(profile.ThresholdKeys))
	}
	for _, v := range stored {
		switch {
		case v.Broken:
			t.Errorf("%s broken with nothing measured: %+v", v.Threshold, v)
		case skipped[v.Threshold] && !v.Skipped():
			t.Errorf("%s: value %v, want skipped (not measured)", v.Threshold, v.Value)
		case !skipped[v.Threshold] && (v.Skipped() || v.Value != 0):
			t.Errorf("%s: value %v, want 0 (no events)", v.Threshold, v.Value)
		}
	}
	if n := len(Skipped(stored)); n != len(skipped) {
		t.Errorf("%d skipped, want %d", n, len(skipped))
	}
	if got, want := Format(stored[len(stored)-1]), "gws max_latency_p99: not measured, skipped (limit 10ms)"; got != want {
		t.Errorf("Format = %q, want %q", got, want)
	}
}

// TestLatencyAcrossUnsyncedClockIsSkipped: against a live target, latency is
// receive time minus the server's event time; when this machine's clock was
// not synchronised at a reading, the latency threshold is skipped, not
// passed or broken. Against the local replay server (one clock) it counts.
func TestLatencyAcrossUnsyncedClockIsSkipped(t *testing.T) {
	for _, tc := range []struct {
		name          string
		local, synced bool
		skipped       bool
	}{
		{"live, unsynchronised", false, false, true},
		{"live, synchronised", false, true, false},
		{"local, unsynchronised", true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			plan := map[bool]string{true: `{"local":true}`, false: `{"local":false}`}[tc.local]
			t0 := time.Unix(1_800_000_000, 0)
			if err := db.CreateRun(store.Run{ID: "l", Name: "l", Target: "wss://example.com", Started: t0, Planned: 120 * time.Second,
				Settings: map[string]string{"plan": plan}}); err != nil {
				t.Fatal(err)
			}
			if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1, LatCount: 100, LatP99: 9000}); err != nil {
				t.Fatal(err)
			}
			if err := db.Write(&store.Batch{Clock: []store.ClockSample{{Sec: 1, TS: t0.Add(time.Second), Synced: tc.synced}}}); err != nil {
				t.Fatal(err)
			}
			vs, err := Check(db, []profile.Threshold{{Key: "max_latency_p99", Limit: 0.001}})
			if err != nil || len(vs) != 1 {
				t.Fatalf("verdicts %+v, %v", vs, err)
			}
			if v := vs[0]; v.Skipped() != tc.skipped || (!tc.skipped && (!v.Broken || v.Value != 0.009)) {
				t.Errorf("%+v: want skipped %v, else 9 ms broken against 1 ms", v, tc.skipped)
			}
		})
	}
}

// TestFromRunCAFileGone: soak report of a finished run reads its thresholds
// from the profile stored with it; a tls.ca file the profile named, gone
// since the run, does not stop it (the stored text is not a run to start).
func TestFromRunCAFileGone(t *testing.T) {
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	text := "name: ca\nduration: 3s\ntls:\n  ca: /nonexistent/ca.pem\nthresholds:\n  max_errors: 0\n"
	if err := db.CreateRun(store.Run{ID: "ca", Name: "ca", Target: "local", ProfileText: text,
		Started: time.Unix(1_800_000_000, 0), Planned: 3 * time.Second,
		Settings: map[string]string{"profile_path": "/gone/ca.yaml"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1}); err != nil {
		t.Fatal(err)
	}
	vs, err := FromRun(db)
	if err != nil || len(vs) != 1 || vs[0].Threshold != "max_errors" || vs[0].Broken {
		t.Fatalf("verdicts %+v, %v; want max_errors passed", vs, err)
	}
	if _, err := profile.Parse("ca.yaml", []byte(text)); err == nil || !strings.Contains(err.Error(), "tls.ca") {
		t.Errorf("a profile to run with still checks its CA file: %v", err)
	}
}
