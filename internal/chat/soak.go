package chat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// The load of a server-side soak (soak run with side: server): one room per
// library server, N clients each, a steady rate of messages in ticks of
// SoakTick. Every tick's broadcasts are received by every reading client
// before the next tick is sent, so between ticks nothing is in flight: the
// faults are injected there, and a client that joins there knows the next
// sequence number of every sender. Hence the exact truth at the end:
//
//	deliveries read by the clients that were not made slow
//	  == the server's Deliveries - DroppedDeliveries
//
// Faults: reset (k clients' TCP connections reset with SO_LINGER 0, the
// server's leave awaited through /_stats, then the clients dial again: a
// reconnect each) and slow_reader (k clients stop reading and sending; when
// the server has dropped them, as its Drops and Dropped names show, their
// slots dial again, not counted as reconnects) and oversize (k clients each
// send one message larger than the server reads: the server must close them,
// as its Left shows, and broadcast nothing; they dial again, a reconnect each)
// and half_open (k clients go half-open: they cease all I/O on their sockets
// and never close, the TCP connection established as a peer gone silent
// leaves it; the server's queue for them fills and it must drop exactly
// them, as for slow_reader, counted apart; their slots then dial again).

// SoakTick is the load's pacing step.
const SoakTick = 100 * time.Millisecond

// Soak fault kinds.
const (
	SoakReset      = "reset"
	SoakSlowReader = "slow_reader"
	SoakOversize   = "oversize"
	SoakHalfOpen   = "half_open"
)

// SoakConfig is the load of a server-side soak.
type SoakConfig struct {
	Rooms    []SoakRoom    `json:"rooms"`
	N        int           `json:"n"`       // clients per room
	Rate     int           `json:"rate"`    // messages a second sent into each room
	Payload  int           `json:"payload"` // bytes of a message; 0: its sequence number alone
	Start    time.Time     `json:"start"`   // the window's start: seconds are numbered from it (second k ends at Start+k s)
	Duration time.Duration `json:"duration"`
	Faults   []SoakFault   `json:"faults,omitempty"`
	// RcvBuf is every client's SO_RCVBUF (fixed, so a client that stops
	// reading fills its socket soon); 0: 64 KiB.
	RcvBuf int `json:"rcvbuf,omitempty"`
	// Hold keeps every room's clients connected after its end record until
	// ctx ends (the controller samples the servers' last second first).
	Hold bool `json:"hold,omitempty"`
	// Timeout bounds a tick's deliveries, a dial, the server's noticing a
	// reset; 0: 30 s.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// SoakRoom is one library's server.
type SoakRoom struct {
	Lib   string `json:"lib"`
	URL   string `json:"url"`   // ws://host:port/
	Stats string `json:"stats"` // http://host:port/_stats
}

// SoakFault is a fault the load injects at Start+At, then every Every.
type SoakFault struct {
	Kind  string        `json:"kind"`
	At    time.Duration `json:"at"`
	Every time.Duration `json:"every,omitempty"`
	N     int           `json:"n"`
	Size  int           `json:"size,omitempty"` // oversize: the message's bytes
}

// SoakRecord is one line the load writes: a second, an event or a room's end.
type SoakRecord struct {
	T   string `json:"t"` // "sec", "event", "end"
	Lib string `json:"lib"`
	Sec int64  `json:"sec,omitempty"`
	// sec: the clients' second
	Deliveries int64 `json:"deliveries,omitempty"` // read by every client in the second
	LatP50     int64 `json:"p50_us,omitempty"`
	LatP99     int64 `json:"p99_us,omitempty"`
	LatMax     int64 `json:"max_us,omitempty"`
	Up         int   `json:"up,omitempty"`         // clients connected (slow ones included)
	Reconnects int64 `json:"reconnects,omitempty"` // so far: clients dialled again after a reset
	// event
	At     time.Time `json:"at,omitzero"`
	Kind   string    `json:"kind,omitempty"` // fault, reconnect, dropped, error
	Fault  string    `json:"fault,omitempty"`
	Count  int       `json:"count,omitempty"`
	Detail string    `json:"detail,omitempty"`
	DurMs  float64   `json:"dur_ms,omitempty"` // reconnect: from the reset to every client back
	Codes  []int     `json:"codes,omitempty"`  // reconnect after an oversize message: the server's close code per client (reset: none)
	// end
	End *SoakResult `json:"end,omitempty"`
}

// SoakResult is a room's account at the end.
type SoakResult struct {
	Sent           int64 `json:"sent"`
	Deliveries     int64 `json:"deliveries"`        // read by the clients never made slow
	SlowDeliveries int64 `json:"slow_deliveries"`   // read by the slow and half-open clients before they stopped
	Resets         int64 `json:"resets"`            // clients reset
	Reconnects     int64 `json:"reconnects"`        // clients dialled again after a reset or an oversize close
	Oversize       int64 `json:"oversize"`          // clients that sent an oversize message (each closed by the server)
	SlowInjected   int64 `json:"slow_injected"`     // clients made slow
	SlowDropped    int64 `json:"slow_dropped"`      // of those, dropped by the server (its count rose by exactly them, naming them)
	HalfOpen       int64 `json:"half_open"`         // clients made half-open
	HalfOpenDrop   int64 `json:"half_open_dropped"` // of those, dropped by the server (as SlowDropped)
	Rejoins        int64 `json:"rejoins"`           // slots dialled again after their drop
	SkippedTicks   int64 `json:"skipped_ticks"`     // ticks not sent because the load was behind by more than a tick
	// The broadcast latency over the window (send instant to receipt), µs.
	LatCount, LatP50, LatP99, LatP999, LatMax int64
	Server                                    *Stats `json:"server,omitempty"`
	Err                                       string `json:"err,omitempty"`
}

// Truth says whether the clients' count equals the server's exactly, and
// every slow client was dropped and no other.
func (r *SoakResult) Truth() error {
	if r.Server == nil {
		return errors.New("no server count")
	}
	var errs []error
	if want := r.Server.Deliveries - r.Server.DroppedDeliveries; r.Deliveries != want {
		errs = append(errs, fmt.Errorf("clients read %d deliveries, the server wrote %d (%d, less %d to dropped clients)",
			r.Deliveries, want, r.Server.Deliveries, r.Server.DroppedDeliveries))
	}
	if r.SlowDropped != r.SlowInjected || r.HalfOpenDrop != r.HalfOpen || r.Server.Drops != r.SlowInjected+r.HalfOpen {
		errs = append(errs, fmt.Errorf("%d slow readers and %d half-open clients injected, %d and %d seen dropped, the server dropped %d",
			r.SlowInjected, r.HalfOpen, r.SlowDropped, r.HalfOpenDrop, r.Server.Drops))
	}
	if r.Reconnects != r.Resets+r.Oversize {
		errs = append(errs, fmt.Errorf("%d clients reset, %d closed for an oversize message, %d reconnected", r.Resets, r.Oversize, r.Reconnects))
	}
	return errors.Join(errs...)
}

// soakSlot is one client of a room over the run: its sessions in turn.
type soakSlot struct {
	idx    int
	seq    int64          // messages sent (the tick loop's)
	sendAt []atomic.Int64 // ns since the room's start, by seq % len
	sess   *soakSession
}

// soakSession is one connection of a slot.
type soakSession struct {
	slot    *soakSlot
	c       *rawws.Conn
	last    []int64 // by sender: the last sequence number read
	got     atomic.Int64
	target  atomic.Int64
	reached chan struct{}
	ready   chan struct{}
	done    chan struct{}
	stop    chan struct{} // closed when the session is ended by the load
	slow    atomic.Bool   // slow_reader or half_open: no more I/O
	fault   string        // which of the two (set and read by the load's goroutine)
	ending  atomic.Bool   // reset or closed by the load: a read error is expected
	closing atomic.Bool   // sent an oversize message: the server's close is expected
	err     error
}

// soakLoad is one room's load.
type soakLoad struct {
	cfg     SoakConfig
	room    *SoakRoom
	emit    func(SoakRecord)
	start   time.Time
	slots   []*soakSlot
	lat     *sampler.Latency // the second's
	total   *sampler.Latency // the window's
	read    atomic.Int64     // deliveries read, every session
	res     SoakResult
	truth   int64 // deliveries of ended sessions never made slow
	slow    []*soakSession
	slowMin int64 // the server's Drops before the slow ones were made
	resetN  int   // rotation of the clients a fault picks
	netDial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// RunSoak runs the load on every room until ctx ends or the window is over,
// then writes each room's end record. emit is called from several
// goroutines, one at a time.
func RunSoak(ctx context.Context, cfg SoakConfig, emit func(SoakRecord)) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.RcvBuf <= 0 {
		cfg.RcvBuf = 64 << 10
	}
	var mu sync.Mutex
	locked := func(r SoakRecord) {
		mu.Lock()
		defer mu.Unlock()
		emit(r)
	}
	var wg sync.WaitGroup
	for i := range cfg.Rooms {
		wg.Go(func() {
			l := &soakLoad{cfg: cfg, room: &cfg.Rooms[i], emit: locked, start: time.Now(), lat: sampler.NewLatency(), total: sampler.NewLatency()}
			rcv := cfg.RcvBuf
			l.netDial = (&net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
				var serr error
				if err := rc.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, rcv) }); err != nil {
					return err
				}
				return serr
			}}).DialContext
			defer l.closeAll()
			err := l.run(ctx)
			if err != nil {
				l.res.Err = err.Error()
				locked(SoakRecord{T: "event", Lib: l.room.Lib, At: time.Now(), Kind: "error", Detail: err.Error()})
			}
			res := l.res
			locked(SoakRecord{T: "end", Lib: l.room.Lib, End: &res})
			if cfg.Hold {
				<-ctx.Done()
			}
		})
	}
	wg.Wait()
}

func (l *soakLoad) run(ctx context.Context) error {
	cfg := l.cfg
	perTick := (cfg.Rate*int(SoakTick/time.Millisecond)+999)/1000 + 1
	ring := perTick/max(cfg.N, 1) + 2
	l.slots = make([]*soakSlot, cfg.N)
	for i := range l.slots {
		l.slots[i] = &soakSlot{idx: i, sendAt: make([]atomic.Int64, ring)}
	}
	for _, s := range l.slots {
		if err := l.dial(ctx, s); err != nil {
			return err
		}
	}
	for _, s := range l.slots {
		if err := l.awaitReady(ctx, s.sess); err != nil {
			return err
		}
	}
	end := cfg.Start.Add(cfg.Duration)
	type due struct {
		f    SoakFault
		next time.Time
		done bool
	}
	var faults []*due
	for _, f := range cfg.Faults {
		faults = append(faults, &due{f: f, next: cfg.Start.Add(f.At)})
	}
	var (
		tick     int64
		sent     int64 // into the room over the window
		sec      int64 = 1
		secRead  int64
		payload  = make([]byte, 0, max(cfg.Payload, 24))
		frames   []byte
		sendRR   int
		readBase = l.read.Load()
		total    = int64(cfg.Duration / time.Second)
	)
	for {
		at := cfg.Start.Add(time.Duration(tick) * SoakTick)
		if !at.Before(end) {
			break
		}
		if err := sleepUntil(ctx, at); err != nil {
			return nil // the run was stopped
		}
		if late := time.Since(at); late > SoakTick {
			// Behind (a slow tick, a busy machine): the ticks missed are
			// skipped, not sent in a burst, and counted.
			skip := int64(late / SoakTick)
			tick += skip
			l.res.SkippedTicks += skip
			sent = int64(cfg.Rate) * tick * int64(SoakTick/time.Millisecond) / 1000
			continue
		}
		// Seconds ended before this tick.
		for now := time.Now(); sec <= total && !now.Before(cfg.Start.Add(time.Duration(sec)*time.Second)); sec++ {
			r := l.read.Load() - readBase
			l.second(sec, r-secRead)
			secRead = r
		}
		if err := l.settleSlow(ctx); err != nil {
			return err
		}
		for _, d := range faults {
			if d.done || time.Now().Before(d.next) {
				continue
			}
			if err := l.inject(ctx, d.f); err != nil {
				return err
			}
			d.done = d.f.Every <= 0
			if d.f.Every > 0 {
				d.next = cfg.Start.Add(d.f.At + d.f.Every*time.Duration((time.Since(cfg.Start)-d.f.At)/d.f.Every+1))
			}
		}
		tick++
		want := int64(cfg.Rate) * tick * int64(SoakTick/time.Millisecond) / 1000
		n := want - sent
		if n <= 0 {
			continue
		}
		healthy := l.healthy()
		for _, s := range healthy {
			s.sess.target.Add(n) // every healthy client reads every message
		}
		// Round robin over the healthy senders, a write per sender.
		per := make(map[*soakSlot]int, len(healthy))
		for range n {
			per[healthy[sendRR%len(healthy)]]++
			sendRR++
		}
		for _, s := range healthy {
			k := per[s]
			if k == 0 {
				continue
			}
			frames = frames[:0]
			now := int64(time.Since(l.start))
			for range k {
				s.seq++
				s.sendAt[s.seq%int64(len(s.sendAt))].Store(now)
				payload = fmtSeq(payload[:0], s.seq, cfg.Payload)
				frames = rawws.AppendFrame(frames, rawws.OpText, true, payload, true)
			}
			if _, err := s.sess.c.Conn.Write(frames); err != nil {
				return fmt.Errorf("client %s: write: %w", ClientName(s.idx), err)
			}
		}
		sent += n
		l.res.Sent += n
		if err := l.awaitTick(ctx, healthy); err != nil {
			return err
		}
	}
	if err := sleepUntil(ctx, end); err != nil {
		return nil
	}
	for now := time.Now(); sec <= total && !now.Before(cfg.Start.Add(time.Duration(sec)*time.Second)); sec++ {
		r := l.read.Load() - readBase
		l.second(sec, r-secRead)
		secRead = r
	}
	// The end: nothing in flight to a reading client; the slow ones not yet
	// dropped stay as they are (the truth then fails, saying so).
	if err := l.settleSlow(ctx); err != nil {
		return err
	}
	st, err := FetchStats(ctx, l.room.Stats, 5*time.Second)
	if err != nil {
		return err
	}
	l.res.Server = &st
	for _, s := range l.slots {
		if s.sess != nil && !s.sess.slow.Load() {
			l.res.Deliveries += s.sess.got.Load()
		}
	}
	l.res.Deliveries += l.truth
	t := l.total.Snapshot()
	l.res.LatCount, l.res.LatP50, l.res.LatP99, l.res.LatP999, l.res.LatMax = t.Count, t.P50, t.P99, t.P999, t.Max
	return nil
}

// fmtSeq appends seq in decimal, padded with 'x' to size bytes.
func fmtSeq(b []byte, seq int64, size int) []byte {
	b = appendInt(b, seq)
	for len(b) < size {
		b = append(b, 'x')
	}
	return b
}

func appendInt(b []byte, v int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	for {
		i--
		tmp[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			break
		}
	}
	return append(b, tmp[i:]...)
}

func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// second writes the clients' second sec.
func (l *soakLoad) second(sec, read int64) {
	h := sampler.NewLatency()
	h.Drain(l.lat)
	snap := h.Snapshot()
	l.total.Merge(h)
	up := 0
	for _, s := range l.slots {
		if s.sess != nil {
			up++
		}
	}
	l.emit(SoakRecord{T: "sec", Lib: l.room.Lib, Sec: sec, Deliveries: read, LatP50: snap.P50, LatP99: snap.P99, LatMax: snap.Max,
		Up: up, Reconnects: l.res.Reconnects})
}

// healthy returns the slots whose client reads.
func (l *soakLoad) healthy() []*soakSlot {
	var out []*soakSlot
	for _, s := range l.slots {
		if s.sess != nil && !s.sess.slow.Load() {
			out = append(out, s)
		}
	}
	return out
}

// pick returns k healthy slots, rotating over the room.
func (l *soakLoad) pick(k int) []*soakSlot {
	h := l.healthy()
	k = min(k, len(h)-1) // one stays
	var out []*soakSlot
	for i := range k {
		out = append(out, h[(l.resetN+i)%len(h)])
	}
	l.resetN += k
	return out
}

// inject applies a fault between two ticks.
func (l *soakLoad) inject(ctx context.Context, f SoakFault) error {
	targets := l.pick(f.N)
	if len(targets) == 0 {
		return nil
	}
	names := make([]string, len(targets))
	for i, s := range targets {
		names[i] = ClientName(s.idx)
	}
	l.emit(SoakRecord{T: "event", Lib: l.room.Lib, At: time.Now(), Kind: "fault", Fault: f.Kind, Count: len(targets),
		Detail: fmt.Sprintf("%s of %d clients: %v", f.Kind, len(targets), names)})
	switch f.Kind {
	case SoakReset:
		st0, err := FetchStats(ctx, l.room.Stats, 0)
		if err != nil {
			return err
		}
		for _, s := range targets {
			l.end(s, true)
		}
		l.res.Resets += int64(len(targets))
		resetAt := time.Now()
		// The server must have seen them leave before anything else is sent
		// (else it may count a write to a connection already reset).
		if err := l.awaitStats(ctx, func(st Stats) bool { return st.Left >= st0.Left+int64(len(targets)) }); err != nil {
			return fmt.Errorf("reset %v: the server did not see them leave: %w", names, err)
		}
		for _, s := range targets {
			if err := l.dial(ctx, s); err != nil {
				return err
			}
			if err := l.awaitReady(ctx, s.sess); err != nil {
				return err
			}
			l.res.Reconnects++
		}
		l.emit(SoakRecord{T: "event", Lib: l.room.Lib, At: time.Now(), Kind: "reconnect", Count: len(targets),
			DurMs: float64(time.Since(resetAt).Microseconds()) / 1000, Detail: fmt.Sprintf("%d clients reset and back: %v", len(targets), names)})
	case SoakOversize:
		if err := l.oversize(ctx, f, targets, names); err != nil {
			return err
		}
	case SoakSlowReader, SoakHalfOpen:
		// Both cease all I/O on the socket and keep it open (no close, no
		// FIN): on loopback a half-open peer is exactly that.
		if len(l.slow) == 0 {
			st0, err := FetchStats(ctx, l.room.Stats, 0)
			if err != nil {
				return err
			}
			l.slowMin = st0.Drops
		}
		for _, s := range targets {
			s.sess.fault = f.Kind
			s.sess.slow.Store(true)
			l.slow = append(l.slow, s.sess)
		}
		if f.Kind == SoakHalfOpen {
			l.res.HalfOpen += int64(len(targets))
		} else {
			l.res.SlowInjected += int64(len(targets))
		}
	default:
		return fmt.Errorf("unknown fault kind %q", f.Kind)
	}
	return nil
}

// oversize has each target send one message of f.Size bytes; the server must
// close every one of them and broadcast none; they then dial again.
func (l *soakLoad) oversize(ctx context.Context, f SoakFault, targets []*soakSlot, names []string) error {
	st0, err := FetchStats(ctx, l.room.Stats, 0)
	if err != nil {
		return err
	}
	at := time.Now()
	frame := rawws.AppendFrame(nil, rawws.OpText, true, make([]byte, f.Size), true)
	for _, s := range targets {
		s.sess.closing.Store(true)
		// The server may close before it has read it all: a failed write is expected.
		_ = s.sess.c.Conn.SetWriteDeadline(time.Now().Add(l.cfg.Timeout))
		_, _ = s.sess.c.Conn.Write(frame)
	}
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	codes := make([]int, len(targets))
	for i, s := range targets {
		select {
		case <-s.sess.done:
			codes[i] = s.sess.c.Counts().CloseCode // 0: the connection ended without a close frame
		case <-t.C:
			return fmt.Errorf("oversize: client %s not closed by the server within %s", ClientName(s.idx), l.cfg.Timeout)
		case <-ctx.Done():
			return nil
		}
	}
	if err := l.awaitStats(ctx, func(st Stats) bool { return st.Left >= st0.Left+int64(len(targets)) }); err != nil {
		return fmt.Errorf("oversize %v: the server did not see them leave: %w", names, err)
	}
	st1, err := FetchStats(ctx, l.room.Stats, 0)
	if err != nil {
		return err
	}
	if st1.Broadcasts != st0.Broadcasts {
		return fmt.Errorf("oversize %v: the server broadcast %d messages while nothing but the oversize ones was sent", names, st1.Broadcasts-st0.Broadcasts)
	}
	l.res.Oversize += int64(len(targets))
	for _, s := range targets {
		l.end(s, false)
		if err := l.dial(ctx, s); err != nil {
			return err
		}
		if err := l.awaitReady(ctx, s.sess); err != nil {
			return err
		}
		l.res.Reconnects++
	}
	l.emit(SoakRecord{T: "event", Lib: l.room.Lib, At: time.Now(), Kind: "reconnect", Count: len(targets), Codes: codes,
		DurMs: float64(time.Since(at).Microseconds()) / 1000, Detail: fmt.Sprintf("%d clients closed by the server for a %d-byte message (close codes %v) and back: %v", len(targets), f.Size, codes, names)})
	return nil
}

// settleSlow checks whether the server dropped the slow clients; when it
// has dropped every one (and no other), their slots dial again.
func (l *soakLoad) settleSlow(ctx context.Context) error {
	if len(l.slow) == 0 {
		return nil
	}
	st, err := FetchStats(ctx, l.room.Stats, 0)
	if err != nil {
		return err
	}
	if st.Drops < l.slowMin+int64(len(l.slow)) {
		return nil // not yet
	}
	var names, want []string
	for _, s := range l.slow {
		want = append(want, ClientName(s.slot.idx))
	}
	if st.Drops > l.slowMin+int64(len(l.slow)) {
		return fmt.Errorf("the server dropped %d clients, %d were slow: %v", st.Drops-l.slowMin, len(l.slow), want)
	}
	if len(st.Dropped) == int(st.Drops) { // the names are all there (at most 100 are kept)
		names = slices.Clone(st.Dropped[len(st.Dropped)-len(l.slow):])
		slices.Sort(names)
		slices.Sort(want)
		if !slices.Equal(names, want) {
			return fmt.Errorf("the server dropped %v, the slow clients were %v", names, want)
		}
	}
	// A dropped event per fault kind, so that each is counted apart.
	for _, kind := range []string{SoakSlowReader, SoakHalfOpen} {
		var of []string
		for _, s := range l.slow {
			if s.fault == kind {
				of = append(of, ClientName(s.slot.idx))
			}
		}
		if len(of) == 0 {
			continue
		}
		if kind == SoakHalfOpen {
			l.res.HalfOpenDrop += int64(len(of))
		} else {
			l.res.SlowDropped += int64(len(of))
		}
		l.emit(SoakRecord{T: "event", Lib: l.room.Lib, At: time.Now(), Kind: "dropped", Fault: kind, Count: len(of),
			Detail: fmt.Sprintf("the server dropped exactly the %d %s clients %v (of %d it dropped now: %v)", len(of), kind, of, len(l.slow), want)})
	}
	slow := l.slow
	l.slow = nil
	for _, ss := range slow {
		s := ss.slot
		l.end(s, false)
		if err := l.dial(ctx, s); err != nil {
			return err
		}
		if err := l.awaitReady(ctx, s.sess); err != nil {
			return err
		}
		l.res.Rejoins++
	}
	return nil
}

// awaitStats polls the server's counts until ok, within the timeout.
func (l *soakLoad) awaitStats(ctx context.Context, ok func(Stats) bool) error {
	deadline := time.Now().Add(l.cfg.Timeout)
	for {
		st, err := FetchStats(ctx, l.room.Stats, 0)
		if err != nil {
			return err
		}
		if ok(st) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", l.cfg.Timeout)
		}
		if err := sleepUntil(ctx, time.Now().Add(2*time.Millisecond)); err != nil {
			return err
		}
	}
}

// end ends s's session: reset (RST) or closed; its count goes to the truth
// unless it was slow.
func (l *soakLoad) end(s *soakSlot, reset bool) {
	ss := s.sess
	if ss == nil {
		return
	}
	s.sess = nil
	ss.ending.Store(true)
	close(ss.stop)
	if tc, ok := ss.c.Conn.(*net.TCPConn); ok && reset {
		_ = tc.SetLinger(0)
	}
	_ = ss.c.Conn.Close()
	<-ss.done
	if ss.slow.Load() {
		l.res.SlowDeliveries += ss.got.Load()
	} else {
		l.truth += ss.got.Load()
	}
}

func (l *soakLoad) closeAll() {
	for _, s := range l.slots {
		if s.sess != nil {
			ss := s.sess
			_, _ = ss.c.Conn.Write(rawws.AppendFrame(nil, rawws.OpClose, true, []byte{0x03, 0xe8}, true))
			ss.ending.Store(true)
			select {
			case <-ss.stop:
			default:
				close(ss.stop)
			}
			_ = ss.c.Conn.Close()
			<-ss.done
		}
	}
}

// dial starts a new session of s (between ticks: nothing in flight).
func (l *soakLoad) dial(ctx context.Context, s *soakSlot) error {
	dctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	c, err := rawws.Dial(dctx, l.room.URL+"?name="+ClientName(s.idx), rawws.Options{NetDial: l.netDial, BufferSize: 64 << 10})
	if err != nil {
		return fmt.Errorf("client %s: %w", ClientName(s.idx), err)
	}
	ss := &soakSession{slot: s, c: c, last: make([]int64, len(l.slots)), reached: make(chan struct{}, 1),
		ready: make(chan struct{}), done: make(chan struct{}), stop: make(chan struct{})}
	for i, o := range l.slots {
		ss.last[i] = o.seq
	}
	s.sess = ss
	go func() {
		defer close(ss.done)
		ss.err = l.readLoop(ss)
	}()
	return nil
}

func (l *soakLoad) awaitReady(ctx context.Context, ss *soakSession) error {
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	select {
	case <-ss.ready:
		return nil
	case <-ss.done:
		return fmt.Errorf("client %s before ready: %w", ClientName(ss.slot.idx), ss.err)
	case <-t.C:
		return fmt.Errorf("client %s: no ready within %s", ClientName(ss.slot.idx), l.cfg.Timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitTick waits until every healthy client has read every broadcast sent.
func (l *soakLoad) awaitTick(ctx context.Context, healthy []*soakSlot) error {
	t := time.NewTimer(l.cfg.Timeout)
	defer t.Stop()
	for _, s := range healthy {
		ss := s.sess
		for ss.got.Load() < ss.target.Load() {
			select {
			case <-ss.reached:
			case <-ss.done:
				return fmt.Errorf("client %s: %w", ClientName(s.idx), cmpErr(ss.err))
			case <-t.C:
				return fmt.Errorf("client %s: read %d of %d broadcasts within %s", ClientName(s.idx), ss.got.Load(), ss.target.Load(), l.cfg.Timeout)
			case <-ctx.Done():
				return nil
			}
		}
	}
	return nil
}

func cmpErr(err error) error {
	if err == nil {
		return errors.New("connection ended")
	}
	return err
}

// readLoop reads a session's messages and checks every delivery.
func (l *soakLoad) readLoop(ss *soakSession) error {
	m, err := ss.c.Next(true)
	if err != nil {
		return fmt.Errorf("read ready: %w", err)
	}
	if string(m.Payload) != Ready {
		return fmt.Errorf("first message %q, want %q", trim(m.Payload), Ready)
	}
	close(ss.ready)
	reads := int64(-1)
	var now int64
	for {
		if ss.slow.Load() {
			<-ss.stop // a slow reader reads nothing more
			return nil
		}
		m, err := ss.c.Next(true)
		if err != nil {
			if ss.ending.Load() || ss.slow.Load() || ss.closing.Load() {
				return nil
			}
			return err
		}
		if r := ss.c.Counts().Reads; r != reads {
			reads, now = r, int64(time.Since(l.start))
		}
		from, seq, ok := parseDelivery(m.Payload, len(ss.last))
		if !ok {
			return fmt.Errorf("delivery %q: want \"cI: SEQ\" from a client of the room", trim(m.Payload))
		}
		if want := ss.last[from] + 1; seq != want {
			return fmt.Errorf("from %s: sequence %d, want %d (a loss, a duplicate or out of order)", ClientName(from), seq, want)
		}
		ss.last[from] = seq
		snd := l.slots[from].sendAt
		l.lat.Record((now - snd[seq%int64(len(snd))].Load()) / 1000)
		l.read.Add(1)
		if ss.got.Add(1) == ss.target.Load() {
			select {
			case ss.reached <- struct{}{}:
			default:
			}
		}
	}
}
