package transport_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/transport"
)

// secretMark is in every fuzzed password and nowhere else in the input: finding it in an
// output means a piece of the password leaked. It is letters and digits only, so no
// quoting or escaping of the output can hide it.
const secretMark = "Q7xK9z"

// FuzzParseProxy builds a proxy URL as prefix + user + ":" + pass + "@" + host, with the
// password pass = before + secretMark + after, and checks:
//   - ParseProxy never panics; its error is one line naming the proxy URL and never shows
//     the password; a proxy it accepts prints (String) without it, and parses again from
//     that output to the same scheme, address and user;
//   - Mask never shows the password when the password holds no character Mask ends a
//     word or a URL part at (white space, control characters, '"', '<', '>', '/', '?',
//     '#'): no URL can carry those in a password unencoded, and in prose they end it;
//   - Mask is idempotent.
//
// One input is left out: a password beginning with "//" right after a bare scheme, as
// in "socks5" + ":" + "//user@host", which is the URL socks5://user@host with a user
// and no password at all.
func FuzzParseProxy(f *testing.F) {
	for _, s := range [][5]string{
		{"socks5://", "user", "", "", "127.0.0.1:1080"},
		{"http//", "user", "", "", "host"},
		{"", "user", "", "", "host"},
		{"socks5:/", "user", "", "", "host"},
		{"socks5://", "user", "p ", "w", "host"},
		{"http://", "user", "pa%zz", "ss", "host"},
		{"://", "u", "", "", "h"},
		{`http:\\`, "u", "", "", "h"},
		{"socks5://", "u", "a\n", "b", "h:1080"},
		{"socks5://", "u", "", "", "h:1080\n"},
		{"socks5*//", "w", "", "#", "h:1080\n"}, // url.Parse lets a control character through in a fragment
		{"socks5://", "u", "", "", "h]]0"},      // and a ] through in a host name
		{"http://", "u", "", "", "[fe80::1%25en0\xf4]:8080"},
		{"http://", "u", "", "", "bücher.example"},
		{"https://", "o'brien", "it's", "", "[::1]:3128/"},
		{"socks5://", "", "", "", "h"},
		{"socks4://", "id", "", "", "h"},
		{"socks5://h:1/", "u", "", "", "x"},
		{"socks5://", "u", "a@b", "c:d", "h:99999"},
		{"http://", "u%3Aser", "pa%2F", "%25", "[fe80::1%25en0]:8080"},
		{"proxy: socks5://", "u", "", "", "h:1080 and more@text"},
	} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, prefix, user, before, after, host string) {
		pass := before + secretMark + after
		raw := prefix + user + ":" + pass + "@" + host
		if strings.Count(raw, secretMark) != 1 || strings.HasPrefix(pass, "//") {
			t.Skip()
		}
		p, err := endpoint.ParseProxy(raw)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, secretMark) || strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, "proxy URL") {
				t.Fatalf("ParseProxy(%q): error %q: want one line naming the proxy URL, without the password", raw, msg)
			}
		} else {
			checkParsed(t, raw, p)
		}
		m := endpoint.Mask(raw)
		if !strings.ContainsFunc(pass, endsPassword) && strings.Contains(m, secretMark) {
			t.Fatalf("Mask(%q) = %q shows the password %q", raw, m, pass)
		}
		if mm := endpoint.Mask(m); mm != m {
			t.Fatalf("Mask is not idempotent: %q, then %q", m, mm)
		}
	})
}

// endsPassword tells whether Mask ends a word or a URL part at r.
func endsPassword(r rune) bool {
	return r <= ' ' || r == 0x7f || strings.ContainsRune(`"<>/?#`, r)
}

// checkParsed checks a proxy ParseProxy accepted: its printed form hides the password and
// parses again to the same proxy, and its address is a host and a valid port.
func checkParsed(t *testing.T, raw string, p *transport.Proxy) {
	t.Helper()
	if strings.Contains(p.String(), secretMark) {
		t.Fatalf("ParseProxy(%q).String() = %q shows the password", raw, p)
	}
	host, port, err := net.SplitHostPort(p.Addr)
	if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		t.Fatalf("ParseProxy(%q): address %q is not host:port", raw, p.Addr)
	}
	q, err := endpoint.ParseProxy(p.String())
	if err != nil {
		t.Fatalf("ParseProxy(%q) printed %q, which does not parse: %v", raw, p, err)
	}
	if q.Scheme != p.Scheme || q.Addr != p.Addr || q.User != p.User || q.String() != p.String() {
		t.Fatalf("ParseProxy(%q) = %s %s %q, printed %q parses to %s %s %q", raw, p.Scheme, p.Addr, p.User, p, q.Scheme, q.Addr, q.User)
	}
}
