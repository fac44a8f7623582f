package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
	"time"
)

// Dialer is the one TCP dialer shared by every adapter (DialConfig.NetDial = d.DialContext),
// so that socket options and, later, proxying are the same for all libraries.
type Dialer struct {
	RcvBuf    int           // SO_RCVBUF in bytes, set before connect(); 0 = kernel default (autotuning)
	Timeout   time.Duration // TCP connect timeout; 0 = bounded only by ctx
	KeepAlive time.Duration // TCP keepalive period; 0 = Go default (15 s), negative = off
}

// DialContext opens a TCP connection to addr. It has the signature of DialConfig.NetDial.
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	// Proxy seam: a proxied dial connects to the proxy here with the same net.Dialer (so the
	// socket options apply to the local socket), runs CONNECT or SOCKS5 for addr, and returns
	// the tunnelled conn. The adapters never see the difference.
	conn, err := d.netDialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return conn, nil
}

func (d *Dialer) netDialer() *net.Dialer {
	nd := &net.Dialer{Timeout: d.Timeout, KeepAlive: d.KeepAlive}
	if d.RcvBuf > 0 {
		size := d.RcvBuf
		// Control runs after socket() and before connect(), so the SYN already
		// advertises the window scale that fits the buffer.
		nd.Control = func(_, _ string, rc syscall.RawConn) error {
			return setRcvBuf(rc, size)
		}
	}
	return nd
}

// ReceiveBuffer returns the effective SO_RCVBUF of conn as the kernel reports it
// (Linux reports twice the requested value, capped by net.core.rmem_max).
// conn may be a *tls.Conn or anything else that exposes its net.Conn with NetConn().
func ReceiveBuffer(conn net.Conn) (int, error) {
	for {
		nc, ok := conn.(interface{ NetConn() net.Conn })
		if !ok {
			break
		}
		conn = nc.NetConn()
	}
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return 0, fmt.Errorf("receive buffer: %T has no file descriptor", conn)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0, fmt.Errorf("receive buffer: %w", err)
	}
	return getRcvBuf(rc)
}

// TLSConfig returns the client TLS settings for wss targets: the system roots plus the
// PEM certificates in caFile (if not empty), or no verification at all when insecure.
func TLSConfig(caFile string, insecure bool) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecure}
	if caFile == "" {
		return cfg, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read ca file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("read ca file: no PEM certificate in " + caFile)
	}
	cfg.RootCAs = pool
	return cfg, nil
}
