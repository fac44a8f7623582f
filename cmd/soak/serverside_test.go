package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

const serverSideProfile = `name: server-e2e
side: server
duration: 10s
warmup: 2s
libraries: [gorilla, gws]
chat:
  n: 6
  rate: 50
  payload: 64KiB   # a client that stops reading fills its socket within a second or two
  queue: 16
faults:
  - kind: slow_reader   # early: its drop needs the server's socket buffer full (a few MB) on a busy machine too
    at: 1s
    n: 1
  - kind: half_open     # at the same instant: both fill their sockets together
    at: 1s
    n: 1
  - kind: reset
    at: 5s
    n: 2
`

// TestRunServerSide runs a real side: server soak: two chat server
// processes and the load process over loopback, one slow reader, one
// half-open client and one reset of two clients. Every server has a row for
// every second; the server dropped exactly the slow reader and the half-open
// client (each counted apart, and the rows' per-second drops sum to them);
// the reset clients came back; the
// clients' deliveries equal the server's writes exactly (the truth event).
func TestRunServerSide(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	dir := t.TempDir()
	prof := writeProfile(t, dir, "server.yaml", serverSideProfile)
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("stdout:\n%s", stdout)
	db := openRun(t, out)
	for _, lib := range []string{"gorilla", "gws"} {
		if !strings.Contains(stdout, lib) {
			t.Errorf("table lacks a %s column", lib)
		}
		rows, err := db.Samples(lib)
		if err != nil {
			t.Fatal(err)
		}
		secs := map[int64]bool{}
		var drops int64
		for _, r := range rows {
			if !r.HasDrops {
				t.Errorf("%s second %d: no drops recorded", lib, r.Sec)
			}
			drops += r.Drops
			if !r.HasProc || !r.HasWorker {
				t.Errorf("%s second %d: a half missing (process %v, server %v)", lib, r.Sec, r.HasProc, r.HasWorker)
			}
			if r.ConnsUp < 1 || r.Goroutines < 1 || r.RSS <= 0 || r.FDs < 1 {
				t.Errorf("%s second %d: conns %d goroutines %d RSS %d FDs %d", lib, r.Sec, r.ConnsUp, r.Goroutines, r.RSS, r.FDs)
			}
			secs[r.Sec] = true
		}
		for s := int64(1); s <= 10; s++ {
			if !secs[s] {
				t.Errorf("%s: no row for second %d", lib, s)
			}
		}
		if n := len(rows); n > 0 && rows[n-1].ReconnectsTotal != 2 {
			t.Errorf("%s: %d reconnects at the end, want 2", lib, rows[n-1].ReconnectsTotal)
		}
		evs, err := db.Events(lib)
		if err != nil {
			t.Fatal(err)
		}
		counts := map[wire.EventKind]int{}
		faults := map[wire.FaultKind]int{}
		dropped := map[wire.FaultKind]int{}
		for _, e := range evs {
			switch e.Kind {
			case wire.EventFault:
				faults[e.Fault] += e.Code
			case wire.EventDropped, wire.EventReconnect:
				counts[e.Kind] += e.Code
				if e.Kind == wire.EventDropped {
					dropped[e.Fault] += e.Code
				}
			case wire.EventTruth:
				counts[e.Kind]++
				if e.Code != 0 {
					t.Errorf("%s: truth: %s", lib, e.Detail)
				}
			case wire.EventDisconnected:
				counts[e.Kind]++
			}
		}
		if faults[wire.FaultSlowReader] != 1 || faults[wire.FaultHalfOpen] != 1 || faults[wire.FaultReset] != 2 {
			t.Errorf("%s: faults injected %v, want 1 slow reader, 1 half-open and 2 resets", lib, faults)
		}
		if dropped[wire.FaultSlowReader] != faults[wire.FaultSlowReader] || dropped[wire.FaultHalfOpen] != faults[wire.FaultHalfOpen] {
			t.Errorf("%s: dropped %v, injected %v", lib, dropped, faults)
		}
		if want := int64(faults[wire.FaultSlowReader] + faults[wire.FaultHalfOpen]); drops != want {
			t.Errorf("%s: the rows' drops sum to %d, %d slow readers and half-open clients injected", lib, drops, want)
		}
		if counts[wire.EventReconnect] != faults[wire.FaultReset] || counts[wire.EventDisconnected] != faults[wire.FaultReset] {
			t.Errorf("%s: %d reconnected, %d disconnected, %d reset", lib, counts[wire.EventReconnect], counts[wire.EventDisconnected], faults[wire.FaultReset])
		}
		if counts[wire.EventTruth] != 1 {
			t.Errorf("%s: %d truth events, want 1", lib, counts[wire.EventTruth])
		}
	}
	workers, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	if len(workers) != 2 {
		t.Fatalf("%d server processes recorded, want 2", len(workers))
	}
	for _, w := range workers {
		if w.RusageUser+w.RusageSys <= 0 || w.LatCount == 0 {
			t.Errorf("%s: rusage %.3f s, %d latency samples", w.Lib, w.RusageUser+w.RusageSys, w.LatCount)
		}
	}
}
