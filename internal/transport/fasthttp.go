package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/fasthttp/websocket"
)

const fasthttpModule = "github.com/fasthttp/websocket"

// Fasthttp is the github.com/fasthttp/websocket adapter.
type Fasthttp struct{}

func (Fasthttp) Name() string    { return "fasthttp" }
func (Fasthttp) Module() string  { return fasthttpModule }
func (Fasthttp) Version() string { return moduleVersion(fasthttpModule) }

// Dial opens a connection. NetDial makes the TCP connection, TLS is done by the library,
// no proxy is used (not even from the environment).
func (Fasthttp) Dial(ctx context.Context, cfg DialConfig) (Conn, error) {
	ctx, cancel := dialSetup(ctx, &cfg)
	defer cancel()
	// The library applies ctx's deadline to the connection but ignores its cancellation
	// once connected; the guard makes cancellation fail the handshake's I/O.
	var guard cancelGuard
	d := websocket.Dialer{
		NetDialContext:   guard.wrap(ctx, cfg.NetDial),
		Proxy:            nil,
		HandshakeTimeout: cfg.HandshakeTimeout,
		ReadBufferSize:   cfg.ReadBufferSize,
	}
	if cfg.TLS != nil {
		d.TLSClientConfig = cfg.TLS.Clone()
	}
	ws, resp, err := d.DialContext(ctx, cfg.URL, cfg.Header)
	if !guard.release() {
		if err == nil {
			_ = ws.Close()
		}
		return nil, fmt.Errorf("fasthttp dial: %w", context.Cause(ctx))
	}
	if err != nil {
		if errors.Is(err, websocket.ErrBadHandshake) && resp != nil {
			return nil, handshakeError(resp)
		}
		return nil, fmt.Errorf("fasthttp dial: %w", err)
	}
	if cfg.ReadLimit > 0 {
		ws.SetReadLimit(cfg.ReadLimit)
	}
	return &fasthttpConn{ws: ws}, nil
}

type fasthttpConn struct {
	ws  *websocket.Conn
	wmu sync.Mutex // the library allows one concurrent data writer
	cs  closeState
	rg  runGuard
}

func (c *fasthttpConn) Run(h Handler) error {
	if !c.rg.enter() {
		return errRunTwice
	}
	c.ws.SetPingHandler(func(s string) error {
		p := []byte(s)
		err := c.ws.WriteControl(websocket.PongMessage, p, writeDeadline())
		h.OnPing(p)
		if err != nil && !errors.Is(err, websocket.ErrCloseSent) {
			var ne net.Error
			if !errors.As(err, &ne) {
				return err
			}
		}
		return nil // a failed pong shows up as a read error soon enough
	})
	c.ws.SetPongHandler(func(s string) error {
		h.OnPong([]byte(s))
		return nil
	})
	buf := make([]byte, initialMessageBuffer)
	for {
		mt, r, err := c.ws.NextReader()
		if err != nil {
			// Return on the first error: the library panics after 1000 reads
			// on a failed connection.
			return c.readError(err)
		}
		n, err := readMessage(r, &buf)
		if err != nil {
			return c.readError(err)
		}
		h.OnMessage(mt == websocket.TextMessage, buf[:n])
	}
}

// readError maps the read loop's error and closes the socket.
func (c *fasthttpConn) readError(err error) error {
	err = c.mapError(err)
	_ = c.cs.shut(c.ws.Close)
	return err
}

func (c *fasthttpConn) mapError(err error) error {
	var ce *websocket.CloseError
	switch {
	case c.cs.closed():
		return fmt.Errorf("fasthttp read: %w", net.ErrClosed)
	case errors.Is(err, websocket.ErrReadLimit):
		return fmt.Errorf("fasthttp read: %w", ErrReadLimit)
	case errors.As(err, &ce):
		text := ce.Text
		if ce.Code == websocket.CloseAbnormalClosure {
			text = ""
		}
		return &CloseError{Code: ce.Code, Reason: text}
	case isEOF(err):
		return &CloseError{Code: closeAbnormal}
	}
	return fmt.Errorf("fasthttp read: %w", err)
}

func (c *fasthttpConn) WriteText(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.SetWriteDeadline(writeDeadline()); err != nil {
		return fmt.Errorf("fasthttp write: %w", err)
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, p); err != nil {
		return fmt.Errorf("fasthttp write: %w", err)
	}
	return nil
}

func (c *fasthttpConn) Ping(payload []byte) error {
	if err := c.ws.WriteControl(websocket.PingMessage, payload, writeDeadline()); err != nil {
		return fmt.Errorf("fasthttp ping: %w", err)
	}
	return nil
}

func (c *fasthttpConn) Close(code int, reason string) error {
	if c.cs.begin() {
		msg := websocket.FormatCloseMessage(code, closeReason(reason))
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeTimeout))
	}
	return c.shut()
}

func (c *fasthttpConn) Abort() error {
	c.cs.begin()
	return c.shut()
}

func (c *fasthttpConn) shut() error {
	if err := c.cs.shut(c.ws.Close); err != nil {
		return fmt.Errorf("fasthttp close: %w", err)
	}
	return nil
}
