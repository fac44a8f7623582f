package main

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// resumeFaultsProfile is faults.yaml scaled down to a 24-second window of
// two libraries, built so that two runs of it see the same accounts: the
// replay schedule is seeded, the faults fire at planned instants, and what
// a reconnect costs does not differ from run to run — the connection faults
// hit the prices group, whose avgPrice streams carry no ids (a gap is no
// loss) and send once a second at fixed instants (a reconnect a few
// milliseconds longer in one run misses at most one more message of each);
// the stream faults (drop, duplicate) hit the markets group, which never
// reconnects. The kills (killAt) fall at least 3 s from every fault.
const resumeFaultsProfile = `name: resume-faults
duration: 24s
warmup: 2s
libraries: [gorilla, gws]
symbols: [btcusdt, ethusdt]
groups:
  - name: markets
    streams: ['{symbol}@trade', '{symbol}@aggTrade']
  - name: prices
    streams: ['{symbol}@avgPrice']
keepalive:
  interval: 300ms
  timeout: 1s
reconnect:
  min: 50ms
  max: 1s
silence:
  factor: 10
  min: 3s
  realtime: 20s
replay:
  seed: 11
  speed: 1
faults:
  - at: 3s
    kind: drop
    n: 5
    streams: [btcusdt@trade]
  - at: 4s
    kind: close
    code: 1001
    reason: going away
    streams: [btcusdt@avgPrice]
  - at: 11s
    kind: duplicate
    n: 3
    streams: [ethusdt@trade]
  - at: 12s
    kind: reset
    streams: [ethusdt@avgPrice]
  - at: 19s
    kind: reject
    n: 2
    status: 429
  - at: 19s
    kind: close
    code: 1011
    reason: internal error
    streams: [btcusdt@avgPrice]
  - at: 21s
    kind: drop
    n: 4
    streams: [ethusdt@aggTrade]
`

// killAt are the instants (from the window's start) the killed run's
// controller is SIGKILLed at, each time resumed at once.
var killAt = []time.Duration{7500 * time.Millisecond, 15500 * time.Millisecond}

// TestResumeKilledTwiceMatchesUnkilled is the acceptance of resume: a run
// with faults whose controller is SIGKILLed twice and resumed each time
// ends with the dials (and failures by status), wire bytes, reconnects and
// lost ids of the same run not killed, less what each outage cost, computed
// from the outage events and the unkilled run's records: the dials,
// reconnects and lost ids of the unkilled run inside an outage (none here:
// the kills fall between faults), plus one dial per slot for each resume;
// the wire bytes of the unkilled run's seconds from the last one recorded
// before the outage to the first one recorded after it, less what the
// resumed workers read in that second. SOAK_RESUME_WINDOW (e.g. 2m, by
// scripts/resume-acceptance.sh) stretches the window and the instants.
func TestResumeKilledTwiceMatchesUnkilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	t.Parallel()
	prof, kills := resumeFaultsProfile, killAt
	if w := os.Getenv("SOAK_RESUME_WINDOW"); w != "" {
		prof, kills = stretchProfile(t, prof, kills, w)
	}
	base := t.TempDir()
	path := writeProfile(t, base, "resume.yaml", prof)
	unkilledOut, killedOut := filepath.Join(base, "unkilled"), filepath.Join(base, "killed")
	done := make(chan error, 1)
	var unkilledLog string
	go func() {
		stdout, stderr, err := runSoak(t, "run", "-profile", path, "-out", unkilledOut)
		unkilledLog = stdout + stderr
		done <- err
	}()

	cmd, _, dir, start := startRun(t, "run", "-profile", path, "-out", killedOut)
	for i, at := range kills {
		time.Sleep(time.Until(start.Add(at)))
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		if i < len(kills)-1 {
			cmd = startResume(t, dir)
		}
	}
	stdout, stderr, err := runSoak(t, "run", "-resume", dir)
	if err != nil {
		t.Fatalf("last resume: %v\n%s\n%s", err, stdout, stderr)
	}
	if err := <-done; err != nil {
		t.Fatalf("unkilled run: %v\n%s", err, unkilledLog)
	}
	t.Logf("killed run, last resume:\n%s", stdout)
	if !strings.Contains(stderr, "duration="+durationOf(t, prof)) {
		t.Errorf("the resumed run's log does not give its window:\n%s", stderr)
	}

	u, k := accountsOf(t, dbPath(t, unkilledOut)), accountsOf(t, filepath.Join(dir, "soak.db"))
	if len(k.outages) != len(kills) {
		t.Fatalf("%d outage events, want %d", len(k.outages), len(kills))
	}
	slots := k.slots
	for _, lib := range []string{"gorilla", "gws"} {
		uk, kk := u.libs[lib], k.libs[lib]
		// What the outages cost, from the unkilled run's records.
		var cost libAccounts
		var wireCost, faultsCost int64
		for _, o := range k.outages {
			from := kk.lastUpTo(o.last)
			first := kk.firstAfter(from)
			to := float64(first) // the resumed workers' data comes in this second
			for _, e := range u.events[lib] {
				if e.Sec <= float64(from) || e.Sec > to {
					continue
				}
				switch e.Kind {
				case wire.EventDial:
					cost.dials++
				case wire.EventDialError:
					cost.fails++
				case wire.EventDisconnected:
					cost.reconnects++
				}
			}
			for _, f := range u.faults[lib] {
				if f.Sec <= float64(from) || f.Sec > to {
					continue
				}
				faultsCost++
				if f.Fault == wire.FaultDrop || f.Fault == wire.FaultDuplicate {
					t.Errorf("%s: a %s fault at %.1f s fell in the outage %d–%d s: its ids are the outage's (move the kill)", lib, f.Fault, f.Sec, from, first)
				}
			}
			// The seconds after the last recorded to the first recorded after:
			// what the unkilled run read then, less what the resumed workers
			// read in that first second.
			c := -kk.wireAt[first]
			for s := from + 1; s <= first; s++ {
				c += uk.wireAt[s]
			}
			wireCost += c
			t.Logf("%s: outage after second %d (%.0f ms), data again in second %d: %d dials, %d reconnects, %d wire bytes in the unkilled run",
				lib, from, o.durMs, first, cost.dials, cost.reconnects, c)
		}
		resumes := int64(len(kills)) * int64(slots)
		if want := uk.dials - cost.dials + resumes; kk.dials != want {
			t.Errorf("%s: %d dials, want %d (unkilled %d, %d in the outages, +%d for the resumes)", lib, kk.dials, want, uk.dials, cost.dials, resumes)
		}
		if want := uk.fails - cost.fails; kk.fails != want || !maps.Equal(kk.statuses, uk.statuses) {
			t.Errorf("%s: %d failed dials %v, want %d %v (unkilled, less %d in the outages)", lib, kk.fails, kk.statuses, want, uk.statuses, cost.fails)
		}
		if got, want := int64(len(k.faults[lib])), int64(len(u.faults[lib]))-faultsCost; got != want {
			t.Errorf("%s: %d faults seen, want %d (unkilled %d, %d in the outages): %s; unkilled: %s",
				lib, got, want, len(u.faults[lib]), faultsCost, faultList(k.faults[lib]), faultList(u.faults[lib]))
		}
		if want := uk.reconnects - cost.reconnects; kk.reconnects != want {
			t.Errorf("%s: %d reconnects, want %d (unkilled %d, %d in the outages)", lib, kk.reconnects, want, uk.reconnects, cost.reconnects)
		}
		if kk.lost != uk.lost || kk.dup != uk.dup || kk.lostAcross != uk.lostAcross || kk.chargedLib != uk.chargedLib || kk.chargedSrc != uk.chargedSrc {
			t.Errorf("%s: lost %d (across %d) dup %d charged %d/%d; unkilled lost %d (across %d) dup %d charged %d/%d",
				lib, kk.lost, kk.lostAcross, kk.dup, kk.chargedLib, kk.chargedSrc, uk.lost, uk.lostAcross, uk.dup, uk.chargedLib, uk.chargedSrc)
		}
		if uk.lost != 9 || uk.dup != 3 {
			t.Errorf("%s: the unkilled run lost %d and duplicated %d ids, want the faults' 9 and 3", lib, uk.lost, uk.dup)
		}
		// The wire bytes: the unkilled run's less the outages' cost, give or
		// take what differs from run to run: a message of each prices
		// subscription per reconnect (one of them a few milliseconds longer
		// than the other run's), and a message of each subscription read on
		// the other side of a second's boundary at each edge of an outage
		// and at the end.
		gaps := (k.libs[lib].reconnects + uk.reconnects) * uk.pricesMessage
		edges := (2*int64(len(k.outages)) + 1) * uk.messageBytes
		if want := uk.wire - wireCost; kk.wire < want-gaps-edges || kk.wire > want+gaps+edges {
			t.Errorf("%s: %d wire bytes, want %d ± %d: the unkilled run's %d less the outages' %d (± %d of reconnect gaps, ± %d at the outages' edges)",
				lib, kk.wire, want, gaps+edges, uk.wire, wireCost, gaps, edges)
		}
		if r := float64(kk.wire) / float64(kk.bytes); r < 1 {
			t.Errorf("%s: wire bytes / payload %.2f with compression off: the wire bytes lost a part", lib, r)
		}
		t.Logf("%s: dials %d (unkilled %d), reconnects %d (%d), lost %d/%d dup %d, wire %d (unkilled %d, outages %d, ±%d)",
			lib, kk.dials, uk.dials, kk.reconnects, uk.reconnects, kk.lost, kk.lostAcross, kk.dup, kk.wire, uk.wire, wireCost, gaps+edges)
	}
	if len(k.wireTruth) == 0 {
		t.Error("no wire check recorded in the killed run")
	}
	for lib, detail := range k.wireTruth {
		if !strings.HasPrefix(detail, "✓") || !strings.Contains(detail, "since the resume at ") {
			t.Errorf("%s: wire check %q: want the bytes since the last resume equal the resumed server's", lib, detail)
		}
	}
}

// startResume starts soak run -resume dir as a process and waits for its
// run to have started.
func startResume(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "-resume", dir)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	outb := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = outb, outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(outb.String(), `msg="run started"`) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the resume did not start within 20 s:\n%s", outb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return cmd
}

// libAccounts are one library's accounts at the end of a run.
type libAccounts struct {
	dials, fails, reconnects int64
	statuses                 map[string]int64
	lost, lostAcross, dup    int64
	chargedLib, chargedSrc   int64
	wire, bytes              int64
	wireAt                   map[int64]int64 // wire bytes read in each second with a row
	secs                     []int64         // the seconds with a worker row, in order
	messageBytes             int64           // a message of each subscription, at its average frame size
	pricesMessage            int64           // a message of each prices subscription, likewise
}

// lastUpTo is the last second up to sec with a worker row.
func (a libAccounts) lastUpTo(sec int64) int64 {
	last := int64(0)
	for _, s := range a.secs {
		if s <= sec {
			last = s
		}
	}
	return last
}

// firstAfter is the first second after sec with a worker row.
func (a libAccounts) firstAfter(sec int64) int64 {
	for _, s := range a.secs {
		if s > sec {
			return s
		}
	}
	return sec + 1
}

type outage struct {
	last  int64 // the last second recorded before it
	durMs float64
}

type runAccounts struct {
	libs      map[string]libAccounts
	events    map[string][]store.Event
	faults    map[string][]store.Event
	outages   []outage
	slots     int
	wireTruth map[string]string
}

func accountsOf(t *testing.T, path string) runAccounts {
	t.Helper()
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	run, err := db.Run()
	if err != nil || run.Status != "done" {
		t.Fatalf("%s: status %q, %v; want done", path, run.Status, err)
	}
	r := runAccounts{libs: map[string]libAccounts{}, events: map[string][]store.Event{}, faults: map[string][]store.Event{},
		wireTruth: map[string]string{}}
	get := func(lib string) libAccounts {
		a, ok := r.libs[lib]
		if !ok {
			a = libAccounts{statuses: map[string]int64{}, wireAt: map[int64]int64{}}
		}
		return a
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		t.Fatal(err)
	}
	slots := map[int]bool{}
	for _, d := range dials {
		a := get(d.Lib)
		a.dials += d.Dials
		a.fails += d.DialFails
		for code, n := range d.Statuses {
			a.statuses[code] += n
		}
		r.libs[d.Lib] = a
		slots[d.Slot] = true
	}
	r.slots = len(slots)
	samples, err := db.Samples("")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if !s.HasWorker {
			continue
		}
		a := get(s.Lib)
		a.wire, a.bytes = max(a.wire, s.WireBytesTotal), max(a.bytes, s.BytesTotal)
		a.wireAt[s.Sec] = s.WireBytes
		a.secs = append(a.secs, s.Sec)
		r.libs[s.Lib] = a
	}
	streams, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range streams {
		a := get(s.Lib)
		a.lost += s.LostTotal
		a.lostAcross += s.LostAcrossTotal
		a.dup += s.DupTotal
		if s.MsgsTotal > 0 {
			m := s.BytesTotal/s.MsgsTotal + 4 // with the frame's header (at most 4 bytes below 64 KiB)
			a.messageBytes += m
			if s.Group == "prices" {
				a.pricesMessage += m
			}
		}
		r.libs[s.Lib] = a
	}
	charges, err := db.LostCharges()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range charges {
		a := get(c.Lib)
		a.chargedLib += c.Library
		a.chargedSrc += c.Source
		r.libs[c.Lib] = a
	}
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		switch {
		case e.Kind == wire.EventOutage:
			r.outages = append(r.outages, outage{last: int64(e.Sec), durMs: e.DurMs})
		case e.Kind == wire.EventFault:
			r.faults[e.Lib] = append(r.faults[e.Lib], e)
		case e.Kind == wire.EventWireTruth:
			r.wireTruth[e.Lib] = e.Detail
		case e.Lib != "":
			r.events[e.Lib] = append(r.events[e.Lib], e)
			if e.Kind == wire.EventDisconnected {
				a := get(e.Lib)
				a.reconnects++
				r.libs[e.Lib] = a
			}
		}
	}
	for lib, a := range r.libs {
		slices.Sort(a.secs)
		r.libs[lib] = a
	}
	return r
}

// durationOf is the profile's duration as the log prints it.
func durationOf(t *testing.T, prof string) string {
	t.Helper()
	for _, l := range strings.Split(prof, "\n") {
		if v, ok := strings.CutPrefix(l, "duration: "); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatal(err)
			}
			return d.String()
		}
	}
	t.Fatal("no duration in the profile")
	return ""
}

// stretchProfile scales the profile's window, its faults' instants and the
// kills to a window of w (SOAK_RESUME_WINDOW).
func stretchProfile(t *testing.T, prof string, kills []time.Duration, w string) (string, []time.Duration) {
	t.Helper()
	win, err := time.ParseDuration(w)
	if err != nil || win < 24*time.Second {
		t.Fatalf("SOAK_RESUME_WINDOW=%q: want a duration of at least 24s", w)
	}
	f := float64(win) / float64(24*time.Second)
	lines := strings.Split(prof, "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "duration: "):
			lines[i] = "duration: " + win.String()
		case strings.HasPrefix(l, "  - at: "):
			s, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(l, "  - at: "), "s"), 64)
			if err != nil {
				t.Fatal(err)
			}
			lines[i] = fmt.Sprintf("  - at: %.0fs", s*f)
		}
	}
	var out []time.Duration
	for _, k := range kills {
		out = append(out, time.Duration(float64(k)*f))
	}
	return strings.Join(lines, "\n"), out
}

// faultList is the fault events as "kind@second" items.
func faultList(evs []store.Event) string {
	var parts []string
	for _, e := range evs {
		parts = append(parts, fmt.Sprintf("%s@%.1f", e.Fault, e.Sec))
	}
	return strings.Join(parts, " ")
}
