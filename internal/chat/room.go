// Package chat is the chat room of the server-side bench (the room protocol
// of Bun's chat benchmark): one server per library, each broadcasting every
// message a client sends to every client of the room, and a load client.
//
// The protocol: the server is told the room's size N; clients connect to /
// with ?name=NAME; when N are in, the server sends the text message "ready"
// to every one; every text message m from client x is then sent as "x: m" to
// all clients of the room, x included. GET /_stats returns the server's own
// counts (Stats) as JSON.
package chat

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/wire"
)

// Libs are the libraries a chat server is written with: every library of
// the tool (wire.Libraries), in its order.
var Libs = slices.Clone(wire.Libraries)

// DefaultQueue is the messages a connection may have waiting to be written
// before it is dropped as too slow: generous, so that a healthy client on a
// busy machine never reaches it.
const DefaultQueue = 4096

// DefaultReadLimit is the largest message the server reads from a client.
const DefaultReadLimit = 1 << 20

// maxBatch bounds the messages a writer takes from its queue before it
// flushes and counts them.
const maxBatch = 256

// Ready is the message sent to every client when the room is full.
const Ready = "ready"

// CloseTooSlow is the close code of a client dropped for a full queue
// (1008, policy violation: the client does not keep up).
const CloseTooSlow = 1008

// CloseGoingAway is the close code of a connection whose write failed.
const CloseGoingAway = 1001

// Close codes of a client that broke the room's rules (RFC 6455 7.4.1).
const (
	CloseBadName     = 1008 // policy violation: a name the rule refuses, or taken in the room
	CloseInvalidText = 1007 // a text message that is not UTF-8
	CloseTooBig      = 1009 // a message over the read limit
)

// reasonInvalidText is the close reason of a text message that is not UTF-8.
const reasonInvalidText = "text message not UTF-8"

// MaxNameLen is the longest name a client may have, in bytes.
const MaxNameLen = 256

// maxDroppedNames bounds the dropped clients' names Stats lists.
const maxDroppedNames = 100

// refusal is a join the room refuses: the close frame the client gets.
type refusal struct {
	code   int
	reason string
}

func (e *refusal) Error() string { return e.reason }

// closeOf is the close code and reason a refused join answers with.
func closeOf(err error) (int, string) {
	if r, ok := err.(*refusal); ok {
		return r.code, r.reason
	}
	return CloseBadName, err.Error()
}

// errRoomFull is a join to a room that already has N clients.
var errRoomFull = &refusal{1013, "room full"}

// errClosing is a join to a room whose server is closing.
var errClosing = &refusal{1013, "server closing"}

// checkName applies the name rule: 1 to MaxNameLen bytes of UTF-8, no
// control character (the name starts every line a client reads) and no
// ':' (the room writes "NAME: MESSAGE", which a colon in NAME would make
// ambiguous). It returns why a name is refused ("" when it is not).
func checkName(name string) string {
	switch {
	case name == "":
		return "no name: connect to /?name=NAME"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("name longer than %d bytes", MaxNameLen)
	case !utf8.ValidString(name):
		return "name is not UTF-8"
	case strings.ContainsRune(name, ':'):
		return "name has a ':' (the room writes NAME: MESSAGE)"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "name has a control character"
	}
	return ""
}

// msg is one outgoing message, shared by every connection it is queued on
// and returned to the pool by the last one.
type msg struct {
	b       []byte
	refs    atomic.Int32
	counted bool // a broadcast: a delivery when written (ready is not)
	static  bool // never pooled
	// prep is b framed once for every connection (Room.prepare: the best
	// strategy's prepared message), undone by unprep with the last reference.
	prep   any
	unprep func(any)
}

var msgPool = sync.Pool{New: func() any { return &msg{b: make([]byte, 0, 256)} }}

func (x *msg) release() {
	if x.static {
		return
	}
	if x.refs.Add(-1) == 0 {
		if x.prep != nil && x.unprep != nil {
			x.unprep(x.prep)
		}
		x.prep, x.unprep = nil, nil
		msgPool.Put(x)
	}
}

// sink is a library's connection as the room writes to it.
type sink interface {
	// write writes one text message (it may stay buffered until flush).
	write(b []byte) error
	// flush ends a batch of writes.
	flush() error
	// kill drops the connection: a close frame with code, bounded in time,
	// then the TCP connection closed.
	kill(code int, reason string)
}

// scheduler runs a member's flush job on the library's own write queue
// (gws's Async) instead of a writer goroutine.
type scheduler interface {
	schedule(job func())
}

// member is one client of the room.
type member struct {
	room  *Room
	name  string
	sink  sink
	sched scheduler    // nil: a writer goroutine
	psink preparedSink // the sink, when it writes prepared messages
	hsink handSink     // the sink, when its library queues: no queue or writer of the room's
	q     chan *msg
	quit  chan struct{}
	dead  atomic.Bool
	once  sync.Once
	// pending is the messages queued and not yet taken by a flush job
	// (scheduler only): the job is scheduled when it goes from 0 to 1.
	pending atomic.Int64
	job     func()
	// delivered is the broadcast messages written to this connection.
	delivered atomic.Int64
}

// Room is the chat room: its members, its counts.
type Room struct {
	n     int
	queue int

	mu      sync.RWMutex // broadcasts read-lock it; joins, leaves and ready lock it
	members []*member
	ready   bool
	closed  bool // the server is closing: no more joins
	dropped []string
	// droppedMembers are the members dropped for a full queue: what was
	// written to them is counted apart (Stats.DroppedDeliveries), since a
	// client that stopped reading never read it.
	droppedMembers []*member

	readyMsg *msg
	// prepare, when set, frames a broadcast once for every connection (the
	// best strategy's prepared message), and unprepare undoes it once every
	// connection wrote it.
	prepare   func(b []byte) any
	unprepare func(any)

	deliveries atomic.Int64 // broadcast messages written to a connection
	inflight   atomic.Int64 // queued and not yet written or discarded
	broadcasts atomic.Int64 // messages received from clients
	drops      atomic.Int64
	joined     atomic.Int64
	left       atomic.Int64
	rejected   atomic.Int64
}

// NewRoom returns a room of n clients whose connections queue at most queue
// messages (0: DefaultQueue).
func NewRoom(n, queue int) *Room {
	if queue <= 0 {
		queue = DefaultQueue
	}
	rm := &Room{n: n, queue: queue, readyMsg: &msg{b: []byte(Ready), static: true}}
	return rm
}

// newMember makes a member for a connection; it joins with join.
func (r *Room) newMember(name string, s sink, sched scheduler) *member {
	m := &member{room: r, name: name, sink: s, sched: sched, q: make(chan *msg, r.queue), quit: make(chan struct{})}
	if sched != nil {
		m.job = m.flushJob
	}
	m.psink, _ = s.(preparedSink)
	m.hsink, _ = s.(handSink)
	return m
}

// join adds m to the room, starts its writer and sends ready when the room
// is full (to all), or to m alone when the room was full before (a client
// that reconnected). A room that has n members refuses m, and so does a
// room for a name the rule refuses (checkName) or that one of its members
// has; the error is a *refusal, the close frame to answer with.
func (r *Room) join(m *member) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errClosing
	}
	if why := checkName(m.name); why != "" {
		r.rejected.Add(1)
		return &refusal{CloseBadName, why}
	}
	if slices.ContainsFunc(r.members, func(x *member) bool { return x.name == m.name }) {
		r.rejected.Add(1)
		return &refusal{CloseBadName, "name already in the room"}
	}
	if len(r.members) >= r.n {
		r.rejected.Add(1)
		return errRoomFull
	}
	r.members = append(r.members, m)
	r.joined.Add(1)
	if m.sched == nil && m.hsink == nil {
		go m.writeLoop()
	}
	switch {
	case r.ready:
		r.sendLocked(m, r.readyMsg)
	case len(r.members) == r.n:
		r.ready = true
		for _, x := range r.members {
			r.sendLocked(x, r.readyMsg)
		}
	}
	return nil
}

// sendLocked queues a message on one member (r.mu held).
func (r *Room) sendLocked(m *member, x *msg) {
	r.inflight.Add(1)
	if !m.push(x) {
		r.inflight.Add(-1)
	}
}

// close refuses every join from now on and returns the members.
func (r *Room) close() []*member {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	return slices.Clone(r.members)
}

// leave removes m after its connection ended (not a drop: a drop is a
// leave already).
func (r *Room) leave(m *member) {
	if m.dead.CompareAndSwap(false, true) {
		if r.remove(m) {
			r.left.Add(1)
		}
		m.stop()
	}
}

// drop removes m because its queue is full, and closes its connection.
func (r *Room) drop(m *member) {
	if !m.dead.CompareAndSwap(false, true) {
		return
	}
	r.drops.Add(1)
	if r.remove(m) {
		r.left.Add(1) // a dropped client left: joined - left is who is in
	}
	r.mu.Lock()
	if len(r.dropped) < maxDroppedNames {
		r.dropped = append(r.dropped, m.name)
	}
	r.droppedMembers = append(r.droppedMembers, m)
	r.mu.Unlock()
	m.stop()
	go m.sink.kill(CloseTooSlow, "too slow: queue full")
}

// receive broadcasts a text message of m's; false when it is not UTF-8
// (nothing is sent then: the caller fails m's connection with 1007). A
// fragmented message is checked whole, so a sequence that spans fragments
// is valid.
func (r *Room) receive(m *member, text []byte) bool {
	if !utf8.Valid(text) {
		return false
	}
	r.Broadcast(m.name, text)
	return true
}

// fail takes m out of the room, then closes its connection with code: a
// client that broke the protocol or the room's rules.
func (r *Room) fail(m *member, code int, reason string) {
	r.leave(m)
	m.sink.kill(code, reason)
}

// remove takes m out of the room; false when it was not in it.
func (r *Room) remove(m *member) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.members, m)
	if i < 0 {
		return false
	}
	// A new slice: a broadcast may still range over the old one.
	r.members = slices.Delete(slices.Clone(r.members), i, i+1)
	if len(r.members) == 0 {
		r.ready = false // the next N clients make a new room
	}
	return true
}

// Broadcast sends "from: text" to every member, from's own connection
// included. A member whose queue is full is dropped; the room never waits.
func (r *Room) Broadcast(from string, text []byte) {
	r.broadcasts.Add(1)
	x := msgPool.Get().(*msg)
	x.b = append(append(append(x.b[:0], from...), ": "...), text...)
	x.counted = true
	x.refs.Store(1)
	if r.prepare != nil {
		x.prep, x.unprep = r.prepare(x.b), r.unprepare
	}
	var slow []*member
	r.mu.RLock()
	ms := r.members
	r.inflight.Add(int64(len(ms))) // before any writer can count one down
	sent := 0
	for _, m := range ms {
		if m.dead.Load() {
			continue
		}
		x.refs.Add(1)
		if m.push(x) {
			sent++
			continue
		}
		x.refs.Add(-1)
		slow = append(slow, m)
	}
	r.mu.RUnlock()
	if d := len(ms) - sent; d > 0 {
		r.inflight.Add(-int64(d))
	}
	x.release()
	for _, m := range slow {
		r.drop(m)
	}
}

// droppedDeliveries is what was written to the dropped members (r.mu held
// for reading at least).
func (r *Room) droppedDeliveries() int64 {
	var n int64
	for _, m := range r.droppedMembers {
		n += m.delivered.Load()
	}
	return n
}

// push queues x on m without blocking; false when the queue is full. A
// member whose library queues (handSink) is handed x at once.
func (m *member) push(x *msg) bool {
	if m.hsink != nil {
		m.handOver(x)
		return true
	}
	select {
	case m.q <- x:
	default:
		return false
	}
	if m.dead.Load() {
		// m died while x was queued: its writer may have emptied the queue
		// already, so empty it here too (every message taken exactly once).
		m.discard()
		return true
	}
	if m.sched != nil && m.pending.Add(1) == 1 {
		m.sched.schedule(m.job)
	}
	return true
}

// handOver hands x to a library that queues and writes itself, counts it
// delivered and lets it go. It runs under the room's lock (a broadcast's or
// a join's), so a failed member leaves from another goroutine.
func (m *member) handOver(x *msg) {
	var err error
	if !m.dead.Load() {
		err = m.hsink.hand(x)
		if err == nil && x.counted {
			m.delivered.Add(1)
			m.room.deliveries.Add(1)
		}
	}
	x.release()
	m.room.inflight.Add(-1)
	if err != nil {
		go func() {
			m.room.leave(m)
			m.sink.kill(CloseGoingAway, "write failed")
		}()
	}
}

// stop ends m's writer: the writer goroutine returns, the queue is emptied.
func (m *member) stop() {
	m.once.Do(func() { close(m.quit) })
	m.discard()
}

// discard empties the queue of a dead member.
func (m *member) discard() {
	for {
		select {
		case x := <-m.q:
			x.release()
			m.room.inflight.Add(-1)
		default:
			return
		}
	}
}

// writeLoop is a member's writer goroutine: it takes what is queued, writes
// it, flushes, counts, until the member leaves or a write fails.
func (m *member) writeLoop() {
	for {
		var x *msg
		select {
		case x = <-m.q:
		case <-m.quit:
			m.discard()
			return
		}
		if _, ok := m.batch(x); !ok {
			return
		}
	}
}

// flushJob is the scheduler's job: it writes what is queued until nothing
// is pending.
func (m *member) flushJob() {
	for {
		var n int64
		for {
			var x *msg
			select {
			case x = <-m.q:
			default:
			}
			if x == nil {
				break
			}
			k, ok := m.batch(x)
			n += int64(k)
			if !ok {
				return
			}
		}
		if n == 0 || m.pending.Add(-n) == 0 {
			return
		}
	}
}

// batch writes x and what else is queued (up to maxBatch), flushes and
// counts; ok false when the connection failed (the member then leaves).
func (m *member) batch(x *msg) (n int, ok bool) {
	if m.dead.Load() {
		x.release()
		m.room.inflight.Add(-1)
		m.discard()
		return 1, false
	}
	var counted int64
	var err error
	for {
		if err == nil {
			if x.prep != nil && m.psink != nil {
				err = m.psink.writePrepared(x.prep)
			} else {
				err = m.sink.write(x.b)
			}
		}
		if x.counted {
			counted++
		}
		x.release()
		n++
		if n == maxBatch {
			break
		}
		select {
		case x = <-m.q:
			continue
		default:
		}
		break
	}
	if err == nil {
		err = m.sink.flush()
	}
	if err != nil {
		m.room.inflight.Add(-int64(n))
		if errors.Is(err, errTooSlow) { // the library's own bound on what waits (nbio's)
			m.room.drop(m)
			return n, false
		}
		m.room.leave(m)
		go m.sink.kill(CloseGoingAway, "write failed")
		return n, false
	}
	m.delivered.Add(counted)
	m.room.deliveries.Add(counted)
	m.room.inflight.Add(-int64(n))
	return n, true
}
