package chat

import (
	"bytes"
	"context"
	"net"
	"net/http"

	"github.com/coder/websocket"
)

// coderServer is the room on coder/websocket as its chat example builds it:
// a read loop in the handler, a writer goroutine per subscriber fed by a
// bounded queue, a subscriber past it closed with 1008.
type coderServer struct {
	s   *Server
	srv *http.Server
}

func newCoder(s *Server) *coderServer {
	c := &coderServer{s: s}
	c.srv = newHTTP(s, c.handle)
	return c
}

func (c *coderServer) serve(ln net.Listener) error { return c.srv.Serve(ln) }
func (c *coderServer) close() error                { return c.srv.Close() }

func (c *coderServer) handle(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name") // checked at join: a refusal is a close frame
	// Any origin, as gorilla's.
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered
	}
	defer conn.CloseNow()
	conn.SetReadLimit(c.s.cfg.ReadLimit) // over it, coder sends the close 1009 itself
	m := c.s.room.newMember(name, coderSink{conn}, nil)
	// Refused or failed here, the close is written before the handler
	// returns: its CloseNow would not wait for a Close started in the
	// background (kill's) but not yet under way.
	if err := c.s.room.join(m); err != nil {
		code, reason := closeOf(err)
		_ = conn.Close(websocket.StatusCode(code), reason)
		return
	}
	defer c.s.room.leave(m)
	ctx := context.Background() // never cancelled: no per-read context cost
	var buf bytes.Buffer
	for {
		typ, rd, err := conn.Reader(ctx)
		if err != nil {
			return
		}
		buf.Reset()
		if _, err := buf.ReadFrom(rd); err != nil {
			return
		}
		if typ == websocket.MessageText && !c.s.room.receive(m, buf.Bytes()) {
			c.s.room.leave(m)
			_ = conn.Close(websocket.StatusInvalidFramePayloadData, reasonInvalidText)
			return
		}
	}
}

type coderSink struct{ c *websocket.Conn }

func (k coderSink) write(b []byte) error {
	return k.c.Write(context.Background(), websocket.MessageText, b)
}
func (k coderSink) flush() error { return nil }

// kill closes with code in the background: coder's Close writes the close
// frame (5 s at most) and waits for the peer's (5 s at most) before it closes
// the connection, and its CloseNow waits for a Close under way.
func (k coderSink) kill(code int, reason string) {
	go func() { _ = k.c.Close(websocket.StatusCode(code), reason) }()
}
