package transport_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

// TestDialCancel: cancelling the Dial context ends a handshake that the server never
// answers, well before HandshakeTimeout.
func TestDialCancel(t *testing.T) {
	silent, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	mustOK(t, err)
	t.Cleanup(func() { _ = silent.Close() })
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			_, err := tr.Dial(ctx, transport.DialConfig{
				URL:              "ws://" + silent.Addr().String() + "/ws",
				HandshakeTimeout: 20 * time.Second,
			})
			if err == nil {
				t.Fatal("dial to a silent server succeeded")
			}
			// It ended because of the cancel (the context was already cancelled when
			// Dial returned), and long before the 20 s handshake timeout.
			if ctx.Err() == nil {
				t.Fatalf("dial returned before it was cancelled: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("cancelled dial took %v", d)
			}
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled dial returned %v, want context.Canceled", err)
			}
		})
	}
}
