package transport_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

// selfSigned returns a certificate for 127.0.0.1 and its PEM encoding.
func selfSigned(t *testing.T) (tls.Certificate, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	mustOK(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "soak test"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	mustOK(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

// TestTLS dials every adapter over wss, verifying the server with a CA file loaded by
// TLSConfig, and checks that an unknown certificate is refused.
func TestTLS(t *testing.T) {
	cert, certPEM := selfSigned(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	mustOK(t, os.WriteFile(caFile, certPEM, 0o600))
	srv, err := newWSServerTLS(&tls.Config{Certificates: []tls.Certificate{cert}})
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
