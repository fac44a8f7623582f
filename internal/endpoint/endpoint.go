// Package endpoint reads what a profile names to reach a target: a forward
// proxy's URL (ParseProxy), the CA files to trust (AppendCAFile), and Mask,
// which keeps proxy passwords out of every message. It is a leaf: the profile
// uses it without the client libraries, which internal/transport dials with.
package endpoint

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
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

// AppendCAFile adds the PEM certificates of file (at most limit.PEMFile bytes)
// to pool; a file without one is an error.
func AppendCAFile(pool *x509.CertPool, file string) error {
	data, err := limit.ReadFile("ca file", file, limit.PEMFile)
	if err != nil {
		return err
	}
	if !pool.AppendCertsFromPEM(data) {
		return fmt.Errorf("read ca file %s: no PEM certificate in it", file)
	}
	return nil
}
