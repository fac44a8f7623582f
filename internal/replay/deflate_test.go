package replay

import (
	"bufio"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/httphead"
	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsflate"

	"github.com/wssoak/wssoak/internal/wire"
)

// rawResult is what a frame-level client saw of one connection.
type rawResult struct {
	exts      string
	msgs      [][]byte
	wire      int64 // frame bytes read after the upgrade: headers and payloads, control frames included
	closeCode int
}

// rawDeflateClient dials with offer as its Sec-WebSocket-Extensions (none if
// empty), reads frames until the server's close frame and inflates what is
// compressed, keeping the window across messages unless the server answered
// server_no_context_takeover.
func rawDeflateClient(t *testing.T, s *Server, tag, offer string) rawResult {
	t.Helper()
	d := ws.Dialer{Timeout: 5 * time.Second, Header: ws.HandshakeHeaderString("X-Soak-Conn: " + tag + "\r\n")}
	if offer != "" {
		opts, ok := httphead.ParseOptions([]byte(offer), nil)
		if !ok {
			t.Fatalf("offer %q", offer)
		}
		d.Extensions = opts
	}
	conn, br, hs, err := d.Dial(ctxTimeout(t, 5*time.Second), s.URL()+"/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var res rawResult
	var params wsflate.Parameters
	for _, o := range hs.Extensions {
		var b bytes.Buffer
		_, _ = httphead.WriteOptions(&b, []httphead.Option{o})
		res.exts = b.String()
		if err := params.Parse(o); err != nil {
			t.Fatal(err)
		}
	}
	var src io.Reader = conn
	if br != nil {
		src = io.MultiReader(br, conn)
	}
	r := bufio.NewReader(src)
	var (
		dict   []byte // the last 32 KiB the server's compressor saw
		msg    []byte
		zipped bool
	)
	for {
		h, err := ws.ReadHeader(r)
		if err != nil {
			t.Fatalf("read header: %v", err)
		}
		p := make([]byte, h.Length)
		if _, err := io.ReadFull(r, p); err != nil {
			t.Fatal(err)
		}
		res.wire += int64(ws.HeaderSize(h)) + h.Length
		switch h.OpCode {
		case ws.OpClose:
			code, _ := ws.ParseCloseFrameData(p)
			res.closeCode = int(code)
			return res
		case ws.OpPing, ws.OpPong:
			continue
		case ws.OpText, ws.OpBinary:
			msg, zipped = p, h.Rsv == rsv1
		case ws.OpContinuation:
			msg = append(msg, p...)
		}
		if !h.Fin {
			continue
		}
		if zipped {
			fr := flate.NewReaderDict(io.MultiReader(bytes.NewReader(msg), bytes.NewReader(deflateTail)), dict)
			out, err := io.ReadAll(fr)
			if err != nil && err != io.ErrUnexpectedEOF {
				t.Fatalf("inflate message %d: %v", len(res.msgs), err)
			}
			msg = out
			if !params.ServerNoContextTakeover {
				dict = append(dict, out...)
				if len(dict) > 32<<10 {
					dict = append([]byte(nil), dict[len(dict)-32<<10:]...)
				}
			}
		} else {
			msg = append([]byte(nil), msg...)
		}
		res.msgs = append(res.msgs, msg)
	}
}

// testMessages are compressible JSON messages: small ones, one of 450 KB, one sent fragmented.
func testMessages() (small [][]byte, big []byte) {
	for i := range 50 {
		small = append(small, fmt.Appendf(nil, `{"e":"aggTrade","E":%d,"s":"BTCUSDT","a":%d,"p":"60000.%02d","q":"0.0%d"}`, 1700000000000+i, 1000+i, i, i%7))
	}
	var b bytes.Buffer
	b.WriteString(`[`)
	for i := 0; b.Len() < 450<<10; i++ {
		fmt.Fprintf(&b, `{"e":"24hrTicker","s":"SYM%dUSDT","c":"%d.%d"},`, i, i*7, i%100)
	}
	b.WriteString(`{}]`)
	return small, b.Bytes()
}

func TestDeflateNegotiatedAndWireBytes(t *testing.T) {
	tests := []struct {
		name        string
		server      wire.Deflate
		offer       string
		wantExt     string // the answer, "" = declined
		takeoverOff bool
	}{
		{"on, takeover", wire.Deflate{Compression: wire.CompressionOn}, "permessage-deflate",
			"permessage-deflate;client_no_context_takeover", false},
		{"on, client asks no takeover", wire.Deflate{Compression: wire.CompressionOn},
			"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
			"permessage-deflate;server_no_context_takeover;client_no_context_takeover", true},
		{"server imposes no takeover", wire.Deflate{Compression: wire.CompressionNoContextTakeover}, "permessage-deflate",
			"permessage-deflate;server_no_context_takeover;client_no_context_takeover", true},
		{"window 10 bits, level 9", wire.Deflate{Compression: wire.CompressionOn, WindowBits: 10, Level: 9}, "permessage-deflate",
			"permessage-deflate;client_no_context_takeover;server_max_window_bits=10", false},
		{"client bounds the window", wire.Deflate{Compression: wire.CompressionOn}, "permessage-deflate; server_max_window_bits=11",
			"permessage-deflate;client_no_context_takeover;server_max_window_bits=11", false},
		{"server off", wire.Deflate{}, "permessage-deflate", "", true},
		{"no offer", wire.Deflate{Compression: wire.CompressionOn}, "", "", true},
	}
	small, big := testMessages()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := Config{}
			cfg.Compression, cfg.DeflateWindowBits, cfg.DeflateLevel = tt.server.Compression, tt.server.WindowBits, tt.server.Level
			s := startServer(t, cfg)
			tag := fmt.Sprintf("deflate/%d", i)
			got := make(chan rawResult, 1)
			go func() { got <- rawDeflateClient(t, s, tag, tt.offer) }()
			sc, err := s.WaitConn(ctxTimeout(t, 5*time.Second), tag)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range small[:25] {
				if err := sc.SendText(m); err != nil {
					t.Fatal(err)
				}
			}
			if err := sc.SendText(big); err != nil {
				t.Fatal(err)
			}
			if err := sc.SendFragmented(big[:100<<10], 5); err != nil {
				t.Fatal(err)
			}
			for _, m := range small[25:] {
				if err := sc.SendText(m); err != nil {
					t.Fatal(err)
				}
			}
			waitSent(t, s, tag, int64(len(small)+2))
			if err := sc.Close(1000, "done"); err != nil {
				t.Fatal(err)
			}
			res := <-got
			if res.exts != tt.wantExt {
				t.Errorf("extensions %q, want %q", res.exts, tt.wantExt)
			}
			want := append(append(append(append([][]byte{}, small[:25]...), big), big[:100<<10]), small[25:]...)
			if len(res.msgs) != len(want) {
				t.Fatalf("%d messages, want %d", len(res.msgs), len(want))
			}
			for j := range want {
				if !bytes.Equal(res.msgs[j], want[j]) {
					t.Fatalf("message %d differs (%d bytes, want %d)", j, len(res.msgs[j]), len(want[j]))
				}
			}
			var cs ConnStats
			for _, c := range s.Stats().Conns {
				if c.Tag == tag {
					cs = c
				}
			}
			if cs.Extensions != tt.wantExt {
				t.Errorf("stats extensions %q, want %q", cs.Extensions, tt.wantExt)
			}
			if cs.WireBytes != res.wire {
				t.Errorf("server wrote %d frame bytes, client read %d", cs.WireBytes, res.wire)
			}
			var payload int64
			for _, m := range want {
				payload += int64(len(m))
			}
			if tt.wantExt != "" && res.wire >= payload/2 {
				t.Errorf("compressed wire bytes %d not under half the payload %d", res.wire, payload)
			}
			if tt.wantExt == "" && res.wire <= payload {
				t.Errorf("plain wire bytes %d not above the payload %d", res.wire, payload)
			}
			t.Logf("payload %d B, wire %d B (%.3f)", payload, res.wire, float64(res.wire)/float64(payload))
		})
	}
}

// A client's compressed SUBSCRIBE is inflated and answered; a corrupt one closes 1007.
func TestDeflateIncoming(t *testing.T) {
	cfg := Config{}
	cfg.Compression = wire.CompressionOn
	s := startServer(t, cfg)
	for _, tt := range []struct {
		name    string
		corrupt bool
	}{{"subscribe", false}, {"corrupt", true}} {
		t.Run(tt.name, func(t *testing.T) {
			d := ws.Dialer{Timeout: 5 * time.Second, Extensions: []httphead.Option{wsflate.DefaultParameters.Option()}}
			conn, br, hs, err := d.Dial(ctxTimeout(t, 5*time.Second), s.URL()+"/stream")
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if len(hs.Extensions) != 1 {
				t.Fatalf("extensions %v", hs.Extensions)
			}
			req := []byte(`{"method":"LIST_SUBSCRIPTIONS","id":7}`)
			z, err := wsflate.CompressFrame(ws.NewTextFrame(req))
			if err != nil {
				t.Fatal(err)
			}
			if tt.corrupt {
				z.Payload = []byte{0xff, 0xff, 0xff, 0x00, 0x01}
				z.Header.Length = int64(len(z.Payload))
			}
			if err := ws.WriteFrame(conn, ws.MaskFrame(z)); err != nil {
				t.Fatal(err)
			}
			var src io.Reader = conn
			if br != nil {
				src = io.MultiReader(br, conn)
			}
			_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				h, err := ws.ReadHeader(src)
				if err != nil || h.Length > 1<<20 {
					t.Fatalf("read header: %v (%d bytes)", err, h.Length)
				}
				f := ws.Frame{Header: h, Payload: make([]byte, h.Length)}
				if _, err := io.ReadFull(src, f.Payload); err != nil {
					t.Fatal(err)
				}
				if f.Header.OpCode == ws.OpClose {
					code, reason := ws.ParseCloseFrameData(f.Payload)
					if !tt.corrupt || code != 1007 {
						t.Fatalf("close %d %q", code, reason)
					}
					return
				}
				if f.Header.OpCode != ws.OpText {
					continue
				}
				if f, err = wsflate.DecompressFrame(f); err != nil {
					t.Fatal(err)
				}
				if tt.corrupt || !strings.Contains(string(f.Payload), `"id":7`) {
					t.Fatalf("reply %q", f.Payload)
				}
				return
			}
		})
	}
}

// waitSent waits until the server has written n messages (stream "") to the connection tagged tag.
func waitSent(t *testing.T, s *Server, tag string, n int64) {
	t.Helper()
	ctx := ctxTimeout(t, 10*time.Second)
	for {
		for _, c := range s.Stats().Conns {
			if c.Tag == tag && c.Streams[""].Sent >= n {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: the server did not write %d messages", tag, n)
		case <-time.After(2 * time.Millisecond):
		}
	}
}
