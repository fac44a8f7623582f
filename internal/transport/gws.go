package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/lxzan/gws"

	"github.com/wssoak/wssoak/internal/wire"
)

const gwsModule = "github.com/lxzan/gws"

// gwsBufferThreshold is the largest message buffer gws pools (its default, 256 KiB, makes
// every larger message a fresh allocation).
const gwsBufferThreshold = 1 << 20

var gwsInit sync.Once

// Gws is the github.com/lxzan/gws adapter. The adapter dials (NetDial) and does TLS
// itself, then hands the connection to gws.NewClientFromConn.
type Gws struct{}

func (Gws) Name() string    { return "gws" }
func (Gws) Module() string  { return gwsModule }
func (Gws) Version() string { return moduleVersion(gwsModule) }

func (Gws) Dial(ctx context.Context, cfg DialConfig) (Conn, error) {
	gwsInit.Do(func() { gws.SetBufferThreshold(gwsBufferThreshold) })
	ctx, cancel := dialSetup(ctx, &cfg)
	defer cancel()
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("gws dial: %w", err)
	}
	var port string
	switch u.Scheme {
	case "ws":
		port = "80"
	case "wss":
		port = "443"
	default:
		return nil, fmt.Errorf("gws dial: unexpected url scheme %q", u.Scheme)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), port)
	}
	conn, err := cfg.NetDial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("gws dial: %w", err)
	}
	if u.Scheme == "wss" {
		tc := &tls.Config{}
		if cfg.TLS != nil {
			tc = cfg.TLS.Clone()
		}
		if tc.ServerName == "" {
			tc.ServerName = u.Hostname()
		}
		tlsConn := tls.Client(conn, tc)
		if err := tlsConn.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("gws dial: tls: %w", err)
		}
		conn = countAbove(tlsConn, conn) // the frame bytes counted above TLS
	}
	timeout := cfg.HandshakeTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	if timeout <= 0 {
		_ = conn.Close()
		return nil, fmt.Errorf("gws dial: %w", context.DeadlineExceeded)
	}
	// The library takes no context: a cancelled ctx poisons the deadline of the conn,
	// which fails the handshake's I/O.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	c := &gwsConn{}
	header := cfg.Header.Clone()
	if header == nil {
		header = http.Header{}
	}
	if len(cfg.Subprotocols) > 0 {
		header.Set("Sec-WebSocket-Protocol", strings.Join(cfg.Subprotocols, ", "))
	}
	ws, resp, err := gws.NewClientFromConn(&c.ev, &gws.ClientOption{
		Addr:               cfg.URL,
		RequestHeader:      header,
		HandshakeTimeout:   timeout,
		ReadMaxPayloadSize: int(readLimit(cfg.ReadLimit, math.MaxInt32)),
		ReadBufferSize:     cfg.ReadBufferSize,
		CheckUtf8Enabled:   false,
		// The library does both modes; its read limit counts inflated bytes.
		PermessageDeflate: gws.PermessageDeflate{
			Enabled:               cfg.Compression.Enabled(),
			ServerContextTakeover: cfg.Compression == wire.CompressionOn,
			ClientContextTakeover: cfg.Compression == wire.CompressionOn,
		},
	}, conn)
	if !stop() {
		_ = conn.Close()
		return nil, fmt.Errorf("gws dial: %w", context.Cause(ctx))
	}
	if err != nil {
		// NewClientFromConn closed conn; what the body had is still in the reader.
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, handshakeError(resp)
		}
		return nil, fmt.Errorf("gws dial: %w", err)
	}
	c.ws = ws
	c.ev.conn = c
	c.exts = responseExtensions(resp)
	return c, nil
}

// Subprotocol returns the subprotocol the server answered.
func (c *gwsConn) Subprotocol() string { return c.ws.SubProtocol() }

// Extensions returns the server's Sec-WebSocket-Extensions answer.
func (c *gwsConn) Extensions() string { return c.exts }

type gwsConn struct {
	ws   *gws.Conn
	ev   gwsEvents
	cs   closeState
	rg   runGuard
	exts string // the server's Sec-WebSocket-Extensions answer
}

// gwsEvents bridges gws events to a Handler. All calls come from ReadLoop, in Run.
type gwsEvents struct {
	conn *gwsConn
	h    Handler
	err  error // from OnClose
}

func (e *gwsEvents) OnOpen(*gws.Conn) {}

func (e *gwsEvents) OnClose(_ *gws.Conn, err error) { e.err = err }

func (e *gwsEvents) OnPing(socket *gws.Conn, payload []byte) {
	// gws's built-in handler answers with an empty pong; echo the payload instead.
	// gws has no per-write deadline: set one, or the deadline left by an
	// earlier WriteText or Ping fails this pong once it has passed.
	_ = socket.SetWriteDeadline(writeDeadline())
	_ = socket.WritePong(payload)
	e.h.OnPing(payload)
}

func (e *gwsEvents) OnPong(_ *gws.Conn, payload []byte) { e.h.OnPong(payload) }

func (e *gwsEvents) OnMessage(_ *gws.Conn, msg *gws.Message) {
	e.h.OnMessage(msg.Opcode == gws.OpcodeText, msg.Bytes())
	_ = msg.Close() // back to the pool
}

func (c *gwsConn) Run(h Handler) error {
	if !c.rg.enter() {
		return errRunTwice
	}
	c.ev.h = h
	if err := c.readLoop(); err != nil {
		_ = c.cs.shut(c.ws.NetConn().Close)
		return err
	}
	_ = c.cs.shut(c.ws.NetConn().Close)
	return c.mapError(c.ev.err)
}

// readLoop runs gws's read loop (it returns after OnClose; gws has closed
// the socket). A frame that makes gws panic is the server's protocol error,
// returned as such, not a crash of the worker: gws v1.8.9 slices its buffer
// by a 64-bit payload length read as a negative int when the length's top
// bit is set, which RFC 6455 5.2 forbids (TestHostileLength).
func (c *gwsConn) readLoop() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("gws read: the library panicked on a frame from the server (a protocol error of the server): %v", p)
		}
	}()
	c.ws.ReadLoop()
	return nil
}

// gwsStatus is gws's internal close status type (internal.StatusCode), seen through its method.
type gwsStatus interface{ Uint16() uint16 }

func (c *gwsConn) mapError(err error) error {
	var (
		ce *gws.CloseError
		st gwsStatus
	)
	switch {
	case c.cs.closed():
		return fmt.Errorf("gws read: %w", net.ErrClosed)
	case errors.As(err, &ce):
		code := int(ce.Code)
		if code == 0 {
			code = closeNoStatus
		}
		return &CloseError{Code: code, Reason: string(ce.Reason)}
	case errors.As(err, &st) && st.Uint16() == closeMessageTooBig:
		return fmt.Errorf("gws read: %w", ErrReadLimit)
	case isEOF(err):
		return &CloseError{Code: closeAbnormal}
	case err == nil:
		return fmt.Errorf("gws read: %w", net.ErrClosed)
	}
	return fmt.Errorf("gws read: %w", err)
}

func (c *gwsConn) WriteText(p []byte) error {
	_ = c.ws.SetWriteDeadline(writeDeadline())
	if err := c.ws.WriteMessage(gws.OpcodeText, p); err != nil {
		return fmt.Errorf("gws write: %w", err)
	}
	return nil
}

func (c *gwsConn) Ping(payload []byte) error {
	_ = c.ws.SetWriteDeadline(writeDeadline())
	if err := c.ws.WritePing(payload); err != nil {
		return fmt.Errorf("gws ping: %w", err)
	}
	return nil
}

func (c *gwsConn) Close(code int, reason string) error {
	if c.cs.begin() {
		_ = c.ws.SetWriteDeadline(time.Now().Add(closeTimeout))
		_ = c.ws.WriteClose(uint16(code), []byte(closeReason(reason))) // also closes the socket
	}
	return c.shut()
}

func (c *gwsConn) Abort() error {
	c.cs.begin()
	return c.shut()
}

func (c *gwsConn) shut() error {
	if err := c.cs.shut(c.ws.NetConn().Close); err != nil {
		return fmt.Errorf("gws close: %w", err)
	}
	return nil
}
