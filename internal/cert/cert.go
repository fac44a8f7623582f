// Package cert makes a throwaway certificate authority and a server certificate signed
// by it: the replay server's TLS for wss:// runs, and test proxies and servers. The CA
// lives as long as the run directory it is written to; nothing is installed anywhere.
package cert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/limit"
	"github.com/wssoak/wssoak/internal/rundir"
)

// LocalHosts are the names of a certificate for a loopback server.
var LocalHosts = []string{"127.0.0.1", "::1", "localhost"}

// Authority is a CA and one server certificate it signed, all PEM-encoded.
type Authority struct {
	CAPEM   []byte // the CA certificate: what clients trust
	CertPEM []byte // the server certificate
	KeyPEM  []byte // the server's private key
}

// Files are the paths Write wrote.
type Files struct{ CA, Cert, Key string }

// New makes a CA and a server certificate for hosts (IP addresses or DNS names), valid
// from an hour ago for validFor.
func New(validFor time.Duration, hosts ...string) (*Authority, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("ca key: %w", err)
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "soak throwaway CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validFor),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("ca certificate: %w", err)
	}
	ca, _ = x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "soak replay server"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validFor),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("server key: %w", err)
	}
	return &Authority{
		CAPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n.Add(n, big.NewInt(1))
}

// Write writes ca.pem, server.pem and server-key.pem (mode 0600) into dir, each
// through rundir.WriteFile (a symlink at a name is replaced, not followed).
func (a *Authority) Write(dir string) (Files, error) {
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server-key.pem")}
	for path, data := range map[string][]byte{f.CA: a.CAPEM, f.Cert: a.CertPEM, f.Key: a.KeyPEM} {
		if err := rundir.WriteFile(path, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return Files{}, fmt.Errorf("write certificate: %w", err)
		}
	}
	return f, nil
}

// ServerTLS is the server side: the certificate and its key.
func (a *Authority) ServerTLS() *tls.Config {
	c, err := tls.X509KeyPair(a.CertPEM, a.KeyPEM)
	if err != nil {
		panic("cert: own key pair does not load: " + err.Error()) // cannot happen: New made both
	}
	return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}
}

// Pool is a certificate pool holding only the CA.
func (a *Authority) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AppendCertsFromPEM(a.CAPEM)
	return p
}

// ServerFiles loads a server's TLS settings from PEM files (soak serve -cert
// -key) of at most limit.PEMFile bytes each.
func ServerFiles(certFile, keyFile string) (*tls.Config, error) {
	certPEM, err := limit.ReadFile("certificate file", certFile, limit.PEMFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := limit.ReadFile("key file", keyFile, limit.PEMFile)
	if err != nil {
		return nil, err
	}
	c, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{c}, MinVersion: tls.VersionTLS12}, nil
}
