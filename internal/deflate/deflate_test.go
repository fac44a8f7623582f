package deflate

import (
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"testing"

	"github.com/gobwas/ws/wsflate"

	"github.com/wssoak/wssoak/internal/wire"
)

// Messages compressed with context takeover inflate with the window carried
// over; without it each on its own; both round-trip exactly.
func TestCompressRoundTrip(t *testing.T) {
	var msgs [][]byte
	for i := range 200 {
		msgs = append(msgs, fmt.Appendf(nil, `{"e":"depthUpdate","E":%d,"b":[["60000.%02d","1.5"]]}`, 1700000000000+i, i%100))
	}
	for _, tt := range []struct {
		name   string
		params wsflate.Parameters
		cfg    wire.Deflate
	}{
		{"takeover", wsflate.Parameters{}, wire.Deflate{}},
		{"no takeover", wsflate.Parameters{ServerNoContextTakeover: true}, wire.Deflate{}},
		{"window 9 bits", wsflate.Parameters{ServerMaxWindowBits: 9}, wire.Deflate{}},
		{"level 9", wsflate.Parameters{}, wire.Deflate{Level: 9}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewCompressor(tt.cfg, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			var dict []byte
			var wireN, payload int
			for i, m := range msgs {
				z, err := c.Compress(m)
				if err != nil {
					t.Fatal(err)
				}
				wireN, payload = wireN+len(z), payload+len(m)
				r := flate.NewReaderDict(io.MultiReader(bytes.NewReader(z), bytes.NewReader(Tail)), dict)
				out, err := io.ReadAll(r)
				if err != nil && err != io.ErrUnexpectedEOF {
					t.Fatalf("message %d: %v", i, err)
				}
				if !bytes.Equal(out, m) {
					t.Fatalf("message %d: %q, want %q", i, out, m)
				}
				if !tt.params.ServerNoContextTakeover {
					dict = append(dict, m...)
				}
			}
			t.Logf("%d payload bytes, %d compressed", payload, wireN)
		})
	}
}

func TestInflateLimit(t *testing.T) {
	c, _ := NewCompressor(wire.Deflate{}, wsflate.Parameters{ServerNoContextTakeover: true})
	z, _ := c.Compress(make([]byte, 100_000))
	if _, err := Inflate(z, 99_999); err == nil {
		t.Fatal("over the limit: no error")
	}
	out, err := Inflate(z, 100_000)
	if err != nil || len(out) != 100_000 {
		t.Fatalf("at the limit: %d bytes, %v", len(out), err)
	}
	if _, err := Inflate([]byte{0xff, 0xfe}, 10); err == nil {
		t.Fatal("corrupt: no error")
	}
}

func BenchmarkCompressTakeover(b *testing.B) {
	c, _ := NewCompressor(wire.Deflate{}, wsflate.Parameters{})
	m := []byte(`{"stream":"btcusdt@depth20@100ms","data":{"lastUpdateId":1,"bids":[["60000.01","1.5"],["59999.99","0.2"]],"asks":[["60000.02","3.1"]]}}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(m)))
	for b.Loop() {
		if _, err := c.Compress(m); err != nil {
			b.Fatal(err)
		}
	}
}
