package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

const e2eProfile = `name: e2e
duration: 8s
warmup: 2s
symbols: [btcusdt, ethusdt, solusdt]
keepalive:
  interval: 2s
  timeout: 10s
replay:
  seed: 7
  speed: 15
  ping_interval: 3s
worker_runtime:
  gomaxprocs: 1
  gogc: 50
  gomemlimit: 256MiB
`

// TestRunEndToEnd runs a real soak: a replay server child, a worker child
// per library over loopback, a real SQLite file. Without faults every library
// must receive, per subscription, exactly what the server sent it.
func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "e2e.yaml", e2eProfile)
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("stdout:\n%s", stdout)
	libs := wire.Libraries // the profile names none: every library runs
	for _, lib := range libs {
		if !strings.Contains(stdout, lib) {
			t.Errorf("table lacks a %s column", lib)
		}
	}
	if !strings.Contains(stdout, "run directory: "+out) {
		t.Errorf("stdout does not name the run directory")
	}
	db := openRun(t, out)
	checkServerCounts(t, db, libs)

	// CPU: the last sampled CPU seconds against the kernel's rusage at exit.
	workers, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	if len(workers) != len(libs) {
		t.Fatalf("%d workers recorded, want %d", len(workers), len(libs))
	}
	for _, w := range workers {
		ru := w.RusageUser + w.RusageSys
		// /proc reports CPU in clock ticks (10 ms each for user and for system time).
		tol := math.Max(0.05*ru, 0.02)
		if ru <= 0 || math.Abs(w.SampledCPU-ru) > tol {
			t.Errorf("%s: sampled CPU %.3fs vs rusage %.3fs (tolerance %.3fs)", w.Lib, w.SampledCPU, ru, tol)
		}
		// every worker ran with the profile's runtime, as it read it back
		if want := "GOMAXPROCS=1 GOGC=50 GOMEMLIMIT=268435456B"; w.Runtime != want {
			t.Errorf("%s: runtime %q, want %q", w.Lib, w.Runtime, want)
		}
		if w.Version == "" || w.Version == "unknown" {
			t.Errorf("%s: library version not recorded (%q)", w.Lib, w.Version)
		}
	}

	// A row per worker per second of the window, with both halves.
	samples, err := db.Samples("")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]map[int64]store.Sample{}
	for _, s := range samples {
		if have[s.Lib] == nil {
			have[s.Lib] = map[int64]store.Sample{}
		}
		have[s.Lib][s.Sec] = s
	}
	for _, lib := range libs {
		for sec := int64(1); sec <= 8; sec++ {
			s, ok := have[lib][sec]
			if !ok || !s.HasWorker || !s.HasProc {
				t.Errorf("%s second %d: row %v worker half %v process half %v", lib, sec, ok, s.HasWorker, s.HasProc)
				continue
			}
			if s.RSS <= 0 || s.Msgs <= 0 {
				t.Errorf("%s second %d: rss %d msgs %d", lib, sec, s.RSS, s.Msgs)
			}
		}
	}
	checkNoErrorEvents(t, db)
	checkWidth(t, stdout)
	checkDrain(t, db, out, 8)

	// Every latency value is in the workers' minute digests: merged per
	// library they count what the worker's final report counted (one
	// process each, no restart), and the run's ranking is stored.
	merged := map[string]*sampler.Digest{}
	if err := db.EachLatencyDigest(func(d *store.LatencyDigest) error {
		if merged[d.Lib] == nil {
			merged[d.Lib] = sampler.NewDigest()
		}
		return merged[d.Lib].AddEncoded(d.Digest)
	}); err != nil {
		t.Fatal(err)
	}
	for _, w := range workers {
		if d := merged[w.Lib]; d == nil || w.LatCount == 0 || d.Count() != w.LatCount {
			t.Errorf("%s: latency digests hold %v values, the final report %d", w.Lib, d, w.LatCount)
		}
	}
	if rk, err := db.Ranking(); err != nil || len(rk) == 0 {
		t.Errorf("ranking %d rows, %v; want it stored", len(rk), err)
	}
}

// checkServerCounts asserts that every library received, per subscription, exactly what the
// replay server sent it (summed over a slot's connections), with nothing lost, and that
// all libraries received the same.
func checkServerCounts(t *testing.T, db *store.DB, libs []string) {
	t.Helper()
	// The server's own counts, summed over a slot's connections (tag lib/slot/attempt).
	counts, err := db.ServerCounts()
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int64{}
	first := map[string]int64{}    // lib/slot/stream: the first id the server sent the slot
	earliest := map[string]int64{} // slot/stream: the lowest of those over the libraries
	for _, c := range counts {
		parts := strings.Split(c.Tag, "/")
		if len(parts) != 3 || c.Stream == "" {
			continue
		}
		k := parts[0] + "/" + parts[1] + "/" + c.Stream
		sent[k] += c.Sent
		if v, ok := first[k]; c.Sent > 0 && c.FirstSeq > 0 && (!ok || c.FirstSeq < v) {
			first[k] = c.FirstSeq
		}
	}
	for k, v := range first {
		ss := k[strings.Index(k, "/")+1:]
		if e, ok := earliest[ss]; !ok || v < e {
			earliest[ss] = v
		}
	}
	// A slot whose first id on some stream is later than another library's
	// was attached by the server later, whatever its connected event says
	// (the server attaches the subscription after its 101, which a loaded
	// machine can push past the window's start: seen with deflate on).
	late := map[string]bool{} // lib/slot
	for k, v := range first {
		parts := strings.SplitN(k, "/", 3)
		if v > earliest[parts[1]+"/"+parts[2]] {
			late[parts[0]+"/"+parts[1]] = true
		}
	}
	streams, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	perStream := map[string]map[string]int64{} // slot/stream -> lib -> msgs
	for _, s := range streams {
		key := fmt.Sprintf("%d/%s", s.Slot, s.Stream)
		want := sent[fmt.Sprintf("%s/%s", s.Lib, key)]
		if s.MsgsTotal != want {
			t.Errorf("%s %s: received %d, server sent %d", s.Lib, key, s.MsgsTotal, want)
		}
		if s.MsgsTotal == 0 {
			t.Errorf("%s %s: no messages", s.Lib, key)
		}
		if s.LostTotal != 0 || s.DupTotal != 0 || s.OOOTotal != 0 {
			t.Errorf("%s %s: lost %d dup %d ooo %d without faults", s.Lib, key, s.LostTotal, s.DupTotal, s.OOOTotal)
		}
		if perStream[key] == nil {
			perStream[key] = map[string]int64{}
		}
		perStream[key][s.Lib] = s.MsgsTotal
	}
	if len(perStream) == 0 {
		t.Fatal("no stream samples")
	}
	// Every library gets the same schedule, so libraries whose slot had subscribed
	// before the window started received the same messages. A slot that
	// subscribed later (its worker started slowly on a busy machine) missed the
	// window's first events: it is held to the server's count above, not to the
	// other libraries'.
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	// A slot subscribes with its URL when it connects, or with SUBSCRIBE
	// messages after that (then a "subscribed" event says when they were sent).
	connected, subscribed, early := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range events {
		k := fmt.Sprintf("%s/%d", e.Lib, e.Slot)
		switch e.Kind {
		case wire.EventConnected:
			connected[k] = connected[k] || e.Sec < 0
		case wire.EventSubscribed:
			subscribed[k] = true
			early[k] = early[k] || e.Sec < 0
		}
	}
	for k, before := range connected {
		if !subscribed[k] {
			early[k] = before
		}
	}
	for key, byLib := range perStream {
		if len(byLib) != len(libs) {
			t.Errorf("%s: only %d libraries report it", key, len(byLib))
		}
		slot := key[:strings.Index(key, "/")]
		var ref string
		for _, lib := range libs {
			if !early[lib+"/"+slot] {
				t.Logf("%s: %s subscribed after the window's start; not compared with the others", key, lib)
				continue
			}
			if late[lib+"/"+slot] {
				t.Logf("%s: the server attached %s's slot after another library's; not compared with the others", key, lib)
				continue
			}
			if ref == "" {
				ref = lib
			}
			if byLib[lib] != byLib[ref] {
				t.Errorf("%s: %s received %d, %s %d", key, lib, byLib[lib], ref, byLib[ref])
			}
		}
	}
}

// checkNoErrorEvents asserts that a run without faults recorded no error of any kind.
func checkNoErrorEvents(t *testing.T, db *store.DB) {
	t.Helper()
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Kind == wire.EventDisconnected || e.Kind == wire.EventDialError || e.Kind == wire.EventWorkerExit || e.Kind == wire.EventStall {
			t.Errorf("unexpected event without faults: %+v", e)
		}
	}
}

// checkWidth fails for each line of soak run's stdout wider than 120
// columns (runes, as a terminal shows them), and for a carriage return or
// an escape code (stdout is no terminal here).
func checkWidth(t *testing.T, stdout string) {
	t.Helper()
	for i, l := range strings.Split(stdout, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 {
			t.Errorf("stdout line %d is %d columns: %q", i+1, n, l)
		}
	}
	if strings.ContainsAny(stdout, "\r\x1b") {
		t.Errorf("a carriage return or an escape code in piped stdout: %q", stdout)
	}
}

// checkDrain checks the last rows of a run of a window seconds: in the
// database, the rows after it (the drain) are kept and flagged, a second
// without messages without latency (NULL, not 0); the window's last second
// is no drain and has messages and latency; in the exported samples.csv
// the drain's rows say so in phase, and a second without messages has
// empty latency cells.
func checkDrain(t *testing.T, db *store.DB, out string, window int64) {
	t.Helper()
	samples, err := db.Samples("")
	if err != nil {
		t.Fatal(err)
	}
	drains := 0
	for _, s := range samples {
		switch {
		case s.Sec > window && (!s.Drain || s.Msgs == 0 && !s.NoLat):
			t.Errorf("%s second %d after the window: drain %v, %d messages, no latency %v", s.Lib, s.Sec, s.Drain, s.Msgs, s.NoLat)
		case s.Sec > window:
			drains++
		case s.Drain:
			t.Errorf("%s second %d of the window flagged as the drain", s.Lib, s.Sec)
		case s.Sec == window && (s.Msgs == 0 || s.NoLat):
			t.Errorf("%s: the window's last second has %d messages, no latency %v", s.Lib, s.Msgs, s.NoLat)
		}
	}
	if drains == 0 {
		t.Errorf("no drain row after second %d: nothing checked", window)
	}
	dir := t.TempDir()
	if _, stderr, err := runSoak(t, "export", "-dir", dir, filepath.Dir(dbPath(t, out))); err != nil {
		t.Fatalf("export: %v\n%s", err, stderr)
	}
	f, err := os.Open(filepath.Join(dir, "samples.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range recs[0] {
		col[c] = i
	}
	if last := recs[len(recs)-1]; last[col["phase"]] != "drain" {
		t.Errorf("samples.csv's last row %v: want a drain row", last)
	}
	for _, r := range recs[1:] {
		sec, _ := strconv.ParseInt(r[col["run_s"]], 10, 64)
		if want := map[bool]string{true: "drain", false: "window"}[sec > window]; sec >= 1 && r[col["phase"]] != want {
			t.Errorf("samples.csv second %d: phase %q, want %s", sec, r[col["phase"]], want)
		}
		if r[col["msgs_per_s"]] == "0" && r[col["lat_p50_us"]] != "" {
			t.Errorf("samples.csv second %d: no message, latency %q; want empty", sec, r[col["lat_p50_us"]])
		}
	}
}
