package transport

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// gorilla/websocket and fasthttp/websocket (a fork of it) have the same
// connection API over different types. wsConn is that API; familyConn is the
// one adapter connection both use, with the few package-level values that
// differ passed in as a family.

// wsConn is the method set shared by *gorilla/websocket.Conn and *fasthttp/websocket.Conn.
type wsConn interface {
	NextReader() (int, io.Reader, error)
	SetPingHandler(func(string) error)
	SetPongHandler(func(string) error)
	WriteControl(messageType int, data []byte, deadline time.Time) error
	WriteMessage(messageType int, data []byte) error
	SetWriteDeadline(t time.Time) error
	Close() error
	Subprotocol() string
}

// family holds what differs between the two packages.
type family struct {
	name         string
	errReadLimit error // the package's ErrReadLimit
	errCloseSent error // the package's ErrCloseSent
	// closeError unwraps the package's *CloseError.
	closeError func(err error) (code int, text string, ok bool)
	// formatClose is the package's FormatCloseMessage.
	formatClose func(code int, text string) []byte
}

// Message and control types: RFC 6455 opcodes, the same constants in both packages.
const (
	wsTextMessage  = 1
	wsCloseMessage = 8
	wsPingMessage  = 9
	wsPongMessage  = 10
)

type familyConn struct {
	f   *family
	ws  wsConn
	wmu sync.Mutex // the libraries allow one concurrent data writer
	cs  closeState
	rg  runGuard

	exts     string // the server's Sec-WebSocket-Extensions answer
	inflated int64  // with deflate: the read limit on a message's inflated size (0 = none)
}

// Subprotocol returns the subprotocol the server answered.
func (c *familyConn) Subprotocol() string { return c.ws.Subprotocol() }

// Extensions returns the server's Sec-WebSocket-Extensions answer.
func (c *familyConn) Extensions() string { return c.exts }

func (c *familyConn) Run(h Handler) error {
	if !c.rg.enter() {
		return errRunTwice
	}
	c.ws.SetPingHandler(func(s string) error {
		p := []byte(s)
		err := c.ws.WriteControl(wsPongMessage, p, writeDeadline())
		h.OnPing(p)
		if err != nil && !errors.Is(err, c.f.errCloseSent) {
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
			// Return on the first error: the libraries panic after 1000 reads
			// on a failed connection.
			return c.readError(err)
		}
		n, err := readMessage(r, &buf, c.inflated)
		if err != nil {
			switch {
			case errors.Is(err, errInflatedLimit):
				_ = c.ws.WriteControl(wsCloseMessage, c.f.formatClose(closeMessageTooBig, ""), time.Now().Add(closeTimeout))
			case isCorruptDeflate(err):
				_ = c.ws.WriteControl(wsCloseMessage, c.f.formatClose(closeInvalidPayload, "corrupt deflate stream"), time.Now().Add(closeTimeout))
			}
			return c.readError(err)
		}
		h.OnMessage(mt == wsTextMessage, buf[:n])
	}
}

// readError maps the read loop's error and closes the socket.
func (c *familyConn) readError(err error) error {
	err = c.mapError(err)
	_ = c.cs.shut(c.ws.Close)
	return err
}

func (c *familyConn) mapError(err error) error {
	switch {
	case c.cs.closed():
		return fmt.Errorf("%s read: %w", c.f.name, net.ErrClosed)
	case errors.Is(err, c.f.errReadLimit), errors.Is(err, errInflatedLimit):
		return fmt.Errorf("%s read: %w", c.f.name, ErrReadLimit)
	}
	if code, text, ok := c.f.closeError(err); ok {
		if code == closeAbnormal {
			text = ""
		}
		return &CloseError{Code: code, Reason: text}
	}
	if isEOF(err) {
		return &CloseError{Code: closeAbnormal}
	}
	return fmt.Errorf("%s read: %w", c.f.name, err)
}

func (c *familyConn) WriteText(p []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ws.SetWriteDeadline(writeDeadline()); err != nil {
		return fmt.Errorf("%s write: %w", c.f.name, err)
	}
	if err := c.ws.WriteMessage(wsTextMessage, p); err != nil {
		return fmt.Errorf("%s write: %w", c.f.name, err)
	}
	return nil
}

func (c *familyConn) Ping(payload []byte) error {
	if err := c.ws.WriteControl(wsPingMessage, payload, writeDeadline()); err != nil {
		return fmt.Errorf("%s ping: %w", c.f.name, err)
	}
	return nil
}

func (c *familyConn) Close(code int, reason string) error {
	if c.cs.begin() {
		msg := c.f.formatClose(code, closeReason(reason))
		_ = c.ws.WriteControl(wsCloseMessage, msg, time.Now().Add(closeTimeout))
	}
	return c.shut()
}

func (c *familyConn) Abort() error {
	c.cs.begin()
	return c.shut()
}

func (c *familyConn) shut() error {
	if err := c.cs.shut(c.ws.Close); err != nil {
		return fmt.Errorf("%s close: %w", c.f.name, err)
	}
	return nil
}
