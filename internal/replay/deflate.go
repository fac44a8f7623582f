package replay

import (
	"net"
	"sync/atomic"

	"github.com/gobwas/ws"

	"github.com/wssoak/wssoak/internal/deflate"
)

// permessage-deflate (RFC 7692), package deflate: negotiation in the
// upgrade, one compressor per connection for what it writes (the events are
// rendered once for every subscriber, but with context takeover a message's
// bytes depend on the connection's history, so each connection compresses its
// own copy), and inflation of what the client sends.

// rsv1 is the per-message compression bit of a frame header (ws.Header.Rsv).
const rsv1 = deflate.RSV1

// deflateTail is what a compressor's sync flush ends with (deflate.Tail).
var deflateTail = deflate.Tail

// rsvAllowed reports whether h's reserved bits are valid on this connection:
// none, or RSV1 on the first frame of a data message when deflate was negotiated.
func (c *Conn) rsvAllowed(h ws.Header) bool {
	return h.Rsv == 0 || c.pmd && h.Rsv == rsv1 && (h.OpCode == ws.OpText || h.OpCode == ws.OpBinary)
}

// wireCounter counts the bytes written to the connection after the upgrade:
// WebSocket frames only (headers and payloads, control frames included; under
// TLS it sits above it, so TLS records are not counted).
type wireCounter struct {
	nc net.Conn
	n  atomic.Int64
}

func (w *wireCounter) Write(p []byte) (int, error) {
	n, err := w.nc.Write(p)
	w.n.Add(int64(n))
	return n, err
}

// payload is what a data message's frames carry: p, or p compressed with RSV1.
func (c *Conn) payload(p []byte) ([]byte, byte, error) {
	if c.defl == nil {
		return p, 0, nil
	}
	z, err := c.defl.Compress(p)
	if err != nil {
		return nil, 0, err
	}
	return z, rsv1, nil
}

// incomingText handles a text message of the client, inflating it first when
// it was compressed; a stream that does not inflate closes 1007.
func (c *Conn) incomingText(zipped bool, p []byte) {
	if zipped {
		var err error
		if p, err = deflate.Inflate(p, maxMessage); err != nil {
			c.fail(1007, "bad deflate stream", "server", modeSend)
			return
		}
	}
	c.handleText(p)
}
