package chat

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/transport/rawws"
)

// fuzzLimit is the fuzzed servers' read limit: small, so that inputs reach it.
const fuzzLimit = 64

// zeroMasked is a client frame masked with the key 0 0 0 0: the payload
// bytes are on the wire as they are, so that a mutation of the input is a
// mutation of the payload.
func zeroMasked(b0 byte, p []byte) []byte {
	f := []byte{b0}
	switch {
	case len(p) <= 125:
		f = append(f, 0x80|byte(len(p)))
	case len(p) <= 0xffff:
		f = append(f, 0x80|126, byte(len(p)>>8), byte(len(p)))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(len(p)))
	}
	return append(append(f, 0, 0, 0, 0), p...)
}

func cat(frames ...[]byte) []byte {
	var b []byte
	for _, f := range frames {
		b = append(b, f...)
	}
	return b
}

// allowedClose: a code an endpoint may send (RFC 6455 7.4): 1000–1003,
// 1007–1011 and the registered 1012–1014, or 3000–4999; 1005 stands for a
// close frame without a code, which is allowed too.
func allowedClose(code int) bool {
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1014, code == 1005:
		return true
	case code >= 3000 && code <= 4999:
		return true
	}
	return false
}

// fuzzRoom is one server under fuzzing with its observer, a client that
// stays in the room and reads everything broadcast.
type fuzzRoom struct {
	s   *Server
	obs *rawws.Conn
	got chan string // what the observer read, in order
	err chan error
	k   int // sync messages sent
}

// FuzzServerFrames sends arbitrary bytes, after the handshake, from a client
// to each library's server (read limit 64 bytes), then ends its writing
// side. Whatever the bytes: no server panics (a panic ends the process);
// the server ends the connection, with a close frame whose code the RFC
// allows if it sends one; everything the room's other client received from
// it is valid UTF-8 and within the read limit.
func FuzzServerFrames(f *testing.F) {
	for _, seed := range [][]byte{
		zeroMasked(0x81, []byte("hello")),
		zeroMasked(0x81, []byte{0x61, 0xff, 0xfe, 0x62}),
		cat(zeroMasked(0x01, []byte("caf\xc3")), zeroMasked(0x80, []byte("\xa9!"))),
		cat(zeroMasked(0x01, []byte("a\xc3")), zeroMasked(0x80, []byte("("))),
		cat(zeroMasked(0x01, []byte("x")), zeroMasked(0x89, []byte("p")), zeroMasked(0x80, []byte("y"))),
		cat(zeroMasked(0x89, []byte("ping")), zeroMasked(0x81, []byte("after"))),
		zeroMasked(0x88, []byte{0x03, 0xe8}),
		zeroMasked(0x88, []byte{0x03, 0xed}), // 1005 may not be sent
		zeroMasked(0x88, []byte{0x03}),
		zeroMasked(0x88, []byte{0x03, 0xe8, 0xff}),
		zeroMasked(0x81, []byte(strings.Repeat("z", fuzzLimit+1))),
		cat(zeroMasked(0x01, []byte(strings.Repeat("z", 40))), zeroMasked(0x80, []byte(strings.Repeat("z", 40)))),
		zeroMasked(0x82, []byte{0xff, 0x00}),
		zeroMasked(0x81, []byte("\xc0\x80")),
		zeroMasked(0x81, []byte("\xed\xa0\x80")),
		zeroMasked(0x81, []byte("\xf4\x90\x80\x80")),
		zeroMasked(0x83, []byte("reserved")),
		zeroMasked(0xc1, []byte("rsv1")),
		zeroMasked(0x80, []byte("orphan continuation")),
		zeroMasked(0x09, []byte("fragmented ping")),
		{0x81, 0xff, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0},
		{0x81, 0x05, 'h', 'e', 'l', 'l', 'o'}, // unmasked
		cat(zeroMasked(0x81, []byte("one")), zeroMasked(0x81, []byte("two é"))),
	} {
		f.Add(seed)
	}
	var rooms []*fuzzRoom
	for _, lib := range Libs {
		s := start(f, Config{Lib: lib, N: 2, ReadLimit: fuzzLimit})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		obs, err := rawws.Dial(ctx, s.URL()+"?name=o", rawws.Options{})
		cancel()
		if err != nil {
			f.Fatal(err)
		}
		f.Cleanup(func() { _ = obs.Conn.Close() })
		r := &fuzzRoom{s: s, obs: obs, got: make(chan string, 1024), err: make(chan error, 1)}
		go func() {
			for {
				m, err := obs.Next(true)
				if err != nil {
					r.err <- err
					return
				}
				r.got <- string(m.Payload)
			}
		}()
		rooms = append(rooms, r)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, r := range rooms {
			r.check(t, in)
		}
	})
}

// check sends in from a new client of r's room and checks what came of it.
func (r *fuzzRoom) check(t *testing.T, in []byte) {
	lib := r.s.cfg.Lib
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	c, err := rawws.Dial(ctx, r.s.URL()+"?name=f", rawws.Options{})
	cancel()
	if err != nil {
		t.Fatalf("%s: dial: %v", lib, err)
	}
	defer c.Conn.Close()
	_ = c.Conn.SetDeadline(time.Now().Add(10 * time.Second))
	_, _ = c.Conn.Write(in) // the server may close before it read it all
	_ = c.Conn.(*net.TCPConn).CloseWrite()
	// The server must end the connection: it read all there was.
	for {
		m, err := c.Next(true)
		if err == nil {
			if p := string(m.Payload); p != Ready {
				r.relayed(t, p)
			}
			continue
		}
		if errors.Is(err, io.EOF) {
			if code := c.Counts().CloseCode; !allowedClose(code) {
				t.Fatalf("%s: closed with %d, a code the RFC does not allow", lib, code)
			}
		} else if ne := (net.Error)(nil); errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%s: the connection did not end within 10 s of the client's end of input", lib)
		}
		break
	}
	// The observer reads what the room relayed up to a message of its own.
	deadline := time.Now().Add(10 * time.Second)
	for r.members() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the fuzzing client still in the room 10 s after its connection ended", lib)
		}
		time.Sleep(100 * time.Microsecond)
	}
	r.k++
	mark := "o: sync " + string(appendInt(nil, int64(r.k)))
	if _, err := r.obs.Conn.Write(rawws.AppendFrame(nil, rawws.OpText, true, []byte(mark[3:]), true)); err != nil {
		t.Fatalf("%s: observer: %v", lib, err)
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case p := <-r.got:
			if p == mark {
				return
			}
			if p != Ready {
				r.relayed(t, p)
			}
		case err := <-r.err:
			t.Fatalf("%s: observer: %v (close %d)", lib, err, r.obs.Counts().CloseCode)
		case <-timeout:
			t.Fatalf("%s: the observer's own message did not come back within 10 s", lib)
		}
	}
}

// relayed checks one message the room relayed from the fuzzing client.
func (r *fuzzRoom) relayed(t *testing.T, p string) {
	lib := r.s.cfg.Lib
	text, ok := strings.CutPrefix(p, "f: ")
	switch {
	case strings.HasPrefix(p, "o: sync "):
		// An earlier input's mark, left over when its check failed.
	case !ok:
		t.Fatalf("%s: relayed %q, not from the fuzzing client", lib, trim([]byte(p)))
	case !utf8.ValidString(text):
		t.Fatalf("%s: relayed invalid UTF-8 %q", lib, trim([]byte(text)))
	case len(text) > fuzzLimit:
		t.Fatalf("%s: relayed %d bytes, over the read limit of %d", lib, len(text), fuzzLimit)
	}
}

// members is how many clients the room has now.
func (r *fuzzRoom) members() int {
	r.s.room.mu.RLock()
	defer r.s.room.mu.RUnlock()
	return len(r.s.room.members)
}
