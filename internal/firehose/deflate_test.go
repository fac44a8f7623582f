package firehose

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestLibrariesDeflate: every library × compression mode reads the compressed
// firehose's messages intact and in sequence, negotiated what it can, and
// read exactly the frame bytes the firehose wrote (its close frame included).
func TestLibrariesDeflate(t *testing.T) {
	sc, _ := Lookup("mix")
	for _, tr := range transport.All() {
		for _, mode := range []wire.Compression{wire.CompressionOn, wire.CompressionNoContextTakeover} {
			t.Run(tr.Name()+"/"+mode.String(), func(t *testing.T) {
				const n = 3000
				s, err := New(Config{Scenario: sc, N: n, Seed: 7, Conns: 1, Deflate: wire.Deflate{Compression: wire.CompressionOn}})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Listen("127.0.0.1:0"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var wireN atomic.Pointer[atomic.Int64]
				d := &transport.Dialer{}
				c, err := tr.Dial(ctx, transport.DialConfig{URL: s.URL(), Compression: mode,
					NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
						nc, err := d.DialContext(ctx, network, addr)
						if err == nil {
							wireN.Store(transport.WireBytesOf(nc))
						}
						return nc, err
					}})
				if err != nil {
					t.Fatal(err)
				}
				a := newAccounting()
				runErr := make(chan error, 1)
				go func() { runErr <- c.Run(handler{a}) }()
				select {
				case err = <-runErr:
				case <-ctx.Done():
					_ = c.Abort()
					t.Fatal("the library did not finish reading within 30 s")
				}
				var ce *transport.CloseError
				if !errors.As(err, &ce) || ce.Code != 1000 {
					t.Errorf("Run: %v; want a close 1000", err)
				}
				waitDone(t, s)
				a.check(t, s, n)
				st := s.Stats()
				conn := st.Conns[0]
				if conn.Extensions != c.Extensions() || !strings.Contains(conn.Extensions, "permessage-deflate") {
					t.Errorf("server answered %q, client saw %q", conn.Extensions, c.Extensions())
				}
				if got := wireN.Load().Load(); got != conn.WireBytes+CloseFrameSize {
					t.Errorf("client read %d frame bytes, firehose wrote %d + %d", got, conn.WireBytes, CloseFrameSize)
				}
				t.Logf("%s: payload %d B, wire %d B (%.3f; plain %d B)", c.Extensions(), conn.PayloadBytes, conn.WireBytes,
					float64(conn.WireBytes)/float64(conn.PayloadBytes), st.WireBytes)
				// Small messages compressed alone keep ~0.8 of their size; with
				// the window kept across messages ~0.3.
				limit := 0.5
				if strings.Contains(conn.Extensions, "server_no_context_takeover") {
					limit = 0.9
				}
				if r := float64(conn.WireBytes) / float64(st.WireBytes); r > limit {
					t.Errorf("compressed %d bytes, %.2f of the plain %d; want at most %.2f", conn.WireBytes, r, st.WireBytes, limit)
				}
			})
		}
	}
}

// binCounter counts the messages a library hands over, and those not binary.
type binCounter struct {
	msgs, text int
	bytes      int64
}

func (b *binCounter) OnMessage(text bool, p []byte) {
	b.msgs++
	b.bytes += int64(len(p))
	if text {
		b.text++
	}
}
func (b *binCounter) OnPing([]byte) {}
func (b *binCounter) OnPong([]byte) {}

// TestEncodingsDeflate: a subprotocol and permessage-deflate in one
// handshake. Every library asking for msgpack or packed with compression on
// gets both answered, reads every message as a binary one of the batch's
// payload bytes, and exactly the frame bytes the firehose wrote (the
// compressed binary frames and its close frame): fewer than the plain
// encoded batch's with context takeover, about as many without.
func TestEncodingsDeflate(t *testing.T) {
	sc, _ := Lookup("depth20")
	const n = 1000
	for _, tr := range transport.All() {
		for _, enc := range []codec.Encoding{codec.Msgpack, codec.Packed} {
			t.Run(tr.Name()+"/"+enc.String(), func(t *testing.T) {
				s, err := New(Config{Scenario: sc, N: n, Seed: 7, Conns: 1, Deflate: wire.Deflate{Compression: wire.CompressionOn}})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Listen("127.0.0.1:0"); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = s.Close() })
				plain, err := s.WireBytes(enc)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var wireN atomic.Pointer[atomic.Int64]
				d := &transport.Dialer{}
				c, err := tr.Dial(ctx, transport.DialConfig{URL: s.URL(), Compression: wire.CompressionOn,
					Subprotocols: codec.Subprotocols(enc),
					NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
						nc, err := d.DialContext(ctx, network, addr)
						if err == nil {
							wireN.Store(transport.WireBytesOf(nc))
						}
						return nc, err
					}})
				if err != nil {
					t.Fatal(err)
				}
				if got := transport.SubprotocolOf(c); got != enc.Subprotocol() {
					t.Errorf("subprotocol %q, want %q", got, enc.Subprotocol())
				}
				if !strings.Contains(c.Extensions(), "permessage-deflate") {
					t.Errorf("extensions %q: deflate not negotiated", c.Extensions())
				}
				var b binCounter
				runErr := make(chan error, 1)
				go func() { runErr <- c.Run(&b) }()
				select {
				case err = <-runErr:
				case <-ctx.Done():
					_ = c.Abort()
					t.Fatal("the library did not finish reading within 30 s")
				}
				var ce *transport.CloseError
				if !errors.As(err, &ce) || ce.Code != 1000 {
					t.Errorf("Run: %v; want a close 1000", err)
				}
				waitDone(t, s)
				conn := s.Stats().Conns[0]
				if conn.Encoding != enc.String() || conn.Extensions != c.Extensions() {
					t.Errorf("firehose sent %s answering %q; want %s, the client's %q", conn.Encoding, conn.Extensions, enc, c.Extensions())
				}
				if b.msgs != n || b.text != 0 || conn.Messages != n || b.bytes != conn.PayloadBytes {
					t.Errorf("received %d messages (%d text), %d bytes; firehose sent %d, %d bytes; want %d binary",
						b.msgs, b.text, b.bytes, conn.Messages, conn.PayloadBytes, n)
				}
				if got := wireN.Load().Load(); got != conn.WireBytes+CloseFrameSize {
					t.Errorf("client read %d frame bytes, firehose wrote %d + %d", got, conn.WireBytes, CloseFrameSize)
				}
				// The binary encodings' random floats hardly compress one message
				// at a time (a few bytes more than plain: deflate's own framing);
				// with the window kept across messages they do.
				limit := 0.9 // 0.58 msgpack, 0.81 packed
				if strings.Contains(conn.Extensions, "server_no_context_takeover") {
					limit = 1.05
				}
				if r := float64(conn.WireBytes) / float64(plain); r > limit {
					t.Errorf("compressed %d frame bytes, %.2f of the plain %s batch's %d; want at most %.2f", conn.WireBytes, r, enc, plain, limit)
				}
				t.Logf("%s %s: %d frame bytes, %.2f of the plain %d", enc, c.Extensions(), conn.WireBytes, float64(conn.WireBytes)/float64(plain), plain)
			})
		}
	}
}
