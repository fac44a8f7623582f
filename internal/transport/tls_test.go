package transport_test

import (
	"context"
	"crypto/x509"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/transport"
)

// TestTLS dials every adapter over wss, verifying the server with a CA file loaded by
// TLSConfig, and checks that an unknown certificate is refused.
func TestTLS(t *testing.T) {
	ca, err := cert.New(time.Hour, "127.0.0.1")
	mustOK(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	mustOK(t, os.WriteFile(caFile, ca.CAPEM, 0o600))
	srv, err := newWSServerTLS(ca.ServerTLS())
	mustOK(t, err)
	t.Cleanup(srv.Close)
	e := &env{url: srv.URL(), wait: func(ctx context.Context, tag string) (peer, error) { return srv.WaitConn(ctx, tag) }, raw: srv}
	trusted, err := transport.TLSConfig([]string{caFile}, "")
	mustOK(t, err)
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			s := open(t, tr, e, transport.DialConfig{TLS: trusted})
			mustOK(t, s.srv.SendText([]byte("over tls")))
			s.rec.waitFor(t, "1 message", func(r *recorder) bool { return len(r.msgs) == 1 })
			mustOK(t, s.srv.Ping([]byte("tls-ping")))
			mustOK(t, s.srv.WaitPong(ctxTimeout(t), []byte("tls-ping")))
			mustOK(t, s.conn.Close(1000, ""))

			untrusted, err := transport.TLSConfig(nil, "")
			mustOK(t, err)
			_, err = tr.Dial(ctxTimeout(t), transport.DialConfig{URL: srv.URL() + "/ws", TLS: untrusted})
			var ue x509.UnknownAuthorityError
			if !errors.As(err, &ue) {
				t.Fatalf("dial with an untrusted certificate returned %v, want x509.UnknownAuthorityError", err)
			}
		})
	}
}
