package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

const gorillaModule = "github.com/gorilla/websocket"

// Gorilla is the github.com/gorilla/websocket adapter.
type Gorilla struct{}

func (Gorilla) Name() string    { return "gorilla" }
func (Gorilla) Module() string  { return gorillaModule }
func (Gorilla) Version() string { return moduleVersion(gorillaModule) }

// Dial opens a connection. NetDial makes the TCP connection, TLS is done by the library,
// no proxy is used (not even from the environment).
func (Gorilla) Dial(ctx context.Context, cfg DialConfig) (Conn, error) {
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
		return nil, fmt.Errorf("gorilla dial: %w", context.Cause(ctx))
	}
	if err != nil {
		if errors.Is(err, websocket.ErrBadHandshake) && resp != nil {
			return nil, handshakeError(resp)
		}
		return nil, fmt.Errorf("gorilla dial: %w", err)
	}
	if cfg.ReadLimit > 0 {
		ws.SetReadLimit(cfg.ReadLimit)
	}
	return &gorillaConn{ws: ws}, nil
}

type gorillaConn struct {
	ws  *websocket.Conn
	wmu sync.Mutex // the library allows one concurrent data writer
	cs  closeState
	rg  runGuard
}

func (c *gorillaConn) Run(h Handler) error {
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
func (c *gorillaConn) readError(err error) error {
	err = c.mapError(err)
	_ = c.cs.shut(c.ws.Close)
	return err
}

func (c *gorillaConn) mapError(err error) error {
	var ce *websocket.CloseError
	switch {
	case c.cs.closed():
		return fmt.Errorf("gorilla read: %w", net.ErrClosed)
	case errors.Is(err, websocket.ErrReadLimit):
		return fmt.Errorf("gorilla read: %w", ErrReadLimit)
	case errors.As(err, &ce):
		text := ce.Text
		if ce.Code == websocket.CloseAbnormalClosure {
			text = ""
		}
		return &CloseError{Code: ce.Code, Reason: text}
	case isEOF(err):
		return &CloseError{Code: closeAbnormal}
	}
	return fmt.Errorf("gorilla read: %w", err)
}

func (c *gorillaConn) WriteText(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.SetWriteDeadline(writeDeadline()); err != nil {
		return fmt.Errorf("gorilla write: %w", err)
	}
	if err := c.ws.WriteMessage(websocket.TextMessage, p); err != nil {
		return fmt.Errorf("gorilla write: %w", err)
	}
	return nil
}

func (c *gorillaConn) Ping(payload []byte) error {
	if err := c.ws.WriteControl(websocket.PingMessage, payload, writeDeadline()); err != nil {
		return fmt.Errorf("gorilla ping: %w", err)
	}
	return nil
}

func (c *gorillaConn) Close(code int, reason string) error {
	if c.cs.begin() {
		msg := websocket.FormatCloseMessage(code, closeReason(reason))
		_ = c.ws.WriteControl(websocket.CloseMessage, msg, time.Now().Add(closeTimeout))
	}
	return c.shut()
}

func (c *gorillaConn) Abort() error {
	c.cs.begin()
	return c.shut()
}

func (c *gorillaConn) shut() error {
	if err := c.cs.shut(c.ws.Close); err != nil {
		return fmt.Errorf("gorilla close: %w", err)
	}
	return nil
}
