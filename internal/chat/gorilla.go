package chat

import (
	"bytes"
	"net"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// gorillaServer is the room on gorilla/websocket as its chat example builds
// it: a read loop per connection in the handler and a writer goroutine per
// connection fed by a bounded queue (a client past it is dropped).
type gorillaServer struct {
	s   *Server
	srv *http.Server
	up  websocket.Upgrader
}

func newGorilla(s *Server) *gorillaServer {
	// Any origin: a chat client of any page or tool may be pointed at the room
	// (loopback only, no authentication, as every server of the bench).
	g := &gorillaServer{s: s, up: websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096,
		CheckOrigin: func(*http.Request) bool { return true }}}
	g.srv = newHTTP(s, g.handle)
	if s.cfg.Strategy == StrategyBest {
		s.room.prepare = func(b []byte) any { // framed once; refused: written plain
			if pm, err := websocket.NewPreparedMessage(websocket.TextMessage, b); err == nil {
				return pm
			}
			return nil
		}
	}
	return g
}

func (g *gorillaServer) serve(ln net.Listener) error { return g.srv.Serve(ln) }
func (g *gorillaServer) close() error                { return g.srv.Close() }

func (g *gorillaServer) handle(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name") // checked at join: a refusal is a close frame
	c, err := g.up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer c.Close()
	c.SetReadLimit(g.s.cfg.ReadLimit) // over it, gorilla sends the close 1009 itself
	m := g.s.room.newMember(name, gorillaSink{c}, nil)
	if err := g.s.room.join(m); err != nil {
		gorillaSink{c}.kill(closeOf(err))
		return
	}
	defer g.s.room.leave(m)
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
		if typ == websocket.TextMessage && !g.s.room.receive(m, buf.Bytes()) {
			g.s.room.fail(m, CloseInvalidText, reasonInvalidText)
			return
		}
	}
}

type gorillaSink struct{ c *websocket.Conn }

func (k gorillaSink) write(b []byte) error { return k.c.WriteMessage(websocket.TextMessage, b) }
func (k gorillaSink) flush() error         { return nil }
func (k gorillaSink) writePrepared(p any) error {
	return k.c.WritePreparedMessage(p.(*websocket.PreparedMessage))
}
func (k gorillaSink) kill(code int, reason string) {
	_ = k.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	_ = k.c.Close()
}
