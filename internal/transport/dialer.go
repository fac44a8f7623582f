package transport

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
)

// Dialer is the one TCP dialer shared by every adapter (DialConfig.NetDial = d.DialContext),
// so that socket options and proxying are the same for all libraries. TLS to the target
// is the library's, over the conn this returns (through a proxy: over the tunnel).
type Dialer struct {
	RcvBuf    int           // SO_RCVBUF in bytes, set before connect(); 0 = kernel default (autotuning)
	Timeout   time.Duration // TCP connect timeout (with a proxy: connect + proxy handshake); 0 = bounded only by ctx
	KeepAlive time.Duration // TCP keepalive period; 0 = Go default (15 s), negative = off
	Proxy     *Proxy        // nil = direct
	ProxyTLS  *tls.Config   // roots that verify an https proxy; nil = system roots
	// LocalAddr is the address connections leave from (a column's own
	// behind a link); nil = the kernel's choice.
	LocalAddr net.Addr
}

// DialContext opens a TCP connection to addr, directly or through d.Proxy. It has the
// signature of DialConfig.NetDial. The connection keeps a ReadClock (ReadClockOf).
func (d *Dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := d.dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &stampConn{Conn: conn}, nil
}

func (d *Dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if d.Proxy != nil {
		// The socket options apply to the local socket (to the proxy); the adapters
		// see a plain net.Conn either way.
		if d.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d.Timeout)
			defer cancel()
		}
		conn, err := (*tunnel)(d.Proxy).dial(ctx, d.netDialer(), addr, d.ProxyTLS)
		if err != nil {
			return nil, fmt.Errorf("dial %s: %w", addr, err)
		}
		return conn, nil
	}
	conn, err := d.netDialer().DialContext(ctx, network, addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return conn, nil
}

func (d *Dialer) netDialer() *net.Dialer {
	nd := &net.Dialer{Timeout: d.Timeout, KeepAlive: d.KeepAlive, LocalAddr: d.LocalAddr}
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

// TLSConfig returns the client TLS settings for wss targets and https proxies: the
// certificate is always verified, against the system roots plus the PEM certificates in
// caFiles. serverName, if set, replaces the target's host name for SNI and verification.
func TLSConfig(caFiles []string, serverName string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: serverName}
	if len(caFiles) == 0 {
		return cfg, nil
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	for _, f := range caFiles {
		if err := endpoint.AppendCAFile(pool, f); err != nil {
			return nil, err
		}
	}
	cfg.RootCAs = pool
	return cfg, nil
}
