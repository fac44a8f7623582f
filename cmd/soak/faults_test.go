package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

const faultsProfile = `name: faults-e2e
duration: 5s
warmup: 2s
symbols: [btcusdt, ethusdt]
groups:
  - name: markets
    streams: ['{symbol}@trade', '{symbol}@aggTrade']
replay:
  seed: 9
  speed: 10
faults:
  - at: 1s
    kind: drop
    n: 3
    streams: [btcusdt@trade]
  - at: 1s
    kind: duplicate
    n: 2
    streams: [ethusdt@trade]
  - at: 2s
    kind: reorder
    streams: [btcusdt@aggTrade]
  - every: 2s
    kind: drop
    n: 1
    streams: [ethusdt@aggTrade]
  - at: 3s
    kind: reject
    n: 1
    status: 503
`

// TestRunFaults runs a real soak with a fault schedule: the replay server
// injects each fault into every library's connection at the same instant,
// every library accounts exactly for it, and the run records each as a
// fault event.
func TestRunFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "faults.yaml", faultsProfile)
	out := filepath.Join(dir, "out")
	if stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	db := openRun(t, out)
	libs := wire.Libraries // the profile names none: every library runs
	want := map[string]binance.SeqCounts{
		"btcusdt@trade": {Lost: 3}, "ethusdt@trade": {Dup: 2}, "btcusdt@aggTrade": {OutOfOrder: 1}, "ethusdt@aggTrade": {Lost: 2},
	}
	counts, err := db.ServerCounts()
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]int64{} // lib/stream
	for _, c := range counts {
		sent[strings.SplitN(c.Tag, "/", 2)[0]+"/"+c.Stream] += c.Sent
	}
	streams, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, s := range streams {
		w, ok := want[s.Stream]
		if !ok {
			continue
		}
		seen++
		got := binance.SeqCounts{Lost: s.LostTotal, Dup: s.DupTotal, OutOfOrder: s.OOOTotal}
		if got != w {
			t.Errorf("%s %s: lost/dup/ooo %+v, want %+v", s.Lib, s.Stream, got, w)
		}
		if n := sent[s.Lib+"/"+s.Stream]; s.MsgsTotal != n {
			t.Errorf("%s %s: received %d, server sent %d", s.Lib, s.Stream, s.MsgsTotal, n)
		}
	}
	if seen != len(libs)*len(want) {
		t.Fatalf("%d stream samples, want %d", seen, len(libs)*len(want))
	}
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	faults := map[string][]float64{} // lib -> instants
	for _, e := range events {
		if e.Kind == wire.EventFault {
			faults[e.Lib] = append(faults[e.Lib], e.Sec)
			if !strings.Contains(e.Detail, "drop n=") && !strings.Contains(e.Detail, "duplicate n=2") &&
				!strings.Contains(e.Detail, "reorder") && !strings.Contains(e.Detail, "reject n=1 status=503") {
				t.Errorf("fault detail %q", e.Detail)
			}
		}
	}
	// Each fault is one instant of the server's, shared by every library it
	// hit, and never before its schedule. How late it came is the busy
	// machine's business (a timer on a loaded host fires late), not a
	// property of the run, so there is no upper bound.
	wantAt := []float64{1, 1, 2, 2, 4}
	for _, lib := range libs {
		if got := faults[lib]; len(got) != len(wantAt) || !notBefore(got, wantAt) || !slices.Equal(got, faults[libs[0]]) {
			t.Errorf("%s: fault events at %v, want one each at or after %v, at the same instants as %s's %v", lib, got, wantAt, libs[0], faults[libs[0]])
		}
	}
	// nobody reconnected, so the reject hit no connection: one run-wide event
	if got := faults[""]; len(got) != 1 || !notBefore(got, []float64{3}) {
		t.Errorf("run-wide fault events at %v, want one at or after 3 s", got)
	}
}

// notBefore reports whether each of got (in order) is at or after want's,
// allowing 50 ms for the two processes' readings of the window's start.
func notBefore(got, want []float64) bool {
	for i := range got {
		if got[i] < want[i]-0.05 {
			return false
		}
	}
	return true
}

// TestFaultsRecordedDuringRun: the controller reads the server's fault log during the
// run, so a fault is in the database (for the live view and the report's refreshes)
// before the window ends, and reading the log again after the window adds no duplicate.
func TestFaultsRecordedDuringRun(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	base := t.TempDir()
	prof := writeProfile(t, base, "live-faults.yaml", `name: live-faults
duration: 8s
warmup: 1s
libraries: [gorilla, gws]
symbols: [btcusdt]
groups:
  - name: m
    streams: ['{symbol}@trade']
replay:
  seed: 3
  speed: 5
faults:
  - at: 1s
    kind: drop
    n: 2
    streams: [btcusdt@trade]
`)
	cmd, outb, dir, start := startRun(t, "run", "-profile", prof, "-out", filepath.Join(base, "out"))
	faults := func() []store.Event {
		db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
		if err != nil {
			return nil
		}
		defer db.Close()
		events, _ := db.Events("")
		var out []store.Event
		for _, e := range events {
			if e.Kind == wire.EventFault {
				out = append(out, e)
			}
		}
		return out
	}
	var during []store.Event
	for end := start.Add(8 * time.Second); time.Now().Before(end) && len(during) == 0; time.Sleep(200 * time.Millisecond) {
		during = faults()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run: %v\n%s", err, outb.String())
	}
	if len(during) != 2 {
		t.Errorf("fault events before the window ended: %+v, want one per library", during)
	}
	after := faults()
	if len(after) != 2 {
		t.Fatalf("fault events after the run: %+v, want one per library", after)
	}
	for _, e := range after {
		// one instant of the server's for both libraries, not before 1 s
		// (how late is the loaded machine's timer, not the run's property)
		if e.Sec < 1-0.05 || e.Sec != after[0].Sec || !strings.Contains(e.Detail, "drop n=2") {
			t.Errorf("fault event %+v: want the drop at or after 1 s, at the same instant for both libraries", e)
		}
	}
}
