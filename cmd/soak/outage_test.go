package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

// outageProfile: the markets connection only loses events (two drops); the
// depth connection (subscribed by message) is broken four ways, each at a
// known instant: a close 1001, a reset, a half-open caught by the pong
// timeout (pings every 300 ms, 1 s timeout) and a zombie caught by the
// silence watchdog (depth@100ms: 100 ms × 10, at least 1.5 s).
const outageProfile = `name: outage-e2e
duration: 14s
warmup: 2s
symbols: [btcusdt, ethusdt]
groups:
  - name: markets
    streams: ['{symbol}@trade', '{symbol}@aggTrade']
  - name: depth
    streams: ['{symbol}@depth@100ms']
    subscribe: message
keepalive:
  interval: 300ms
  timeout: 1s
reconnect:
  min: 50ms
  max: 1s
silence:
  factor: 10
  min: 1500ms
  realtime: 10s
replay:
  seed: 5
  speed: 10
faults:
  - at: 2s
    kind: drop
    n: 5
    streams: [btcusdt@trade]
  - at: 3s
    kind: close
    code: 1001
    reason: going away
    streams: [btcusdt@depth@100ms]
  - at: 5s
    kind: reset
    streams: [ethusdt@depth@100ms]
  - at: 7s
    kind: drop
    n: 4
    streams: [ethusdt@aggTrade]
  - at: 8s
    kind: half_open
    streams: [btcusdt@depth@100ms]
  - at: 11s
    kind: zombie
    streams: [btcusdt@depth@100ms]
`

// TestRunOutages is the acceptance of the faults issue on a short run of its
// own: for each injected drop of N every library reports exactly N lost on
// that stream, charged to the source (every library lost the same ids);
// every injected close, reset, half-open and zombie gives exactly one
// disconnect with its cause and one reconnect with its duration per library;
// the end table counts the faults and reconnects.
func TestRunOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "outage.yaml", outageProfile)
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	t.Logf("stdout:\n%s", stdout)
	db := openRun(t, out)
	libs := wire.Libraries // the profile names none: every library runs

	streams, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	dropped := map[string]int64{"btcusdt@trade": 5, "ethusdt@aggTrade": 4, "ethusdt@trade": 0, "btcusdt@aggTrade": 0}
	for _, s := range streams {
		if n, ok := dropped[s.Stream]; ok && (s.LostTotal != n || s.DupTotal != 0 || s.OOOTotal != 0) {
			t.Errorf("%s %s: lost %d dup %d ooo %d, want exactly %d lost", s.Lib, s.Stream, s.LostTotal, s.DupTotal, s.OOOTotal, n)
		}
	}
	charges, err := db.LostCharges()
	if err != nil {
		t.Fatal(err)
	}
	if len(charges) != len(libs)*6 {
		t.Errorf("%d lost charges, want %d (6 subscriptions × %d libraries)", len(charges), len(libs)*6, len(libs))
	}
	for _, c := range charges {
		if c.Library+c.Source != c.Lost || c.Library < 0 || c.Source < 0 {
			t.Errorf("%s %s: lost %d ≠ library %d + source %d", c.Lib, c.Stream, c.Lost, c.Library, c.Source)
		}
		if n, ok := dropped[c.Stream]; ok && (c.Source != n || c.Library != 0 || len(c.Gaps) != min(int(n), 1)) {
			t.Errorf("%s %s: charged library %d source %d gaps %v; want the %d dropped ids, one range, charged to the source",
				c.Lib, c.Stream, c.Library, c.Source, c.Gaps, n)
		}
	}

	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	type acc struct {
		faults, reconnects int
		causes             []string
		lossAt             []float64
		faultAt            []float64 // the server's instants of the connection faults
		durs               []float64
	}
	per := map[string]*acc{}
	for _, lib := range libs {
		per[lib] = &acc{}
	}
	for _, e := range events {
		a := per[e.Lib]
		if a == nil {
			continue
		}
		switch e.Kind {
		case wire.EventFault:
			a.faults++
			if kind, _, _ := strings.Cut(e.Detail, " "); slices.Contains([]string{"close", "reset", "half_open", "zombie"}, kind) {
				a.faultAt = append(a.faultAt, e.Sec)
			}
		case wire.EventDisconnected:
			cause, _, _ := strings.Cut(e.Detail, ":")
			a.causes = append(a.causes, fmt.Sprintf("%s/%d %s", e.Group, e.Code, cause))
			a.lossAt = append(a.lossAt, e.Sec)
		case wire.EventReconnect:
			a.reconnects++
			a.durs = append(a.durs, e.DurMs)
			if e.Group != "depth" || e.DurMs <= 0 || e.DurMs > 3000 || !strings.Contains(e.Detail, "back=2/2") {
				t.Errorf("%s reconnect %+v: want the depth slot, a duration under 3 s, both subscriptions back", e.Lib, e)
			}
		}
	}
	// Detection after the instant the server applied the fault (from its fault
	// log, not the planned instant, which a busy server may pass late): a close
	// or a reset at once (one read); half-open by the pong timeout, 1 s after
	// the last pong (0.7–1.3 s); zombie by the silence watchdog, 1.5 s after the
	// last message (1.3–1.7 s). The causes tell the mechanisms apart and the
	// lower bounds say no mechanism fired early; the upper bounds only say
	// "promptly", with room for a loaded machine's scheduling (a worker or its
	// timers descheduled for a second or two must not fail the run's check).
	want := "[depth/1001 server_close depth/1006 abnormal depth/1006 pong_timeout depth/1006 stall_abort]"
	bounds := [][2]float64{{0, 2.5}, {0, 2.5}, {0.6, 3.5}, {1.2, 4}}
	for _, lib := range libs {
		a := per[lib]
		slices.Sort(a.durs)
		if len(a.faultAt) != len(bounds) {
			t.Errorf("%s: %d connection faults logged (%v), want %d", lib, len(a.faultAt), a.faultAt, len(bounds))
			continue
		}
		var detect []string
		for i, at := range a.lossAt {
			if i < len(a.faultAt) {
				d := at - a.faultAt[i]
				detect = append(detect, fmt.Sprintf("%.2fs", d))
				if d < bounds[i][0] || d > bounds[i][1] {
					t.Errorf("%s: %s detected %.2f s after the fault, want %.1f–%.1f s", lib, a.causes[i], d, bounds[i][0], bounds[i][1])
				}
			}
		}
		t.Logf("%s: %d faults, disconnects %v detected after %v, reconnect durations (ms) %.1f", lib, a.faults, a.causes, detect, a.durs)
		if a.faults != 6 {
			t.Errorf("%s: %d fault events, want 6", lib, a.faults)
		}
		if fmt.Sprint(a.causes) != want {
			t.Errorf("%s: disconnects %v, want %s", lib, a.causes, want)
		}
		if a.reconnects != 4 {
			t.Errorf("%s: %d reconnects, want 4", lib, a.reconnects)
		}
	}
	summary, err := db.Summary()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range summary {
		if r.Metric == "Faults seen" && r.Num != 6 {
			t.Errorf("table: %s %s = %s, want 6", r.Lib, r.Metric, r.Value)
		}
	}
}
