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
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/wssoak/wssoak/internal/limit"
)

// Proxy is a forward proxy every connection is tunnelled through: the profile's `proxy:`.
// The target's name is resolved by the proxy (SOCKS5 domain address, SOCKS4a, CONNECT host).
type Proxy struct {
	Scheme string // socks5, socks4, http or https
	Addr   string // host:port of the proxy
	User   string // percent-decoded; for socks4 the user id
	Pass   string // percent-decoded; never printed
	masked string // the URL with the password masked, for messages
}

// Default proxy ports when the URL names none.
var proxyPorts = map[string]string{"socks5": "1080", "socks4": "1080", "http": "80", "https": "443"}

// ParseProxy parses scheme://[user[:password]@]host[:port]. Reserved characters in the
// user or password are percent-encoded (p%40ss is p@ss). Errors never contain the password:
// they show the URL through maskRaw, or not at all when it does not parse.
func ParseProxy(raw string) (*Proxy, error) {
	const form = "want scheme://[user[:password]@]host[:port] with scheme socks5, socks4, http or https"
	u, err := url.Parse(raw)
	if err != nil || strings.ContainsFunc(raw, unicode.IsControl) { // url lets them through in a fragment
		// url's own message repeats the URL or a piece of it, password included; and a
		// control character would break the message's line.
		return nil, fmt.Errorf("malformed proxy URL: %s; percent-encode reserved characters of the user and password (@ as %%40, / as %%2F, : as %%3A, space as %%20)", form)
	}
	p := &Proxy{Scheme: strings.ToLower(u.Scheme)}
	port, ok := proxyPorts[p.Scheme]
	switch {
	case u.Scheme == "":
		return nil, fmt.Errorf("proxy URL %s: no scheme: %s", maskRaw(raw, u), form)
	case !ok:
		return nil, fmt.Errorf("proxy URL %s: unsupported scheme %q: %s", maskRaw(raw, u), u.Scheme, form)
	case u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("proxy URL %s: no host: %s", maskRaw(raw, u), form)
	case (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("proxy URL %s: unexpected path, query or fragment: %s", maskRaw(raw, u), form)
	}
	if u.Port() != "" {
		if n, err := strconv.Atoi(u.Port()); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("proxy URL %s: bad port %q", maskRaw(raw, u), u.Port())
		}
		port = u.Port()
	}
	p.Addr = net.JoinHostPort(u.Hostname(), port)
	// url lets a ] through, and bytes outside ASCII (a name to dial is ASCII: punycode).
	if h, _, err := net.SplitHostPort(p.Addr); err != nil || h != u.Hostname() || strings.ContainsFunc(h, func(r rune) bool { return r >= utf8.RuneSelf }) {
		return nil, fmt.Errorf("proxy URL %s: bad host %q", maskRaw(raw, u), u.Hostname())
	}
	if u.User != nil {
		var hasPass bool
		p.User = u.User.Username()
		p.Pass, hasPass = u.User.Password()
		switch {
		case p.Scheme == "socks4" && hasPass:
			return nil, fmt.Errorf("proxy URL %s: socks4 has no password, only a user id", maskRaw(raw, u))
		case p.Scheme == "socks5" && (len(p.User) > 255 || len(p.Pass) > 255):
			return nil, fmt.Errorf("proxy URL %s: socks5 user and password are limited to 255 bytes", maskRaw(raw, u))
		case p.Scheme == "socks5" && p.User == "":
			return nil, fmt.Errorf("proxy URL %s: socks5 password without a user", maskRaw(raw, u))
		}
	}
	var who string
	switch {
	case p.Pass != "":
		who = url.User(p.User).String() + ":****@" // url would escape the stars
	case p.User != "":
		who = url.User(p.User).String() + "@"
	}
	host := strings.TrimPrefix((&url.URL{Host: u.Host}).String(), "//") // an IPv6 zone's % escaped again
	p.masked = p.Scheme + "://" + who + host
	return p, nil
}

// schemeHead is the scheme and slashes that begin a mistyped URL (socks5:/, http:\\).
var schemeHead = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:[/\\]*`)

// maskRaw is raw, a proxy URL without control characters that url.Parse made u of,
// for an error message: Mask's output when raw has a plain user part (a user, a host, and
// no '@' after the host); otherwise, when raw has an '@', everything between its scheme
// and its last '@' is masked, user included, since where a mistyped user part ends
// cannot be told.
func maskRaw(raw string, u *url.URL) string {
	at := strings.LastIndexByte(raw, '@')
	switch {
	case at < 0:
		return raw // no user part, so no password
	case u.User != nil && u.Host != "" && !strings.Contains(u.Path+u.RawQuery+u.Fragment, "@"):
		return Mask(raw)
	}
	return schemeHead.FindString(raw[:at]) + "****" + raw[at:]
}

// String is the proxy URL with the password masked.
func (p *Proxy) String() string { return p.masked }

// Mask replaces by **** every password in s: in each word (a word ends at white space, a
// control character, '"', '<' or '>') and each part of a word between '/', '?' and '#'
// that has an '@', the text from its first ':' to its last '@'. That is the password of
// scheme://user:password@host (every character a URL allows in a password is kept in a
// word part), and of the mistyped forms user:password@host, http//user:password@host or
// socks5:/user:password@host; a stream name such as btcusdt@depth, or a URL's path, is
// left alone. It is the one function that keeps proxy credentials out of logs, errors,
// the database and the report.
func Mask(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	var b strings.Builder
	done, colon, at := 0, -1, -1 // s[:done] is in b; the first ':' and last '@' of the current part
	end := func() {
		if colon >= 0 && at > colon {
			b.WriteString(s[done : colon+1])
			b.WriteString("****")
			done = at
		}
		colon, at = -1, -1
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c <= ' ' || c == 0x7f || c == '"' || c == '<' || c == '>' || c == '/' || c == '?' || c == '#':
			end()
		case c == ':' && colon < 0:
			colon = i
		case c == '@':
			at = i
		}
	}
	end()
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// dial connects to the proxy with nd and opens a tunnel to addr (host:port). ctx bounds the
// whole of it: TCP connect, TLS to an https proxy, and the proxy's handshake. tlsCfg
// verifies an https proxy (its ServerName is set to the proxy's host here).
func (p *Proxy) dial(ctx context.Context, nd *net.Dialer, addr string, tlsCfg *tls.Config) (net.Conn, error) {
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

func (p *Proxy) handshake(ctx context.Context, conn net.Conn, addr string, tlsCfg *tls.Config) (net.Conn, error) {
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
func (p *Proxy) socks5(conn net.Conn, host string, port uint16) error {
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
func (p *Proxy) socks4(conn net.Conn, host string, port uint16) error {
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
func (p *Proxy) connect(conn net.Conn, addr string) (net.Conn, error) {
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
