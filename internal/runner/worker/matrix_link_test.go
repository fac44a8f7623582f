package worker

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/link"
	"github.com/wssoak/wssoak/internal/wire"
)

// The network's faults in the failure matrix: the scenario's replay server
// listens in a network namespace behind a link of its own (package link),
// the worker dials it from its column's address, and the kernel plays the
// fault: the library sees only what a real path does to its packets. These
// scenarios skip, saying why, where links cannot be made (not root, no
// namespaces, no ip, tc or nft).

// linkMarker, as a plan's LocalAddr, has newMatrixEnv put the server
// behind a link (behindLink) before the worker starts.
const linkMarker = "link"

// behindLink adjusts the plan as adjust does (nil: not at all) and puts the
// scenario's server behind a link.
func behindLink(adjust func(*wire.Plan)) func(*wire.Plan) {
	return func(p *wire.Plan) {
		if adjust != nil {
			adjust(p)
		}
		p.LocalAddr = linkMarker
	}
}

// attachLink serves the env's replay server on a link of its own and points
// the plan at it: its target the server's address there, its local address
// the link's one column.
func (m *matrixEnv) attachLink(plan *wire.Plan) {
	t := m.t
	t.Helper()
	if err := link.Check(wire.Link{}); err != nil {
		m.srv.Close()
		t.Skip(err)
	}
	l, ln, err := link.Open(wire.Link{On: true}, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	go func() { _ = m.srv.Serve(ln) }() // ends with the server
	plan.Target, plan.LocalAddr = "ws://"+ln.Addr().String(), l.ColumnAddr(0).String()
	m.lnk = l
}

// netApply plays f on the link once the trade stream flows; it must find the
// slot's one connection.
func (m *matrixEnv) netApply(f wire.Fault) (link.Played, error) {
	if err := m.flowing(20); err != nil {
		return link.Played{}, err
	}
	p, err := m.lnk.Apply(f)
	if err == nil && p.Conns[0] != 1 {
		err = fmt.Errorf("%s found %v connections, want the slot's one", f.Kind, p.Conns)
	}
	return p, err
}

// netLoss expects the slot's one disconnect, within bound of the fault's
// instant, by cause (and, if given, with want in its detail), then its
// reconnect with both subscriptions back and delivering; it returns the
// disconnect.
func (m *matrixEnv) netLoss(p link.Played, cause, want string, bound time.Duration, lift func() error) (wire.Event, error) {
	ev, err := m.waitEvent(wire.EventDisconnected, 0, bound+3*time.Second)
	if lerr := lift(); err == nil {
		err = lerr
	}
	if err != nil {
		return ev, err
	}
	took := time.Unix(0, ev.TS).Sub(p.At)
	switch {
	case !strings.HasPrefix(ev.Detail, cause+": ") || !strings.Contains(ev.Detail, want):
		return ev, fmt.Errorf("disconnected with %d %q, want %s%s", ev.Code, ev.Detail, cause, map[bool]string{true: " (" + want + ")"}[want != ""])
	case took > bound:
		return ev, fmt.Errorf("%s detected after %s, bound %s", p.Fault.Kind, took.Round(time.Millisecond), bound)
	}
	rec, err := m.waitEvent(wire.EventReconnect, 0, 5*time.Second)
	if err != nil {
		return ev, err
	}
	if !strings.Contains(rec.Detail, "back=2/2") {
		return ev, fmt.Errorf("reconnect %+v: want both subscriptions back", rec)
	}
	m.t.Logf("finding: %s: %s detected after %s by %s; reconnect %s (%s)", m.lib, p.Fault.Kind, took.Round(time.Millisecond),
		ev.Detail, time.Duration(rec.DurMs*float64(time.Millisecond)).Round(time.Millisecond), rec.Detail)
	return ev, m.flowing(20)
}

// lostAcross checks the final totals: no duplicate, nothing lost while a
// connection was up, and what the outage lost counted across the reconnect
// (some of it on the trade stream, atLeast ids); it returns the ids lost.
func (m *matrixEnv) lostAcross(atLeast int64) (int64, error) {
	m.stop()
	m.checked = true
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.final) != 2 {
		return 0, fmt.Errorf("%d final subscription totals, want 2", len(m.final))
	}
	var lost int64
	var errs []error
	for _, s := range m.final {
		lost += s.Lost
		if s.Dup != 0 || s.Lost != s.LostAcross {
			errs = append(errs, fmt.Errorf("%s: lost %d (%d across the reconnect), %d duplicates; want all of it across, none twice", s.Stream, s.Lost, s.LostAcross, s.Dup))
		}
		if s.Stream == "btcusdt@trade" && s.Lost < atLeast {
			errs = append(errs, fmt.Errorf("%s: %d ids lost, want at least %d (the outage's)", s.Stream, s.Lost, atLeast))
		}
	}
	return lost, errors.Join(errs...)
}

// Blackhole: every packet dropped both ways, nobody told (no FIN, no
// reset): the keepalive (a ping every 100 ms within Binance's 5 control
// messages a second, no pong for 500 ms) must notice within 1.2 s, as it
// must the replay server's half-open; once the path is
// back the slot reconnects, and what the outage lost is counted across it.
func mxNetBlackhole(m *matrixEnv) error {
	bh := wire.Fault{Kind: wire.FaultBlackhole, For: time.Minute}
	p, err := m.netApply(bh)
	if err != nil {
		return err
	}
	if _, err := m.netLoss(p, causePongTimeout, "", 1200*time.Millisecond, func() error { return m.lnk.Lift(bh) }); err != nil {
		return err
	}
	lost, err := m.lostAcross(1)
	m.t.Logf("finding: %s: %d ids lost across the blackhole", m.lib, lost)
	return err
}

// RST from the path: the connection open at the instant is reset at its
// next packet (the client's ack of data, within milliseconds at the
// generator's rate): a kernel error, then a reconnect that the path lets
// through.
func mxNetRST(m *matrixEnv) error {
	p, err := m.netApply(wire.Fault{Kind: wire.FaultRST})
	if err != nil {
		return err
	}
	if _, err := m.netLoss(p, causeAbnormal, "connection reset", 500*time.Millisecond, func() error { return nil }); err != nil {
		return err
	}
	_, err = m.lostAcross(0)
	return err
}

// SYNs dropped while the slot redials: the server closes the connection
// (1001) during a syn_drop, every dial then times out at the handshake
// timeout (500 ms here) until the path answers again; the reconnect's
// duration holds those dials.
func mxNetSynDrop(m *matrixEnv) error {
	sd := wire.Fault{Kind: wire.FaultSynDrop, For: time.Minute}
	if _, err := m.netApply(sd); err != nil {
		return err
	}
	if err := m.inject(wire.Fault{Kind: wire.FaultClose, Code: 1001, Reason: "syn_drop"}); err != nil {
		return err
	}
	de, err := m.waitEvent(wire.EventDialError, 0, 3*time.Second)
	if lerr := m.lnk.Lift(sd); err == nil {
		err = lerr
	}
	if err != nil {
		return err
	}
	if !strings.HasPrefix(de.Detail, causeDialError+": ") || de.DurMs < 400 {
		return fmt.Errorf("dial error %+v: want a dial that timed out (%s) after the 500 ms handshake timeout", de, causeDialError)
	}
	rec, err := m.waitEvent(wire.EventReconnect, 0, 5*time.Second)
	if err != nil {
		return err
	}
	if rec.DurMs < 500 || !strings.Contains(rec.Detail, "back=2/2") {
		return fmt.Errorf("reconnect %+v: want it to hold the dial that timed out (500 ms or more), both subscriptions back", rec)
	}
	m.t.Logf("finding: %s: dial under syn_drop: %s; reconnect %.0f ms (%s)", m.lib, de.Detail, rec.DurMs, rec.Detail)
	if err := m.flowing(20); err != nil {
		return err
	}
	_, err = m.lostAcross(0)
	return err
}

// Throttle below the stream's rate: fewer messages a second arrive while it
// lasts (the rest queue), none is lost, the connection stays, and once it
// ends the backlog arrives: the accounting is exact against the server's.
func mxNetThrottle(m *matrixEnv) error {
	if err := m.flowing(20); err != nil {
		return err
	}
	rate := func(d time.Duration) float64 {
		from := m.sb.msgs.Load()
		time.Sleep(d)
		return float64(m.sb.msgs.Load()-from) / d.Seconds()
	}
	before := rate(time.Second)
	th := wire.Fault{Kind: wire.FaultThrottle, Rate: 32_000, For: time.Minute}
	if _, err := m.netApply(th); err != nil {
		return err
	}
	time.Sleep(300 * time.Millisecond) // what was in flight arrives
	during := rate(time.Second)
	if err := m.lnk.Lift(th); err != nil {
		return err
	}
	if during > 0.3*before {
		return fmt.Errorf("%.0f trades/s under a 32 kbit/s throttle, %.0f before: want it far lower", during, before)
	}
	m.t.Logf("finding: %s: %.0f trades/s before, %.0f under a 32 kbit/s throttle", m.lib, before, during)
	if err := m.flowing(20); err != nil {
		return err
	}
	if err := m.noLoss(); err != nil {
		return err
	}
	return m.checkServerTruth(0, 0)
}
