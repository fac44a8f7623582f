package chat

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"
)

// gobwasServer is the room on gobwas/ws's low-level API: wsutil.Reader over
// the upgrade's buffered reader (control frames answered through the
// connection's write lock), and a writer goroutine per connection that
// writes frame headers and payloads into its own bufio.Writer: flushed after
// each frame (plain: one write per delivery), or once per batch of what was
// queued (best: the frame-level batching the library's API allows).
type gobwasServer struct {
	s   *Server
	srv *http.Server
}

func newGobwas(s *Server) *gobwasServer {
	g := &gobwasServer{s: s}
	g.srv = newHTTP(s, g.handle)
	return g
}

func (g *gobwasServer) serve(ln net.Listener) error { return g.srv.Serve(ln) }
func (g *gobwasServer) close() error                { return g.srv.Close() }

// gobwasWriteBuffer is the size of a connection's write buffer.
const gobwasWriteBuffer = 32 << 10

func (g *gobwasServer) handle(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name") // checked at join: a refusal is a close frame
	conn, rw, _, err := ws.UpgradeHTTP(r, w)
	if err != nil {
		return // UpgradeHTTP answered
	}
	defer conn.Close()
	k := &gobwasSink{conn: conn, bw: bufio.NewWriterSize(conn, gobwasWriteBuffer), batch: g.s.cfg.Strategy == StrategyBest}
	m := g.s.room.newMember(name, k, nil)
	if err := g.s.room.join(m); err != nil {
		k.kill(closeOf(err))
		return
	}
	defer g.s.room.leave(m)
	// The control frame handler answers a close frame itself (the echo, or
	// 1002 for a bad one): after it failed, the connection just ends.
	handled := wsutil.ControlFrameHandler(k, ws.StateServerSide)
	answered := false
	ctl := func(h ws.Header, r io.Reader) error {
		var err error
		if h.OpCode == ws.OpClose {
			err = k.answerClose(h, r)
		} else {
			err = handled(h, r)
		}
		answered = answered || err != nil
		return err
	}
	rd := &wsutil.Reader{Source: rw.Reader, State: ws.StateServerSide, CheckUTF8: false,
		MaxFrameSize: g.s.cfg.ReadLimit, MaxMessageSize: g.s.cfg.ReadLimit, OnIntermediate: ctl}
	var buf bytes.Buffer
	for {
		h, err := rd.NextFrame()
		if err == nil && h.OpCode.IsControl() {
			err = ctl(h, rd)
			if err == nil {
				continue
			}
		}
		if err == nil {
			buf.Reset()
			_, err = buf.ReadFrom(rd)
		}
		if err != nil {
			if !answered {
				failRead(g.s.room, m, err)
			}
			return
		}
		if h.OpCode == ws.OpText && !g.s.room.receive(m, buf.Bytes()) {
			g.s.room.fail(m, CloseInvalidText, reasonInvalidText)
			return
		}
	}
}

// answerClose answers a client's close frame: its code echoed when a peer
// may send it (RFC 6455 7.4; gobwas's own handler echoes any code from 5000
// up), 1002 for a bad one, no code for a frame without one. It returns the
// wsutil.ClosedError that ends the read loop.
func (k *gobwasSink) answerClose(h ws.Header, r io.Reader) error {
	var p [125]byte // a control frame's payload is at most 125 bytes (the reader checked)
	b := p[:min(h.Length, int64(len(p)))]
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	code, reason := ws.ParseCloseFrameData(b)
	var body []byte
	switch {
	case len(b) == 0:
	case len(b) == 1 || !peerCloseCode(int(code)) || !utf8.ValidString(reason):
		body = ws.NewCloseFrameBody(ws.StatusProtocolError, "bad close frame")
	default:
		body = ws.NewCloseFrameBody(code, "")
	}
	var f bytes.Buffer
	if err := ws.WriteFrame(&f, ws.NewCloseFrame(body)); err != nil {
		return err
	}
	if _, err := k.Write(f.Bytes()); err != nil {
		return err
	}
	return wsutil.ClosedError{Code: code, Reason: reason}
}

// peerCloseCode reports whether a peer may send code in a close frame
// (RFC 6455 7.4.1, 7.4.2 and the registered 1012–1014).
func peerCloseCode(code int) bool {
	return code >= 1000 && code <= 1003 || code >= 1007 && code <= 1014 || code >= 3000 && code <= 4999
}

// failRead closes a connection whose frames the reader refused as the other
// libraries do by themselves: 1009 for a message over the read limit, 1002
// for a protocol error; a connection that failed is only closed.
func failRead(r *Room, m *member, err error) {
	var pe ws.ProtocolError
	switch {
	case errors.Is(err, wsutil.ErrFrameTooLarge), errors.Is(err, wsutil.ErrMessageTooLarge):
		r.fail(m, CloseTooBig, "message over the read limit")
	case errors.As(err, &pe):
		r.fail(m, int(ws.StatusProtocolError), string(pe))
	}
}

// gobwasSink is a connection's write side: the writer goroutine's batches
// and the read loop's control replies (through Write) share mu.
type gobwasSink struct {
	conn  net.Conn
	mu    sync.Mutex
	bw    *bufio.Writer
	batch bool // flush per batch (best), not per frame (plain)
}

func (k *gobwasSink) write(b []byte) error {
	k.mu.Lock()
	err := ws.WriteHeader(k.bw, ws.Header{Fin: true, OpCode: ws.OpText, Length: int64(len(b))})
	if err == nil {
		_, err = k.bw.Write(b)
	}
	if err == nil && !k.batch {
		err = k.bw.Flush() // the frame in one write
	}
	k.mu.Unlock()
	return err
}

func (k *gobwasSink) flush() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bw.Flush()
}

// Write writes a whole control frame (ControlFrameHandler's replies).
func (k *gobwasSink) Write(p []byte) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, err := k.bw.Write(p)
	if err == nil {
		err = k.bw.Flush()
	}
	return n, err
}

// kill writes the close frame when the writer is not in the middle of a
// write (a writer stuck on a full socket holds the lock), then closes.
func (k *gobwasSink) kill(code int, reason string) {
	_ = k.conn.SetWriteDeadline(time.Now().Add(time.Second))
	if k.mu.TryLock() {
		if ws.WriteFrame(k.bw, ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusCode(code), reason))) == nil {
			_ = k.bw.Flush()
		}
		k.mu.Unlock()
	}
	_ = k.conn.Close()
}
