// Package worker is the worker role of a run: one library's connections for
// the controller's plan (dial, keepalive, reconnect, per-message accounting),
// reported as frames on stdout. It links neither the store nor the replay
// server: what it shares with the controller is in package wire.
package worker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// Worker runs one library's connections for a plan.
type Worker struct {
	plan   *wire.Plan
	tr     transport.Transport
	dialer *transport.Dialer // one per worker: socket options, proxy
	tls    *tls.Config       // trust for a wss target and an https proxy
	enc    codec.Encoding    // the plan's: asked for by subprotocol
	fw     *wire.FrameWriter
	log    *slog.Logger
	epoch  time.Time // plan.Start on this process's monotonic clock
	// from is where this process's silences start, ns since epoch: the
	// window's start (0), or the instant Run began for a worker started inside
	// the window (restarted, or by a resume), which knows nothing of before.
	from int64
	// monoOff turns a transport.ReadClock's monotonic reading into ns since epoch.
	monoOff int64

	slots   []*slot
	events  chan wire.Event
	dropped atomic.Int64

	reconnects atomic.Int64
	connsUp    atomic.Int64

	runLat *sampler.Latency // whole run, reporter goroutine only
	secLat *sampler.Latency // one second, reporter goroutine only

	tap func(slot int, p []byte) // tests only: sees every message as the library handed it over
}

// sub is one subscription of a slot. Counters are written only by the slot's
// read goroutine (a load and a store, no read-modify-write) and read by the
// reporter; msgs, bytes, lastSeen and lastSeq are the read goroutine's own
// n, nb and seen as of its latest publish (slot.flush).
type sub struct {
	st     binance.Stream
	rule   binance.Seq
	slot   *slot
	stall  time.Duration
	prefix []byte // binance.CombinedPrefix of the stream
	mpref  []byte // binance.MsgpackPrefix of the stream (binary messages)

	msgs, bytes             atomic.Int64
	lastSeen, maxSilence    atomic.Int64 // ns on the worker's monotonic clock since epoch
	lost, dup, ooo, regress atomic.Int64
	lostAcross              atomic.Int64 // of lost, found at the first message on a new connection
	lastSeq                 atomic.Int64
	n, nb, seen             int64            // read goroutine only: msgs, bytes, lastSeen
	dirty                   bool             // read goroutine only: counted since the latest publish
	seq                     binance.SeqState // read goroutine only
	gaps                    gapSet           // read goroutine only; read after it ended
	fresh                   bool             // read goroutine only: no message yet on the current connection
	stalled                 bool             // reporter only
	stalledAt               int64            // reporter only
	stalls                  int64            // reporter only
}

type slot struct {
	w      *Worker
	Slot   wire.Slot
	subs   []*sub
	byName map[string]*sub
	last   *sub // of the previous message, read goroutine only: most are of the same stream

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

	// dial accounting, slot goroutine only; read after it ended
	dials, dialFails int64
	statuses         map[string]int64 // failKey (handshake status, "accept") → count
	unrepairable     bool             // the rule fired at least once

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

type phases struct {
	detect, backoff, dial, handshake, firstData time.Duration
	connectedAt                                 time.Time
}

// Run is the worker process (soak child worker): it runs the connections of
// plan.Lib as plan says, and writes frames to out until it reads "stop" or
// EOF on stdin (the rest of stdin after the plan: see child.ReadSpec).
// After stopping it sends the final frame and returns when stdin reaches EOF
// (the controller samples the process in between).
func Run(ctx context.Context, plan *wire.Plan, stdin io.Reader, out io.Writer, log *slog.Logger) error {
	if plan.Version != wire.PlanVersion {
		return fmt.Errorf("plan version %d, want %d", plan.Version, wire.PlanVersion)
	}
	tr, err := transport.Lookup(plan.Lib)
	if err != nil {
		return err
	}
	br := bufio.NewReader(stdin)
	w, err := New(plan, tr, out, log)
	if err != nil {
		return err
	}
	plan.Runtime.Apply() // this process only: New also runs inside tests
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		for {
			l, err := br.ReadString('\n')
			if strings.TrimSpace(l) == "stop" {
				stop()
			}
			if err != nil {
				stop()
				return
			}
		}
	}()
	if err := w.Run(ctx); err != nil {
		return err
	}
	select {
	case <-eof:
	case <-time.After(30 * time.Second):
		log.Warn("controller did not close stdin after the final frame; exiting")
	}
	return nil
}

// New prepares a worker; Run starts it.
func New(plan *wire.Plan, tr transport.Transport, out io.Writer, log *slog.Logger) (*Worker, error) {
	w := &Worker{
		plan:   plan,
		tr:     tr,
		fw:     wire.NewFrameWriter(out),
		log:    log.With("lib", tr.Name()),
		epoch:  plan.Epoch(),
		events: make(chan wire.Event, 4096),
		runLat: sampler.NewLatency(),
		secLat: sampler.NewLatency(),
	}
	w.monoOff = transport.MonoOrigin(w.epoch)
	var err error
	if plan.Encoding != "" {
		if w.enc, err = codec.Parse(plan.Encoding); err != nil {
			return nil, fmt.Errorf("plan: %w", err)
		}
	}
	w.dialer = &transport.Dialer{RcvBuf: plan.RcvBuf, Timeout: plan.HandshakeTimeout}
	if plan.Proxy != "" {
		if w.dialer.Proxy, err = endpoint.ParseProxy(plan.Proxy); err != nil {
			return nil, err
		}
	}
	if w.tls, err = transport.TLSConfig(plan.CAFiles, plan.ServerName); err != nil {
		return nil, err
	}
	w.dialer.ProxyTLS = w.tls
	for _, ps := range plan.Slots {
		s := &slot{w: w, Slot: ps, byName: make(map[string]*sub, len(ps.Streams)), lat: sampler.NewLatency()}
		for _, name := range ps.Streams {
			st, err := binance.ParseStream(name)
			if err != nil {
				return nil, fmt.Errorf("slot %d: %w", ps.ID, err)
			}
			sb := &sub{st: st, rule: st.Seq(), slot: s, stall: stallAfter(plan, st), prefix: binance.CombinedPrefix(name),
				mpref: binance.MsgpackPrefix(name)}
			s.subs = append(s.subs, sb)
			s.byName[name] = sb
		}
		s.dirty = make([]*sub, 0, len(s.subs))
		s.flushFn = s.flush
		w.slots = append(w.slots, s)
	}
	return w, nil
}

// Run runs the worker until ctx is done, then closes the connections and
// sends the final frames.
func (w *Worker) Run(ctx context.Context) error {
	w.from = max(int64(time.Since(w.epoch)), 0) // before the goroutines that read it start
	if err := w.fw.Send(&wire.Frame{Type: wire.FrameHello, Lib: w.tr.Name(), Module: w.tr.Module(),
		Version: w.tr.Version(), Pid: os.Getpid(), Go: runtime.Version(), Runtime: wire.CurrentRuntime().String()}); err != nil {
		return err
	}
	evDone := make(chan struct{})
	go func() {
		defer close(evDone)
		for ev := range w.events {
			if err := w.fw.Send(&wire.Frame{Type: wire.FrameEvent, Ev: &ev}); err != nil {
				w.log.Error("send event", "err", err)
			}
		}
	}()
	var wg sync.WaitGroup
	for _, s := range w.slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.run(ctx)
		}()
	}
	repDone := make(chan struct{})
	go func() {
		defer close(repDone)
		w.report(ctx)
	}()
	<-ctx.Done()
	wg.Wait()
	<-repDone
	close(w.events)
	<-evDone
	// The slots' goroutines have ended: their gaps and dial counts are final.
	subs := w.subStats(time.Now())
	i := 0
	for _, s := range w.slots {
		for _, sb := range s.subs {
			subs[i].Gaps, subs[i].GapAcross = sb.gaps.ranges()
			subs[i].GapOverflow, subs[i].GapOverflowAcross = sb.gaps.overflow, sb.gaps.overflowAcross
			i++
		}
	}
	if err := w.fw.Send(&wire.Frame{Type: wire.FrameSubs, Sec: w.sec(time.Now()), Subs: subs, Slots: w.slotStats()}); err != nil {
		return err
	}
	u, s, maxrss := sampler.Rusage()
	snap := w.runLat.Snapshot()
	return w.fw.Send(&wire.Frame{Type: wire.FrameFinal, Fin: &wire.FinalReport{
		RusageUser: u, RusageSys: s, MaxRSS: maxrss,
		LatN: snap.Count, LatP50: snap.P50, LatP99: snap.P99, LatP999: snap.P999, LatMax: snap.Max, LatNeg: snap.Negative,
		Dropped: w.dropped.Load(),
	}})
}

func (w *Worker) sec(now time.Time) int64 { return int64(now.Sub(w.epoch) / time.Second) }

func (w *Worker) emit(ev wire.Event) {
	if ev.TS == 0 {
		now := time.Now()
		ev.TS, ev.Mono = now.UnixNano(), int64(now.Sub(w.epoch))
	}
	select {
	case w.events <- ev:
	default:
		w.dropped.Add(1)
	}
}

// report sends a sec frame at every second boundary after the plan's start.
func (w *Worker) report(ctx context.Context) {
	var prevMsgs, prevBytes, prevWire int64
	k := int64(1)
	if now := w.sec(time.Now()); now >= 1 {
		k = now + 1
	}
	var ms runtime.MemStats
	for {
		t := time.NewTimer(time.Until(w.epoch.Add(time.Duration(k) * time.Second)))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		now := time.Now()
		var msgs, bytes, wireN, lost, dup int64
		w.secLat.Reset()
		for _, s := range w.slots {
			msgs += s.msgs.Load()
			bytes += s.bytes.Load()
			wireN += s.wireBytes()
			w.secLat.Drain(s.lat)
			for _, sb := range s.subs {
				lost += sb.lost.Load()
				dup += sb.dup.Load()
				w.checkStall(sb, now)
			}
		}
		w.runLat.Merge(w.secLat)
		snap := w.secLat.Snapshot()
		runtime.ReadMemStats(&ms)
		st := &wire.SecStat{
			Msgs: msgs - prevMsgs, Bytes: bytes - prevBytes, MsgsTotal: msgs, BytesTotal: bytes,
			Goroutines: runtime.NumGoroutine(), HeapBytes: int64(ms.HeapAlloc),
			ConnsUp: int(w.connsUp.Load()), Reconnects: w.reconnects.Load(), Lost: lost, Dup: dup,
			LatN: snap.Count, LatP50: snap.P50, LatP99: snap.P99, LatMax: snap.Max,
			Dropped:   w.dropped.Load(),
			WireBytes: wireN - prevWire, WireBytesTotal: wireN,
		}
		prevMsgs, prevBytes, prevWire = msgs, bytes, wireN
		if err := w.fw.Send(&wire.Frame{Type: wire.FrameSec, Sec: k, Stat: st}); err != nil {
			w.log.Error("send sec frame", "err", err)
		}
		if k%max(w.plan.SubsEvery, 1) == 0 {
			if err := w.fw.Send(&wire.Frame{Type: wire.FrameSubs, Sec: k, Subs: w.subStats(now)}); err != nil {
				w.log.Error("send subs frame", "err", err)
			}
		}
		k++
		if late := w.sec(time.Now()); late >= k { // skipped seconds (suspended process): say so by the gap
			k = late + 1
		}
	}
}

// checkStall records a stall when a subscription stays silent past its threshold,
// and its end when data comes back. Silence before the window starts, or before
// this process started, does not count.
func (w *Worker) checkStall(sb *sub, now time.Time) {
	mono := int64(now.Sub(w.epoch))
	if sb.stall <= 0 || mono > int64(w.plan.End.Sub(w.plan.Start)) {
		return // the source stops at the end of the window: that is no stall
	}
	silence := mono - max(sb.lastSeen.Load(), w.from)
	switch {
	case !sb.stalled && silence > int64(sb.stall):
		sb.stalled, sb.stalledAt = true, mono
		sb.stalls++
		w.emit(wire.Event{Kind: wire.EventStall, Slot: sb.slot.Slot.ID, Group: sb.slot.Slot.Group, Stream: sb.st.Name,
			Detail: fmt.Sprintf("silent %.1fs (threshold %s)", float64(silence)/1e9, sb.stall)})
	case sb.stalled && silence <= int64(sb.stall):
		sb.stalled = false
		w.emit(wire.Event{Kind: wire.EventStallEnd, Slot: sb.slot.Slot.ID, Group: sb.slot.Slot.Group, Stream: sb.st.Name,
			DurMs: float64(mono-sb.stalledAt) / 1e6})
	}
}

// slotStats are the dial accounts of the slots; only after they ended.
func (w *Worker) slotStats() []wire.SlotStat {
	out := make([]wire.SlotStat, 0, len(w.slots))
	for _, s := range w.slots {
		st := wire.SlotStat{Slot: s.Slot.ID, Group: s.Slot.Group, Dials: s.dials, DialFails: s.dialFails, Unrepairable: s.unrepairable,
			WireBytes: s.wireBytes()}
		for key, n := range s.statuses {
			if st.Statuses == nil {
				st.Statuses = map[string]int64{}
			}
			st.Statuses[key] = n
		}
		out = append(out, st)
	}
	return out
}

func (w *Worker) subStats(now time.Time) []wire.SubStat {
	mono := int64(now.Sub(w.epoch))
	if end := int64(w.plan.End.Sub(w.plan.Start)); mono > end && end > 0 {
		mono = end // silence is measured inside the window
	}
	var out []wire.SubStat
	for _, s := range w.slots {
		for _, sb := range s.subs {
			ms := sb.maxSilence.Load()
			if open := mono - max(sb.lastSeen.Load(), w.from); open > ms {
				ms = open
			}
			out = append(out, wire.SubStat{
				Slot: s.Slot.ID, Group: s.Slot.Group, Stream: sb.st.Name,
				Msgs: sb.msgs.Load(), Bytes: sb.bytes.Load(),
				Lost: sb.lost.Load(), LostAcross: sb.lostAcross.Load(), Dup: sb.dup.Load(), OOO: sb.ooo.Load(), Regress: sb.regress.Load(),
				MaxSilenceMs: ms / 1e6, LastSeq: sb.lastSeq.Load(), Stalls: sb.stalls, Stalled: sb.stalled,
			})
		}
	}
	return out
}

// latBatch is how many latencies the read goroutine holds before it records
// them under the histogram's lock, if no socket read came first.
const latBatch = 256

// flush publishes what the read goroutine counted since its previous flush:
// one lock for the latencies and a few stores per subscription that had
// messages, per batch. Read goroutine only (the read clock's BeforeRead hook,
// after each message when there is no hook, and when Run returned).
func (s *slot) flush() {
	if !s.pending {
		return
	}
	s.pending = false
	if s.latN > 0 {
		s.lat.RecordBatch(s.latBuf[:s.latN])
		s.latN = 0
	}
	s.msgs.Store(s.n)
	s.bytes.Store(s.nb)
	for _, sb := range s.dirty {
		sb.dirty = false
		sb.msgs.Store(sb.n)
		sb.bytes.Store(sb.nb)
		sb.lastSeen.Store(sb.seen)
		sb.lastSeq.Store(sb.seq.Last())
	}
	s.dirty = s.dirty[:0] // the subscriptions live as long as the slot: nothing to release
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

// inc adds to a counter that only one goroutine writes: no read-modify-write.
func inc(a *atomic.Int64, d int64) { a.Store(a.Load() + d) }

// incNonZero is inc that skips the store (a full barrier on amd64) when d is 0.
func incNonZero(a *atomic.Int64, d int64) {
	if d != 0 {
		inc(a, d)
	}
}

// OnMessage is the per-message hot path. It allocates nothing and takes no
// lock: what it counts is published once per socket read (flush).
//
// A message's receive time is the end of the socket read that delivered its
// last byte (the connection's ReadClock): one clock reading per read serves
// every message that arrived in it, and no later processing delays it.
//
// Text messages are JSON; binary ones msgpack or packed (the encoding the
// plan asked for; control replies and serverShutdown stay JSON text).
func (s *slot) OnMessage(text bool, p []byte) {
	s.onMessage(text, p)
	if !s.batch {
		s.flush()
	}
}

func (s *slot) onMessage(text bool, p []byte) {
	if s.w.tap != nil {
		s.w.tap(s.Slot.ID, p)
	}
	var wall, mono int64 // receive time: Unix ns, and ns since epoch on the monotonic clock
	if c := s.clock; c != nil {
		wall, mono = c.Load()
		mono -= s.w.monoOff
	}
	if wall == 0 { // no read clock, or not stamped yet (the bytes came otherwise)
		now := time.Now()
		wall, mono = now.UnixNano(), int64(now.Sub(s.w.epoch))
	}
	s.n++
	s.nb += int64(len(p))
	s.pending = true
	// Plans always use combined connections (/stream): every event names its stream.
	sb := s.last
	var data []byte
	var ok bool
	if sb != nil {
		if text {
			data, ok = binance.SplitPrefixed(p, sb.prefix)
		} else {
			data, ok = binance.SplitPrefixedMsgpack(p, sb.mpref)
		}
	}
	if !ok {
		var name []byte
		if text {
			name, data, ok = binance.SplitCombined(p)
		} else {
			name, data, ok = binance.SplitCombinedMsgpack(p)
		}
		sb = nil
		if ok {
			sb = s.byName[string(name)]
		}
	}
	if sb == nil {
		// A control reply (counted for the slot, not for a stream), or an
		// unwrapped event such as serverShutdown.
		if text && bytes.Contains(p, serverShutdown) {
			s.w.emit(wire.Event{Kind: wire.EventServerShutdown, Slot: s.Slot.ID, Group: s.Slot.Group})
		}
		return
	}
	s.last = sb
	if !s.gotFirst {
		s.firstData(s.w.epoch.Add(time.Duration(mono)))
	}
	sb.n++
	sb.nb += int64(len(p))
	if !sb.dirty {
		sb.dirty = true
		s.dirty = append(s.dirty, sb) // within its capacity, len(s.subs)
	}
	if gap := mono - max(sb.seen, s.w.from); gap > sb.maxSilence.Load() && mono > 0 {
		sb.maxSilence.Store(gap)
	}
	sb.seen = mono
	var f binance.Fields
	var scanned bool
	if text {
		scanned = binance.Scan(data, sb.st.Kind, &f)
	} else {
		scanned = binance.ScanMsgpack(data, sb.st.Kind, &f)
	}
	if !scanned {
		if sb.fresh {
			s.back(sb, 0)
		}
		return
	}
	if f.E > 0 {
		e := f.E
		if e < 1e14 { // milliseconds
			e *= 1000
		}
		s.latBuf[s.latN] = wall/1000 - e
		if s.latN++; s.latN == latBatch {
			s.lat.RecordBatch(s.latBuf[:])
			s.latN = 0
		}
	}
	var lost int64
	if f.HasSeq {
		prev := sb.seq.Last()
		c := sb.seq.Observe(sb.rule, &f)
		if c != (binance.SeqCounts{}) {
			incNonZero(&sb.lost, c.Lost)
			incNonZero(&sb.dup, c.Dup)
			incNonZero(&sb.ooo, c.OutOfOrder)
			incNonZero(&sb.regress, c.Regress)
			// Ids missing at the first message on a new connection were lost
			// across the reconnect; any other gap, while the connection was up.
			switch {
			case c.Lost > 0: // every rule's gap starts right after the highest id seen before
				sb.gaps.add(prev+1, prev+c.Lost, sb.fresh)
				if sb.fresh {
					inc(&sb.lostAcross, c.Lost)
				}
			case c.Lost < 0: // a late id that was counted lost when it was skipped
				if sb.gaps.remove(f.Last) {
					inc(&sb.lostAcross, c.Lost)
				}
			}
			lost = c.Lost
		}
	}
	if sb.fresh {
		s.back(sb, lost)
	}
	if f.Shutdown {
		s.w.emit(wire.Event{Kind: wire.EventServerShutdown, Slot: s.Slot.ID, Group: s.Slot.Group})
	}
}

var serverShutdown = []byte(`"serverShutdown"`)

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

// errNoData ends a connection that was established but ended before its
// first message on a subscription, or on a message above the read limit
// (which will come again): it counts as a failed dial, for the backoff and
// for the unrepairable rule, so such a slot cannot redial in a tight loop.
var errNoData = errors.New("connection ended before data")

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
			given, s.unrepairable = true, true
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
	}
	if w.plan.Local {
		cfg.Header = http.Header{wire.TagHeader: {wire.Tag{Lib: w.tr.Name(), Slot: s.Slot.ID, Attempt: attempt}.String()}}
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
	s.dials++
	if err != nil {
		code, cause, detail := classify(err, false, nil)
		s.dialFails++
		if key := failKey(code, cause); key != "" {
			if s.statuses == nil {
				s.statuses = map[string]int64{}
			}
			s.statuses[key]++
		}
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
