package chat

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/lxzan/gws"
)

// gwsServer is the room on lxzan/gws: its event handler, its ReadLoop per
// connection, and writes through its own per-connection async queue (Async,
// concurrency 1: no writer goroutine while nothing is queued) instead of a
// writer goroutine; the bounded queue before it is the room's.
type gwsServer struct {
	s   *Server
	srv *http.Server
	up  *gws.Upgrader
}

func newGws(s *Server) *gwsServer {
	g := &gwsServer{s: s}
	g.up = gws.NewUpgrader(&gwsEvents{s: s}, &gws.ServerOption{
		ReadMaxPayloadSize: int(s.cfg.ReadLimit), // over it, gws sends the close 1009 itself
		CheckUtf8Enabled:   false,                // the room checks text, as for every library
		NewSession:         func() gws.SessionStorage { return &memberSlot{} },
	})
	g.srv = newHTTP(s, g.handle)
	if s.cfg.Strategy == StrategyBest {
		s.room.prepare = func(b []byte) any { return gws.NewBroadcaster(gws.OpcodeText, b) }
		s.room.unprepare = func(p any) { _ = p.(*gws.Broadcaster).Close() }
	}
	return g
}

func (g *gwsServer) serve(ln net.Listener) error { return g.srv.Serve(ln) }
func (g *gwsServer) close() error                { return g.srv.Close() }

func (g *gwsServer) handle(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name") // checked at join (OnOpen): a refusal is a close frame
	c, err := g.up.Upgrade(w, r)
	if err != nil {
		return // the upgrader answered
	}
	k := gwsSink{c}
	var m *member
	if g.s.cfg.Strategy == StrategyBest {
		m = g.s.room.newMember(name, gwsHandSink{k}, nil)
	} else {
		m = g.s.room.newMember(name, k, k)
	}
	c.Session().(*memberSlot).m = m // before ReadLoop: its events read it without a lock
	go g.readLoop(c)
}

// readLoop runs gws's read loop. A frame that makes it panic fails that
// connection with 1002 instead of ending the server process: gws v1.8.9
// slices a buffer by a frame's 64-bit length read as a negative int when
// its top bit is set (which RFC 6455 5.2 forbids), so one client's frame
// header crashed the server (found by FuzzServerFrames).
func (g *gwsServer) readLoop(c *gws.Conn) {
	defer func() {
		if p := recover(); p != nil {
			slog.Warn("gws read loop panicked: connection failed with 1002", "remote", c.RemoteAddr(), "panic", p)
			_ = c.WriteClose(1002, []byte("bad frame"))
			g.s.room.leave(memberOf(c))
		}
	}()
	c.ReadLoop()
}

// gwsEvents is the room's gws event handler.
type gwsEvents struct{ s *Server }

func memberOf(c *gws.Conn) *member { return c.Session().(*memberSlot).m }

func (e *gwsEvents) OnOpen(c *gws.Conn) {
	if err := e.s.room.join(memberOf(c)); err != nil {
		code, reason := closeOf(err)
		_ = c.WriteClose(uint16(code), []byte(reason))
	}
}

func (e *gwsEvents) OnClose(c *gws.Conn, _ error) { e.s.room.leave(memberOf(c)) }
func (e *gwsEvents) OnPing(c *gws.Conn, p []byte) { _ = c.WritePong(p) }
func (e *gwsEvents) OnPong(*gws.Conn, []byte)     {}

func (e *gwsEvents) OnMessage(c *gws.Conn, msg *gws.Message) {
	if msg.Opcode == gws.OpcodeText {
		if m := memberOf(c); !e.s.room.receive(m, msg.Bytes()) {
			e.s.room.fail(m, CloseInvalidText, reasonInvalidText)
		}
	}
	_ = msg.Close()
}

type gwsSink struct{ c *gws.Conn }

func (k gwsSink) write(b []byte) error { return k.c.WriteMessage(gws.OpcodeText, b) }
func (k gwsSink) flush() error         { return nil }
func (k gwsSink) schedule(job func())  { k.c.Async(job) }

// gwsHandSink is the best strategy's sink: each broadcast goes through its
// Broadcaster (framed once), which queues the write on the connection's own
// async queue; the room neither queues nor writes.
type gwsHandSink struct{ gwsSink }

func (k gwsHandSink) hand(x *msg) error {
	if bc, ok := x.prep.(*gws.Broadcaster); ok {
		return bc.Broadcast(k.c)
	}
	// Not a broadcast ("ready", which is never reused): queued as it is.
	k.c.WriteAsync(gws.OpcodeText, x.b, nil)
	return nil
}

// kill bounds a write stuck on a full socket, then sends the close (gws's
// WriteClose also closes the connection).
func (k gwsSink) kill(code int, reason string) {
	_ = k.c.NetConn().SetWriteDeadline(time.Now().Add(time.Second))
	if k.c.WriteClose(uint16(code), []byte(reason)) != nil {
		_ = k.c.NetConn().Close()
	}
}

// memberSlot is a connection's session: its member, set once before the
// read loop starts.
type memberSlot struct{ m *member }

func (s *memberSlot) Len() int                     { return 1 }
func (s *memberSlot) Load(string) (any, bool)      { return s.m, s.m != nil }
func (s *memberSlot) Delete(string)                {}
func (s *memberSlot) Store(string, any)            {}
func (s *memberSlot) Range(func(string, any) bool) {}
