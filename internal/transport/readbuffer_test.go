package transport_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestReadBufferSize: DialConfig.ReadBufferSize sizes a library's reads
// where wire.HasReadBuffer says it has a size to set (a variant's
// read_buffer_size): one burst takes many more socket reads through a small
// buffer than through a large one. coder's reader keeps its own size.
func TestReadBufferSize(t *testing.T) {
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Parallel()
			small, large := burstReads(t, tr, 512), burstReads(t, tr, 256<<10)
			// Read 512 bytes at a time, the burst takes about 400 reads (some
			// of it may come with the handshake's answer); 256 KiB at a
			// time, a few.
			sized := small >= burstBytes/512/2 && large*4 <= small
			t.Logf("%s: %d reads through 512 B, %d through 256 KiB", tr.Name(), small, large)
			if sized != wire.HasReadBuffer(tr.Name()) {
				t.Errorf("%s: %d reads through 512 B, %d through 256 KiB; wire.HasReadBuffer says %v",
					tr.Name(), small, large, wire.HasReadBuffer(tr.Name()))
			}
		})
	}
}

// burstReads serves one connection a burst of 1,000 messages of 200 bytes in
// two writes, the first with its 101 (about 200 KB), then a close, and returns how many socket reads
// the client made for them, reading with ReadBufferSize rb.
func burstReads(t *testing.T, tr transport.Transport, rb int) int64 {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	defer ln.Close()
	const n = 1000
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			conn, err := ln.Accept()
			if err != nil {
				return err
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(time.Minute)) // bounds a stuck client
			var burst []byte
			for range n {
				burst = appendFrame(burst, true, opText, stampMessage(0, 200))
			}
			// The first frames go with the 101, in its write: a library
			// whose handshake reader read them must hand the rest of the
			// connection to the reader of the size asked for.
			const greet = 10 * 202
			br := bufio.NewReader(conn)
			if _, err := upgradeGreet(conn, br, burst[:greet]); err != nil {
				return err
			}
			burst = burst[greet:]
			burst = appendFrame(burst, true, opClose, closePayload(1000, "done"))
			if len(burst)+greet < burstBytes {
				return fmt.Errorf("burst of %d bytes, want at least %d", len(burst), burstBytes)
			}
			if _, err := conn.Write(burst); err != nil {
				return fmt.Errorf("write: %w", err)
			}
			_, _ = br.Discard(1 << 20) // until the client's close echo and EOF
			return nil
		}()
	}()
	var reads atomic.Int64
	count := func() { reads.Add(1) }
	d := &transport.Dialer{}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var clock *transport.ReadClock
	conn, err := tr.Dial(ctx, transport.DialConfig{URL: "ws://" + ln.Addr().String() + "/ws", ReadBufferSize: rb,
		NetDial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err == nil {
				clock = transport.ReadClockOf(c)
			}
			return c, err
		}})
	mustOK(t, err)
	defer conn.Abort()
	clock.BeforeRead(&count)
	h := &countHandler{}
	err = conn.Run(h)
	var ce *transport.CloseError
	if !errors.As(err, &ce) || ce.Code != 1000 || h.n != n {
		t.Fatalf("%s: Run returned %v after %d messages, want close 1000 after %d", tr.Name(), err, h.n, n)
	}
	mustOK(t, <-done)
	return reads.Load()
}

// burstBytes is about the size of burstReads's burst: 1,000 frames of 2 + 200 bytes.
const burstBytes = 1000 * 202

type countHandler struct{ n int }

func (h *countHandler) OnMessage(bool, []byte) { h.n++ }
func (h *countHandler) OnPing([]byte)          {}
func (h *countHandler) OnPong([]byte)          {}
