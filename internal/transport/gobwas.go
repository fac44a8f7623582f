package transport

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"
	"github.com/gobwas/ws/wsutil"
)

const gobwasModule = "github.com/gobwas/ws"

// Gobwas is the github.com/gobwas/ws adapter: a wsutil.Reader over the adapter's own
// bufio.Reader, control frames answered by the adapter, all writes through one mutex.
type Gobwas struct{}

func (Gobwas) Name() string    { return "gobwas" }
func (Gobwas) Module() string  { return gobwasModule }
func (Gobwas) Version() string { return moduleVersion(gobwasModule) }

// Dial opens a connection. NetDial makes the TCP connection, TLS is done by the library.
func (Gobwas) Dial(ctx context.Context, cfg DialConfig) (Conn, error) {
	ctx, cancel := dialSetup(ctx, &cfg)
	defer cancel()
	var rejected *HandshakeError
	d := ws.Dialer{
		Timeout: cfg.HandshakeTimeout,
		NetDial: cfg.NetDial,
		// The raw response is only readable during the callback.
		OnStatusError: func(status int, _ []byte, resp io.Reader) {
			rejected = &HandshakeError{Status: status, Header: http.Header{}}
			r, err := http.ReadResponse(bufio.NewReader(resp), nil)
			if err != nil {
				return
			}
			defer r.Body.Close()
			rejected = handshakeError(r)
		},
	}
	if cfg.TLS != nil {
		d.TLSConfig = cfg.TLS.Clone()
	}
	// wss: the frame bytes counted above TLS.
	d.WrapConn = func(c net.Conn) net.Conn {
		if tc, ok := c.(*tls.Conn); ok {
			return countAbove(tc, tc.NetConn())
		}
		return c
	}
	if len(cfg.Header) > 0 {
		d.Header = ws.HandshakeHeaderHTTP(cfg.Header)
	}
	d.Protocols = cfg.Subprotocols
	if cfg.Compression.Enabled() {
		// wsflate has no sliding-window reader: no-context-takeover only (Capability).
		d.Extensions = []httphead.Option{wsflate.Parameters{ServerNoContextTakeover: true, ClientNoContextTakeover: true}.Option()}
	}
	conn, br, hs, err := d.Dial(ctx, cfg.URL)
	if err != nil {
		var se ws.StatusError
		if errors.As(err, &se) {
			if rejected == nil {
				rejected = &HandshakeError{Status: int(se), Header: http.Header{}}
			}
			return nil, rejected
		}
		return nil, fmt.Errorf("gobwas dial: %w", err)
	}
	// br holds whatever the server sent right after the 101 (it may be the first
	// frames): read that before the socket, and then the socket itself. br
	// reads the socket too once drained: left in the path it would go on
	// making every read of the connection its own size (4 KiB), whatever
	// ReadBufferSize says.
	var src io.Reader = conn
	if br != nil {
		src = io.MultiReader(io.LimitReader(br, int64(br.Buffered())), conn)
	}
	c := &gobwasConn{
		conn:  conn,
		br:    bufio.NewReaderSize(src, cfg.ReadBufferSize),
		limit: max(cfg.ReadLimit, 0),
		proto: hs.Protocol,
	}
	// The library parses the answer (and refuses one it did not offer) without
	// keeping its text: write the accepted options back.
	var b strings.Builder
	_, _ = httphead.WriteOptions(&b, hs.Extensions)
	c.exts = b.String()
	for _, o := range hs.Extensions {
		if string(o.Name) == wsflate.ExtensionName {
			c.pmd = true
		}
	}
	return c, nil
}

func (c *gobwasConn) Extensions() string { return c.exts }

// Subprotocol returns the subprotocol the server answered.
func (c *gobwasConn) Subprotocol() string { return c.proto }

type gobwasConn struct {
	conn  net.Conn
	br    *bufio.Reader
	limit int64
	proto string
	exts  string // the server's Sec-WebSocket-Extensions answer
	pmd   bool   // permessage-deflate negotiated
	cs    closeState
	rg    runGuard

	wmu sync.Mutex   // serializes every frame write (data, ping, pong, close)
	wb  bytes.Buffer // frame being written, reused
	hdr [ws.MaxHeaderSize]byte
	ctl [maxControlPayload]byte // control payload being read; used by Run only
}

// errPeerClosed carries a received close frame from the control handler to Run.
type errPeerClosed struct{ ce *CloseError }

func (e errPeerClosed) Error() string { return e.ce.Error() }

func (c *gobwasConn) Run(h Handler) error {
	if !c.rg.enter() {
		return errRunTwice
	}
	rd := &wsutil.Reader{
		Source:         c.br,
		State:          ws.StateClientSide,
		CheckUTF8:      false,
		MaxMessageSize: c.limit,
		// Control frames inside a fragmented message.
		OnIntermediate: func(hdr ws.Header, r io.Reader) error { return c.control(h, hdr, r) },
	}
	var (
		msg      wsflate.MessageState // RSV1 of the message being read
		fr       *wsflate.Reader
		inflated int64 // the limit on an inflated message; wsutil's counts wire bytes
	)
	if c.pmd {
		rd.State |= ws.StateExtended
		rd.Extensions = []wsutil.RecvExtension{&msg}
		rd.MaxMessageSize = compressedLimit(c.limit)
		fr = wsflate.NewReader(nil, func(r io.Reader) wsflate.Decompressor {
			f := &inflater{}
			f.Reset(r)
			return f
		})
		inflated = c.limit
	}
	buf := make([]byte, initialMessageBuffer)
	for {
		hdr, err := rd.NextFrame()
		if err != nil {
			return c.finish(err)
		}
		if hdr.OpCode.IsControl() {
			if err := c.control(h, hdr, rd); err != nil {
				return c.finish(err)
			}
			continue
		}
		var src io.Reader = rd
		if msg.IsCompressed() {
			fr.Reset(rd)
			src = fr
		}
		n, err := readMessage(src, &buf, inflated)
		if err != nil {
			return c.finish(err)
		}
		h.OnMessage(hdr.OpCode == ws.OpText, buf[:n])
	}
}

// control handles one control frame whose payload is readable from r.
func (c *gobwasConn) control(h Handler, hdr ws.Header, r io.Reader) error {
	p := c.ctl[:hdr.Length] // CheckHeader keeps control payloads ≤ 125 bytes
	if _, err := io.ReadFull(r, p); err != nil {
		return err
	}
	switch hdr.OpCode {
	case ws.OpPing:
		err := c.writeFrame(ws.OpPong, p, writeDeadline())
		h.OnPing(p)
		if err != nil && !c.cs.closed() {
			return fmt.Errorf("pong: %w", err)
		}
	case ws.OpPong:
		h.OnPong(p)
	case ws.OpClose:
		code, reason := ws.ParseCloseFrameData(p)
		ce := &CloseError{Code: int(code), Reason: reason}
		var echo []byte
		if code == 0 {
			ce.Code = closeNoStatus
		} else {
			echo = p[:2]
		}
		_ = c.writeFrame(ws.OpClose, echo, time.Now().Add(closeTimeout))
		return errPeerClosed{ce}
	}
	return nil
}

// finish maps the read loop's error and closes the socket.
func (c *gobwasConn) finish(err error) error {
	var pc errPeerClosed
	switch {
	case c.cs.closed():
		err = fmt.Errorf("gobwas read: %w", net.ErrClosed)
	case errors.As(err, &pc):
		err = pc.ce
	case errors.Is(err, wsutil.ErrMessageTooLarge), errors.Is(err, errInflatedLimit):
		body := ws.NewCloseFrameBody(closeMessageTooBig, "")
		_ = c.writeFrame(ws.OpClose, body, time.Now().Add(closeTimeout))
		err = fmt.Errorf("gobwas read: %w", ErrReadLimit)
	case isEOF(err):
		err = &CloseError{Code: closeAbnormal}
	case isCorruptDeflate(err):
		body := ws.NewCloseFrameBody(closeInvalidPayload, "corrupt deflate stream")
		_ = c.writeFrame(ws.OpClose, body, time.Now().Add(closeTimeout))
		err = fmt.Errorf("gobwas read: %w", err)
	default:
		err = fmt.Errorf("gobwas read: %w", err)
	}
	_ = c.cs.shut(c.conn.Close)
	return err
}

// writeFrame writes one masked frame in a single Write.
func (c *gobwasConn) writeFrame(op ws.OpCode, p []byte, deadline time.Time) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if op != ws.OpClose && c.cs.closed() {
		return net.ErrClosed
	}
	h := ws.Header{Fin: true, OpCode: op, Masked: true, Mask: ws.NewMask(), Length: int64(len(p))}
	c.wb.Reset()
	if err := ws.WriteHeaderBuffer(&c.wb, h, c.hdr[:]); err != nil {
		return err
	}
	start := c.wb.Len()
	c.wb.Write(p)
	ws.Cipher(c.wb.Bytes()[start:], h.Mask, 0)
	if err := c.conn.SetWriteDeadline(deadline); err != nil {
		return err
	}
	_, err := c.conn.Write(c.wb.Bytes())
	if c.wb.Cap() > 64<<10 {
		c.wb = bytes.Buffer{} // do not keep a large write buffer
	}
	return err
}

func (c *gobwasConn) WriteText(p []byte) error {
	if err := c.writeFrame(ws.OpText, p, writeDeadline()); err != nil {
		return fmt.Errorf("gobwas write: %w", err)
	}
	return nil
}

func (c *gobwasConn) Ping(payload []byte) error {
	if len(payload) > maxControlPayload {
		return fmt.Errorf("gobwas ping: payload of %d bytes exceeds %d", len(payload), maxControlPayload)
	}
	if err := c.writeFrame(ws.OpPing, payload, writeDeadline()); err != nil {
		return fmt.Errorf("gobwas ping: %w", err)
	}
	return nil
}

func (c *gobwasConn) Close(code int, reason string) error {
	if c.cs.begin() {
		deadline := time.Now().Add(closeTimeout)
		_ = c.conn.SetWriteDeadline(deadline) // unblocks a stuck writer holding the mutex
		body := ws.NewCloseFrameBody(ws.StatusCode(code), closeReason(reason))
		_ = c.writeFrame(ws.OpClose, body, deadline)
	}
	return c.shut()
}

func (c *gobwasConn) Abort() error {
	c.cs.begin()
	return c.shut()
}

func (c *gobwasConn) shut() error {
	if err := c.cs.shut(c.conn.Close); err != nil {
		return fmt.Errorf("gobwas close: %w", err)
	}
	return nil
}
