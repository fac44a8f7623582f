package chat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gobwas/ws"
	"github.com/gobwas/ws/wsutil"

	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// discard is a sink that writes nowhere.
type discard struct{}

func (discard) write([]byte) error { return nil }
func (discard) flush() error       { return nil }
func (discard) kill(int, string)   {}

// BenchmarkBroadcast is the room's hot path: one message in, 16 deliveries
// out through the members' queues and writer goroutines; no allocation per
// message once the pool is warm.
func BenchmarkBroadcast(b *testing.B) {
	const n = 16
	r := NewRoom(n, DefaultQueue)
	for i := range n {
		if err := r.join(r.newMember(fmt.Sprint("c", i), discard{}, nil)); err != nil {
			b.Fatal(err)
		}
	}
	text := []byte("12345 hello room")
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		r.Broadcast("c1", text)
		if i%1024 == 1023 {
			settle(b, r)
		}
	}
	settle(b, r)
	b.StopTimer()
	b.ReportMetric(float64(r.deliveries.Load())/float64(b.N), "deliveries/op")
}

// settle waits until the writers have written everything queued (bounded).
func settle(b *testing.B, r *Room) {
	deadline := time.Now().Add(10 * time.Second)
	for r.inflight.Load() != 0 {
		if time.Now().After(deadline) {
			b.Fatalf("%d deliveries still in flight after 10 s", r.inflight.Load())
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// BenchmarkParseDelivery is the load client's per-delivery parse.
func BenchmarkParseDelivery(b *testing.B) {
	p := []byte("c17: 123456xxxxxxxxxx")
	b.ReportAllocs()
	for range b.N {
		if _, _, ok := parseDelivery(p, 64); !ok {
			b.Fatal("no parse")
		}
	}
}

// broadcastStream is what a load client of a room of 64 reads in one round:
// 64 server frames "cI: SEQ", unmasked, repeated rounds times.
func broadcastStream(rounds int) []byte {
	var b []byte
	for r := 1; r <= rounds; r++ {
		for i := range 64 {
			b = rawws.AppendFrame(b, rawws.OpText, true, []byte(fmt.Sprintf("c%d: %d", i, r)), false)
		}
	}
	return b
}

// cycle reads its bytes over and over.
type cycle struct {
	b []byte
	i int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := copy(p, c.b[c.i:])
	c.i = (c.i + n) % len(c.b)
	return n, nil
}

// BenchmarkClientRead compares the readers the load client could use, per
// delivery read and parsed from memory (the socket's part, the same for
// both, left out): rawws, the library-free reader it uses, against gobwas's
// low-level wsutil.Reader over a bufio.Reader, the cheapest library reader
// of the client bench. One op is one delivery.
func BenchmarkClientRead(b *testing.B) {
	stream := broadcastStream(64)
	b.Run("reader=rawws", func(b *testing.B) {
		rd := rawws.NewReader(&cycle{b: stream}, nil, 64<<10, nil)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			m, err := rd.Next(true)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, ok := parseDelivery(m.Payload, 64); !ok {
				b.Fatal("no parse")
			}
		}
	})
	b.Run("reader=gobwas", func(b *testing.B) {
		rd := &wsutil.Reader{Source: bufio.NewReaderSize(&cycle{b: stream}, 64<<10), State: ws.StateClientSide, CheckUTF8: false}
		buf := make([]byte, 256)
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			h, err := rd.NextFrame()
			if err != nil {
				b.Fatal(err)
			}
			if h.OpCode != ws.OpText {
				b.Fatal("not text")
			}
			n, err := io.ReadFull(rd, buf[:h.Length])
			if err != nil {
				b.Fatal(err)
			}
			if _, _, ok := parseDelivery(buf[:n], 64); !ok {
				b.Fatal("no parse")
			}
		}
	})
}

// BenchmarkServerRead is each server's read path per message: one client,
// alone in a room of 1, sends text messages of 96 bytes (some of them
// multi-byte UTF-8) in writes of 256 frames and reads back its own
// broadcasts; an op is one message read, checked, broadcast and written
// back. Allocations count the whole process (the client allocates nothing
// per message), so allocs/op is the server's.
func BenchmarkServerRead(b *testing.B) {
	text := []byte(strings.Repeat("é1234567", 12)[:96])
	for _, lib := range Libs {
		b.Run("lib="+lib, func(b *testing.B) {
			s := start(b, Config{Lib: lib, N: 1})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := rawws.Dial(ctx, s.URL()+"?name=b", rawws.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Conn.Close()
			if m, err := c.Next(true); err != nil || string(m.Payload) != Ready {
				b.Fatalf("ready: %q, %v", m.Payload, err)
			}
			const burst = 256
			var frames []byte
			for range burst {
				frames = rawws.AppendFrame(frames, rawws.OpText, true, text, true)
			}
			// At most window bursts in flight: the room's queue (4096) never fills.
			const window = 8
			credit := make(chan struct{}, window)
			for range window {
				credit <- struct{}{}
			}
			got := make(chan error, 1)
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			b.ResetTimer()
			go func() {
				for i := range b.N {
					if _, err := c.Next(false); err != nil {
						got <- fmt.Errorf("%w (close %d)", err, c.Counts().CloseCode)
						return
					}
					if i%burst == burst-1 {
						credit <- struct{}{}
					}
				}
				got <- nil
			}()
			for sent := 0; sent < b.N; sent += burst {
				<-credit
				if _, err := c.Conn.Write(frames[:min(burst, b.N-sent)*len(frames)/burst]); err != nil {
					b.Fatal(err)
				}
			}
			if err := <-got; err != nil {
				b.Fatal(err)
			}
		})
	}
}
