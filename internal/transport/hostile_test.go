package transport_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

// TestHostileLength: a server frame whose 64-bit payload length has its top
// bit set (RFC 6455 5.2 forbids it) fails the connection with an error from
// Run for every library, never a panic of the process: gws v1.8.9 slices its
// buffer by that length read as a negative int (the chat server's fuzz test
// found it on the server side), which would crash a worker and lose what it
// counted since its last frame.
func TestHostileLength(t *testing.T) {
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			srv := rawEnv(t)
			s := open(t, tr, srv, transport.DialConfig{})
			frame := []byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 0x10}
			mustOK(t, s.srv.(*wsConn).SendRaw(append(frame, make([]byte, 16)...)))
			if tr.Name() == "nbio" {
				// A finding: nbio v1.6.8 reads the length as a negative
				// number and waits for the rest of the frame forever. The
				// connection hangs, silent, until the harness gives up on it
				// (its silence watchdog or keepalive): it neither fails nor
				// panics. Run must still return once aborted.
				select {
				case err := <-s.errc:
					t.Fatalf("nbio's Run returned %v: the library fails such a frame now; update the finding", err)
				case <-time.After(500 * time.Millisecond):
				}
				mustOK(t, s.conn.Abort())
				if err := s.runErr(t); !errors.Is(err, net.ErrClosed) {
					t.Fatalf("Run after Abort: %v, want net.ErrClosed", err)
				}
				return
			}
			if err := s.runErr(t); err == nil {
				t.Fatal("Run returned no error")
			} else {
				t.Logf("Run: %v", err)
			}
		})
	}
}
