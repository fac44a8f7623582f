package endpoint

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The full tables run through transport's forwarders (transport/proxy_test.go);
// these check the package on its own.
func TestParseProxy(t *testing.T) {
	p, err := ParseProxy("socks5://u:p%40ss@proxy.example:1081")
	if err != nil {
		t.Fatal(err)
	}
	if p.Scheme != "socks5" || p.Addr != "proxy.example:1081" || p.User != "u" || p.Pass != "p@ss" || p.String() != "socks5://u:****@proxy.example:1081" {
		t.Errorf("got %+v (%s)", *p, p)
	}
	if _, err := ParseProxy("ftp://u:s3cret@h"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unsupported scheme: %v, want an error without the password", err)
	}
	if got := Mask(`dial "http://u:s3cret@h:8080/x" failed`); got != `dial "http://u:****@h:8080/x" failed` {
		t.Errorf("Mask: %s", got)
	}
}

func TestAppendCAFile(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	good, bad := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "bad.pem")
	if err := os.WriteFile(good, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AppendCAFile(x509.NewCertPool(), good); err != nil {
		t.Errorf("%s: %v", good, err)
	}
	if err := AppendCAFile(x509.NewCertPool(), bad); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Errorf("%s: %v, want no PEM certificate", bad, err)
	}
}
