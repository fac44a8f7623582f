// Package transport puts the five Go WebSocket client libraries behind one
// interface. The harness owns dialing (one shared dialer), liveness, reconnects
// and accounting; an adapter owns only framing. Payloads are lent to the
// handler and valid until it returns, so no library is forced to allocate.
package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// DialConfig is what every adapter needs to open one connection.
type DialConfig struct {
	URL              string
	Header           http.Header
	NetDial          func(ctx context.Context, network, addr string) (net.Conn, error) // proxy and socket options inside
	TLS              *tls.Config                                                       // cloned by the adapter; nil = defaults
	HandshakeTimeout time.Duration                                                     // 0 = 10 s; bounds TCP connect + TLS + upgrade
	ReadLimit        int64                                                             // max message size in bytes; 0 = unlimited
	ReadBufferSize   int                                                               // 0 = 64 KiB; coder has a fixed 4 KiB reader and ignores it
	// Subprotocols are offered in Sec-WebSocket-Protocol, in order of
	// preference; none = no header. What the server chose is the Conn's
	// Subprotocol (see Negotiated).
	Subprotocols []string
	// Compression is the permessage-deflate asked for, as far as the library
	// can (see Capability); Conn.Extensions tells what the server answered.
	// ReadLimit bounds a compressed message by its inflated size.
	Compression wire.Compression
}

// Negotiated is implemented by every adapter's Conn: Subprotocol is the
// Sec-WebSocket-Protocol the server answered, "" when it answered none.
// (gws alone fails the dial when subprotocols were offered and none came
// back: the library checks it.)
type Negotiated interface {
	Subprotocol() string
}

// SubprotocolOf returns c's negotiated subprotocol, "" if c cannot say.
func SubprotocolOf(c Conn) string {
	if n, ok := c.(Negotiated); ok {
		return n.Subprotocol()
	}
	return ""
}

// The Dial context bounds the whole dial for every adapter: cancelling it ends a pending
// handshake with an error wrapping context.Canceled. It has no effect after Dial returns.

// Handler receives what the read loop sees. All calls come from the goroutine running Conn.Run.
type Handler interface {
	OnMessage(text bool, payload []byte) // payload valid only until return
	OnPing(payload []byte)               // the adapter has sent (or queued) the pong echoing payload
	OnPong(payload []byte)
}

// Transport is one WebSocket client library.
type Transport interface {
	Name() string    // short name used in profiles: gorilla, gobwas, coder, gws, fasthttp
	Module() string  // Go module path
	Version() string // module version linked into this binary
	Dial(ctx context.Context, cfg DialConfig) (Conn, error)
}

// Conn is one open WebSocket connection.
//
// Run returns exactly once, with a non-nil error:
//   - *CloseError when the server sent a close frame (echoed before Run returns), or
//     Code 1006 when the TCP connection ended (EOF) without one;
//   - an error wrapping ErrReadLimit when a message exceeded DialConfig.ReadLimit
//     (the adapter sends close 1009 first);
//   - an error wrapping net.ErrClosed after a local Close or Abort, whatever the library saw;
//   - otherwise the I/O error (e.g. a TCP reset), wrapped.
//
// When Run returns the TCP connection is closed; Close and Abort remain safe to call.
// A second call of Run returns an error at once.
type Conn interface {
	Run(h Handler) error                 // blocking read loop, see above
	WriteText(p []byte) error            // goroutine-safe
	Ping(payload []byte) error           // goroutine-safe; does not wait for the pong (coder sends its own payload, a counter)
	Close(code int, reason string) error // best-effort close frame (≤ 1 s) then TCP close; idempotent, goroutine-safe
	Abort() error                        // immediate TCP close (watchdog, pong timeout); idempotent, goroutine-safe
	Extensions() string                  // the server's Sec-WebSocket-Extensions answer ("" if none): what was negotiated
}

// HandshakeError is a rejected upgrade: the server answered with a status other than 101.
type HandshakeError struct {
	Status int
	Header http.Header
	Body   []byte // at most the first 1 KiB
}

func (e *HandshakeError) Error() string { return fmt.Sprintf("handshake: status %d", e.Status) }

// CloseError is a close frame received from the server (Code 1005 when it carried no code),
// or 1006 when the TCP connection ended without one.
type CloseError struct {
	Code   int
	Reason string
}

func (e *CloseError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("closed: %d", e.Code)
	}
	return fmt.Sprintf("closed: %d %s", e.Code, e.Reason)
}

// ErrReadLimit is wrapped by Run's error when a message exceeded DialConfig.ReadLimit.
var ErrReadLimit = fmt.Errorf("read limit exceeded")
