package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/ws"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/deflate"
)

// ErrClosed is returned by Conn hooks once the connection is closing or closed.
var ErrClosed = errors.New("connection closed")

// ErrQueueFull is returned by SendText and SendFragmented when the outbound queue is full.
var ErrQueueFull = errors.New("queue full")

const (
	closeGrace  = time.Second // how long a closing handshake may take
	maxMessage  = 64 << 10    // largest incoming message
	writeBuffer = 64 << 10
	ctlQueue    = 64
	maxPings    = 32 // outstanding pings remembered
	maxPongs    = 16 // recent pong payloads kept for WaitPong
)

type closeMode uint8

const (
	modeSend  closeMode = iota // server closes: close frame, half-close, wait for the echo
	modeEcho                   // the client sent a close frame: echo it, then close
	modeDrop                   // the TCP connection is gone: just close
	modeReset                  // abrupt: linger 0, the client sees a reset
)

// item is one frame (or one fragmented message) for the writer.
type item struct {
	data  []byte
	st    *streamStat // counted on successful write; nil for replies and control frames
	seq   int64
	at    int64     // scheduled wall time (Unix ns) of a generated event; 0 otherwise
	op    ws.OpCode // 0 means a text message; opShutdown the serverShutdown event
	parts int       // >1 splits a text message into that many frames
	bin   bool      // a data message in a binary encoding: binary frames
}

type streamStat struct{ sent, bytes, first, last atomic.Int64 }

func (s *streamStat) add(n int, seq int64) {
	s.sent.Add(1)
	s.bytes.Add(int64(n))
	if seq != 0 {
		s.first.CompareAndSwap(0, seq)
		s.last.Store(seq)
	}
}

type pending struct {
	st  *streamStat
	n   int
	seq int64
}

type pingRec struct {
	payload string
	sent    time.Time
}

type pongWaiter struct {
	payload string
	ch      chan struct{}
}

// Conn is one server-side WebSocket connection.
type Conn struct {
	s      *Server
	id     uint64
	tag    string
	remote string
	path   string
	opened time.Time
	micro  bool
	enc    codec.Encoding // negotiated by subprotocol; JSON unless asked
	proto  string         // the subprotocol answered ("" for none)
	nc     net.Conn
	wout   *wireCounter // beneath bw: the frame bytes written
	pmd    bool         // permessage-deflate negotiated
	exts   string       // the Sec-WebSocket-Extensions answer ("" if none)
	// wireAtClose is wout's count when the client's close frame was read; -1 before.
	wireAtClose atomic.Int64

	out        chan item
	ctl        chan item
	quit       chan struct{} // closed by fail
	readerDone chan struct{}
	done       chan struct{}
	dead       atomic.Bool
	fcmd       chan connFault // timed faults for the writer
	frozen     atomic.Bool    // half-open: the reader ignores what it reads
	// combinedNow mirrors combined for other goroutines (serverShutdown's shape).
	combinedNow atomic.Bool

	// owned by the reader goroutine (and by the handler before and after it)
	br       *bufio.Reader
	subs     map[string]*sub
	order    []string
	combined bool
	rate     []time.Duration
	rateIdx  int

	// owned by the writer
	bw        *bufio.Writer
	hdr       [ws.MaxHeaderSize]byte
	pend      []pending
	pongTimer *time.Timer
	pongArmed bool
	wfx       writerFaults
	defl      *deflate.Compressor // nil without permessage-deflate

	pingsSent, pongsRecv, ctlMsgs atomic.Int64

	mu          sync.Mutex
	closed      time.Time
	closeCode   int
	closeReason string
	closedBy    string
	mode        closeMode
	streams     map[string]*streamStat
	pings       []pingRec
	pongs       []string
	waiters     []pongWaiter
}

// Encoding returns the encoding the connection's events are sent in.
func (c *Conn) Encoding() codec.Encoding { return c.enc }

// Subprotocol returns the Sec-WebSocket-Protocol the server answered ("" for none).
func (c *Conn) Subprotocol() string { return c.proto }

// Tag returns the X-Soak-Conn header of the handshake.
func (c *Conn) Tag() string { return c.tag }

// Done is closed when the connection has ended and its goroutines returned.
func (c *Conn) Done() <-chan struct{} { return c.done }

// SendText queues one text message behind the stream data (counted under stream "").
func (c *Conn) SendText(p []byte) error { return c.sendData(p, 1) }

// SendFragmented queues one text message split into parts frames: a text frame, then continuations.
func (c *Conn) SendFragmented(p []byte, parts int) error { return c.sendData(p, parts) }

func (c *Conn) sendData(p []byte, parts int) error {
	c.mu.Lock()
	if c.dead.Load() {
		c.mu.Unlock()
		return ErrClosed
	}
	st := c.statLocked("")
	out := c.out
	c.mu.Unlock()
	select {
	case out <- item{data: append([]byte(nil), p...), st: st, parts: parts}:
		return nil
	default:
		return ErrQueueFull
	}
}

// Ping sends a ping frame with payload (at most 125 bytes) ahead of queued data.
func (c *Conn) Ping(payload []byte) error {
	if len(payload) > 125 {
		return fmt.Errorf("ping: payload of %d bytes", len(payload))
	}
	if !c.sendCtl(item{op: ws.OpPing, data: append([]byte(nil), payload...)}) {
		return ErrClosed
	}
	return nil
}

// WaitPong returns when a pong carrying exactly payload has arrived (also if it arrived shortly before the call).
func (c *Conn) WaitPong(ctx context.Context, payload []byte) error {
	c.mu.Lock()
	for _, p := range c.pongs {
		if p == string(payload) {
			c.mu.Unlock()
			return nil
		}
	}
	ch := make(chan struct{})
	c.waiters = append(c.waiters, pongWaiter{string(payload), ch})
	c.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-c.done:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("wait pong: %w", ctx.Err())
	}
}

// Close sends a close frame with code and reason, then closes the TCP
// connection; it returns when the connection has ended.
func (c *Conn) Close(code int, reason string) error {
	if !c.fail(code, reason, "server", modeSend) {
		return ErrClosed
	}
	<-c.done
	return nil
}

// Reset closes the TCP connection abruptly (linger 0): the client sees a reset, no close frame.
func (c *Conn) Reset() error {
	if !c.fail(1006, "reset", "server", modeReset) {
		return ErrClosed
	}
	<-c.done
	return nil
}

func (c *Conn) statLocked(name string) *streamStat {
	st, ok := c.streams[name]
	if !ok {
		st = new(streamStat)
		c.streams[name] = st
	}
	return st
}

func (c *Conn) stat(name string) *streamStat {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.statLocked(name)
}

// enqueue queues a data item (or a reply that must keep its place among the
// data, SET_PROPERTY's); the scheduler calls it with the hub locked. It never
// blocks: a full queue closes the connection.
func (c *Conn) enqueue(it item) {
	if c.dead.Load() {
		return
	}
	select {
	case c.out <- it:
	default:
		if c.fail(1008, "queue overflow", "server", modeSend) {
			c.s.log.Warn("queue overflow", "conn", c.id, "tag", c.tag, "queue", cap(c.out))
		}
	}
}

// sendCtl queues a control frame or reply; false if the connection is closing.
func (c *Conn) sendCtl(it item) bool {
	if c.dead.Load() {
		return false
	}
	select {
	case c.ctl <- it:
		return true
	case <-c.quit:
		return false
	}
}

// tcpConn is the TCP socket of nc, also beneath TLS; nil if there is none.
func tcpConn(nc net.Conn) *net.TCPConn {
	if u, ok := nc.(interface{ NetConn() net.Conn }); ok {
		nc = u.NetConn()
	}
	tc, _ := nc.(*net.TCPConn)
	return tc
}

// fail starts closing the connection; the first call wins and reports true.
func (c *Conn) fail(code int, reason, by string, mode closeMode) bool {
	c.mu.Lock()
	if c.dead.Load() {
		c.mu.Unlock()
		return false
	}
	c.dead.Store(true)
	c.closeCode, c.closeReason, c.closedBy, c.mode = code, reason, by, mode
	c.mu.Unlock()
	if mode == modeReset {
		// Under TLS the reset goes to the TCP socket beneath, with no close_notify first.
		// It happens before quit is closed: the writer, woken by quit, closes the
		// connection too, and under TLS its Close sends close_notify and a FIN, which
		// the client would read as an orderly EOF if it came first.
		if tc := tcpConn(c.nc); tc != nil {
			_ = tc.SetLinger(0)
			_ = tc.Close()
		}
	}
	close(c.quit)
	switch mode {
	case modeReset:
		_ = c.nc.Close()
	case modeDrop:
		_ = c.nc.Close()
	default:
		// Unblock a writer stuck on a client that does not read.
		_ = c.nc.SetWriteDeadline(time.Now().Add(closeGrace))
	}
	return true
}

// --- writer ---

func (c *Conn) writeLoop() {
	cfg := &c.s.cfg
	ping := time.NewTicker(cfg.PingInterval)
	defer ping.Stop()
	life := time.NewTimer(cfg.Lifetime)
	defer life.Stop()
	c.pongTimer = time.NewTimer(time.Hour)
	c.pongTimer.Stop()
	defer c.pongTimer.Stop()
	for {
		var err error
		select {
		case <-c.quit:
			c.finish()
			return
		case it := <-c.ctl:
			err = c.write(it)
		case cf := <-c.fcmd:
			err = c.startFault(cf)
		case it := <-c.out:
			if err = c.drainCtl(); err == nil {
				err = c.write(it)
			}
		case now := <-ping.C:
			err = c.write(item{op: ws.OpPing, data: strconv.AppendInt(nil, now.UnixMilli(), 10)})
		case <-life.C:
			c.fail(1001, "lifetime expired", "server", modeSend)
			continue
		case <-c.pongTimer.C:
			c.pongArmed = false
			if d, ok := c.pongDue(); ok && d <= 0 {
				c.fail(1008, "pong timeout", "server", modeSend)
				continue
			} else if ok {
				c.pongTimer.Reset(d)
				c.pongArmed = true
			}
		}
		if err == nil && len(c.out) == 0 && len(c.ctl) == 0 {
			err = c.flush()
		}
		if err != nil {
			c.fail(1006, "write: "+err.Error(), "client", modeDrop)
		}
	}
}

// drainCtl writes queued control frames first, so a reply queued before a
// subscription goes out before that subscription's first event.
func (c *Conn) drainCtl() error {
	for {
		select {
		case it := <-c.ctl:
			if err := c.write(it); err != nil {
				return err
			}
		default:
			return nil
		}
	}
}

func (c *Conn) write(it item) error {
	if it.op == 0 && c.dead.Load() {
		return nil // closing: no data after the decision (serverShutdown must be the last message)
	}
	if c.wfx.active {
		if skip, err := c.faultWrite(&it); skip || err != nil {
			return err
		}
	}
	switch it.op {
	case ws.OpPing:
		c.mu.Lock()
		if len(c.pings) == maxPings {
			c.pings = append(c.pings[:0], c.pings[1:]...)
		}
		c.pings = append(c.pings, pingRec{string(it.data), time.Now()})
		c.mu.Unlock()
		c.pingsSent.Add(1)
		if !c.pongArmed {
			c.pongTimer.Reset(c.s.cfg.PongTimeout)
			c.pongArmed = true
		}
		return c.writeFrame(ws.OpPing, true, it.data, nil)
	case ws.OpPong:
		return c.writeFrame(ws.OpPong, true, it.data, nil)
	case opShutdown:
		p, rsv, err := c.payload(it.data)
		if err != nil {
			return err
		}
		if err := c.writeFrameRsv(ws.OpText, true, rsv, p, &it); err != nil {
			return err
		}
		if err := c.flush(); err != nil {
			return err
		}
		c.fail(1001, "server shutdown", "server", modeSend)
		return nil
	}
	first := ws.OpText
	if it.bin {
		first = ws.OpBinary
	}
	data, rsv, err := c.payload(it.data)
	if err != nil {
		return err
	}
	parts := min(max(it.parts, 1), max(len(data), 1))
	if parts == 1 {
		return c.writeFrameRsv(first, true, rsv, data, &it)
	}
	size := len(data) / parts
	for i := range parts {
		op, chunk, r := ws.OpContinuation, data[i*size:(i+1)*size], byte(0)
		if i == 0 {
			op, r = first, rsv // RSV1 on the first frame only (RFC 7692 §6.1)
		}
		last := i == parts-1
		if last {
			chunk = data[i*size:]
		}
		var done *item
		if last {
			done = &it
		}
		if err := c.writeFrameRsv(op, last, r, chunk, done); err != nil {
			return err
		}
		if !last { // every fragment its own write, as a slow server would
			if err := c.flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFrame buffers one frame. A message is counted in the stats only once a
// flush has put all of it on the socket.
func (c *Conn) writeFrame(op ws.OpCode, fin bool, p []byte, msg *item) error {
	return c.writeFrameRsv(op, fin, 0, p, msg)
}

// writeFrameRsv is writeFrame with the header's reserved bits (rsv1: compressed).
func (c *Conn) writeFrameRsv(op ws.OpCode, fin bool, rsv byte, p []byte, msg *item) error {
	h := ws.Header{Fin: fin, Rsv: rsv, OpCode: op, Length: int64(len(p))}
	if n := ws.HeaderSize(h) + len(p); n > c.bw.Available() && c.bw.Buffered() > 0 {
		if err := c.flush(); err != nil {
			return err
		}
	}
	if err := ws.WriteHeaderBuffer(c.bw, h, c.hdr[:]); err != nil {
		return fmt.Errorf("write header: %w", err)
	}
	if _, err := c.bw.Write(p); err != nil {
		return fmt.Errorf("write payload: %w", err)
	}
	if msg != nil && msg.st != nil {
		c.pend = append(c.pend, pending{msg.st, len(msg.data), msg.seq})
	}
	return nil
}

func (c *Conn) flush() error {
	if err := c.bw.Flush(); err != nil {
		c.pend = c.pend[:0]
		return fmt.Errorf("flush: %w", err)
	}
	for _, p := range c.pend {
		p.st.add(p.n, p.seq)
	}
	c.pend = c.pend[:0]
	return nil
}

// pongDue returns the time left until the oldest unanswered ping times out.
func (c *Conn) pongDue() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pings) == 0 {
		return 0, false
	}
	return time.Until(c.pings[0].sent.Add(c.s.cfg.PongTimeout)), true
}

// finish performs the closing handshake chosen by fail and closes the socket.
func (c *Conn) finish() {
	c.mu.Lock()
	mode, code, reason := c.mode, c.closeCode, c.closeReason
	c.mu.Unlock()
	if mode == modeSend || mode == modeEcho {
		_ = c.nc.SetWriteDeadline(time.Now().Add(closeGrace))
		var body []byte
		if code != 1005 {
			if len(reason) > 123 {
				reason = reason[:123]
			}
			body = ws.NewCloseFrameBody(ws.StatusCode(code), reason)
		}
		err := c.flush()
		if err == nil {
			err = c.writeFrame(ws.OpClose, true, body, nil)
		}
		if err == nil {
			err = c.flush()
		}
		if mode == modeSend && err == nil {
			if cw, ok := c.nc.(interface{ CloseWrite() error }); ok {
				_ = cw.CloseWrite() // TCP FIN; under TLS, close_notify and then the FIN
			}
			t := time.NewTimer(closeGrace)
			select {
			case <-c.readerDone:
			case <-t.C:
			}
			t.Stop()
		}
	}
	_ = c.nc.Close()
}

// --- reader ---

func (c *Conn) readLoop() {
	defer close(c.readerDone)
	var (
		buf    []byte
		msg    []byte
		inMsg  bool
		text   bool
		zipped bool
	)
	for {
		h, err := ws.ReadHeader(c.br)
		if err != nil {
			c.fail(1006, "", "client", modeDrop)
			return
		}
		if h.Length > maxMessage {
			c.fail(1009, "message too big", "server", modeSend)
			return
		}
		if cap(buf) < int(h.Length) {
			buf = make([]byte, h.Length)
		}
		p := buf[:h.Length]
		if _, err := io.ReadFull(c.br, p); err != nil {
			c.fail(1006, "", "client", modeDrop)
			return
		}
		if h.Masked {
			ws.Cipher(p, h.Mask, 0)
		}
		if h.OpCode == ws.OpClose {
			c.wireAtClose.CompareAndSwap(-1, c.wout.n.Load())
			code, reason := ws.ParseCloseFrameData(p)
			if len(p) < 2 {
				code = 1005
			}
			mode := modeEcho
			if c.frozen.Load() {
				mode = modeDrop // half-open: the client gave up; send nothing
			}
			c.fail(int(code), reason, "client", mode)
			return
		}
		if c.dead.Load() {
			continue // closing: wait for the client's close frame or EOF
		}
		if c.frozen.Load() {
			continue // half-open: nothing is answered; a close frame above ends it silently
		}
		if !h.Masked || !c.rsvAllowed(h) || h.OpCode.IsReserved() ||
			h.OpCode.IsControl() && (h.Length > 125 || !h.Fin) {
			c.fail(1002, "protocol error", "server", modeSend)
			continue
		}
		switch h.OpCode {
		case ws.OpPing:
			if c.countIncoming() {
				c.sendCtl(item{op: ws.OpPong, data: append([]byte(nil), p...)})
			}
		case ws.OpPong:
			if c.countIncoming() {
				c.gotPong(p)
			}
		case ws.OpText, ws.OpBinary:
			if inMsg {
				c.fail(1002, "protocol error", "server", modeSend)
				continue
			}
			if !c.countIncoming() {
				continue
			}
			text, zipped = h.OpCode == ws.OpText, h.Rsv == rsv1
			if !h.Fin {
				msg, inMsg = append(msg[:0], p...), true
			} else if text {
				c.incomingText(zipped, p)
			}
		case ws.OpContinuation:
			if !inMsg {
				c.fail(1002, "protocol error", "server", modeSend)
				continue
			}
			if msg = append(msg, p...); len(msg) > maxMessage {
				c.fail(1009, "message too big", "server", modeSend)
				continue
			}
			if h.Fin {
				inMsg = false
				if text {
					c.incomingText(zipped, msg)
				}
			}
		}
	}
}

// countIncoming counts a ping, pong or data message against the rate limit;
// false means the limit was exceeded and the connection is closing.
func (c *Conn) countIncoming() bool {
	c.ctlMsgs.Add(1)
	limit := c.s.cfg.MaxControlPerSec
	now := time.Since(c.opened)
	if len(c.rate) < limit {
		c.rate = append(c.rate, now)
		return true
	}
	if now-c.rate[c.rateIdx] < time.Second {
		c.fail(1008, "Too many requests", "server", modeSend)
		return false
	}
	c.rate[c.rateIdx] = now
	c.rateIdx = (c.rateIdx + 1) % limit
	return true
}

func (c *Conn) gotPong(p []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, pr := range c.pings {
		if pr.payload == string(p) { // strict rule: echoes an outstanding ping
			c.pings = append(c.pings[:0], c.pings[i+1:]...)
			c.pongsRecv.Add(1)
			break
		}
	}
	if len(c.pongs) == maxPongs {
		c.pongs = append(c.pongs[:0], c.pongs[1:]...)
	}
	c.pongs = append(c.pongs, string(p))
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.payload == string(p) {
			close(w.ch)
		} else {
			kept = append(kept, w)
		}
	}
	c.waiters = kept
}

// --- control messages ---

func (c *Conn) variant() variant {
	v := encodingVariant(c.enc)
	if c.combined {
		v |= varCombined
	}
	if c.micro {
		v |= varMicro
	}
	return v
}

func (c *Conn) reply(p []byte) { c.sendCtl(item{data: p}) }

func (c *Conn) replyErr(code int, msg string, id []byte) {
	c.reply(appendError(nil, &ctlError{code: code, msg: msg}, id))
}

var resultNull = []byte("null")

func (c *Conn) handleText(p []byte) {
	req, perr := parseRequest(p)
	if perr != nil {
		c.reply(appendError(nil, perr, req.id))
		return
	}
	switch req.method {
	case "SUBSCRIBE", "UNSUBSCRIBE":
		names, ok := stringParams(req.params)
		for _, n := range names {
			if _, err := binance.ParseStream(n); err != nil {
				ok = false
			}
		}
		if !ok {
			c.replyErr(2, msgInvalidStream, req.id)
			return
		}
		c.reply(appendResult(nil, resultNull, req.id))
		if req.method == "SUBSCRIBE" {
			c.subscribe(names)
		} else {
			c.unsubscribe(names)
		}
	case "LIST_SUBSCRIPTIONS":
		if len(req.params) > 0 {
			c.replyErr(2, msgTooMany, req.id)
			return
		}
		list, _ := json.Marshal(c.order)
		if len(c.order) == 0 {
			list = []byte("[]")
		}
		c.reply(appendResult(nil, list, req.id))
	case "SET_PROPERTY", "GET_PROPERTY":
		want := 2
		if req.method == "GET_PROPERTY" {
			want = 1
		}
		if len(req.params) > want {
			c.replyErr(2, msgTooMany, req.id)
			return
		}
		var name string
		if len(req.params) == 0 || json.Unmarshal(req.params[0], &name) != nil {
			c.replyErr(2, msgPropName, req.id)
			return
		}
		if name != "combined" {
			c.replyErr(0, msgUnknownProp, req.id)
			return
		}
		if req.method == "GET_PROPERTY" {
			c.reply(appendResult(nil, strconv.AppendBool(nil, c.combined), req.id))
			return
		}
		var v bool
		if len(req.params) < 2 || json.Unmarshal(req.params[1], &v) != nil {
			c.replyErr(1, msgExpectBool, req.id)
			return
		}
		// The switch first, then the reply behind the messages already queued:
		// every message after the reply has the new shape. One generated
		// between the two may come before the reply in the new shape already
		// (a client must take either shape until the reply).
		c.setCombined(v)
		c.enqueue(item{data: appendResult(nil, resultNull, req.id)}) // in order with the data
	}
}

// subscribe adds streams (validated names); past MaxStreamsPerConn the connection is closed.
func (c *Conn) subscribe(names []string) {
	fresh := 0
	for _, n := range names {
		if _, ok := c.subs[n]; !ok {
			fresh++
		}
	}
	if len(c.subs)+fresh > c.s.cfg.MaxStreamsPerConn {
		c.fail(1008, "Too many streams", "server", modeSend)
		return
	}
	for _, n := range names {
		if _, ok := c.subs[n]; ok {
			continue
		}
		st, _ := binance.ParseStream(n)
		s := &sub{c: c, v: c.variant(), st: c.stat(n)}
		c.s.hub.subscribe(s, st)
		c.subs[n] = s
		c.order = append(c.order, n)
	}
}

func (c *Conn) unsubscribe(names []string) {
	for _, n := range names {
		s, ok := c.subs[n]
		if !ok {
			continue
		}
		if s.tp != nil {
			c.s.hub.unsubscribe(s)
		}
		delete(c.subs, n)
		for i, o := range c.order {
			if o == n {
				c.order = append(c.order[:i], c.order[i+1:]...)
				break
			}
		}
	}
}

func (c *Conn) setCombined(v bool) {
	if c.combined == v {
		return
	}
	c.combined = v
	c.combinedNow.Store(v)
	for _, n := range c.order {
		if s := c.subs[n]; s.tp != nil {
			c.s.hub.setVariant(s, c.variant())
		}
	}
}

// stats returns a snapshot of the connection's counters.
func (c *Conn) stats() ConnStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs := ConnStats{
		ID: c.id, Tag: c.tag, Remote: c.remote, Path: c.path, Subprotocol: c.proto, Opened: c.opened, Closed: c.closed,
		Streams:           make(map[string]StreamStats, len(c.streams)),
		PingsSent:         c.pingsSent.Load(),
		PongsReceived:     c.pongsRecv.Load(),
		ControlMsgs:       c.ctlMsgs.Load(),
		WireBytes:         c.wout.n.Load(),
		WireBytesReadable: c.wout.n.Load(),
		Extensions:        c.exts,
	}
	if !c.closed.IsZero() {
		cs.CloseCode, cs.CloseReason, cs.ClosedBy = c.closeCode, c.closeReason, c.closedBy
		if n := c.wireAtClose.Load(); n >= 0 && c.closedBy == "client" {
			cs.WireBytesReadable = n
		}
	}
	for name, st := range c.streams {
		cs.Streams[name] = StreamStats{Sent: st.sent.Load(), Bytes: st.bytes.Load(), FirstSeq: st.first.Load(), LastSeq: st.last.Load()}
	}
	return cs
}

func bufioWriter(w io.Writer) *bufio.Writer { return bufio.NewWriterSize(w, writeBuffer) }
