package replay

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
)

// FaultKind names what a fault does.
type FaultKind string

// Fault kinds. Connection faults act on every matching connection; stream
// faults (silence, drop, duplicate, reorder, fragment) act on the named
// streams of the matching connections only.
const (
	FaultClose       FaultKind = "close"           // close frame with Code and Reason, then TCP close
	FaultReset       FaultKind = "reset"           // abrupt TCP reset (SO_LINGER 0), no close frame
	FaultHalfOpen    FaultKind = "half_open"       // send nothing, answer nothing, no FIN, for For (0 = until the client gives up)
	FaultZombie      FaultKind = "zombie"          // answer pings and send server pings, but no data, for For (0 = until the client gives up)
	FaultSilence     FaultKind = "silence"         // Streams send nothing on matching connections for For; other streams go on
	FaultDrop        FaultKind = "drop"            // skip the next N events of each of Streams (the client sees a gap of exactly N ids)
	FaultDuplicate   FaultKind = "duplicate"       // send each of the next N events of Streams twice
	FaultReorder     FaultKind = "reorder"         // swap the next two events of each of Streams
	FaultReject      FaultKind = "reject"          // reject each connection slot's next N handshakes with Status (and Retry-After)
	FaultOversize    FaultKind = "oversize"        // one text message of Size bytes
	FaultFragment    FaultKind = "fragment"        // the next N messages of Streams (all streams if none) as FragmentParts frames
	FaultInvalidUTF8 FaultKind = "invalid_utf8"    // one text frame whose payload is not valid UTF-8
	FaultShutdown    FaultKind = "server_shutdown" // {"e":"serverShutdown","E":ms}, then close 1001
	FaultDrip        FaultKind = "drip"            // for For, write every byte with its own write call, Delay apart (default 0: no pause)
	FaultLatency     FaultKind = "latency"         // for For, write every data message Delay after its event time
)

// FaultKinds lists every kind, in documentation order.
var FaultKinds = []FaultKind{
	FaultClose, FaultReset, FaultHalfOpen, FaultZombie, FaultSilence, FaultDrop, FaultDuplicate, FaultReorder,
	FaultReject, FaultOversize, FaultFragment, FaultInvalidUTF8, FaultShutdown, FaultDrip, FaultLatency,
}

// FaultCloseCodes are the codes a close fault may send.
var FaultCloseCodes = []int{1000, 1001, 1008, 1011}

// FragmentParts is how many frames a fragmented message is split into: a
// text frame and three continuation frames.
const FragmentParts = 4

// InvalidUTF8 is the payload of an invalid_utf8 fault: JSON whose string holds
// the bytes 0xff 0xfe, which can never appear in UTF-8.
var InvalidUTF8 = []byte("{\"e\":\"invalidUtf8\",\"s\":\"\xff\xfe\"}")

// Fault is one fault to inject. Only the fields its kind uses may be set.
type Fault struct {
	Kind       FaultKind     `json:"kind"`
	Streams    []string      `json:"streams,omitempty"` // empty = every connection; else the connections carrying one of them
	Libs       []string      `json:"libs,omitempty"`    // only connections whose X-Soak-Conn tag names one of these libraries; empty = all
	Code       int           `json:"code,omitempty"`
	Reason     string        `json:"reason,omitempty"`
	N          int           `json:"n,omitempty"`
	Status     int           `json:"status,omitempty"`
	RetryAfter time.Duration `json:"retryAfter,omitempty"`
	Size       int           `json:"size,omitempty"`
	For        time.Duration `json:"for,omitempty"`
	Delay      time.Duration `json:"delay,omitempty"`
}

// ScheduledFault is a fault the server injects by itself at Config.Start+At,
// then every Every (0 = once), while before Config.Stop.
type ScheduledFault struct {
	Fault
	At    time.Duration `json:"at"`
	Every time.Duration `json:"every,omitempty"`
}

// Applied says what an injected fault hit: when, and which connections (their
// X-Soak-Conn tags "lib/slot/attempt"; "#<id>" for an untagged one). For a
// reject fault Conns fills in as handshakes are rejected.
type Applied struct {
	Fault  Fault     `json:"fault"`
	At     time.Time `json:"at"`
	Conns  []string  `json:"conns"`
	Detail string    `json:"detail"`
}

// String describes the fault in one line: kind and the parameters it uses.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	add := func(k, v string) { fmt.Fprintf(&b, " %s=%s", k, v) }
	if f.Code != 0 {
		add("code", strconv.Itoa(f.Code))
	}
	if f.Reason != "" {
		add("reason", strconv.Quote(f.Reason))
	}
	if f.N != 0 {
		add("n", strconv.Itoa(f.N))
	}
	if f.Status != 0 {
		add("status", strconv.Itoa(f.Status))
	}
	if f.RetryAfter != 0 {
		add("retry_after", f.RetryAfter.String())
	}
	if f.Size != 0 {
		add("size", strconv.Itoa(f.Size))
	}
	if f.For != 0 {
		add("for", f.For.String())
	}
	if f.Delay != 0 {
		add("delay", f.Delay.String())
	}
	if len(f.Streams) > 0 {
		add("streams", strings.Join(f.Streams, ","))
	}
	if len(f.Libs) > 0 {
		add("libs", strings.Join(f.Libs, ","))
	}
	return b.String()
}

// FaultError is a problem of one Fault: Field names the parameter at fault
// ("kind", "streams", "code", "n", ...), so a profile can point at its line.
type FaultError struct {
	Field string
	Msg   string
}

func (e *FaultError) Error() string { return e.Msg }

// Validate reports the first problem of f as a *FaultError: an unknown kind,
// a missing or out-of-range parameter, a parameter its kind does not use, an
// invalid stream name, or a sequence fault on a stream without message ids.
func (f Fault) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &FaultError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if !slices.Contains(FaultKinds, f.Kind) {
		return bad("kind", "unknown fault kind %q", f.Kind)
	}
	for _, name := range f.Streams {
		st, err := binance.ParseStream(name)
		if err != nil {
			return bad("streams", "%v", err)
		}
		if (f.Kind == FaultDrop || f.Kind == FaultDuplicate || f.Kind == FaultReorder) && !MessageIDs(st) {
			return bad("streams", "%s needs a stream whose ids count messages (trade, aggTrade, blockTrade); %s has %s ids",
				f.Kind, name, seqWord(st.Seq()))
		}
	}
	// each check: the parameter, whether its value is right, and what is wrong otherwise
	type check struct {
		field string
		ok    bool
		why   string
	}
	var checks []check
	switch f.Kind {
	case FaultClose:
		checks = []check{{"code", slices.Contains(FaultCloseCodes, f.Code), fmt.Sprintf("%d is not one of %v", f.Code, FaultCloseCodes)},
			{"reason", len(f.Reason) <= 123, "is longer than 123 bytes"}}
	case FaultHalfOpen, FaultZombie:
		checks = []check{{"for", f.For >= 0, "is negative"}}
	case FaultSilence:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"streams", len(f.Streams) > 0, "must name the streams to silence"}}
	case FaultLatency:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"delay", f.Delay > 0, "must be positive"}}
	case FaultDrip:
		checks = []check{{"for", f.For > 0, "must be positive"}, {"delay", f.Delay >= 0 && f.Delay <= time.Second, "must be between 0 and 1s"}}
	case FaultDrop, FaultDuplicate:
		checks = []check{{"n", f.N > 0, "must be positive"}, {"streams", len(f.Streams) > 0, "must name the streams"}}
	case FaultFragment:
		checks = []check{{"n", f.N > 0, "must be positive"}}
	case FaultReorder:
		checks = []check{{"streams", len(f.Streams) > 0, "must name the streams"}}
	case FaultReject:
		checks = []check{{"n", f.N > 0, "must be positive"},
			{"status", f.Status >= 400 && f.Status <= 599, fmt.Sprintf("%d is not an HTTP error status", f.Status)},
			{"retry_after", f.RetryAfter >= 0, "is negative"},
			{"streams", len(f.Streams) == 0, "does not apply (a handshake is rejected before it subscribes)"}}
	case FaultOversize:
		checks = []check{{"size", f.Size >= len(oversizeHead)+2 && f.Size <= 64<<20, fmt.Sprintf("must be between %d and 64 MiB", len(oversizeHead)+2)}}
	}
	used := map[string]bool{}
	for _, c := range checks {
		used[c.field] = true
		if !c.ok {
			return bad(c.field, "%s: %s %s", f.Kind, c.field, c.why)
		}
	}
	for _, p := range []struct {
		field string
		set   bool
	}{{"code", f.Code != 0}, {"reason", f.Reason != ""}, {"n", f.N != 0}, {"status", f.Status != 0},
		{"retry_after", f.RetryAfter != 0}, {"size", f.Size != 0}, {"for", f.For != 0}, {"delay", f.Delay != 0}} {
		if p.set && !used[p.field] {
			return bad(p.field, "%s does not take %s", f.Kind, p.field)
		}
	}
	return nil
}

// MessageIDs reports whether the stream's sequence ids count messages, so that
// a drop of N events is seen by a client as exactly N lost: trade and
// blockTrade (t), aggTrade (a). Depth diffs count update ids, klines trade ids,
// and bookTicker and partial depth skip ids by design.
func MessageIDs(st binance.Stream) bool {
	r := st.Seq()
	return r == binance.SeqContiguous || r == binance.SeqAgg
}

func seqWord(r binance.Seq) string {
	switch r {
	case binance.SeqNone:
		return "no"
	case binance.SeqRange:
		return "update (not message)"
	case binance.SeqKline:
		return "trade (not message)"
	case binance.SeqMonotonic:
		return "gapped"
	}
	return r.String()
}

// streamFault reports whether the kind acts on streams (sub state) rather than on connections.
func (k FaultKind) streamFault() bool {
	switch k {
	case FaultSilence, FaultDrop, FaultDuplicate, FaultReorder, FaultFragment:
		return true
	}
	return false
}

// Inject applies f now to every matching live connection (reject: to the
// next N handshakes of each connection slot) and logs it.
func (s *Server) Inject(f Fault) (Applied, error) {
	if err := f.Validate(); err != nil {
		return Applied{}, fmt.Errorf("inject: %w", err)
	}
	f.Streams, f.Libs = slices.Clone(f.Streams), slices.Clone(f.Libs)
	a := &Applied{Fault: f, At: time.Now()}
	switch {
	case f.Kind == FaultReject:
		a.Detail = fmt.Sprintf("armed: the next %d handshakes of each slot get %d", f.N, f.Status)
		s.mu.Lock()
		s.rejects = append(s.rejects, &rejectRule{f: f, applied: a, used: map[string]int{}})
		s.mu.Unlock()
	case f.Kind.streamFault():
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
	out := a.clone()
	s.mu.Unlock()
	s.log.Info("fault", "kind", f.Kind, "fault", f.String(), "at", a.At.Format(time.RFC3339Nano), "conns", len(out.Conns), "detail", out.Detail)
	return out, nil
}

// Faults returns the log of applied faults so far, oldest first.
func (s *Server) Faults() []Applied {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Applied, len(s.faults))
	for i, a := range s.faults {
		out[i] = a.clone()
	}
	return out
}

func (a *Applied) clone() Applied {
	c := *a
	c.Conns = slices.Clone(a.Conns)
	c.Fault.Streams, c.Fault.Libs = slices.Clone(a.Fault.Streams), slices.Clone(a.Fault.Libs)
	return c
}

// LibOf returns the library part of an X-Soak-Conn tag "lib/slot/attempt".
func LibOf(tag string) string {
	lib, _, _ := strings.Cut(tag, "/")
	return lib
}

func libMatch(libs []string, tag string) bool {
	return len(libs) == 0 || slices.Contains(libs, LibOf(tag))
}

// label names a connection in the fault log: its tag, or #id when untagged.
func (c *Conn) label() string {
	if c.tag != "" {
		return c.tag
	}
	return "#" + strconv.FormatUint(c.id, 10)
}

// matchConns returns the live connections f applies to, in handshake order.
func (s *Server) matchConns(f Fault) []*Conn {
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
	f       Fault
	applied *Applied
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
	kind  FaultKind
	until time.Time // zero = until the connection ends
	delay time.Duration
}

// injectConn applies a connection fault; false if the connection was already closing.
func (c *Conn) injectConn(f Fault, now time.Time) bool {
	switch f.Kind {
	case FaultClose:
		return c.fail(f.Code, f.Reason, "server", modeSend)
	case FaultReset:
		return c.fail(1006, "reset", "server", modeReset)
	case FaultOversize:
		return c.sendData(oversizePayload(f.Size), 1) == nil
	case FaultInvalidUTF8:
		return c.sendData(InvalidUTF8, 1) == nil
	case FaultShutdown:
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
	case FaultHalfOpen:
		return c.halfOpen(cf.until)
	case FaultZombie:
		w.zombie, w.zombieF = cf.until, forever
	case FaultLatency:
		w.lat, w.latF, w.delay = cf.until, forever, cf.delay
	case FaultDrip:
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
		c.bw.Reset(c.nc)
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
			n, err := d.c.nc.Write(p[i:])
			return i + n, err
		default:
		}
		if !d.until.IsZero() && !time.Now().Before(d.until) {
			n, err := d.c.nc.Write(p[i:])
			return i + n, err
		}
		if _, err := d.c.nc.Write(p[i : i+1]); err != nil {
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
func (h *hub) injectStream(f Fault) []string {
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
				case FaultSilence:
					s.f.silentUntil = h.now() + int64(f.For)
				case FaultDrop:
					s.f.drop += f.N
				case FaultDuplicate:
					s.f.dup += f.N
				case FaultFragment:
					s.f.frag += f.N
				case FaultReorder:
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
