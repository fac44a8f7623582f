package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
	"github.com/lesismal/nbio/nbhttp/websocket"
)

const nbioModule = "github.com/lesismal/nbio"

// Nbio is the github.com/lesismal/nbio adapter: an epoll event loop
// (nbhttp.Engine, one poller on two cores) reads every connection of the
// process and parses its frames with nbio's websocket.Conn; the handler runs
// on the poller, as an event-loop server's callbacks do, instead of on a
// goroutine of its own per connection.
//
// nbio's Dialer dials by itself (net.Dial: no context, no dial hook), so the
// adapter dials through DialConfig.NetDial like every other, does the
// upgrade on that connection, and hands it to nbio (websocket.NewClientConn)
// as nbio's server does with a connection it accepted elsewhere: the
// socket's descriptor moves to the poller (nbio.NBConn). A connection nbio's
// poller cannot take — TLS (its poller takes only its own fork of
// crypto/tls) or a proxy's tunnel that is not a plain TCP connection — is
// read by nbio's blocking mode instead (websocket.Conn.HandleRead on the
// goroutine of Run): the same frame parser, a goroutine per connection.
type Nbio struct{}

func (Nbio) Name() string    { return "nbio" }
func (Nbio) Module() string  { return nbioModule }
func (Nbio) Version() string { return moduleVersion(nbioModule) }

// nbioEngines are the process's event loops, one per read buffer size (the
// poller reads every connection into one buffer of the engine's size), each
// started at its first connection and kept for the process's life.
var nbioEngines struct {
	mu sync.Mutex
	m  map[int]*nbhttp.Engine
}

// nbioEngine returns the started engine whose poller reads size bytes at a
// time.
func nbioEngine(size int) (*nbhttp.Engine, error) {
	nbioEngines.mu.Lock()
	defer nbioEngines.mu.Unlock()
	if e := nbioEngines.m[size]; e != nil {
		return e, nil
	}
	// nbio logs to stdout by default, which is a worker's frame stream.
	logging.SetLevel(logging.LevelNone)
	inline := func(f func()) { f() } // no goroutine pools: the close event runs where it happens
	e := nbhttp.NewEngine(nbhttp.Config{
		Name:                    "soak-nbio",
		ReadBufferSize:          size,
		ReadLimit:               math.MaxInt32, // a message's bound is MessageLengthLimit (ReadLimit of DialConfig)
		ReleaseWebsocketPayload: true,          // the payload is lent to the handler, then reused
		ServerExecutor:          inline,
		ClientExecutor:          inline,
	})
	// The other adapters turn their UTF-8 check off for speed (or have
	// none): nbio's would close with 1002 on a text message that is not.
	e.CheckUtf8 = func([]byte) bool { return true }
	if err := e.Start(); err != nil {
		return nil, fmt.Errorf("nbio engine: %w", err)
	}
	if nbioEngines.m == nil {
		nbioEngines.m = map[int]*nbhttp.Engine{}
	}
	nbioEngines.m[size] = e
	return e, nil
}

func (Nbio) Dial(ctx context.Context, cfg DialConfig) (Conn, error) {
	ctx, cancel := dialSetup(ctx, &cfg)
	defer cancel()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("nbio dial: %w", err)
	}
	port := map[string]string{"ws": "80", "wss": "443"}[u.Scheme]
	if port == "" {
		return nil, fmt.Errorf("nbio dial: unexpected url scheme %q", u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	engine, err := nbioEngine(cfg.ReadBufferSize)
	if err != nil {
		return nil, err
	}
	raw, err := cfg.NetDial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("nbio dial: %w", err)
	}
	conn := raw
	if u.Scheme == "wss" {
		if conn, err = tlsDial(func(context.Context, string, string) (net.Conn, error) { return raw, nil }, cfg.TLS)(ctx, "tcp", addr); err != nil {
			return nil, fmt.Errorf("nbio dial: %w", err)
		}
	}
	// The upgrade's I/O honours ctx: a cancelled ctx poisons the deadline.
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	resp, br, proto, pmd, err := nbioUpgrade(conn, u, cfg)
	if !stop() {
		_ = conn.Close()
		return nil, fmt.Errorf("nbio dial: %w", context.Cause(ctx))
	}
	if err != nil {
		_ = conn.Close()
		var he *HandshakeError
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, fmt.Errorf("nbio dial: %w", err)
	}
	_ = conn.SetDeadline(time.Time{})
	c := &nbioConn{engine: engine, exts: responseExtensions(resp), limit: max(cfg.ReadLimit, 0), bufSize: cfg.ReadBufferSize,
		done: make(chan struct{})}
	c.h = &c.early
	greeting := make([]byte, br.Buffered()) // what the server sent right after the 101: it may be the first frames
	_, _ = io.ReadFull(br, greeting)
	opts := c.options(pmd)
	sc, _ := raw.(*stampConn)
	var tcp *net.TCPConn
	if sc != nil && u.Scheme == "ws" {
		tcp, _ = sc.Conn.(*net.TCPConn)
	}
	if tcp == nil {
		c.ws = websocket.NewClientConn(opts, conn, proto, pmd, false)
	} else {
		// The descriptor moves to the poller (NBConn dups it and closes the
		// net.TCPConn); its reads stamp the dialer's clock and count its
		// wire bytes in onData, as stampConn's reads do.
		nbc, err := nbio.NBConn(tcp)
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("nbio dial: %w", err)
		}
		c.nbc, c.stamp = nbc, sc
		c.ws = websocket.NewClientConn(opts, nbc, proto, pmd, false)
	}
	c.ws.Engine = engine
	c.ws.Execute = nbhttp.SyncExecutor // the handler on the goroutine that read: the poller, or Run's
	if c.nbc != nil {
		// On the poller from now on, so that writes (which nbio finishes
		// from the poller when the socket is full, and whose deadline is the
		// poller's timer) work before Run; what it reads before Run is
		// handed to early, and from early to Run's handler. The greeting is
		// parsed first: the poller's reads wait for readMu.
		c.nbc.SetSession(c.ws)
		c.nbc.OnData(c.onData)
		c.readMu.Lock()
		defer c.readMu.Unlock()
		if _, err := engine.AddConn(c.nbc); err != nil {
			return nil, fmt.Errorf("nbio dial: %w", err)
		}
	}
	if err := c.ws.Parse(greeting); err != nil {
		c.parseFailed(err)
		_ = c.ws.Conn.Close()
		if !c.tooBig {
			return nil, fmt.Errorf("nbio dial: %w", err)
		}
		// The connection was made; its first message is over the limit:
		// the others' adapters report that from Run, and so does this one.
		c.greetTooBig = true
	}
	return c, nil
}

// nbioUpgrade writes the upgrade request on conn and reads the answer: the
// response, the reader holding what followed it, the subprotocol and whether
// permessage-deflate was accepted. A status other than 101 is a
// *HandshakeError.
func nbioUpgrade(conn net.Conn, u *url.URL, cfg DialConfig) (*http.Response, *bufio.Reader, string, bool, error) {
	var k [16]byte
	if _, err := rand.Read(k[:]); err != nil {
		return nil, nil, "", false, err
	}
	key := base64.StdEncoding.EncodeToString(k[:])
	ru := *u
	ru.Scheme = map[string]string{"ws": "http", "wss": "https"}[u.Scheme]
	req := &http.Request{Method: http.MethodGet, URL: &ru, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: cfg.Header.Clone(), Host: u.Host}
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Sec-WebSocket-Key", key)
	req.Header.Set("Sec-WebSocket-Version", "13")
	if len(cfg.Subprotocols) > 0 {
		req.Header.Set("Sec-WebSocket-Protocol", strings.Join(cfg.Subprotocols, ", "))
	}
	if cfg.Compression.Enabled() {
		// nbio inflates each message alone: no-context-takeover only (Capability).
		req.Header.Set(extensionsHeader, "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
	}
	if err := req.Write(conn); err != nil {
		return nil, nil, "", false, fmt.Errorf("upgrade request: %w", err)
	}
	br := bufio.NewReaderSize(conn, 4096)
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return nil, nil, "", false, fmt.Errorf("upgrade response: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		return nil, nil, "", false, handshakeError(resp)
	}
	h := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if !strings.EqualFold(resp.Header.Get("Upgrade"), "websocket") ||
		resp.Header.Get("Sec-WebSocket-Accept") != base64.StdEncoding.EncodeToString(h[:]) {
		return nil, nil, "", false, &HandshakeError{Status: resp.StatusCode, Header: resp.Header} // the 101 refused, as gorilla's
	}
	proto := resp.Header.Get("Sec-WebSocket-Protocol")
	if proto != "" && !slices.Contains(cfg.Subprotocols, proto) {
		return nil, nil, "", false, fmt.Errorf("upgrade response: subprotocol %q was not offered", proto)
	}
	pmd := false
	if ext := responseExtensions(resp); ext != "" {
		// As nbio's own dialer: deflate with both no-context-takeover
		// parameters, nothing else.
		if !cfg.Compression.Enabled() || !deflateNegotiated(ext) || !strings.Contains(ext, "server_no_context_takeover") ||
			!strings.Contains(ext, "client_no_context_takeover") {
			return nil, nil, "", false, fmt.Errorf("upgrade response: extensions %q: %w", ext, websocket.ErrInvalidCompression)
		}
		pmd = true
	}
	return resp, br, proto, pmd, nil
}

// nbioConn is one nbio connection: on the poller (nbc set) or in blocking
// mode.
type nbioConn struct {
	engine  *nbhttp.Engine
	ws      *websocket.Conn
	nbc     *nbio.Conn // the poller's; nil in blocking mode
	stamp   *stampConn // the dialer's connection, whose clock and count onData keeps
	exts    string
	limit   int64 // the inflated message bound (DialConfig.ReadLimit), 0: none
	bufSize int   // the blocking mode's read buffer
	h       Handler
	early   nbioEarly // the handler before Run
	cs      closeState
	rg      runGuard

	// readMu is held while the poller hands a read over: Run takes it to
	// give the events of early to its handler and put the handler in place,
	// and, once it saw the close, to set finished, so that no handler call
	// comes after Run returned.
	readMu   sync.Mutex
	finished bool

	done     chan struct{} // closed by the library's close event
	closeErr error         // the library's reason, set before done closes
	peer     *CloseError   // a close frame from the server
	tooBig   bool          // a message over the read limit
	corrupt  error         // a message that did not inflate
	// greetTooBig: a message over the read limit came with the handshake's
	// answer; the dial succeeded and Run reports the limit, as a read does.
	greetTooBig bool
}

// options are the connection's handlers and limits.
func (c *nbioConn) options(pmd bool) *websocket.Options {
	o := websocket.NewOptions()
	o.Engine = c.engine
	o.KeepaliveTime = 0 // nbio would set a read deadline per message; liveness is the harness's
	o.MessageLengthLimit = int(c.limit)
	if pmd {
		o.EnableCompression(true)
		// nbio bounds the wire size of a frame and the inflated size alike:
		// the wire bound lets through what inflates within the limit (the
		// handler checks that).
		o.MessageLengthLimit = int(compressedLimit(c.limit))
	}
	o.OnMessage(func(ws *websocket.Conn, t websocket.MessageType, p []byte) {
		if c.limit > 0 && int64(len(p)) > c.limit {
			c.tooBig = true
			_ = ws.WriteClose(closeMessageTooBig, "")
			_ = ws.Close()
			return
		}
		c.h.OnMessage(t == websocket.TextMessage, p)
	})
	o.SetPingHandler(func(ws *websocket.Conn, s string) {
		_ = ws.SetWriteDeadline(writeDeadline())
		p := []byte(s)
		_ = ws.WriteMessage(websocket.PongMessage, p)
		c.h.OnPing(p)
	})
	o.SetPongHandler(func(_ *websocket.Conn, s string) { c.h.OnPong([]byte(s)) })
	o.SetCloseHandler(func(ws *websocket.Conn, code int, reason string) {
		c.peer = &CloseError{Code: code, Reason: reason}
		_ = ws.SetWriteDeadline(time.Now().Add(closeTimeout))
		if code == closeNoStatus {
			_ = ws.WriteMessage(websocket.CloseMessage, nil)
			return
		}
		_ = ws.WriteClose(code, "") // the code echoed, as the other adapters do
	})
	o.OnClose(func(_ *websocket.Conn, err error) {
		c.closeErr = err
		close(c.done)
	})
	return o
}

// onData is the poller's read of the connection: the clock's stamp and the
// wire count, as a stampConn read does, then nbio's parser (which calls the
// handler), then the clock's hook: the poller hands over every message of a
// read before it reads again, so the end of onData is where a blocking
// reader would read next, and what the handler counted is published there
// (not at the next read, which may be long in coming).
func (c *nbioConn) onData(nbc *nbio.Conn, data []byte) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if c.finished {
		return
	}
	c.stamp.clock.Stamp(time.Now())
	c.stamp.wire.add(data)
	if err := c.ws.Parse(data); err != nil {
		c.parseFailed(err)
		_ = nbc.CloseWithError(err)
	}
	c.publish()
}

// publish runs the clock's BeforeRead hook.
func (c *nbioConn) publish() {
	if f := c.stamp.clock.before.Load(); f != nil {
		(*f)()
	}
}

// parseFailed notes why the parser refused what it read, and sends the
// close frame nbio does not: 1007 for a message that does not inflate.
func (c *nbioConn) parseFailed(err error) {
	switch {
	case errors.Is(err, websocket.ErrMessageTooLarge):
		c.tooBig = true // nbio sent the 1009
	case isCorruptDeflate(err):
		c.corrupt = err
		_ = c.ws.WriteClose(closeInvalidPayload, "corrupt deflate stream")
	}
}

func (c *nbioConn) Run(h Handler) error {
	if !c.rg.enter() {
		return errRunTwice
	}
	if c.greetTooBig {
		c.readMu.Lock()
		c.early.replay(h) // what came before the message over the limit
		c.finished = true
		c.readMu.Unlock()
		return c.mapError(nil)
	}
	if c.nbc == nil {
		c.early.replay(h)
		c.h = h
		return c.runBlocking()
	}
	c.readMu.Lock()
	c.early.replay(h)
	c.h = h
	c.publish()
	c.readMu.Unlock()
	<-c.done
	c.readMu.Lock()
	c.finished = true
	c.readMu.Unlock()
	_ = c.cs.shut(c.nbc.Close)
	return c.mapError(c.closeErr)
}

// runBlocking reads in nbio's blocking mode, on this goroutine.
func (c *nbioConn) runBlocking() error {
	c.early.replay(c.h)
	c.ws.HandleRead(c.bufSize)
	<-c.done
	_ = c.cs.shut(c.ws.Conn.Close)
	err := c.closeErr
	if err != nil {
		c.parseFailed(err)
	}
	return c.mapError(err)
}

func (c *nbioConn) mapError(err error) error {
	switch {
	case c.cs.closed():
		return fmt.Errorf("nbio read: %w", net.ErrClosed)
	case c.peer != nil:
		return c.peer
	case c.tooBig:
		return fmt.Errorf("nbio read: %w", ErrReadLimit)
	case c.corrupt != nil:
		return fmt.Errorf("nbio read: %w", c.corrupt)
	case err == nil || isEOF(err):
		return &CloseError{Code: closeAbnormal}
	}
	return fmt.Errorf("nbio read: %w", err)
}

// nbioEarly is a connection's handler until Run gives it one: it keeps
// what the library handed over (copies), for Run's handler.
type nbioEarly struct{ events []nbioEvent }

// nbioEvent is a message (text or binary), a ping or a pong.
type nbioEvent struct {
	kind    byte // 't', 'b', 'i' (ping), 'o' (pong)
	payload []byte
}

func (e *nbioEarly) OnMessage(text bool, p []byte) {
	e.events = append(e.events, nbioEvent{map[bool]byte{true: 't', false: 'b'}[text], bytes.Clone(p)})
}
func (e *nbioEarly) OnPing(p []byte) { e.events = append(e.events, nbioEvent{'i', bytes.Clone(p)}) }
func (e *nbioEarly) OnPong(p []byte) { e.events = append(e.events, nbioEvent{'o', bytes.Clone(p)}) }

// replay hands the events kept to h, in order, and forgets them.
func (e *nbioEarly) replay(h Handler) {
	for _, ev := range e.events {
		switch ev.kind {
		case 't', 'b':
			h.OnMessage(ev.kind == 't', ev.payload)
		case 'i':
			h.OnPing(ev.payload)
		case 'o':
			h.OnPong(ev.payload)
		}
	}
	e.events = nil
}

// Subprotocol returns the subprotocol the server answered.
func (c *nbioConn) Subprotocol() string { return c.ws.Subprotocol() }

// Extensions returns the server's Sec-WebSocket-Extensions answer.
func (c *nbioConn) Extensions() string { return c.exts }

func (c *nbioConn) WriteText(p []byte) error {
	_ = c.ws.SetWriteDeadline(writeDeadline())
	if err := c.ws.WriteMessage(websocket.TextMessage, p); err != nil {
		return fmt.Errorf("nbio write: %w", err)
	}
	return nil
}

func (c *nbioConn) Ping(payload []byte) error {
	_ = c.ws.SetWriteDeadline(writeDeadline())
	if err := c.ws.WriteMessage(websocket.PingMessage, payload); err != nil {
		return fmt.Errorf("nbio ping: %w", err)
	}
	return nil
}

func (c *nbioConn) Close(code int, reason string) error {
	if c.cs.begin() {
		_ = c.ws.SetWriteDeadline(time.Now().Add(closeTimeout))
		_ = c.ws.WriteClose(code, closeReason(reason))
	}
	return c.shut()
}

func (c *nbioConn) Abort() error {
	c.cs.begin()
	return c.shut()
}

func (c *nbioConn) shut() error {
	if err := c.cs.shut(c.ws.Conn.Close); err != nil {
		return fmt.Errorf("nbio close: %w", err)
	}
	return nil
}
