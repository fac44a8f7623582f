package transport_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/transport"
)

// stampServer serves one connection a script of writes and records, for each
// message, the wall time just before the write that carried its last byte.
// gap separates writes, so that the client's reads see them apart (the
// assertions hold whatever the reads see; the gap makes them bite).
type stampServer struct {
	ln   net.Listener
	sent chan []int64 // per message index: Unix ns before its last byte's write
	err  chan error
}

// Message i's payload starts with its index (4 digits) and is size bytes long.
func stampMessage(i, size int) []byte {
	p := make([]byte, size)
	for j := range p {
		p[j] = 'a' + byte(j%26)
	}
	copy(p, fmt.Sprintf("%04d", i))
	return p
}

// newStampServer starts the server; over TLS when tc is not nil.
func newStampServer(t *testing.T, gap time.Duration, tc *tls.Config) *stampServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	s := &stampServer{ln: ln, sent: make(chan []int64, 1), err: make(chan error, 1)}
	go func() { s.err <- s.serve(gap, tc) }()
	return s
}

func (s *stampServer) serve(gap time.Duration, tc *tls.Config) error {
	defer s.ln.Close()
	conn, err := s.ln.Accept()
	if err != nil {
		return fmt.Errorf("accept: %w", err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Minute)) // bounds a stuck client
	if tc != nil {
		conn = tls.Server(conn, tc) // each write below is one record or more
	}
	var sent []int64
	next := func() int { sent = append(sent, 0); return len(sent) - 1 }
	// write sends b and gives the messages in last their send time.
	write := func(b []byte, last ...int) error {
		now := time.Now().UnixNano()
		for _, i := range last {
			sent[i] = now
		}
		if _, err := conn.Write(b); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		time.Sleep(gap)
		return nil
	}
	// Message 0 comes with the 101, in one segment (read with the handshake).
	i := next()
	sent[i] = time.Now().UnixNano()
	if _, err := upgradeGreet(conn, bufio.NewReader(conn), appendFrame(nil, true, opText, stampMessage(i, 200))); err != nil {
		return err
	}
	time.Sleep(gap)
	// One small message per write.
	for range 5 {
		i := next()
		if err := write(appendFrame(nil, true, opText, stampMessage(i, 200)), i); err != nil {
			return err
		}
	}
	// A burst: several messages in one write; then messages split across
	// writes, the last byte (or the frame header) late, small and large.
	var burst []byte
	var ids []int
	for range 8 {
		i := next()
		burst = appendFrame(burst, true, opText, stampMessage(i, 200))
		ids = append(ids, i)
	}
	if err := write(burst, ids...); err != nil {
		return err
	}
	for _, size := range []int{200, 5000, 100 << 10} {
		i := next()
		f := appendFrame(nil, true, opText, stampMessage(i, size))
		if err := write(f[:len(f)-1]); err != nil {
			return err
		}
		if err := write(f[len(f)-1:], i); err != nil {
			return err
		}
		i = next()
		f = appendFrame(nil, true, opText, stampMessage(i, size))
		if err := write(f[:1]); err != nil {
			return err
		}
		if err := write(f[1:], i); err != nil {
			return err
		}
	}
	// A fragmented message: its last byte is in the final fragment's write.
	i = next()
	p := stampMessage(i, 3000)
	if err := write(appendFrame(nil, false, opText, p[:1000])); err != nil {
		return err
	}
	if err := write(appendFrame(nil, false, opContinuation, p[1000:2000])); err != nil {
		return err
	}
	if err := write(appendFrame(nil, true, opContinuation, p[2000:]), i); err != nil {
		return err
	}
	s.sent <- sent
	if _, err := conn.Write(appendFrame(nil, true, opClose, closePayload(1000, "done"))); err != nil {
		return fmt.Errorf("write close: %w", err)
	}
	var sink [512]byte
	for {
		if _, err := conn.Read(sink[:]); err != nil {
			return nil
		}
	}
}

// stampRecorder keeps, per message, the read clock and the time at handling.
type stampRecorder struct {
	clock   *transport.ReadClock
	idx     []int
	stamp   []int64
	handled []int64
	sizes   []int
}

func (r *stampRecorder) OnMessage(_ bool, p []byte) {
	wall, _ := r.clock.Load()
	now := time.Now().UnixNano()
	i, err := strconv.Atoi(string(p[:4]))
	if err != nil {
		i = -1
	}
	r.idx = append(r.idx, i)
	r.stamp = append(r.stamp, wall)
	r.handled = append(r.handled, now)
	r.sizes = append(r.sizes, len(p))
}
func (r *stampRecorder) OnPing([]byte) {}
func (r *stampRecorder) OnPong([]byte) {}

// TestReadClockStamps checks, for each library, over ws and wss, that a
// message's receive time from the read clock is never earlier than the
// server's write of its last byte: libraries (and TLS) that buffer and read
// ahead must not lend a message an earlier read's time.
func TestReadClockStamps(t *testing.T) {
	ca, err := cert.New(time.Hour, "127.0.0.1")
	mustOK(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	mustOK(t, os.WriteFile(caFile, ca.CAPEM, 0o600))
	trusted, err := transport.TLSConfig([]string{caFile}, "")
	mustOK(t, err)
	for _, tr := range transport.All() {
		for _, scheme := range []string{"ws", "wss"} {
			t.Run(tr.Name()+"/"+scheme, func(t *testing.T) {
				t.Parallel()
				testReadClockStamps(t, tr, scheme, ca.ServerTLS(), trusted)
			})
		}
	}
}

func testReadClockStamps(t *testing.T, tr transport.Transport, scheme string, serverTLS, clientTLS *tls.Config) {
	var srv *stampServer
	cfg := transport.DialConfig{}
	if scheme == "wss" {
		srv = newStampServer(t, 2*time.Millisecond, serverTLS)
		cfg.TLS = clientTLS
	} else {
		srv = newStampServer(t, 2*time.Millisecond, nil)
	}
	rec := &stampRecorder{}
	d := &transport.Dialer{}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	cfg.URL = scheme + "://" + srv.ln.Addr().String() + "/ws"
	cfg.NetDial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			rec.clock = transport.ReadClockOf(c)
		}
		return c, err
	}
	conn, err := tr.Dial(ctx, cfg)
	mustOK(t, err)
	defer conn.Abort()
	if rec.clock == nil {
		t.Fatal("the dialer's connection has no read clock")
	}
	err = conn.Run(rec)
	var ce *transport.CloseError
	if !errors.As(err, &ce) || ce.Code != 1000 {
		t.Fatalf("Run returned %v, want close 1000", err)
	}
	mustOK(t, <-srv.err)
	sent := <-srv.sent
	if len(rec.idx) != len(sent) {
		t.Fatalf("got %d messages, want %d", len(rec.idx), len(sent))
	}
	for k, i := range rec.idx {
		if i != k {
			t.Fatalf("message %d has index %d", k, i)
		}
		if rec.stamp[k] < sent[i] {
			t.Errorf("message %d (%d B): read clock %d is %v before the write of its last byte",
				i, rec.sizes[k], rec.stamp[k], time.Duration(sent[i]-rec.stamp[k]))
		}
		if rec.stamp[k] > rec.handled[k] {
			t.Errorf("message %d: read clock %d is after its handling %d", i, rec.stamp[k], rec.handled[k])
		}
	}
}

func TestReadClockOf(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if transport.ReadClockOf(a) != nil {
		t.Fatal("a net.Pipe has a read clock")
	}
	var c transport.ReadClock
	if w, m := c.Load(); w != 0 || m != 0 {
		t.Fatalf("zero clock reads %d, %d", w, m)
	}
	t0 := time.Now()
	c.Stamp(t0)
	w, m := c.Load()
	if w != t0.UnixNano() {
		t.Errorf("wall %d, want %d", w, t0.UnixNano())
	}
	if got := m - transport.MonoOrigin(t0); got != 0 {
		t.Errorf("mono since the stamp's own instant is %d, want 0", got)
	}
}
