package transport

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
)

// WireBytesOf returns the count of WebSocket frame bytes read on a connection
// from Dialer.DialContext (headers and payloads, control frames included, as
// they came off the socket: compressed when the extension is on), or nil for
// any other net.Conn. It counts from the end of the upgrade's HTTP response,
// so the handshake is excluded; a proxy's handshake happens before the Dialer
// returns the connection and is not seen. Under TLS (wss) every adapter
// counts above TLS (countAbove): the plaintext, so TLS records are not counted.
func WireBytesOf(conn net.Conn) *atomic.Int64 {
	if sc, ok := conn.(*stampConn); ok {
		return &sc.wire.n
	}
	return nil
}

// wireCount counts the bytes read after the first "\r\n\r\n" (the end of the
// upgrade response's header). It is used by the one goroutine reading the
// connection at a time (the handshake, then the read loop), never concurrently.
type wireCount struct {
	n     atomic.Int64
	head  bool // the header's end was seen
	match int  // bytes of "\r\n\r\n" matched at the end of the last read
}

var headerEnd = [4]byte{'\r', '\n', '\r', '\n'}

func (w *wireCount) add(p []byte) {
	if w.head {
		w.n.Add(int64(len(p)))
		return
	}
	for i, b := range p {
		switch {
		case b == headerEnd[w.match]:
			w.match++
		case b == '\r':
			w.match = 1
		default:
			w.match = 0
		}
		if w.match == len(headerEnd) {
			w.head = true
			w.n.Add(int64(len(p) - i - 1))
			return
		}
	}
}

// tlsDial returns a dial function for a library's wss connections: it dials
// with dial, does the TLS handshake with cfg (nil: defaults; ServerName the
// host's when empty, as the libraries do) and returns the TLS connection
// wrapped so that the frame bytes are counted above TLS (countAbove).
func tlsDial(dial dialFunc, cfg *tls.Config) dialFunc {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := &tls.Config{}
		if cfg != nil {
			tc = cfg.Clone()
		}
		if tc.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			tc.ServerName = host
		}
		c := tls.Client(raw, tc)
		if err := c.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, fmt.Errorf("tls: %w", err)
		}
		return countAbove(c, raw), nil
	}
}

// countAbove makes the frame bytes of raw (a connection from
// Dialer.DialContext) be counted on upper, the TLS connection over it, which
// reads plaintext: TLS records are then not counted (WireBytesOf(raw) is the
// count). For any other raw it returns upper.
func countAbove(upper, raw net.Conn) net.Conn {
	sc, ok := raw.(*stampConn)
	if !ok {
		return upper
	}
	sc.above.Store(true)
	return &wireConn{Conn: upper, wire: &sc.wire}
}

// wireConn counts the bytes read on a TLS connection into its raw connection's count.
type wireConn struct {
	net.Conn
	wire *wireCount
}

func (c *wireConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.wire.add(p[:n])
	}
	return n, err
}

// NetConn returns the TLS connection (ReceiveBuffer looks through it).
func (c *wireConn) NetConn() net.Conn { return c.Conn }
