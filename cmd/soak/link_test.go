package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// linkedProfile is a short soak behind a link: every library, a rate per
// column, a blackhole (caught by the 1 s pong timeout) and a throttle.
const linkedProfile = `name: linked
duration: 8s
warmup: 2s
symbols: [btcusdt, ethusdt]
groups:
  - name: markets
    streams: ['{symbol}@trade', '{symbol}@aggTrade', '{symbol}@bookTicker']
keepalive:
  interval: 300ms
  timeout: 1s
reconnect:
  min: 100ms
  max: 1s
handshake_timeout: 2s
link:
  rate: 20mbit
faults:
  - at: 2s
    kind: blackhole
    for: 2s
  - at: 5s
    kind: throttle
    rate: 64kbit
    for: 1500ms
`

// needLinks skips a test where links cannot be made, saying why.
func needLinks(t *testing.T) {
	t.Helper()
	if err := link.Check(wire.Link{}); err != nil {
		t.Skip(err)
	}
}

// linkedRun is the start of an end-to-end linked run's test: not in -short,
// not where links cannot be made, in parallel with the other runs.
func linkedRun(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	needLinks(t)
	t.Parallel()
}

// TestRunLinked: a soak behind a link records each network fault once per
// library at one instant, every library's blackhole detection (by the pong
// timeout), and what it lost.
func TestRunLinked(t *testing.T) {
	linkedRun(t)
	dir := t.TempDir()
	prof := writeProfile(t, dir, "linked.yaml", linkedProfile)
	out := filepath.Join(dir, "out")
	if stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out); err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	db := openRun(t, out)
	evs, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	libs := wire.Libraries
	at := map[wire.FaultKind]map[string]time.Time{}
	for _, e := range evs {
		if e.Kind != wire.EventFault {
			continue
		}
		if at[e.Fault] == nil {
			at[e.Fault] = map[string]time.Time{}
		}
		if _, dup := at[e.Fault][e.Lib]; dup {
			t.Errorf("%s recorded twice for %q", e.Fault, e.Lib)
		}
		at[e.Fault][e.Lib] = e.TS
		// The fault counts the column's connections up at its instant: one,
		// unless the column was still reconnecting after the blackhole (a
		// busy machine), which its own events say.
		if n, edge := connsUpAt(evs, e.Lib, e.TS); !edge && !strings.Contains(e.Detail, fmt.Sprintf(" %d connections", n)) {
			t.Errorf("%s for %s: %q; want the %d connection(s) its events show up at that instant", e.Fault, e.Lib, e.Detail, n)
		} else if n != 1 {
			t.Logf("%s for %s: %q (%d up by its events)", e.Fault, e.Lib, e.Detail, n)
		}
	}
	for _, k := range []wire.FaultKind{wire.FaultBlackhole, wire.FaultThrottle} {
		if len(at[k]) != len(libs) {
			t.Errorf("%s recorded for %d libraries, want %d", k, len(at[k]), len(libs))
		}
		var first time.Time
		for _, ts := range at[k] {
			if first.IsZero() {
				first = ts
			} else if !ts.Equal(first) {
				t.Errorf("%s at %v and %v: want one instant for every library", k, first, ts)
			}
		}
	}
	r, err := measure.Compute(db)
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range libs {
		d := measure.Dims{Lib: lib}
		det, _ := r.Get("blackhole_detect", d)
		mech, _ := r.Get("blackhole_mechanism", d)
		lost, _ := r.Get("blackhole_lost", d)
		// the pong timeout of 1 s, and a ping's interval: within 1.5 s
		if det.Num <= 0 || det.Num > 1.5 || mech.Text != "pong timeout ×1" || lost.Text == measure.NotMeasured {
			t.Errorf("%s: detected after %q by %q, lost %q; want within 1.5 s, by the pong timeout, ids counted", lib, det.Text, mech.Text, lost.Text)
		}
		t.Logf("%s: blackhole detected after %s by %s; ids lost %s", lib, det.Text, mech.Text, lost.Text)
	}
	// That nothing of the link is left is checked after the suite
	// (TestMain): links of other tests may be up now.
}

// connsUpAt is how many connections lib had up at ts by its events
// (handshakes done less connections lost), and whether one of those events
// (or a dial) lies within 200 ms of ts, too near to say which side of it.
func connsUpAt(evs []store.Event, lib string, ts time.Time) (int, bool) {
	n, edge := 0, false
	for _, e := range evs {
		if e.Lib != lib {
			continue
		}
		if d := e.TS.Sub(ts); d > -200*time.Millisecond && d < 200*time.Millisecond &&
			(e.Kind == wire.EventDial || e.Kind == wire.EventConnected || e.Kind == wire.EventDisconnected) {
			edge = true // a dial's TCP connection is up before its handshake
		}
		if e.Kind != wire.EventConnected && e.Kind != wire.EventDisconnected {
			continue
		}
		if !e.TS.Before(ts) {
			continue
		}
		if e.Kind == wire.EventConnected {
			n++
		} else {
			n--
		}
	}
	return n, edge
}

// TestRunLinkKilled: a linked run whose controller is killed (-9) leaves
// nothing: its replay server dies with it (the kernel's parent-death
// signal), the namespace goes with the server, the pair with the
// namespace; and the next linked run works.
func TestRunLinkKilled(t *testing.T) {
	linkedRun(t)
	base := t.TempDir()
	prof := writeProfile(t, base, "linked.yaml", strings.Replace(linkedProfile, "duration: 8s", "duration: 30s", 1))
	cmd, outb, _, _ := startRun(t, "run", "-profile", prof, "-out", filepath.Join(base, "out"))
	defer cmd.Process.Kill()
	var pair string
	deadline := time.Now().Add(20 * time.Second)
	for pair == "" && time.Now().Before(deadline) {
		ifs, _ := net.Interfaces()
		for _, i := range ifs {
			if strings.HasPrefix(i.Name, fmt.Sprintf("soak%d-", cmd.Process.Pid)) {
				pair = i.Name
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pair == "" {
		t.Fatalf("no link of the run:\n%s", outb)
	}
	kids := children(t, cmd.Process.Pid)
	if len(kids) < 2 {
		t.Fatalf("%d children of the controller, want the server and workers", len(kids))
	}
	time.Sleep(time.Second) // into the window
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	deadline = time.Now().Add(10 * time.Second)
	for {
		_, err := net.InterfaceByName(pair)
		alive := 0
		for _, k := range kids {
			if !gone(k) {
				alive++
			}
		}
		if err != nil && alive == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the kill: the pair %s there %v, %d of %d children alive", pair, err == nil, alive, len(kids))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if left, err := link.Leftovers(); err != nil || len(left) > 0 {
		t.Errorf("leftovers %v, %v", left, err)
	}
	again, _, _ := strings.Cut(strings.Replace(linkedProfile, "duration: 8s", "duration: 3s", 1), "faults:")
	prof2 := writeProfile(t, base, "again.yaml", again)
	if stdout, stderr, err := runSoak(t, "run", "-profile", prof2, "-out", filepath.Join(base, "again")); err != nil {
		t.Fatalf("the next run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
}

// TestRunLinkRefused: a link this machine cannot make stops the run at its
// start with one line saying what is missing, before anything is created:
// here, a delay on a kernel without netem.
func TestRunLinkRefused(t *testing.T) {
	needLinks(t)
	cfg := wire.Link{On: true, Delay: 20 * time.Millisecond}
	want := link.Check(cfg)
	if want == nil {
		t.Skip("this kernel has netem: a delay is not refused here")
	}
	dir := t.TempDir()
	prof := writeProfile(t, dir, "delay.yaml", "name: delay\nduration: 2s\nlink:\n  delay: 20ms\n")
	out := filepath.Join(dir, "out")
	_, _, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "netem") {
		t.Errorf("run: %v; want %q", err, want)
	}
	if ents, _ := os.ReadDir(out); len(ents) > 0 {
		t.Errorf("a refused run created %d entries in %s", len(ents), out)
	}
}
