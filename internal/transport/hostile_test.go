package transport_test

import (
	"testing"

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
			if err := s.runErr(t); err == nil {
				t.Fatal("Run returned no error")
			} else {
				t.Logf("Run: %v", err)
			}
		})
	}
}
