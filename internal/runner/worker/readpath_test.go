package worker

import (
	"bufio"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

// firehose serves one connection: the 101, then, once start is closed, n
// aggTrade frames as fast as the socket takes them (64 a write) and a close
// 1000. Everything it writes is built before start.
type firehose struct {
	ln    net.Listener
	start chan struct{}
	done  chan error
}

func newFirehose(b *testing.B, n int) *firehose {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var block []byte
	for _, m := range aggTrades(64) {
		block = appendTextFrame(block, m)
	}
	f := &firehose{ln: ln, start: make(chan struct{}), done: make(chan error, 1)}
	go func() { f.done <- f.serve(block, n) }()
	return f
}

func appendTextFrame(b, p []byte) []byte {
	switch n := len(p); {
	case n < 126:
		b = append(b, 0x81, byte(n))
	case n <= 0xFFFF:
		b = append(b, 0x81, 126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x81, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, p...)
}

func (f *firehose) serve(block []byte, n int) error {
	defer f.ln.Close()
	conn, err := f.ln.Accept()
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // bounds a stuck client
	req, err := http.ReadRequest(bufio.NewReader(conn))
	if err != nil {
		return fmt.Errorf("read request: %w", err)
	}
	sum := sha1.Sum([]byte(req.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if _, err := io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Accept: "+base64.StdEncoding.EncodeToString(sum[:])+"\r\n\r\n"); err != nil {
		return fmt.Errorf("write 101: %w", err)
	}
	<-f.start
	frameLen := len(block) / 64
	for ; n > 0; n -= 64 {
		if _, err := conn.Write(block[:min(n, 64)*frameLen]); err != nil {
			return fmt.Errorf("write: %w", err)
		}
	}
	if _, err := conn.Write([]byte{0x88, 2, 0x03, 0xe8}); err != nil {
		return fmt.Errorf("write close: %w", err)
	}
	var sink [512]byte
	for {
		if _, err := conn.Read(sink[:]); err != nil {
			return nil
		}
	}
}

// BenchmarkReadPath is the full per-message path of a run on a firehose of
// aggTrade events over loopback, per library: the library's read loop, the
// read clock, OnMessage. One op is one message; compare with the transport
// package's BenchmarkRead (the library alone) for the harness's share.
func BenchmarkReadPath(b *testing.B) {
	for _, tr := range transport.All() {
		b.Run(tr.Name(), func(b *testing.B) {
			s := hotSlot(b)
			sb := s.byName["btcusdt@aggTrade"]
			srv := newFirehose(b, b.N)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			d := &transport.Dialer{}
			conn, err := tr.Dial(ctx, transport.DialConfig{
				URL: "ws://" + srv.ln.Addr().String() + "/stream",
				NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := d.DialContext(ctx, network, addr)
					if err == nil {
						s.clock = transport.ReadClockOf(c)
					}
					return c, err
				},
			})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Abort()
			b.ReportAllocs()
			b.ResetTimer()
			close(srv.start)
			err = conn.Run(s)
			b.StopTimer()
			var ce *transport.CloseError
			if !errors.As(err, &ce) || ce.Code != 1000 {
				b.Fatalf("Run returned %v, want close 1000", err)
			}
			if got := sb.msgs.Load(); got != int64(b.N) {
				b.Fatalf("got %d messages, want %d", got, b.N)
			}
			_ = conn.Abort()
			if err := <-srv.done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
