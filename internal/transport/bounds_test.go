package transport_test

import (
	"bufio"
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/transport"
)

// A CA file that never ends (/dev/zero) or is huge (a sparse terabyte) is
// refused at the bound, with the file named, instead of being read whole.
func TestCAFileBounded(t *testing.T) {
	sparse := filepath.Join(t.TempDir(), "big.pem")
	f, err := os.Create(sparse)
	mustOK(t, err)
	if err := f.Truncate(1 << 40); err != nil {
		f.Close()
		t.Skipf("no sparse file here: %v", err)
	}
	mustOK(t, f.Close())
	for _, file := range []string{"/dev/zero", sparse} {
		if _, err := os.Stat(file); err != nil {
			continue
		}
		err := endpoint.AppendCAFile(x509.NewCertPool(), file)
		if want := "ca file " + file + ": larger than 4 MiB"; err == nil || err.Error() != want {
			t.Errorf("AppendCAFile(%s) = %v, want %s", file, err, want)
		}
		if _, err := transport.TLSConfig([]string{file}, ""); err == nil || !strings.Contains(err.Error(), "larger than 4 MiB") {
			t.Errorf("TLSConfig(%s) = %v, want larger than 4 MiB", file, err)
		}
	}
}

// An HTTP proxy whose answer to CONNECT never ends (a header line without
// end) fails the dial at the bound instead of filling memory.
func TestProxyAnswerBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = c.Write([]byte("HTTP/1.1 200 Connection established\r\nX-Junk: "))
		junk := []byte(strings.Repeat("j", 32<<10))
		for {
			if _, err := c.Write(junk); err != nil {
				return // the client gave up
			}
		}
	}()
	p, err := endpoint.ParseProxy("http://" + ln.Addr().String())
	mustOK(t, err)
	d := &transport.Dialer{Proxy: p, Timeout: 30 * time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", "example.com:443")
	if err == nil {
		conn.Close()
		t.Fatal("dial through a proxy whose answer never ends succeeded")
	}
	if want := "the proxy's answer: larger than 64 KiB"; !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}
