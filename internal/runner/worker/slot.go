package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// slot is one connection of the plan (wire.Slot), kept up for the whole
// run: it dials, reads into its subscriptions (sub.go), pings, aborts the
// connection when every subscription went silent, and redials with backoff.
// It is the connection's Handler: OnMessage, OnPing and OnPong run on the
// library's read goroutine.
type slot struct {
	w      *Worker
	Slot   wire.Slot
	subs   []*sub
	byName map[string]*sub
	last   *sub // of the previous message, read goroutine only: most are of the same stream

	cost     burner // the column's calibration cost, burnt on every message
	burnLast uint64 // where the last burn ended, read goroutine only

	msgs, bytes atomic.Int64 // all data messages, control replies included

	// frame bytes read: of the connections that ended, and the current one's counter
	wmu      sync.Mutex
	wireDone int64
	wireCur  *atomic.Int64

	lat *sampler.Latency // has its own lock; the reporter drains it once a second

	// What the read goroutine counted and has not yet published to the
	// atomics above and its subscriptions': it publishes (flush) before each
	// socket read, so once per batch of messages that arrived together, when
	// the connection has a read clock (batch); after every message otherwise.
	// Read goroutine only.
	n, nb   int64
	pending bool
	dirty   []*sub
	latBuf  [latBatch]int64
	latN    int
	batch   bool
	flushFn func() // s.flush, made once: the read clock's BeforeRead hook

	// clock is the current connection's read clock: the time of the read that
	// delivered a message (nil when the dialer is not ours: time.Now per message).
	// Set before the read loop starts.
	clock *transport.ReadClock

	// dial accounting: written by the slot goroutine, read by the reporter
	// (sent whenever it changed, so the controller holds it to the second),
	// under amu; acctN counts its changes.
	amu              sync.Mutex
	dials, dialFails int64
	statuses         map[string]int64 // failKey (handshake status, "accept") → count
	unrepairable     bool             // the rule fired at least once
	acctN            atomic.Int64

	// state of the current connection, read goroutine only
	gotFirst   bool
	lossAt     time.Time     // when the previous connection was found lost; zero if none
	recDur     time.Duration // loss → first data of the pending reconnect
	freshLeft  int           // subscriptions with no message yet on this connection
	outageLost int64         // ids lost across the outage, from each subscription's first message back
	phases     phases
	lastPong   atomic.Int64 // mono ns of the last pong (or of connect)
	connMono   atomic.Int64 // mono ns of the current connection's handshake
	subscribed atomic.Int64 // ns from connected until the SUBSCRIBE messages were written; 0 for URL subscriptions
	abortWhy   atomic.Pointer[abortReason]
	ctl        ctlBudget // messages toward Binance's 5 per second on this connection
}

// phases are the parts of a pending reconnect's duration (loss → first
// data), summed over its dials; the reconnect event's detail lists them.
type phases struct {
	detect, backoff, dial, handshake, firstData time.Duration
	connectedAt                                 time.Time
}

// run keeps the slot connected until ctx is done. After a failed dial (or a
// connection that ended before data, errNoData) it waits a jittered [b/2, b],
// b doubling from the plan's minimum to its maximum; after a connection that
// delivered data it redials at once, with b back at the minimum.
func (s *slot) run(ctx context.Context) {
	w := s.w
	backoff := w.plan.BackoffMin
	fails := 0
	var failingSince time.Time
	var wait time.Duration // at least this long before the next dial (Retry-After)
	given := false         // the unrepairable rule fired in this streak of failures
	for attempt := 0; ctx.Err() == nil; attempt++ {
		if attempt > 0 && fails > 0 {
			d := backoff/2 + rand.N(backoff/2+1) // jitter: [b/2, b]
			d = max(d, wait)
			t0 := time.Now()
			select {
			case <-ctx.Done():
				return
			case <-time.After(d):
			}
			s.phases.backoff += time.Since(t0)
			backoff = min(backoff*2, w.plan.BackoffMax)
		}
		err := s.connect(ctx, attempt)
		if err == nil {
			fails, backoff, wait, given = 0, w.plan.BackoffMin, 0, false
			continue
		}
		if ctx.Err() != nil {
			return
		}
		if fails++; fails == 1 {
			failingSince = time.Now()
		}
		wait = retryAfter(err, w.plan.BackoffMax)
		if !given && (w.plan.UnrepairableDial > 0 && fails >= w.plan.UnrepairableDial ||
			w.plan.UnrepairableFor > 0 && time.Since(failingSince) >= w.plan.UnrepairableFor) {
			given = true
			s.amu.Lock()
			s.unrepairable = true
			s.amu.Unlock()
			s.acctN.Add(1)
			w.emit(wire.Event{Kind: wire.EventUnrepairable, Slot: s.Slot.ID, Group: s.Slot.Group,
				Detail: fmt.Sprintf("%d failed dials (or connections ended before data) in a row over %s; still retrying",
					fails, time.Since(failingSince).Round(time.Millisecond))})
		}
	}
}

// retryAfter is how long a failed dial asks the slot to wait before the
// next: a handshake answer's Retry-After (seconds or an HTTP date), and for
// 418 (Binance's ban for ignoring 429) without one, long: the backoff maximum.
func retryAfter(err error, long time.Duration) time.Duration {
	var he *transport.HandshakeError
	if !errors.As(err, &he) {
		return 0
	}
	if v := he.Header.Get("Retry-After"); v != "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
			return time.Duration(n) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil {
			return max(time.Until(t), 0)
		}
	}
	if he.Status == http.StatusTeapot {
		return long
	}
	return 0
}

// errNoData ends a connection that was established but ended before its
// first message on a subscription, or on a message above the read limit
// (which will come again): it counts as a failed dial, for the backoff and
// for the unrepairable rule, so such a slot cannot redial in a tight loop.
var errNoData = errors.New("connection ended before data")

// connect dials once and, when it succeeds, reads until the connection ends.
// It returns the dial error, errNoData after a connection that ended before
// data, or nil after one that delivered data (or was closed at the run's end).
func (s *slot) connect(ctx context.Context, attempt int) error {
	w := s.w
	ev := wire.Event{Slot: s.Slot.ID, Group: s.Slot.Group}
	var tcpDone time.Time
	var clock *transport.ReadClock
	var wireN *atomic.Int64
	cfg := transport.DialConfig{
		URL: s.Slot.URL(w.plan.Target, w.plan.TimeUnit),
		NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := w.dialer.DialContext(ctx, network, addr) // through the proxy, if any
			tcpDone = time.Now()
			if err == nil {
				clock = transport.ReadClockOf(c)
				wireN = transport.WireBytesOf(c)
			}
			return c, err
		},
		TLS:              w.tls,
		HandshakeTimeout: w.plan.HandshakeTimeout,
		ReadLimit:        w.plan.ReadLimit,
		Subprotocols:     codec.Subprotocols(w.enc),
		Compression:      w.plan.Compression,
		ReadBufferSize:   w.plan.Column.Settings.ReadBufferSize,
	}
	if w.plan.Local {
		cfg.Header = http.Header{wire.TagHeader: {wire.Tag{Column: w.name, Slot: s.Slot.ID, Attempt: attempt}.String()}}
	}
	t0 := time.Now()
	ev.Kind = wire.EventDial
	ev.Detail = strconv.Itoa(attempt)
	w.emit(ev)
	hctx, cancel := context.WithTimeout(ctx, w.plan.HandshakeTimeout)
	conn, err := w.tr.Dial(hctx, cfg)
	cancel()
	if err != nil && ctx.Err() != nil {
		return err // the run ended during the dial: not a failure of the dial
	}
	s.amu.Lock()
	s.dials++
	s.amu.Unlock()
	s.acctN.Add(1)
	if err != nil {
		code, cause, detail := classify(err, false, nil)
		s.amu.Lock()
		s.dialFails++
		if key := failKey(code, cause); key != "" {
			if s.statuses == nil {
				s.statuses = map[string]int64{}
			}
			s.statuses[key]++
		}
		s.amu.Unlock()
		s.acctN.Add(1)
		if cause == causeHandshake {
			if d := retryAfter(err, w.plan.BackoffMax); d > 0 {
				detail += fmt.Sprintf("; retry after %s", d)
			}
		}
		ev.Kind, ev.Code, ev.Detail = wire.EventDialError, code, cause+": "+detail
		ev.DurMs = ms(time.Since(t0))
		s.phases.dial += time.Since(t0)
		w.emit(ev)
		return err
	}
	now := time.Now()
	if tcpDone.IsZero() {
		tcpDone = now
	}
	s.phases.dial += tcpDone.Sub(t0)
	s.phases.handshake += now.Sub(tcpDone)
	s.phases.connectedAt = now
	s.hook(clock)
	s.gotFirst = false
	s.freshLeft, s.outageLost = len(s.subs), 0
	for _, sb := range s.subs {
		sb.fresh = true
	}
	s.subscribed.Store(0)
	s.abortWhy.Store(nil)
	s.ctl.reset()
	s.lastPong.Store(int64(now.Sub(w.epoch)))
	s.connMono.Store(int64(now.Sub(w.epoch)))
	// The detail is what the server answered to the extensions asked for
	// (what this connection really negotiated), then the subprotocol.
	ev.Kind, ev.Detail, ev.DurMs = wire.EventConnected, negotiated(conn), ms(now.Sub(t0))
	w.emit(ev)
	s.setWire(wireN)
	w.connsUp.Add(1)
	defer w.connsUp.Add(-1)

	runErr := make(chan error, 1)
	go func() {
		err := conn.Run(s)
		s.flush() // the last batch, if the hook did not run after it
		runErr <- err
	}()
	done := make(chan struct{})
	var aux sync.WaitGroup
	aux.Add(2)
	go func() {
		defer aux.Done()
		s.keepalive(conn, done)
	}()
	go func() {
		defer aux.Done()
		s.watchSilence(conn, done)
	}()
	if s.Slot.Subscribe == "message" {
		aux.Add(1)
		go func() {
			defer aux.Done()
			s.subscribe(conn, done)
		}()
	}
	var rerr error
	select {
	case rerr = <-runErr:
	case <-ctx.Done():
		s.unhook()
		_ = conn.Close(1000, "soak stop")
		select {
		case rerr = <-runErr:
		case <-time.After(3 * time.Second):
			s.unhook()
			_ = conn.Abort()
			rerr = <-runErr
		}
	}
	close(done)
	aux.Wait()
	s.setWire(nil)
	lost := time.Now()
	// The read loop has ended: a reconnect still waiting for some subscription
	// to deliver again is recorded now, with what came back.
	s.reconnected(len(s.subs) - s.freshLeft)
	code, cause, detail := classify(rerr, true, s.abortWhy.Load())
	kind := wire.EventDisconnected // a loss: the slot reconnects
	if ctx.Err() != nil && errors.Is(rerr, net.ErrClosed) {
		kind, code, cause, detail = wire.EventClosed, 1000, causeLocal, "closed by soak at the end of the run"
	} else if ctx.Err() != nil {
		kind = wire.EventClosed // the end of the run, but the connection ended its own way
	}
	w.emit(wire.Event{Kind: kind, Slot: s.Slot.ID, Group: s.Slot.Group, Code: code, Detail: cause + ": " + detail})
	if ctx.Err() != nil {
		return nil
	}
	w.reconnects.Add(1)
	if s.lossAt.IsZero() { // else the outage goes on: a connection that delivered nothing ended
		last := w.epoch.Add(time.Duration(maxLastSeen(s)))
		s.lossAt = lost
		s.phases = phases{}
		if last.Before(lost) && last.After(now) {
			s.phases.detect = lost.Sub(last)
		}
	}
	if !s.gotFirst || cause == causeReadLimit {
		return errNoData
	}
	return nil
}

// hook makes clock's reads publish the slot's counts (nil: none).
func (s *slot) hook(clock *transport.ReadClock) {
	s.clock, s.batch = clock, clock != nil
	if clock != nil {
		clock.BeforeRead(&s.flushFn)
	}
}

// unhook stops the current connection's reads from publishing: before a
// Close or Abort from another goroutine, which a library may read in.
func (s *slot) unhook() {
	if c := s.clock; c != nil {
		c.BeforeRead(nil)
	}
}

// setWire makes c the current connection's frame byte counter (nil: none),
// adding the previous one's count to the slot's.
func (s *slot) setWire(c *atomic.Int64) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if s.wireCur != nil {
		s.wireDone += s.wireCur.Load()
	}
	s.wireCur = c
}

// wireBytes is the frame bytes read on every connection of the slot so far.
func (s *slot) wireBytes() int64 {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	n := s.wireDone
	if s.wireCur != nil {
		n += s.wireCur.Load()
	}
	return n
}

func maxLastSeen(s *slot) int64 {
	var m int64
	for _, sb := range s.subs {
		m = max(m, sb.lastSeen.Load())
	}
	return m
}

// keepalive pings on the plan's interval and aborts the connection when no
// pong came back within the timeout.
func (s *slot) keepalive(conn transport.Conn, done <-chan struct{}) {
	iv, to := s.w.plan.PingInterval, s.w.plan.PongTimeout
	if iv <= 0 {
		return
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			mono := int64(now.Sub(s.w.epoch))
			if to > 0 && mono-s.lastPong.Load() > int64(to) {
				s.abortWhy.Store(&abortReason{causePongTimeout, fmt.Sprintf("no pong for %s", to)})
				s.unhook()
				_ = conn.Abort()
				return
			}
			if !s.ctl.wait(done) {
				return
			}
			if err := conn.Ping(strconv.AppendInt(nil, time.Now().UnixMilli(), 10)); err != nil {
				return
			}
		}
	}
}

// watchSilence aborts the connection when every subscription has been silent
// past its stall threshold, counted from the later of its last message and
// this connection's handshake, inside the measured window (before the start
// and after the end the source is silent by design).
func (s *slot) watchSilence(conn transport.Conn, done <-chan struct{}) {
	// A subscription silent by design (a retired stream) proves nothing about
	// the connection: it is left out, and a slot of only such is never aborted.
	shortest := time.Duration(-1)
	for _, sb := range s.subs {
		if silentByDesign(sb.st) {
			continue
		}
		if sb.stall > 0 && (shortest < 0 || sb.stall < shortest) {
			shortest = sb.stall
		}
	}
	if shortest <= 0 {
		return
	}
	t := time.NewTicker(min(max(shortest/8, 5*time.Millisecond), time.Second))
	defer t.Stop()
	end := int64(s.w.plan.End.Sub(s.w.plan.Start))
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			mono := int64(now.Sub(s.w.epoch))
			if mono > end {
				return
			}
			from := max(s.connMono.Load(), 0)
			var longest time.Duration
			all := true
			for _, sb := range s.subs {
				if silentByDesign(sb.st) {
					continue
				}
				silent := time.Duration(mono - max(sb.lastSeen.Load(), from))
				if sb.stall <= 0 || silent <= sb.stall {
					all = false
					break
				}
				longest = max(longest, silent)
			}
			if all {
				s.abortWhy.Store(&abortReason{causeStallAbort, fmt.Sprintf("all %d subscriptions silent for %s or more", len(s.subs), longest.Round(time.Millisecond))})
				s.unhook()
				_ = conn.Abort()
				return
			}
		}
	}
}

// subscribe sends SUBSCRIBE messages for the slot's streams, 250 ms apart and within the
// connection's ctlBudget shared with the keepalive pings and the library's pongs (Binance
// allows 5 incoming messages per second, pings and pongs included).
func (s *slot) subscribe(conn transport.Conn, done <-chan struct{}) {
	const perMsg = 200
	t0 := time.Now()
	for i, id := 0, 1; i < len(s.Slot.Streams); i, id = i+perMsg, id+1 {
		if i > 0 {
			select {
			case <-done:
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
		if !s.ctl.wait(done) {
			return
		}
		names := s.Slot.Streams[i:min(i+perMsg, len(s.Slot.Streams))]
		msg, _ := json.Marshal(map[string]any{"method": "SUBSCRIBE", "params": names, "id": id})
		if err := conn.WriteText(msg); err != nil {
			return
		}
	}
	d := time.Since(t0)
	s.subscribed.Store(int64(d))
	s.w.emit(wire.Event{Kind: wire.EventSubscribed, Slot: s.Slot.ID, Group: s.Slot.Group, DurMs: ms(d)})
}

// negotiated is the connected event's detail: the server's
// Sec-WebSocket-Extensions answer, then the subprotocol it answered, if any,
// after "; " ("permessage-deflate; subprotocol soak.msgpack.v1").
func negotiated(c transport.Conn) string {
	d := c.Extensions()
	if sp := transport.SubprotocolOf(c); sp != "" {
		if d != "" {
			d += "; "
		}
		d += "subprotocol " + sp
	}
	return d
}

// OnPing is called after the adapter echoed the payload: the pong counts toward
// Binance's 5 messages per second.
func (s *slot) OnPing([]byte) { s.ctl.note(time.Now()) }

// OnPong records liveness for the keepalive.
func (s *slot) OnPong([]byte) { s.lastPong.Store(int64(time.Since(s.w.epoch))) }

// firstData closes the connect sequence: the first data message on a new
// connection, received at now (on the monotonic clock). Data read with the
// handshake's answer counts as received when the connection was up.
func (s *slot) firstData(now time.Time) {
	s.gotFirst = true
	if now.Before(s.phases.connectedAt) {
		now = s.phases.connectedAt
	}
	ev := wire.Event{Kind: wire.EventFirstData, Slot: s.Slot.ID, Group: s.Slot.Group,
		DurMs: ms(now.Sub(s.phases.connectedAt))}
	s.w.emit(ev)
	if !s.lossAt.IsZero() {
		s.recDur = now.Sub(s.lossAt)
		s.phases.firstData = now.Sub(s.phases.connectedAt)
	}
}

// back is a subscription's first message on the current connection; lost is
// what that message counted lost (the ids lost across the outage). When every
// subscription is back, a pending reconnect is recorded.
func (s *slot) back(sb *sub, lost int64) {
	sb.fresh = false
	s.outageLost += lost
	if s.freshLeft--; s.freshLeft == 0 {
		s.reconnected(len(s.subs))
	}
}

// reconnected records the pending reconnect, if any: its duration (loss →
// first data), phases, the ids lost across the outage and how many of the
// slot's subscriptions delivered again (all but those that then stall).
func (s *slot) reconnected(backSubs int) {
	if s.lossAt.IsZero() || s.recDur == 0 {
		return
	}
	p := s.phases
	s.w.emit(wire.Event{Kind: wire.EventReconnect, Slot: s.Slot.ID, Group: s.Slot.Group, DurMs: ms(s.recDur),
		Detail: fmt.Sprintf("detect=%.0fms backoff=%.0fms dial=%.0fms handshake=%.0fms subscribed=%.0fms first_data=%.0fms lost=%d back=%d/%d",
			ms(p.detect), ms(p.backoff), ms(p.dial), ms(p.handshake), ms(time.Duration(s.subscribed.Load())), ms(p.firstData),
			s.outageLost, backSubs, len(s.subs))})
	s.lossAt, s.recDur = time.Time{}, 0
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
