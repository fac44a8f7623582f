package chat

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

// nbioServer is the room on lesismal/nbio as its documentation builds a
// server: an nbhttp engine in non-blocking mode, every connection read by
// the engine's poller (epoll), frames parsed there and the handlers run on
// nbio's executor; no goroutine per connection reads. Writes go through
// WriteMessage, which never blocks: what the socket does not take nbio keeps
// and writes when the poller says it can, up to its write buffer bound
// (what the room's queue may hold: queue × the largest message a
// connection may be sent); past it nbio closes the connection and the room
// counts the client dropped as too slow. The room's
// writer goroutine per connection feeds it, one frame per write (plain: nbio
// has no prepared or batched write).
type nbioServer struct {
	s      *Server
	engine *nbhttp.Engine
	up     *websocket.Upgrader
	done   chan struct{}
	once   sync.Once
}

func newNbio(s *Server) *nbioServer {
	logging.SetLevel(logging.LevelNone) // nbio logs to stdout, which is the server's address line
	n := &nbioServer{s: s, done: make(chan struct{})}
	up := websocket.NewUpgrader()
	up.CheckOrigin = func(*http.Request) bool { return true } // any origin, as every server of the bench
	up.KeepaliveTime = 0                                      // no idle timeout: a room waits for its clients
	up.MessageLengthLimit = int(s.cfg.ReadLimit)              // over it, nbio sends the close 1009 itself
	up.OnMessage(func(c *websocket.Conn, t websocket.MessageType, p []byte) {
		m := nbioMember(c)
		if m == nil || t != websocket.TextMessage {
			return
		}
		if !s.room.receive(m, p) {
			s.room.fail(m, CloseInvalidText, reasonInvalidText)
		}
	})
	up.OnClose(func(c *websocket.Conn, _ error) {
		if m := nbioMember(c); m != nil {
			s.room.leave(m)
		}
	})
	n.up = up
	return n
}

// nbioMember is a connection's member, nil before it joined.
func nbioMember(c *websocket.Conn) *member {
	m, _ := c.Session().(*member)
	return m
}

func (n *nbioServer) serve(ln net.Listener) error {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+StatsPath, n.s.httpStats)
	mux.HandleFunc("GET /{$}", n.handle)
	// The engine accepts on the server's listener itself (its own accept
	// loop hands each connection's descriptor to the poller), so the room's
	// lingering close is nbioSink's.
	raw := ln
	if l, ok := ln.(*lingerListener); ok {
		raw = l.Listener
	}
	n.engine = nbhttp.NewEngine(nbhttp.Config{
		Network:            "tcp",
		Addrs:              []string{raw.Addr().String()},
		Listen:             func(string, string) (net.Listener, error) { return raw, nil },
		Handler:            mux,
		IOMod:              nbhttp.IOModNonBlocking,
		MaxWriteBufferSize: n.s.cfg.Queue * int(n.s.cfg.ReadLimit+MaxNameLen+2), // the room's queue counts messages, nbio's bound bytes
	})
	n.engine.CheckUtf8 = func([]byte) bool { return true } // the room checks text, as for every library
	n.up.Engine = n.engine
	if err := n.engine.Start(); err != nil {
		return err
	}
	<-n.done
	return http.ErrServerClosed
}

func (n *nbioServer) close() error {
	n.once.Do(func() {
		if n.engine != nil {
			n.engine.Stop()
		}
		close(n.done)
	})
	return nil
}

func (n *nbioServer) handle(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name") // checked at join: a refusal is a close frame
	c, err := n.up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	hc, _ := c.UnderlayerConn().(*nbhttp.Conn)
	if hc == nil {
		_ = c.Close()
		return
	}
	nbc, _ := hc.Conn.(*nbio.Conn)
	if nbc == nil {
		_ = c.Close()
		return
	}
	k := &nbioSink{c: c, nbc: nbc}
	// The poller's reads go through the sink: a message over the read limit
	// (nbio has sent 1009) and a killed connection close lingering.
	nbc.OnData(k.onData)
	m := n.s.room.newMember(name, k, nil)
	if err := n.s.room.join(m); err != nil {
		k.kill(closeOf(err))
		return
	}
	c.SetSession(m)
}

// nbioSink is a connection's write side, and its lingering close.
type nbioSink struct {
	c    *websocket.Conn
	nbc  *nbio.Conn
	mu   sync.Mutex
	shut bool // the FIN went out: what the peer still sends is dropped
}

// errTooSlow is a write nbio refused: the connection's write buffer is past
// its bound (nbio has closed it).
var errTooSlow = errors.New("nbio: write buffer full")

func (k *nbioSink) write(b []byte) error {
	err := k.c.WriteMessage(websocket.TextMessage, b)
	if err != nil {
		if closed, _ := k.nbc.IsClosed(); closed {
			return errTooSlow
		}
	}
	return err
}

func (k *nbioSink) flush() error { return nil }

// kill writes the close frame, then closes lingering.
func (k *nbioSink) kill(code int, reason string) {
	_ = k.c.WriteClose(code, reason)
	k.linger()
}

// linger sends the FIN after what was written and drops what the peer still
// sends until it closes or lingerTime has passed (see linger.go).
func (k *nbioSink) linger() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.shut {
		return
	}
	k.shut = true
	if rc, err := k.nbc.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) { _ = syscall.Shutdown(int(fd), syscall.SHUT_WR) })
	}
	time.AfterFunc(lingerTime, func() { _ = k.nbc.Close() })
}

// onData is the poller's read: parsed by nbio, or dropped once the FIN
// went out.
func (k *nbioSink) onData(c *nbio.Conn, data []byte) {
	k.mu.Lock()
	shut := k.shut
	k.mu.Unlock()
	if shut {
		return
	}
	if err := k.c.Parse(data); err != nil {
		if errors.Is(err, websocket.ErrMessageTooLarge) {
			k.linger() // nbio wrote the 1009
			if m := nbioMember(k.c); m != nil {
				m.room.leave(m)
			}
			return
		}
		_ = c.CloseWithError(err)
	}
}
