package replay

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// FragmentParts is how many frames a fragmented message is split into: a
// text frame and three continuation frames.
const FragmentParts = 4

// InvalidUTF8 is the payload of an invalid_utf8 fault: JSON whose string holds
// the bytes 0xff 0xfe, which can never appear in UTF-8.
var InvalidUTF8 = []byte("{\"e\":\"invalidUtf8\",\"s\":\"\xff\xfe\"}")

// validate is wire.Fault.Validate for a fault the replay server plays: the
// network's kinds are refused, the kernel plays them on a run's link.
func validate(f wire.Fault) error {
	if f.Kind.OnNetwork() {
		return fmt.Errorf("%s is played by the kernel on a run's link (link:), not by the replay server", f.Kind)
	}
	return f.Validate()
}

// Inject applies f now to every matching live connection (reject: to the
// next N handshakes of each connection slot) and logs it.
func (s *Server) Inject(f wire.Fault) (wire.Applied, error) {
	if err := validate(f); err != nil {
		return wire.Applied{}, fmt.Errorf("inject: %w", err)
	}
	f.Streams, f.Libs = slices.Clone(f.Streams), slices.Clone(f.Libs)
	a := &wire.Applied{Fault: f, At: time.Now()}
	switch {
	case f.Kind == wire.FaultReject:
		a.Detail = fmt.Sprintf("armed: the next %d handshakes of each slot get %d", f.N, f.Status)
		s.mu.Lock()
		s.rejects = append(s.rejects, &rejectRule{f: f, applied: a, used: map[string]int{}})
		s.mu.Unlock()
	case f.Kind.StreamFault():
		a.Conns = s.hub.injectStream(f)
		a.Detail = fmt.Sprintf("%d connections", len(a.Conns))
	default:
		for _, c := range s.matchConns(f) {
			if c.injectConn(f, a.At) {
				a.Conns = append(a.Conns, c.label())
			}
		}
		a.Detail = fmt.Sprintf("%d connections", len(a.Conns))
	}
	s.mu.Lock()
	s.faults = append(s.faults, a)
	out := a.Clone()
	s.mu.Unlock()
	s.log.Info("fault", "kind", f.Kind, "fault", f.String(), "at", a.At.Format(time.RFC3339Nano), "conns", len(out.Conns), "detail", out.Detail)
	return out, nil
}

// Faults returns the log of applied faults so far, oldest first.
func (s *Server) Faults() []wire.Applied {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]wire.Applied, len(s.faults))
	for i, a := range s.faults {
		out[i] = a.Clone()
	}
	return out
}

func libMatch(libs []string, tag string) bool {
	return len(libs) == 0 || slices.Contains(libs, wire.ColumnOf(tag))
}

// label names a connection in the fault log: its tag, or #id when untagged.
func (c *Conn) label() string {
	if c.tag != "" {
		return c.tag
	}
	return "#" + strconv.FormatUint(c.id, 10)
}

// matchConns returns the live connections f applies to, in handshake order.
func (s *Server) matchConns(f wire.Fault) []*Conn {
	var conns []*Conn
	if len(f.Streams) > 0 {
		set := s.hub.carriers(f.Streams)
		for _, c := range s.Conns() {
			if set[c] && libMatch(f.Libs, c.tag) {
				conns = append(conns, c)
			}
		}
		return conns
	}
	for _, c := range s.Conns() {
		if libMatch(f.Libs, c.tag) {
			conns = append(conns, c)
		}
	}
	return conns
}

// --- handshake rejection ---

// A reject fault counts its N per connection slot — the tag "lib/slot/attempt"
// without the attempt; untagged handshakes share one count — so that every
// slot of every library meets the same rejections whatever order they redial
// in. It stays armed until each slot that dials has had its N.
type rejectRule struct {
	f       wire.Fault
	applied *wire.Applied
	used    map[string]int // handshakes rejected per slot
}

// slotOf returns "lib/slot" of a tag "lib/slot/attempt".
func slotOf(tag string) string {
	if i := strings.LastIndexByte(tag, '/'); i > 0 && strings.Count(tag, "/") == 2 {
		return tag[:i]
	}
	return tag
}

// rejectFor returns the rule that rejects a handshake tagged tag, counting it;
// s.mu must be held.
func (s *Server) rejectFor(tag, remote string) *rejectRule {
	slot := slotOf(tag)
	for _, r := range s.rejects {
		if r.used[slot] < r.f.N && libMatch(r.f.Libs, tag) {
			r.used[slot]++
			label := tag
			if label == "" {
				label = remote
			}
			r.applied.Conns = append(r.applied.Conns, label)
			return r
		}
	}
	return nil
}

func (r *rejectRule) write(w http.ResponseWriter) {
	if r.f.RetryAfter > 0 {
		secs := (r.f.RetryAfter + time.Second - 1) / time.Second
		w.Header().Set("Retry-After", strconv.FormatInt(int64(secs), 10))
	}
	http.Error(w, http.StatusText(r.f.Status), r.f.Status)
}

// --- connection faults ---

// connFault is a timed fault handed to a connection's writer.
type connFault struct {
	kind  wire.FaultKind
	until time.Time // zero = until the connection ends
	delay time.Duration
}

// injectConn applies a connection fault; false if the connection was already closing.
func (c *Conn) injectConn(f wire.Fault, now time.Time) bool {
	switch f.Kind {
	case wire.FaultClose:
		return c.fail(f.Code, f.Reason, "server", modeSend)
	case wire.FaultReset:
		return c.fail(1006, "reset", "server", modeReset)
	case wire.FaultOversize:
		return c.sendData(oversizePayload(f.Size), 1) == nil
	case wire.FaultInvalidUTF8:
		return c.sendData(InvalidUTF8, 1) == nil
	case wire.FaultShutdown:
		p := fmt.Appendf(nil, `{"e":"serverShutdown","E":%d}`, now.UnixMilli())
		if c.combinedNow.Load() {
			p = appendCombined(nil, "!serverShutdown", p)
		}
		c.mu.Lock()
		if c.dead.Load() {
			c.mu.Unlock()
			return false
		}
		st, out := c.statLocked(""), c.out
		c.mu.Unlock()
		select {
		case out <- item{data: p, st: st, op: opShutdown}:
		default: // queue full: close without the event
			return c.fail(1001, "server shutdown", "server", modeSend)
		}
		return true
	}
	cf := connFault{kind: f.Kind, delay: f.Delay}
	if f.For > 0 {
		cf.until = now.Add(f.For)
	}
	if c.dead.Load() {
		return false
	}
	select { // never wait: the schedule must not stall on one busy writer
	case c.fcmd <- cf:
		return true
	default:
		return false
	}
}

const oversizeHead = `{"e":"oversize","pad":"`

// oversizePayload is a JSON text of exactly size bytes.
func oversizePayload(size int) []byte {
	p := make([]byte, 0, size)
	p = append(p, oversizeHead...)
	p = append(p, bytes.Repeat([]byte{'x'}, size-len(oversizeHead)-2)...)
	return append(p, '"', '}')
}

// opShutdown marks the serverShutdown event in the data queue: the writer
// writes it as a text message and then closes with 1001.
const opShutdown = 0xff

// writerFaults is the timed fault state owned by the writer goroutine.
type writerFaults struct {
	active  bool // any of the below is set
	zombie  time.Time
	zombieF bool // zombie until the end
	drip    time.Time
	dripF   bool
	lat     time.Time
	latF    bool
	delay   time.Duration // latency
}

// startFault installs a timed fault in the writer; half-open runs here until it ends.
func (c *Conn) startFault(cf connFault) error {
	w := &c.wfx
	forever := cf.until.IsZero()
	switch cf.kind {
	case wire.FaultHalfOpen:
		return c.halfOpen(cf.until)
	case wire.FaultZombie:
		w.zombie, w.zombieF = cf.until, forever
	case wire.FaultLatency:
		w.lat, w.latF, w.delay = cf.until, forever, cf.delay
	case wire.FaultDrip:
		if err := c.flush(); err != nil {
			return err
		}
		c.bw.Reset(&dripWriter{c: c, gap: cf.delay, until: cf.until})
		w.drip, w.dripF = cf.until, forever
	}
	w.active = true
	return nil
}

// expire ends the timed faults that are over; it runs only while one is active.
func (c *Conn) expire(now time.Time) error {
	w := &c.wfx
	if !w.zombieF && !w.zombie.IsZero() && !now.Before(w.zombie) {
		w.zombie = time.Time{}
	}
	if !w.latF && !w.lat.IsZero() && !now.Before(w.lat) {
		w.lat = time.Time{}
	}
	if !w.dripF && !w.drip.IsZero() && !now.Before(w.drip) {
		w.drip = time.Time{}
		if err := c.flush(); err != nil {
			return err
		}
		c.bw.Reset(c.wout)
	}
	w.active = w.zombieF || w.latF || w.dripF || !w.zombie.IsZero() || !w.lat.IsZero() || !w.drip.IsZero()
	return nil
}

// faultWrite applies the writer's timed faults to one item: skip reports that
// the item is not to be written (zombie: data is discarded, never counted).
// Latency waits until the event time plus the delay (now plus the delay for
// a message without event time); control frames are not delayed.
func (c *Conn) faultWrite(it *item) (skip bool, err error) {
	now := time.Now()
	if err := c.expire(now); err != nil || !c.wfx.active {
		return false, err
	}
	if it.op != 0 && it.op != opShutdown {
		return false, nil
	}
	w := &c.wfx
	if (w.zombieF || !w.zombie.IsZero()) && it.op == 0 {
		return true, nil // (a serverShutdown still goes out, and closes)
	}
	if w.latF || !w.lat.IsZero() {
		due := now.Add(w.delay)
		if it.at != 0 {
			due = time.Unix(0, it.at).Add(w.delay)
		}
		if d := due.Sub(now); d > 0 {
			if err := c.flush(); err != nil { // what came before goes out on time
				return false, err
			}
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-c.quit:
			}
		}
	}
	return false, nil
}

// halfOpen stops all output until until (zero: until the connection ends):
// queued data and replies are discarded (not counted as sent), no ping, no
// pong, no close frame, no FIN. The reader keeps draining the socket so that
// it notices the client giving up, but ignores what it reads.
func (c *Conn) halfOpen(until time.Time) error {
	if err := c.flush(); err != nil {
		return err
	}
	c.frozen.Store(true)
	defer c.frozen.Store(false)
	var end <-chan time.Time
	if !until.IsZero() {
		t := time.NewTimer(time.Until(until))
		defer t.Stop()
		end = t.C
	}
	for {
		select {
		case <-c.quit:
			return nil
		case <-c.out:
		case <-c.ctl:
		case <-end:
			// Pings sent before went unanswered because the reader ignored the
			// pongs: forget them, so the pong timeout does not fire for them.
			c.mu.Lock()
			c.pings = c.pings[:0]
			c.mu.Unlock()
			return nil
		}
	}
}

// dripWriter writes one byte per write call (with TCP_NODELAY, one segment
// each), gap apart; once the fault is over or the connection is closing it
// writes the rest at once, so a large buffer cannot outlast the fault.
type dripWriter struct {
	c     *Conn
	gap   time.Duration
	until time.Time // zero: until the connection ends
}

func (d *dripWriter) Write(p []byte) (int, error) {
	var t *time.Timer
	if d.gap > 0 {
		t = time.NewTimer(d.gap)
		defer t.Stop()
	}
	for i := range p {
		select {
		case <-d.c.quit:
			n, err := d.c.wout.Write(p[i:])
			return i + n, err
		default:
		}
		if !d.until.IsZero() && !time.Now().Before(d.until) {
			n, err := d.c.wout.Write(p[i:])
			return i + n, err
		}
		if _, err := d.c.wout.Write(p[i : i+1]); err != nil {
			return i, err
		}
		if t != nil && i < len(p)-1 {
			t.Reset(d.gap)
			select {
			case <-t.C:
			case <-d.c.quit:
			}
		}
	}
	return len(p), nil
}

// --- stream faults ---

// subFault is the fault state of one subscription, guarded by the hub's lock.
type subFault struct {
	silentUntil int64 // on the hub's clock; events scheduled before are not sent
	drop        int
	dup         int
	frag        int
	reorder     uint8 // 1: hold the next event; 2: holding
	held        item
}

func (f *subFault) idle() bool {
	return f.silentUntil == 0 && f.drop == 0 && f.dup == 0 && f.frag == 0 && f.reorder == 0
}

// injectStream applies a stream fault to the subscriptions of the named
// streams (every stream for a fragment fault without streams) on matching
// connections; it returns their labels, in connection order.
func (h *hub) injectStream(f wire.Fault) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var topics []*topic
	if len(f.Streams) == 0 {
		for _, tp := range h.topics {
			topics = append(topics, tp)
		}
	} else {
		for _, n := range f.Streams {
			if tp := h.topics[n]; tp != nil {
				topics = append(topics, tp)
			}
		}
	}
	conns := map[*Conn]bool{}
	for _, tp := range topics {
		for v := range tp.subs {
			for _, s := range tp.subs[v] {
				if s.c.dead.Load() || !libMatch(f.Libs, s.c.tag) {
					continue
				}
				if s.f == nil {
					s.f = new(subFault)
				}
				switch f.Kind {
				case wire.FaultSilence:
					s.f.silentUntil = h.now() + int64(f.For)
				case wire.FaultDrop:
					s.f.drop += f.N
				case wire.FaultDuplicate:
					s.f.dup += f.N
				case wire.FaultFragment:
					s.f.frag += f.N
				case wire.FaultReorder:
					if s.f.reorder == 0 {
						s.f.reorder = 1
					}
				}
				conns[s.c] = true
			}
		}
	}
	sorted := make([]*Conn, 0, len(conns))
	for c := range conns {
		sorted = append(sorted, c)
	}
	slices.SortFunc(sorted, func(a, b *Conn) int { return int(a.id) - int(b.id) })
	out := make([]string, len(sorted))
	for i, c := range sorted {
		out[i] = c.label()
	}
	return out
}

// carriers returns the connections subscribed to any of names.
func (h *hub) carriers(names []string) map[*Conn]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	set := map[*Conn]bool{}
	for _, n := range names {
		if tp := h.topics[n]; tp != nil {
			for v := range tp.subs {
				for _, s := range tp.subs[v] {
					set[s.c] = true
				}
			}
		}
	}
	return set
}

// deliverFaulted hands one event to a subscription under a stream fault; the
// hub's lock is held. A skipped event is never queued, so never counted as
// sent; a duplicated one is queued twice and counted twice.
func (h *hub) deliverFaulted(s *sub, it item) {
	f := s.f
	defer func() {
		if f.idle() {
			s.f = nil
		}
	}()
	if f.silentUntil != 0 {
		if it.at < f.silentUntil {
			return
		}
		f.silentUntil = 0
	}
	if f.drop > 0 {
		f.drop--
		return
	}
	if f.frag > 0 {
		f.frag--
		it.parts = FragmentParts
	}
	n := 1
	if f.dup > 0 {
		f.dup--
		n = 2
	}
	switch f.reorder {
	case 1:
		f.held, f.reorder = it, 2
		if n == 2 {
			f.dup++ // the held event is sent once; the duplicate goes to the next one
		}
		return
	case 2:
		for range n {
			s.c.enqueue(it)
		}
		s.c.enqueue(f.held)
		f.held, f.reorder = item{}, 0
		return
	}
	for range n {
		s.c.enqueue(it)
	}
}

// --- schedule ---

// runSchedule injects Config.Faults at their instants until Stop or Close.
func (s *Server) runSchedule() {
	defer close(s.schedDone)
	fs := s.cfg.Faults
	next := make([]time.Time, len(fs)) // zero: no more
	for i, sf := range fs {
		next[i] = s.cfg.Start.Add(sf.At)
	}
	stop := s.cfg.Stop
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		var first time.Time
		for i, t := range next {
			if !t.IsZero() && !stop.IsZero() && !t.Before(stop) {
				next[i] = time.Time{}
			} else if !t.IsZero() && (first.IsZero() || t.Before(first)) {
				first = t
			}
		}
		if first.IsZero() {
			return
		}
		timer.Reset(time.Until(first))
		select {
		case <-s.schedQuit:
			return
		case <-timer.C:
		}
		for i, t := range next { // same instant: list order
			if t.IsZero() || t.After(first) {
				continue
			}
			if _, err := s.Inject(fs[i].Fault); err != nil {
				s.log.Error("scheduled fault", "n", i+1, "err", err)
			}
			if fs[i].Every > 0 {
				next[i] = t.Add(fs[i].Every)
			} else {
				next[i] = time.Time{}
			}
		}
	}
}
