package transport

import (
	"context"
	"errors"
	"fmt"

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
		Subprotocols:     cfg.Subprotocols,
		// The library offers no-context-takeover only (Capability).
		EnableCompression: cfg.Compression.Enabled(),
	}
	if cfg.TLS != nil {
		d.TLSClientConfig = cfg.TLS.Clone()
	}
	// wss: TLS done here, so that the frame bytes are counted above it.
	d.NetDialTLSContext = tlsDial(d.NetDialContext, cfg.TLS)
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
	fc := &familyConn{f: &fasthttpFamily, ws: ws, exts: responseExtensions(resp)}
	if cfg.ReadLimit > 0 {
		// The library's limit counts wire (compressed) bytes: with deflate the
		// adapter bounds the inflated size itself.
		ws.SetReadLimit(cfg.ReadLimit)
		if deflateNegotiated(fc.exts) {
			ws.SetReadLimit(compressedLimit(cfg.ReadLimit))
			fc.inflated = cfg.ReadLimit
		}
	}
	return fc, nil
}

var fasthttpFamily = family{
	name:         "fasthttp",
	errReadLimit: websocket.ErrReadLimit,
	errCloseSent: websocket.ErrCloseSent,
	closeError: func(err error) (int, string, bool) {
		var ce *websocket.CloseError
		if errors.As(err, &ce) {
			return ce.Code, ce.Text, true
		}
		return 0, "", false
	},
	formatClose: websocket.FormatCloseMessage,
}
