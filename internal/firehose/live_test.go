package firehose

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"

	"github.com/wssoak/wssoak/internal/codec"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestEvents: every scenario's messages, held as values and encoded again
// (what a live firehose sends), are byte for byte what the batch holds: the
// JSON the generators wrote, and Append's msgpack and packed of it.
func TestEvents(t *testing.T) {
	for _, sc := range append(Scenarios(), SeedBook) {
		for _, combined := range []bool{false, true} {
			b, err := Prepare(sc, min(testN(sc), 200), 1, combined)
			if err != nil {
				t.Fatal(err)
			}
			evs, err := b.Events()
			if err != nil {
				t.Fatalf("%s: %v", sc.Name, err)
			}
			i := 0
			err = b.payloads(func(_ int, p []byte) error {
				for _, e := range codec.Encodings() {
					want, err := codec.Append(nil, p, e)
					if err != nil {
						return err
					}
					got, err := codec.AppendEvent(nil, evs[i], e)
					if err != nil || !bytes.Equal(got, want) {
						t.Fatalf("%s combined %v message %d %v: %v\n got %q\nwant %q", sc.Name, combined, i, e, err, got, want)
					}
				}
				i++
				return nil
			})
			if err != nil || i != b.Messages {
				t.Fatalf("%s: %d of %d messages: %v", sc.Name, i, b.Messages, err)
			}
		}
	}
}

// TestLiveSendsTheBatch: a live firehose (each message encoded and
// compressed as it is sent) sends exactly the bytes the pre-encoded one
// does, in every encoding, with and without permessage-deflate (context
// takeover: the connection's own compressor gives the shared batch's
// bytes), and says what encoding took and the CPU it used.
func TestLiveSendsTheBatch(t *testing.T) {
	sc := SeedBook
	const n = 300
	for _, e := range codec.Encodings() {
		for _, z := range []bool{false, true} {
			var got [2][]byte
			var stats [2]ConnStats
			for k, live := range []bool{false, true} {
				s, err := New(Config{Scenario: sc, N: n, Seed: 3, Conns: 1, Live: live, Deflate: wire.Deflate{WindowBits: 15, Level: 1}})
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Listen("127.0.0.1:0"); err != nil {
					t.Fatal(err)
				}
				got[k] = readFrames(t, s.URL(), e, z)
				waitDone(t, s)
				stats[k] = s.Stats().Conns[0]
				_ = s.Close()
			}
			if !bytes.Equal(got[0], got[1]) || len(got[0]) == 0 {
				t.Errorf("%v deflate %v: live sent %d bytes, the batch %d, not the same", e, z, len(got[1]), len(got[0]))
			}
			pre, live := stats[0], stats[1]
			if live.Messages != n || live.PayloadBytes != pre.PayloadBytes || live.WireBytes != pre.WireBytes {
				t.Errorf("%v deflate %v: live %d msgs %d B payload %d B wire, batch %d %d %d", e, z, live.Messages, live.PayloadBytes,
					live.WireBytes, pre.Messages, pre.PayloadBytes, pre.WireBytes)
			}
			if live.EncodeNS <= 0 || pre.EncodeNS != 0 || live.UserNS+live.SysNS <= 0 {
				t.Errorf("%v deflate %v: encode %d ns live, %d pre-encoded; CPU %d ns", e, z, live.EncodeNS, pre.EncodeNS, live.UserNS+live.SysNS)
			}
		}
	}
}

// readFrames dials url asking for encoding e (and deflate with context
// takeover when z), and returns every frame up to the close, headers
// included, as they came.
func readFrames(t *testing.T, url string, e codec.Encoding, z bool) []byte {
	t.Helper()
	d := ws.Dialer{Protocols: codec.Subprotocols(e), Timeout: 5 * time.Second}
	if z {
		d.Extensions = []httphead.Option{wsflate.Parameters{}.Option()}
	}
	conn, br, _, err := d.Dial(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var r io.Reader = conn
	if br != nil {
		r = io.MultiReader(br, conn)
	}
	rd := bufio.NewReader(r)
	var out bytes.Buffer
	for {
		h, err := ws.ReadHeader(rd)
		if err != nil {
			t.Fatal(err)
		}
		if h.OpCode == ws.OpClose {
			_ = ws.WriteFrame(conn, ws.MaskFrame(ws.NewCloseFrame(ws.NewCloseFrameBody(ws.StatusNormalClosure, ""))))
			return out.Bytes()
		}
		_ = ws.WriteHeader(&out, h)
		if _, err := io.CopyN(&out, rd, h.Length); err != nil {
			t.Fatal(err)
		}
	}
}
