package transport_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

// benchMsgSize is the payload size of one benchmark message (an aggTrade event is ~190 B).
const benchMsgSize = 200

// benchBlock is how many frames the pre-built buffer holds.
const benchBlock = 1024

// aggTrade returns a Binance-aggTrade-like JSON event of exactly benchMsgSize bytes.
func aggTrade(i int) []byte {
	const ms = 1712345678901
	p := fmt.Appendf(nil, `{"e":"aggTrade","E":%d,"s":"BTCUSDT","a":%d,"p":"%d.%02d000000","q":"0.%06d00","f":%d,"l":%d,"T":%d,"m":%t,"M":true}`,
		ms+i, 3012345678+i, 67000+i%1000, i%100, 12300+i%7000, 4012345678+2*i, 4012345679+2*i, ms+i-1, i%2 == 0)
	if len(p) > benchMsgSize {
		panic(fmt.Sprintf("aggTrade is %d bytes", len(p)))
	}
	// Pad with JSON whitespace before the closing brace.
	return append(append(p[:len(p)-1], strings.Repeat(" ", benchMsgSize-len(p))...), '}')
}

// benchServer serves one connection: the 101 by hand, then, once start is closed,
// exactly n pre-encoded text frames and a close frame. Everything it writes is built
// before start, so the timed part allocates nothing on the server side.
type benchServer struct {
	ln    net.Listener
	start chan struct{}
	done  chan error
}

func newBenchServer(b *testing.B, n int) *benchServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var block []byte
	for i := range benchBlock {
		block = appendFrame(block, true, opText, aggTrade(i))
	}
	frameLen := len(block) / benchBlock
	closing := appendFrame(nil, true, opClose, closePayload(1000, "done"))
	s := &benchServer{ln: ln, start: make(chan struct{}), done: make(chan error, 1)}
	go func() {
		s.done <- s.serve(block, frameLen, n, closing)
	}()
	return s
}

func (s *benchServer) serve(block []byte, frameLen, n int, closing []byte) error {
	defer s.ln.Close()
	conn, err := s.ln.Accept()
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // bounds a stuck client
	if _, err := upgrade(conn, bufio.NewReader(conn)); err != nil {
		return err
	}
	<-s.start
	for n >= benchBlock {
		if _, err := conn.Write(block); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		n -= benchBlock
	}
	if _, err := conn.Write(block[:n*frameLen]); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if _, err := conn.Write(closing); err != nil {
		return fmt.Errorf("write close: %w", err)
	}
	// Wait for the client to hang up (it echoes the close first).
	var sink [512]byte
	for {
		if _, err := conn.Read(sink[:]); err != nil {
			return nil
		}
	}
}

// counter is the benchmark's Handler.
type counter struct{ msgs, bytes int }

func (c *counter) OnMessage(_ bool, p []byte) { c.msgs++; c.bytes += len(p) }
func (c *counter) OnPing([]byte)              {}
func (c *counter) OnPong([]byte)              {}

// BenchmarkRead measures one adapter's read loop on a firehose of small text frames:
// one op is one message, allocations are the client's (the server allocates nothing
// while the timer runs).
func BenchmarkRead(b *testing.B) {
	for _, tr := range transport.All() {
		b.Run(tr.Name(), func(b *testing.B) {
			srv := newBenchServer(b, b.N)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := tr.Dial(ctx, transport.DialConfig{
				URL:     "ws://" + srv.ln.Addr().String() + "/ws",
				NetDial: (&transport.Dialer{}).DialContext,
			})
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Abort()
			h := &counter{}
			b.SetBytes(benchMsgSize)
			b.ReportAllocs()
			b.ResetTimer()
			close(srv.start)
			err = conn.Run(h)
			b.StopTimer()
			var ce *transport.CloseError
			if !errors.As(err, &ce) || ce.Code != 1000 {
				b.Fatalf("Run returned %v, want close 1000", err)
			}
			if h.msgs != b.N || h.bytes != b.N*benchMsgSize {
				b.Fatalf("got %d messages (%d bytes), want %d", h.msgs, h.bytes, b.N)
			}
			_ = conn.Abort()
			if err := <-srv.done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
