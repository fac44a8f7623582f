package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/limit"
)

// Proxy is endpoint.Proxy, a forward proxy: this package tunnels through it.
type Proxy = endpoint.Proxy

// tunnel is a Proxy this package dials through.
type tunnel endpoint.Proxy

// String is the proxy URL with the password masked, as Proxy's.
func (p *tunnel) String() string { return (*Proxy)(p).String() }

// dial connects to the proxy with nd and opens a tunnel to addr (host:port). ctx bounds the
// whole of it: TCP connect, TLS to an https proxy, and the proxy's handshake. tlsCfg
// verifies an https proxy (its ServerName is set to the proxy's host here).
func (p *tunnel) dial(ctx context.Context, nd *net.Dialer, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	conn, err := nd.DialContext(ctx, "tcp", p.Addr)
	if err != nil {
		return nil, fmt.Errorf("proxy %s: %w", p, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	// Cancellation makes every pending read or write of the handshake fail at once.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	tunnel, err := p.handshake(ctx, conn, addr, tlsCfg)
	if !stop() && err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		_ = conn.Close()
		// The socket deadline is ctx's, so its i/o timeout may come a moment before ctx's own.
		dl, ok := ctx.Deadline()
		switch {
		case ctx.Err() != nil:
			err = fmt.Errorf("%w (%w)", context.Cause(ctx), err)
		case ok && !time.Now().Before(dl):
			err = fmt.Errorf("%w (%w)", context.DeadlineExceeded, err)
		}
		return nil, fmt.Errorf("proxy %s: %w", p, err)
	}
	_ = conn.SetDeadline(time.Time{})
	return tunnel, nil
}

func (p *tunnel) handshake(ctx context.Context, conn net.Conn, addr string, tlsCfg *tls.Config) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("target %q: bad port", addr)
	}
	switch p.Scheme {
	case "socks5":
		return conn, p.socks5(conn, host, uint16(port))
	case "socks4":
		return conn, p.socks4(conn, host, uint16(port))
	case "https":
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tlsCfg != nil {
			cfg = tlsCfg.Clone()
		}
		cfg.ServerName, _, _ = net.SplitHostPort(p.Addr)
		cfg.NextProtos = nil // CONNECT is HTTP/1.1
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("tls to the proxy: %w", err)
		}
		conn = tc
	}
	return p.connect(conn, addr)
}

// socks5 runs RFC 1928 CONNECT, with RFC 1929 user/password authentication when a user is set.
func (p *tunnel) socks5(conn net.Conn, host string, port uint16) error {
	greet := []byte{5, 1, 0}
	if p.User != "" {
		greet = []byte{5, 1, 2}
	}
	if _, err := conn.Write(greet); err != nil {
		return fmt.Errorf("socks5 greeting: %w", err)
	}
	var b [4]byte
	if _, err := io.ReadFull(conn, b[:2]); err != nil {
		return fmt.Errorf("socks5 greeting: %w", err)
	}
	switch {
	case b[0] != 5:
		return fmt.Errorf("socks5: the proxy answered version %d", b[0])
	case b[1] == 0xff || b[1] != greet[2]:
		if p.User == "" {
			return errors.New("socks5: the proxy requires authentication (no user given)")
		}
		return errors.New("socks5: the proxy refused user/password authentication")
	}
	if p.User != "" {
		msg := append([]byte{1, byte(len(p.User))}, p.User...)
		msg = append(append(msg, byte(len(p.Pass))), p.Pass...)
		if _, err := conn.Write(msg); err != nil {
			return fmt.Errorf("socks5 authentication: %w", err)
		}
		if _, err := io.ReadFull(conn, b[:2]); err != nil {
			return fmt.Errorf("socks5 authentication: %w", err)
		}
		if b[1] != 0 {
			return fmt.Errorf("socks5: the proxy rejected the credentials of user %q", p.User)
		}
	}
	req := []byte{5, 1, 0}
	if ip := net.ParseIP(host); ip.To4() != nil {
		req = append(append(req, 1), ip.To4()...)
	} else if ip != nil {
		req = append(append(req, 4), ip.To16()...)
	} else {
		if len(host) > 255 {
			return fmt.Errorf("socks5: host name %q is too long", host)
		}
		req = append(append(req, 3, byte(len(host))), host...)
	}
	req = binary.BigEndian.AppendUint16(req, port)
	if _, err := conn.Write(req); err != nil {
		return fmt.Errorf("socks5 connect: %w", err)
	}
	if _, err := io.ReadFull(conn, b[:4]); err != nil {
		return fmt.Errorf("socks5 connect: %w", err)
	}
	if b[1] != 0 {
		return fmt.Errorf("socks5: connect to %s refused: %s", net.JoinHostPort(host, strconv.Itoa(int(port))), socks5Reply(b[1]))
	}
	var skip int // the bound address and port that follow
	switch b[3] {
	case 1:
		skip = 4 + 2
	case 4:
		skip = 16 + 2
	case 3:
		if _, err := io.ReadFull(conn, b[:1]); err != nil {
			return fmt.Errorf("socks5 connect: %w", err)
		}
		skip = int(b[0]) + 2
	default:
		return fmt.Errorf("socks5: bad address type %d in the reply", b[3])
	}
	if _, err := io.CopyN(io.Discard, conn, int64(skip)); err != nil {
		return fmt.Errorf("socks5 connect: %w", err)
	}
	return nil
}

func socks5Reply(code byte) string {
	texts := []string{1: "general failure", 2: "not allowed by the rules", 3: "network unreachable", 4: "host unreachable",
		5: "connection refused", 6: "TTL expired", 7: "command not supported", 8: "address type not supported"}
	if int(code) < len(texts) {
		return texts[code]
	}
	return fmt.Sprintf("reply %d", code)
}

// socks4 runs SOCKS4 CONNECT, or SOCKS4a when host is a name (the proxy resolves it).
func (p *tunnel) socks4(conn net.Conn, host string, port uint16) error {
	req := binary.BigEndian.AppendUint16([]byte{4, 1}, port)
	ip := net.ParseIP(host)
	switch {
	case ip.To4() != nil:
		req = append(req, ip.To4()...)
	case ip != nil:
		return fmt.Errorf("socks4: cannot reach the IPv6 address %s", host)
	default:
		req = append(req, 0, 0, 0, 1) // 4a: the name follows the user id
	}
	req = append(append(req, p.User...), 0)
	if ip == nil {
		req = append(append(req, host...), 0)
	}
	if _, err := conn.Write(req); err != nil {
		return fmt.Errorf("socks4 connect: %w", err)
	}
	var b [8]byte
	if _, err := io.ReadFull(conn, b[:]); err != nil {
		return fmt.Errorf("socks4 connect: %w", err)
	}
	switch b[1] {
	case 0x5a:
		return nil
	case 0x5c, 0x5d:
		return fmt.Errorf("socks4: the proxy rejected user id %q (identd check, code %#x)", p.User, b[1])
	}
	return fmt.Errorf("socks4: connect to %s rejected or failed (code %#x)", net.JoinHostPort(host, strconv.Itoa(int(port))), b[1])
}

// connect opens an HTTP CONNECT tunnel, with Basic authentication when a user is set.
func (p *tunnel) connect(conn net.Conn, addr string) (net.Conn, error) {
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if p.User != "" {
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(p.User+":"+p.Pass)) + "\r\n"
	}
	if _, err := io.WriteString(conn, req+"\r\n"); err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	br := bufio.NewReader(limit.Reader(conn, "the proxy's answer", limit.ProxyAnswer))
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusProxyAuthRequired && p.User == "":
		return nil, errors.New("connect: the proxy requires authentication (407, no user given)")
	case resp.StatusCode == http.StatusProxyAuthRequired:
		return nil, fmt.Errorf("connect: the proxy rejected the credentials of user %q (407)", p.User)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Errorf("connect to %s: the proxy answered %s", addr, resp.Status)
	}
	if br.Buffered() > 0 { // bytes of the target that came with the proxy's answer
		return &bufferedConn{Conn: conn, r: io.MultiReader(io.LimitReader(br, int64(br.Buffered())), conn)}, nil
	}
	return conn, nil
}

// bufferedConn reads what the proxy's answer left in a bufio.Reader before the socket.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }
func (c *bufferedConn) NetConn() net.Conn          { return c.Conn }
