package chat

import (
	"bytes"
	"net"
	"time"

	"github.com/fasthttp/websocket"
	"github.com/valyala/fasthttp"
)

// fasthttpServer is the room on fasthttp/websocket over valyala/fasthttp's
// server: gorilla's API (a read loop and a writer goroutine per connection,
// a bounded queue) on fasthttp's HTTP layer.
type fasthttpServer struct {
	s   *Server
	srv *fasthttp.Server
	up  websocket.FastHTTPUpgrader
}

func newFasthttp(s *Server) *fasthttpServer {
	f := &fasthttpServer{s: s, up: websocket.FastHTTPUpgrader{ReadBufferSize: 4096, WriteBufferSize: 4096,
		CheckOrigin: func(*fasthttp.RequestCtx) bool { return true }}}
	// KeepHijackedConns: fasthttp neither closes nor recycles a connection
	// once its handler returned, so that a kill racing with the handler's
	// end (the server closing as the client leaves) writes to a closed
	// connection, not to a recycled one (seen: a nil dereference).
	f.srv = &fasthttp.Server{Handler: f.handle, Name: "soak-chat", ReadTimeout: 0, NoDefaultServerHeader: true, KeepHijackedConns: true}
	if s.cfg.Strategy == StrategyBest {
		s.room.prepare = func(b []byte) any { // framed once; refused: written plain
			if pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b); err == nil {
				return pm
			}
			return nil
		}
	}
	return f
}

func (f *fasthttpServer) serve(ln net.Listener) error { return f.srv.Serve(ln) }
func (f *fasthttpServer) close() error                { return f.srv.Shutdown() }

func (f *fasthttpServer) handle(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case StatsPath:
		b, code := f.s.statsJSON(string(ctx.QueryArgs().Peek("settle")))
		ctx.SetContentType("application/json")
		ctx.SetStatusCode(code)
		ctx.SetBody(b)
		return
	case "/":
	default:
		ctx.Error("not found", fasthttp.StatusNotFound)
		return
	}
	name := string(ctx.QueryArgs().Peek("name")) // a copy: ctx is reused after the upgrade; checked at join
	_ = f.up.Upgrade(ctx, func(c *websocket.Conn) {
		defer c.Close()
		c.SetReadLimit(f.s.cfg.ReadLimit) // over it, the library sends the close 1009 itself
		m := f.s.room.newMember(name, fasthttpSink{c}, nil)
		if err := f.s.room.join(m); err != nil {
			fasthttpSink{c}.kill(closeOf(err))
			return
		}
		defer f.s.room.leave(m)
		var buf bytes.Buffer
		for {
			typ, rd, err := c.NextReader()
			if err != nil {
				return
			}
			buf.Reset()
			if _, err := buf.ReadFrom(rd); err != nil {
				return
			}
			if typ == websocket.TextMessage && !f.s.room.receive(m, buf.Bytes()) {
				f.s.room.fail(m, CloseInvalidText, reasonInvalidText)
				return
			}
		}
	})
}

type fasthttpSink struct{ c *websocket.Conn }

func (k fasthttpSink) write(b []byte) error { return k.c.WriteMessage(websocket.TextMessage, b) }
func (k fasthttpSink) flush() error         { return nil }
func (k fasthttpSink) writePrepared(p any) error {
	return k.c.WritePreparedMessage(p.(*websocket.PreparedMessage))
}
func (k fasthttpSink) kill(code int, reason string) {
	_ = k.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	_ = k.c.Close()
}
