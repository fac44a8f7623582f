// Package deflate is permessage-deflate (RFC 7692) on the server side, shared
// by the replay server and the firehose: the answer to a client's offer, a
// compressor of messages, and inflation of what a client sends.
package deflate

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"io"

	kflate "github.com/klauspost/compress/flate"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws/wsflate"

	"github.com/wssoak/wssoak/internal/wire"
)

// RSV1 is the per-message compression bit of a frame header (ws.Header.Rsv).
const RSV1 = 0x4

// Tail is what a compressor's sync flush ends with; RFC 7692 §7.2.1 strips it
// from the message and the reader appends it back.
var Tail = []byte{0x00, 0x00, 0xff, 0xff}

// Negotiator answers one upgrade's Sec-WebSocket-Extensions offers (use a
// new one per upgrade; its Negotiate is ws.HTTPUpgrader.Negotiate).
type Negotiator struct {
	Cfg      wire.Deflate
	accepted bool
	resp     wsflate.Parameters
}

// Negotiate accepts the first permessage-deflate offer it can honour and
// declines everything else. The answer always carries
// client_no_context_takeover, so every message of the client is inflated on
// its own (a server may impose it, RFC 7692 §7.1.1.2);
// server_no_context_takeover when the client offered it or the setting
// imposes it; server_max_window_bits when the window is under 15 bits or the
// client asked for a bound.
func (n *Negotiator) Negotiate(opt httphead.Option) (httphead.Option, error) {
	if n.Cfg.Compression == wire.CompressionOff || n.accepted || !bytes.Equal(opt.Name, wsflate.ExtensionNameBytes) {
		return httphead.Option{}, nil
	}
	var offer wsflate.Parameters
	if err := offer.Parse(opt); err != nil {
		return httphead.Option{}, nil // a malformed offer is declined, not fatal
	}
	cfg := n.Cfg.WithDefaults()
	bits := cfg.WindowBits
	if offer.ServerMaxWindowBits.Defined() && int(offer.ServerMaxWindowBits) < bits {
		bits = int(offer.ServerMaxWindowBits)
	}
	if bits < wire.MinDeflateWindowBits {
		return httphead.Option{}, nil // 8 bits: declined rather than promise what zlib does not do
	}
	resp := wsflate.Parameters{
		ServerNoContextTakeover: offer.ServerNoContextTakeover || cfg.Compression == wire.CompressionNoContextTakeover,
		ClientNoContextTakeover: true,
	}
	if bits < wire.MaxDeflateWindowBits || offer.ServerMaxWindowBits.Defined() {
		resp.ServerMaxWindowBits = wsflate.WindowBits(bits)
	}
	n.accepted, n.resp = true, resp
	return resp.Option(), nil
}

// Accepted reports whether an offer was accepted.
func (n *Negotiator) Accepted() bool { return n.accepted }

// Params is what the server answered (valid when Accepted).
func (n *Negotiator) Params() wsflate.Parameters { return n.resp }

// Extensions is the Sec-WebSocket-Extensions value the server answered ("" if none).
func (n *Negotiator) Extensions() string {
	if !n.accepted {
		return ""
	}
	var b bytes.Buffer
	_, _ = httphead.WriteOptions(&b, []httphead.Option{n.resp.Option()})
	return b.String()
}

// Compressor compresses one connection's outgoing messages, keeping the
// window across messages unless the answer said server_no_context_takeover.
// It is not safe for concurrent use.
type Compressor struct {
	takeover bool
	fw       *kflate.Writer
	buf      bytes.Buffer
}

// NewCompressor makes the compressor for the negotiated params: the window is
// the answer's server_max_window_bits, else cfg's (under 15 bits the level is
// not used: klauspost's windowed writer has its own).
func NewCompressor(cfg wire.Deflate, params wsflate.Parameters) (*Compressor, error) {
	cfg = cfg.WithDefaults()
	c := &Compressor{takeover: !params.ServerNoContextTakeover}
	bits := cfg.WindowBits
	if params.ServerMaxWindowBits.Defined() {
		bits = int(params.ServerMaxWindowBits)
	}
	var err error
	if bits < wire.MaxDeflateWindowBits {
		c.fw, err = kflate.NewWriterWindow(&c.buf, 1<<bits)
	} else {
		c.fw, err = kflate.NewWriter(&c.buf, cfg.Level)
	}
	if err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	return c, nil
}

// Compress returns p compressed as one message (the tail stripped), valid until the next call.
func (c *Compressor) Compress(p []byte) ([]byte, error) {
	c.buf.Reset()
	if !c.takeover {
		c.fw.Reset(&c.buf)
	}
	if _, err := c.fw.Write(p); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	if err := c.fw.Flush(); err != nil {
		return nil, fmt.Errorf("deflate: %w", err)
	}
	out := c.buf.Bytes()
	if !bytes.HasSuffix(out, Tail) {
		return nil, errors.New("deflate: flush did not end with 00 00 ff ff")
	}
	return out[:len(out)-len(Tail)], nil
}

// Inflate decompresses one whole message compressed without context (the
// server imposed client_no_context_takeover), refusing more than limit bytes.
func Inflate(p []byte, limit int) ([]byte, error) {
	r := flate.NewReader(io.MultiReader(bytes.NewReader(p), bytes.NewReader(Tail)))
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
