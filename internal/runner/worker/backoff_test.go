package worker

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestReadLimitBacksOff: every message of the stream is above read_limit, so
// each connection ends at its first message (1009) before it delivered
// anything. Such a connection counts as a failed dial: between one's
// disconnect and the next dial the slot waits at least b/2, b doubling from
// reconnect.min to reconnect.max, and after give_up_after of them in a row the
// slot is recorded unrepairable, once. (Before, it redialed at once: a
// reconnect storm.)
func TestReadLimitBacksOff(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real connections")
	}
	defer goleak.VerifyNone(t)
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Parallel()
			testReadLimitBacksOff(t, tr)
		})
	}
}

func testReadLimitBacksOff(t *testing.T, tr transport.Transport) {
	// ~200 trades/s from now on, each ~190 bytes in its combined wrapper.
	srv, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 2, Speed: 10, Start: time.Now(), Symbols: []string{"btcusdt"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const (
		bMin, bMax = 40 * time.Millisecond, 320 * time.Millisecond
		giveUp     = 4
		dials      = 7
	)
	now := time.Now()
	plan := &wire.Plan{Version: wire.PlanVersion, RunID: "t", Column: wire.LibraryColumn(tr.Name()), Target: srv.URL(), Local: true, TimeUnit: "MICROSECOND",
		Start: now, End: now.Add(time.Minute), PingInterval: time.Second, PongTimeout: 10 * time.Second,
		BackoffMin: bMin, BackoffMax: bMax, HandshakeTimeout: 2 * time.Second,
		ReadLimit: 100, StallFactor: 10, StallMin: 3 * time.Second, StallRealTime: time.Minute, UnrepairableDial: giveUp, SubsEvery: 10,
		Slots: []wire.Slot{{ID: 0, Group: "g", Subscribe: "url", Streams: []string{"btcusdt@trade"}}}}
	var mu sync.Mutex
	var events []wire.Event
	var slots []wire.SlotStat
	w := newTestWorker(t, plan, tr, func(f *wire.Frame) {
		mu.Lock()
		defer mu.Unlock()
		switch f.Type {
		case wire.FrameEvent:
			events = append(events, *f.Ev)
		case wire.FrameSubs:
			if f.Slots != nil {
				slots = f.Slots
			}
		}
	})
	count := func(kind wire.EventKind) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, e := range events {
			if e.Kind == kind {
				n++
			}
		}
		return n
	}
	w.start()
	// The backoff schedule allows these dials in ~0.6–1.3 s; a storm would make them in milliseconds.
	werr := waitFor(10*time.Second, fmt.Sprintf("%d dials", dials), func() bool { return count(wire.EventDial) >= dials })
	w.stop(t)
	if werr != nil {
		t.Fatal(werr)
	}
	mu.Lock()
	defer mu.Unlock()
	defer func() {
		if t.Failed() {
			for _, e := range events {
				t.Logf("event %+v", e)
			}
		}
	}()
	// Walk the events in order: each connection ends with a 1009 read-limit
	// disconnect, then the slot waits its backoff before the next dial.
	b := bMin
	fails, unrepairable := 0, 0
	var lost *wire.Event
	for i := range events {
		e := &events[i]
		switch e.Kind {
		case wire.EventDisconnected:
			if e.Code != 1009 || !strings.HasPrefix(e.Detail, causeReadLimit+": ") {
				t.Errorf("disconnected %d %q, want 1009 %s", e.Code, e.Detail, causeReadLimit)
			}
			fails++
			lost = e
		case wire.EventDial:
			if lost == nil {
				continue
			}
			if gap := time.Duration(e.Mono - lost.Mono); gap < b/2 {
				t.Errorf("dial %s came %s after the connection before it ended (failure %d in a row), want at least b/2 = %s",
					e.Detail, gap.Round(time.Microsecond), fails, b/2)
			}
			b, lost = min(2*b, bMax), nil
		case wire.EventUnrepairable:
			unrepairable++
			if fails != giveUp {
				t.Errorf("unrepairable after %d connections ended before data, rule %d", fails, giveUp)
			}
		case wire.EventReconnect, wire.EventFirstData, wire.EventDialError:
			t.Errorf("unexpected %+v: no connection delivers data, every dial succeeds", *e)
		}
	}
	if unrepairable != 1 || len(slots) != 1 || !slots[0].Unrepairable || slots[0].DialFails != 0 {
		t.Errorf("%d unrepairable events, slot accounts %+v: want unrepairable once, no failed dial (each succeeded)", unrepairable, slots)
	}
}

// TestEstablishedConnectionBackoff: with reconnect.min = max = 1 s, a
// connection that delivered data and is then closed by the server is redialed
// at once; one that the server closes before it delivered anything waits the
// backoff (at least b/2 = 500 ms), and the next one that delivers data resets
// it. One that ends on a message above read_limit (64 KiB here) backs off too,
// data or not. The reconnect event's backoff phase shows the wait.
func TestEstablishedConnectionBackoff(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real connections")
	}
	defer goleak.VerifyNone(t)
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Parallel()
			m := newMatrixEnv(t, tr, func(p *wire.Plan) {
				p.BackoffMin, p.BackoffMax, p.ReadLimit = time.Second, time.Second, 64<<10
			}, false)
			err := mxEstablishedBackoff(m)
			m.stop()
			if err == nil {
				err = m.checkFinal()
			}
			if err != nil {
				t.Error(err)
				m.dump(t)
			}
		})
	}
}

func mxEstablishedBackoff(m *matrixEnv) error {
	half := m.w.plan.BackoffMin / 2
	// redial is the gap between the slot's n-th disconnect and its next dial.
	redial := func(n int) (time.Duration, error) {
		lost, err := m.waitEvent(wire.EventDisconnected, n, 3*time.Second)
		if err != nil {
			return 0, err
		}
		next, err := m.waitEvent(wire.EventDial, n+1, 3*time.Second)
		if err != nil {
			return 0, err
		}
		return time.Duration(next.Mono - lost.Mono), nil
	}
	// Data, then the server closes: at once.
	c0, err := m.connected(2)
	if err != nil {
		return err
	}
	if err := c0.Close(1001, "going away"); err != nil {
		return err
	}
	if gap, err := redial(0); err != nil || gap >= half {
		return fmt.Errorf("redial %s after a connection that delivered data (%v), want at once (< %s)", gap, err, half)
	}
	// No data, then the server closes: a failed dial, the backoff.
	c1, err := m.conn(1)
	if err != nil {
		return err
	}
	if err := c1.Close(1001, "going away"); err != nil {
		return err
	}
	if gap, err := redial(1); err != nil || gap < half {
		return fmt.Errorf("redial %s after a connection that ended before data (%v), want at least b/2 = %s", gap, err, half)
	}
	// Data again: the backoff is reset, the outage's reconnect shows its wait.
	c2, err := m.conn(2)
	if err != nil {
		return err
	}
	if err := m.send(c2, 2, 0); err != nil {
		return err
	}
	if err := m.waitMsgs(); err != nil {
		return err
	}
	rec, err := m.waitEvent(wire.EventReconnect, 0, 3*time.Second)
	if err != nil {
		return err
	}
	bm := regexp.MustCompile(`backoff=(\d+)ms`).FindStringSubmatch(rec.Detail)
	if bm == nil {
		return fmt.Errorf("reconnect %q: no backoff phase", rec.Detail)
	}
	if n, _ := strconv.Atoi(bm[1]); time.Duration(n)*time.Millisecond < half-time.Millisecond {
		return fmt.Errorf("reconnect %q: backoff phase under b/2 = %s", rec.Detail, half)
	}
	if err := c2.Close(1001, "going away"); err != nil {
		return err
	}
	if gap, err := redial(2); err != nil || gap >= half {
		return fmt.Errorf("redial %s after a connection that delivered data, following a failure (%v), want at once (< %s)", gap, err, half)
	}
	// Data, then a message above read_limit: it would come again, so a failed dial too.
	c3, err := m.conn(3)
	if err != nil {
		return err
	}
	if err := m.send(c3, 2, 0); err != nil {
		return err
	}
	if err := m.waitMsgs(); err != nil {
		return err
	}
	big := trade(m.nextID, `,"pad":"`+strings.Repeat("x", 100<<10)+`"`)
	m.nextID++
	if err := c3.SendText(big); err != nil {
		return err
	}
	if gap, err := redial(3); err != nil || gap < half {
		return fmt.Errorf("redial %s after a read-limit close (%v), want at least b/2 = %s", gap, err, half)
	}
	if ev := m.eventsOf(wire.EventDisconnected)[3]; ev.Code != 1009 {
		return fmt.Errorf("disconnected %d %q, want 1009 %s", ev.Code, ev.Detail, causeReadLimit)
	}
	return nil
}
