package transport_test

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// rawDeflateAnswer is the library-free server's answer to a permessage-deflate offer.
const rawDeflateAnswer = "permessage-deflate; server_no_context_takeover; client_no_context_takeover"

var compressionModes = []wire.Compression{wire.CompressionOn, wire.CompressionNoContextTakeover}

// TestConformanceDeflate runs every adapter × compression mode through the
// conformance scenarios against a replay server that compresses, and through
// what only compressed traffic has: the negotiated answer, wire bytes equal
// to the server's, a corrupt deflate stream and deflate bombs.
func TestConformanceDeflate(t *testing.T) {
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Parallel()
			for _, mode := range compressionModes {
				t.Run(mode.String(), func(t *testing.T) {
					t.Run("replay", func(t *testing.T) {
						cfg := replay.Config{}
						cfg.Compression = wire.CompressionOn // the server takes either mode as offered
						e := replayEnvWith(t, cfg)
						e.compression = mode
						for _, sc := range append(append([]scenario{}, scenarios...), deflateScenarios...) {
							t.Run(sc.name, func(t *testing.T) { sc.run(t, tr, e) })
						}
					})
					t.Run("raw", func(t *testing.T) {
						e := rawEnv(t)
						e.compression = mode
						for _, sc := range rawDeflateScenarios {
							t.Run(sc.name, func(t *testing.T) { sc.run(t, tr, e) })
						}
					})
				})
			}
		})
	}
}

var deflateScenarios = []scenario{
	{"negotiated", testNegotiated},
	{"control-reply", testControlReply},
	{"wire-bytes-equal-server", testWireBytes},
	{"subprotocol-and-deflate", testSubprotocolDeflate},
}

var rawDeflateScenarios = []scenario{
	{"corrupt-deflate", testCorruptDeflate},
	{"deflate-bomb", func(t *testing.T, tr transport.Transport, e *env) { testBomb(t, tr, e, 1) }},
	{"deflate-bomb-fragmented", func(t *testing.T, tr transport.Transport, e *env) { testBomb(t, tr, e, 4) }},
}

// testNegotiated: the answer is what the library could ask for.
func testNegotiated(t *testing.T, tr transport.Transport, e *env) {
	s := open(t, tr, e, transport.DialConfig{})
	ext := s.conn.Extensions()
	if !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("Extensions() = %q: deflate not negotiated", ext)
	}
	asked := transport.Capability(tr.Name(), e.compression)
	if got := strings.Contains(ext, "server_no_context_takeover"); got != (asked == wire.CompressionNoContextTakeover) {
		t.Fatalf("Extensions() = %q, asked for %s", ext, asked)
	}
}

// testSubprotocolDeflate: a subprotocol and permessage-deflate asked in one
// handshake are both answered, and the connection reads what is then sent.
func testSubprotocolDeflate(t *testing.T, tr transport.Transport, e *env) {
	const proto = "soak.msgpack.v1"
	s := open(t, tr, e, transport.DialConfig{Subprotocols: []string{proto}})
	if ext := s.conn.Extensions(); !strings.Contains(ext, "permessage-deflate") {
		t.Fatalf("Extensions() = %q: deflate not negotiated beside the subprotocol", ext)
	}
	server := ""
	if n, ok := s.srv.(interface{ Subprotocol() string }); ok {
		server = n.Subprotocol()
	}
	if got := transport.SubprotocolOf(s.conn); got != proto || server != proto {
		t.Fatalf("subprotocol: client %q, server %q; want %q", got, server, proto)
	}
	mustOK(t, s.srv.SendText(payload(20_000, 3)))
	s.rec.waitFor(t, "the message", func(r *recorder) bool { return len(r.msgs) >= 1 })
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if !bytes.Equal(s.rec.msgs[0], payload(20_000, 3)) {
		t.Fatalf("message of %d bytes differs from the %d sent", len(s.rec.msgs[0]), 20_000)
	}
}

// testControlReply: a control message written by the library (compressed by
// those that compress their writes) is inflated by the server and answered
// with a compressed reply, which arrives intact.
func testControlReply(t *testing.T, tr transport.Transport, e *env) {
	s := open(t, tr, e, transport.DialConfig{})
	mustOK(t, s.conn.WriteText([]byte(`{"method":"LIST_SUBSCRIPTIONS","id":42}`)))
	s.rec.waitFor(t, "the reply", func(r *recorder) bool { return len(r.msgs) >= 1 })
	s.rec.mu.Lock()
	defer s.rec.mu.Unlock()
	if got := string(s.rec.msgs[0]); got != `{"result":[],"id":42}` {
		t.Fatalf("reply %q", got)
	}
}

// testWireBytes: the frame bytes the client read equal those the server wrote, close frame included.
func testWireBytes(t *testing.T, tr transport.Transport, e *env) {
	s := open(t, tr, e, transport.DialConfig{})
	if s.wire == nil {
		t.Fatal("no wire counter on the dialer's connection")
	}
	n := 0
	for i := range 100 {
		mustOK(t, s.srv.SendText(fmt.Appendf(nil, `{"e":"aggTrade","a":%d,"p":"60000.%02d","q":"0.5"}`, i, i%100)))
		n++
	}
	mustOK(t, s.srv.SendText(payload(450_000, 9)))
	mustOK(t, s.srv.SendFragmented(payload(20_000, 4), 5))
	n += 2
	s.rec.waitFor(t, "all messages", func(r *recorder) bool { return len(r.msgs) >= n })
	mustOK(t, s.srv.Close(1000, "bye"))
	wantClose(t, s.runErr(t), 1000, "bye")
	<-s.srv.Done()
	client, server := s.wire.Load(), e.wireBytes(s.tag)
	if client != server {
		t.Fatalf("client read %d frame bytes, server wrote %d", client, server)
	}
	var payloadBytes int64
	s.rec.mu.Lock()
	for _, m := range s.rec.msgs {
		payloadBytes += int64(len(m))
	}
	s.rec.mu.Unlock()
	if client*4 > payloadBytes {
		t.Fatalf("wire %d bytes for %d payload bytes: not compressed", client, payloadBytes)
	}
}

// rsv1Frame is one unmasked server frame with RSV1 set on its header.
func rsv1Frame(fin bool, op byte, p []byte) []byte {
	b := appendFrame(nil, fin, op, p)
	b[0] |= 0x40
	return b
}

// testCorruptDeflate: a compressed message that does not inflate ends Run with
// an error naming it; the adapter does not crash and the process goes on.
func testCorruptDeflate(t *testing.T, tr transport.Transport, e *env) {
	s := open(t, tr, e, transport.DialConfig{})
	if !strings.Contains(s.conn.Extensions(), "permessage-deflate") {
		t.Fatalf("Extensions() = %q", s.conn.Extensions())
	}
	mustOK(t, e.raw.SendRawTo(s.tag, rsv1Frame(true, opText, []byte{0xff, 0xfe, 0xfd, 0x00, 0x13, 0x37})))
	err := s.runErr(t)
	var fce flate.CorruptInputError
	if !errors.As(err, &fce) {
		t.Fatalf("Run returned %v, want the inflation's cause (flate.CorruptInputError) in its chain", err)
	}
	// The client's close: 1007 from the adapters that read the stream
	// themselves, 1011 from gws (any failed inflation); coder closes the TCP
	// connection without a close frame (its choice: not waited for here).
	want := map[string]int{"gorilla": 1007, "fasthttp": 1007, "gobwas": 1007, "gws": 1011}[tr.Name()]
	if want == 0 {
		return
	}
	code, reason, cerr := e.clientClose(ctxTimeout(t), s.tag)
	if cerr != nil || code != want {
		t.Fatalf("client closed with %d %q (%v), want %d", code, reason, cerr, want)
	}
}

var (
	bombOnce sync.Once
	bomb     []byte // 64 MiB of zeros deflated: about 64 KB
)

// deflateBomb returns the compressed bytes of a message of 64 MiB × parts, ready to split into parts frames.
func deflateBomb(t *testing.T, parts int) []byte {
	bombOnce.Do(func() {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.BestCompression)
		zero := make([]byte, 1<<20)
		for range 64 {
			_, _ = w.Write(zero)
		}
		_ = w.Flush()
		bomb = bytes.TrimSuffix(b.Bytes(), []byte{0, 0, 0xff, 0xff})
	})
	if parts == 1 {
		return bomb
	}
	// The same compressed block repeated is a valid stream: each copy ends
	// byte-aligned after a sync flush, and inflates to 64 MiB more zeros.
	var b []byte
	for range parts {
		b = append(b, bomb...)
		b = append(b, 0, 0, 0xff, 0xff)
	}
	return b[:len(b)-4]
}

// testBomb: a 64 KB frame that inflates to 64 MiB (parts frames of a
// fragmented message, each inflating to 64 MiB) is refused by the read limit
// with close 1009, by its inflated size.
func testBomb(t *testing.T, tr transport.Transport, e *env, parts int) {
	s := open(t, tr, e, transport.DialConfig{ReadLimit: 1 << 20})
	z := deflateBomb(t, parts)
	if parts == 1 && len(z) > 70_000 {
		t.Fatalf("bomb of %d bytes", len(z))
	}
	var raw []byte
	size := len(z) / parts
	for i := range parts {
		chunk := z[i*size : (i+1)*size]
		if i == parts-1 {
			chunk = z[i*size:]
		}
		if i == 0 {
			raw = append(raw, rsv1Frame(i == parts-1, opText, chunk)...)
		} else {
			raw = append(raw, appendFrame(nil, i == parts-1, opContinuation, chunk)...)
		}
	}
	mustOK(t, e.raw.SendRawTo(s.tag, raw))
	err := s.runErr(t)
	if !errors.Is(err, transport.ErrReadLimit) {
		t.Fatalf("Run returned %v, want ErrReadLimit", err)
	}
	wantLimitClose(t, tr, e, s.tag)
}

// TestDeflateBombRSS runs the bombs against every adapter in a child process
// and checks the child's peak RSS (getrusage's ru_maxrss, a high-water mark,
// not a timing) stays under 100 MB: the adapters never inflate a message
// beyond the read limit.
func TestDeflateBombRSS(t *testing.T) {
	if os.Getenv("SOAK_BOMB_CHILD") != "" {
		t.Skip("in the child")
	}
	if testing.Short() {
		t.Skip("spawns a child test process")
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestConformanceDeflate$/.*/.*/raw/deflate-bomb", "-test.count=1")
	cmd.Env = append(os.Environ(), "SOAK_BOMB_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !bytes.Contains(out, []byte("PASS")) {
		t.Fatalf("child ran nothing:\n%s", out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no rusage on this system")
	}
	peak := ru.Maxrss << 10 // KiB on Linux
	t.Logf("child peak RSS %d MB over %d bomb runs", peak>>20, 2*len(compressionModes)*len(transport.All()))
	if peak > 100<<20 {
		t.Fatalf("peak RSS %d MB: a bomb was inflated beyond the read limit", peak>>20)
	}
}

// TestWireBytesTLS: over wss every adapter counts the frame bytes above TLS:
// what it read equals what the replay server wrote (which counts above TLS
// too), with and without deflate, and TLS records are not in it.
func TestWireBytesTLS(t *testing.T) {
	ca, err := cert.New(time.Hour, "127.0.0.1")
	mustOK(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	mustOK(t, os.WriteFile(caFile, ca.CAPEM, 0o600))
	trusted, err := transport.TLSConfig([]string{caFile}, "")
	mustOK(t, err)
	for _, tr := range transport.All() {
		for _, mode := range []wire.Compression{wire.CompressionOff, wire.CompressionOn} {
			t.Run(tr.Name()+"/"+mode.String(), func(t *testing.T) {
				cfg := replay.Config{TLS: ca.ServerTLS()}
				cfg.Compression = wire.CompressionOn
				e := replayEnvWith(t, cfg)
				if !strings.HasPrefix(e.url, "wss://") {
					t.Fatalf("server URL %s", e.url)
				}
				e.compression = mode
				s := open(t, tr, e, transport.DialConfig{TLS: trusted})
				for i := range 50 {
					mustOK(t, s.srv.SendText(fmt.Appendf(nil, `{"e":"trade","t":%d,"p":"60000.1"}`, i)))
				}
				mustOK(t, s.srv.SendText(payload(100_000, 1)))
				s.rec.waitFor(t, "51 messages", func(r *recorder) bool { return len(r.msgs) >= 51 })
				mustOK(t, s.srv.Close(1000, "bye"))
				wantClose(t, s.runErr(t), 1000, "bye")
				<-s.srv.Done()
				if client, server := s.wire.Load(), e.wireBytes(s.tag); client != server {
					t.Fatalf("client read %d frame bytes, server wrote %d", client, server)
				}
			})
		}
	}
}
