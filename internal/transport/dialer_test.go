package transport_test

import (
	"context"
	"net"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/transport"
)

func TestDialerRcvBuf(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_RCVBUF read-back semantics checked on Linux only")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	dial := func(rcvbuf int) int {
		t.Helper()
		d := &transport.Dialer{RcvBuf: rcvbuf, Timeout: time.Second}
		conn, err := d.DialContext(context.Background(), "tcp", ln.Addr().String())
		mustOK(t, err)
		defer conn.Close()
		n, err := transport.ReceiveBuffer(conn)
		mustOK(t, err)
		return n
	}
	const want = 96 << 10 // below the usual net.core.rmem_max (208 KiB)
	if got := dial(want); got != 2*want {
		t.Fatalf("SO_RCVBUF %d: kernel reports %d, want %d (Linux doubles the value)", want, got, 2*want)
	}
	if got := dial(0); got == 2*want {
		t.Fatalf("RcvBuf 0 still set SO_RCVBUF to %d", got)
	}
}

func TestDialerError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, err = (&transport.Dialer{}).DialContext(context.Background(), "tcp", addr)
	if err == nil || !strings.Contains(err.Error(), addr) {
		t.Fatalf("dial to a closed port: got %v, want an error naming %s", err, addr)
	}
}

func TestTLSConfig(t *testing.T) {
	cfg, err := transport.TLSConfig(nil, "example.test")
	mustOK(t, err)
	if cfg.InsecureSkipVerify || cfg.ServerName != "example.test" || cfg.RootCAs != nil {
		t.Fatalf("TLSConfig(nil, name) = insecure %v, server name %q, roots %v", cfg.InsecureSkipVerify, cfg.ServerName, cfg.RootCAs)
	}
	dir := t.TempDir()
	if _, err := transport.TLSConfig([]string{dir + "/missing.pem"}, ""); err == nil || !strings.Contains(err.Error(), "missing.pem") {
		t.Fatalf("missing CA file: got %v, want an error naming it", err)
	}
	mustOK(t, os.WriteFile(dir+"/junk.pem", []byte("not a certificate"), 0o600))
	if _, err := transport.TLSConfig([]string{dir + "/junk.pem"}, ""); err == nil || !strings.Contains(err.Error(), "no PEM certificate") {
		t.Fatalf("CA file without a certificate: got %v", err)
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"gorilla", "gobwas", "coder", "gws", "fasthttp", "nbio"}
	if got := transport.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, tr := range transport.All() {
		got, err := transport.Lookup(tr.Name())
		mustOK(t, err)
		if got.Name() != tr.Name() || got.Module() == "" {
			t.Fatalf("Lookup(%q) = %v", tr.Name(), got)
		}
		// Test binaries carry no dependency list in their build info; the soak binary does.
		want := "unknown"
		if info, ok := debug.ReadBuildInfo(); ok && len(info.Deps) > 0 {
			want = "v1."
		}
		if v := tr.Version(); !strings.HasPrefix(v, want) {
			t.Errorf("%s: Version() = %q, want %s", tr.Name(), v, want)
		}
	}
	_, err := transport.Lookup("nope")
	if err == nil || !strings.Contains(err.Error(), "nope") || !strings.Contains(err.Error(), "gorilla, gobwas, coder, gws, fasthttp") {
		t.Fatalf("Lookup(nope) error = %v", err)
	}
}
