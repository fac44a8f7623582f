package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/wssoak/wssoak/internal/wire"
)

const coderModule = "github.com/coder/websocket"

// pingTimeout bounds the goroutine that coder's blocking Ping needs.
const pingTimeout = 30 * time.Second

// Coder is the github.com/coder/websocket adapter.
//
// The library chooses the ping payload itself (a counter), so Ping ignores its argument
// and OnPong sees the library's payload.
type Coder struct{}

func (Coder) Name() string    { return "coder" }
func (Coder) Module() string  { return coderModule }
func (Coder) Version() string { return moduleVersion(coderModule) }

// Dial opens a connection through a private http.Transport whose DialContext is NetDial and
// whose Proxy is nil; TLS is done by net/http.
func (Coder) Dial(ctx context.Context, cfg DialConfig) (Conn, error) {
	ctx, cancel := dialSetup(ctx, &cfg)
	defer cancel()
	c := &coderConn{}
	c.life, c.endLife = context.WithCancel(context.Background())
	netDial := cfg.NetDial
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := netDial(ctx, network, addr)
			if err == nil {
				c.setRaw(conn)
			}
			return conn, err
		},
		TLSHandshakeTimeout: cfg.HandshakeTimeout,
		DisableCompression:  true,
		MaxIdleConns:        1,
	}
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS.Clone()
	}
	// wss: TLS done here (HTTP/1.1, as the upgrade needs), so that the frame
	// bytes are counted above it.
	tlsCfg := &tls.Config{NextProtos: []string{"http/1.1"}}
	if cfg.TLS != nil {
		tlsCfg = cfg.TLS.Clone()
		tlsCfg.NextProtos = []string{"http/1.1"}
	}
	tr.DialTLSContext = tlsDial(tr.DialContext, tlsCfg)
	// A rejected upgrade leaves its connection idle in tr; nothing else will use it.
	defer tr.CloseIdleConnections()
	ws, resp, err := websocket.Dial(ctx, cfg.URL, &websocket.DialOptions{
		HTTPClient:      &http.Client{Transport: tr},
		HTTPHeader:      cfg.Header,
		CompressionMode: coderCompression(cfg.Compression),
		Subprotocols:    cfg.Subprotocols,
		OnPingReceived: func(_ context.Context, p []byte) bool {
			if h := c.handler(); h != nil {
				h.OnPing(p)
			}
			return true // the library still answers with the same payload
		},
		OnPongReceived: func(_ context.Context, p []byte) {
			if h := c.handler(); h != nil {
				h.OnPong(p)
			}
		},
	})
	if err != nil {
		c.endLife()
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, handshakeError(resp)
		}
		if raw := c.rawConn(); raw != nil {
			_ = raw.Close()
		}
		return nil, fmt.Errorf("coder dial: %w", err)
	}
	// The library's limit counts inflated bytes, compressed or not.
	ws.SetReadLimit(readLimit(cfg.ReadLimit, -1))
	c.ws = ws
	c.exts = responseExtensions(resp)
	return c, nil
}

// coderCompression maps the setting to the library's mode (it does both).
func coderCompression(c wire.Compression) websocket.CompressionMode {
	switch c {
	case wire.CompressionOn:
		return websocket.CompressionContextTakeover
	case wire.CompressionNoContextTakeover:
		return websocket.CompressionNoContextTakeover
	}
	return websocket.CompressionDisabled
}

func (c *coderConn) Extensions() string { return c.exts }

type coderConn struct {
	ws   *websocket.Conn
	cs   closeState
	rg   runGuard
	exts string // the server's Sec-WebSocket-Extensions answer

	life    context.Context // cancelled when the connection is shut: ends pending pings
	endLife context.CancelFunc

	mu  sync.Mutex
	raw net.Conn // the TCP connection, captured in DialContext (the library hides it)
	h   Handler  // set by Run; ping and pong callbacks run in Run's goroutine
}

// Subprotocol returns the subprotocol the server answered.
func (c *coderConn) Subprotocol() string { return c.ws.Subprotocol() }

func (c *coderConn) setRaw(conn net.Conn) {
	c.mu.Lock()
	c.raw = conn
	c.mu.Unlock()
}

func (c *coderConn) rawConn() net.Conn {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.raw
}

func (c *coderConn) handler() Handler {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.h
}

func (c *coderConn) Run(h Handler) error {
	if !c.rg.enter() {
		return errRunTwice
	}
	c.mu.Lock()
	c.h = h
	c.mu.Unlock()
	buf := make([]byte, initialMessageBuffer)
	// context.Background: a cancellable context costs a timer per frame and its expiry
	// closes the connection; liveness belongs to the harness (Abort).
	ctx := context.Background()
	for {
		mt, r, err := c.ws.Reader(ctx)
		if err != nil {
			return c.readError(err)
		}
		n, err := readMessage(r, &buf, 0)
		if err != nil {
			return c.readError(err)
		}
		h.OnMessage(mt == websocket.MessageText, buf[:n])
	}
}

// readError maps the read loop's error and shuts the connection, which also
// ends any ping still waiting for its pong.
func (c *coderConn) readError(err error) error {
	err = c.mapError(err)
	_ = c.shut()
	return err
}

func (c *coderConn) mapError(err error) error {
	var ce websocket.CloseError
	switch {
	case c.cs.closed():
		return fmt.Errorf("coder read: %w", net.ErrClosed)
	case errors.Is(err, websocket.ErrMessageTooBig):
		return fmt.Errorf("coder read: %w", ErrReadLimit)
	case errors.As(err, &ce):
		return &CloseError{Code: int(ce.Code), Reason: ce.Reason}
	case isEOF(err):
		return &CloseError{Code: closeAbnormal}
	}
	return fmt.Errorf("coder read: %w", err)
}

func (c *coderConn) WriteText(p []byte) error {
	ctx, cancel := context.WithDeadline(context.Background(), writeDeadline())
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, p); err != nil {
		return fmt.Errorf("coder write: %w", err)
	}
	return nil
}

// Ping sends a ping without waiting for the pong. The library only offers a blocking Ping
// with its own payload, so it runs in a goroutine that ends with the pong, pingTimeout, or
// the connection being shut (the library's own close signal does not fire when we close
// the TCP connection ourselves).
func (c *coderConn) Ping([]byte) error {
	if c.cs.closed() {
		return fmt.Errorf("coder ping: %w", net.ErrClosed)
	}
	go func() {
		ctx, cancel := context.WithTimeout(c.life, pingTimeout)
		defer cancel()
		_ = c.ws.Ping(ctx)
	}()
	return nil
}

// Close writes the close frame and waits for the peer's close for at most closeTimeout,
// then closes the TCP connection.
func (c *coderConn) Close(code int, reason string) error {
	if !c.cs.begin() {
		return nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = c.ws.Close(websocket.StatusCode(code), closeReason(reason))
	}()
	t := time.NewTimer(closeTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
	err := c.shut()
	<-done // returns promptly once the TCP connection is gone
	return err
}

func (c *coderConn) Abort() error {
	c.cs.begin()
	err := c.shut()
	_ = c.ws.CloseNow() // release the library's state; the socket is already closed
	return err
}

func (c *coderConn) shut() error {
	c.endLife()
	raw := c.rawConn()
	if raw == nil {
		return c.ws.CloseNow()
	}
	if err := c.cs.shut(raw.Close); err != nil {
		return fmt.Errorf("coder close: %w", err)
	}
	return nil
}
