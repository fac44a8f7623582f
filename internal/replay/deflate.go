package replay

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"net"
	"sync/atomic"

	kflate "github.com/klauspost/compress/flate"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"

	"github.com/wssoak/wssoak/internal/wire"
)

// permessage-deflate (RFC 7692) on the server side: negotiation in the
// upgrade, one compressor per connection for what it writes (the events are
// rendered once for every subscriber, but with context takeover a message's
// bytes depend on the connection's history, so each connection compresses its
// own copy), and inflation of what the client sends.

// rsv1 is the per-message compression bit of a frame header (ws.Header.Rsv).
const rsv1 = 0x4

// deflateTail is what a compressor's sync flush ends with; RFC 7692 §7.2.1
// strips it from the message and the reader appends it back.
var deflateTail = []byte{0x00, 0x00, 0xff, 0xff}

// negotiator answers one upgrade's Sec-WebSocket-Extensions offers.
type negotiator struct {
	cfg      wire.Deflate
	accepted bool
	resp     wsflate.Parameters // what the server answered
}

// negotiate is ws.HTTPUpgrader.Negotiate: it accepts the first
// permessage-deflate offer it can honour and declines everything else. The
// answer always carries client_no_context_takeover, so every message of the
// client is inflated on its own (a server may impose it, RFC 7692 §7.1.1.2);
// server_no_context_takeover when the client offered it or the setting
// imposes it; server_max_window_bits when the window is under 15 bits or the
// client asked for a bound.
func (n *negotiator) negotiate(opt httphead.Option) (httphead.Option, error) {
	if n.cfg.Compression == wire.CompressionOff || n.accepted || !bytes.Equal(opt.Name, wsflate.ExtensionNameBytes) {
		return httphead.Option{}, nil
	}
	var offer wsflate.Parameters
	if err := offer.Parse(opt); err != nil {
		return httphead.Option{}, nil // a malformed offer is declined, not fatal
	}
	bits := n.cfg.WindowBits
	if offer.ServerMaxWindowBits.Defined() && int(offer.ServerMaxWindowBits) < bits {
		bits = int(offer.ServerMaxWindowBits)
	}
	if bits < wire.MinDeflateWindowBits {
		return httphead.Option{}, nil // 8 bits: decline rather than promise what zlib does not do
	}
	resp := wsflate.Parameters{
		ServerNoContextTakeover: offer.ServerNoContextTakeover || n.cfg.Compression == wire.CompressionNoContextTakeover,
		ClientNoContextTakeover: true,
	}
	if bits < wire.MaxDeflateWindowBits || offer.ServerMaxWindowBits.Defined() {
		resp.ServerMaxWindowBits = wsflate.WindowBits(bits)
	}
	n.accepted, n.resp = true, resp
	return resp.Option(), nil
}

// extensions is the Sec-WebSocket-Extensions value the server answered ("" if none).
func (n *negotiator) extensions() string {
	if !n.accepted {
		return ""
	}
	var b bytes.Buffer
	_, _ = httphead.WriteOptions(&b, []httphead.Option{n.resp.Option()})
	return b.String()
}

// deflater compresses one connection's outgoing messages; it is owned by the writer.
type deflater struct {
	takeover bool
	fw       *kflate.Writer
	buf      bytes.Buffer
}

func newDeflater(cfg wire.Deflate, resp wsflate.Parameters) (*deflater, error) {
	d := &deflater{takeover: !resp.ServerNoContextTakeover}
	bits := cfg.WindowBits
	if resp.ServerMaxWindowBits.Defined() {
		bits = int(resp.ServerMaxWindowBits)
	}
	var err error
	if bits < wire.MaxDeflateWindowBits {
		d.fw, err = kflate.NewWriterWindow(&d.buf, 1<<bits)
	} else {
		d.fw, err = kflate.NewWriter(&d.buf, cfg.Level)
	}
	if err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	return d, nil
}

// compress returns p compressed as one message, valid until the next call.
func (d *deflater) compress(p []byte) ([]byte, error) {
	d.buf.Reset()
	if !d.takeover {
		d.fw.Reset(&d.buf)
	}
	if _, err := d.fw.Write(p); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	if err := d.fw.Flush(); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	out := d.buf.Bytes()
	if !bytes.HasSuffix(out, deflateTail) {
		return nil, fmt.Errorf("deflate: flush did not end with 00 00 ff ff")
	}
	return out[:len(out)-len(deflateTail)], nil
}

// inflate decompresses one whole message of the client (no context takeover:
// the server imposed it), refusing more than limit bytes.
func inflate(p []byte, limit int) ([]byte, error) {
	r := flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader(deflateTail)))
	defer r.Close()
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("inflate: %w", err)
	}
	if len(out) > limit {
		return nil, fmt.Errorf("inflate: message over %d bytes", limit)
	}
	return out, nil
}

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
	z, err := c.defl.compress(p)
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
		if p, err = inflate(p, maxMessage); err != nil {
			c.fail(1007, "bad deflate stream", "server", modeSend)
			return
		}
	}
	c.handleText(p)
}
