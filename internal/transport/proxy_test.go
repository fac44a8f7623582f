package transport_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/endpoint"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/transport"
	"github.com/wssoak/wssoak/internal/transport/proxytest"
)

// The proxies' credentials: reserved characters that must travel percent-encoded.
const (
	proxyUser = "soak"
	proxyPass = "p@ss:w/rd%"
)

var proxyKinds = []string{"socks5", "socks4", "http", "https"}

// proxyWorld is a ws and a wss replay server, and one proxy of each kind with credentials.
type proxyWorld struct {
	ws, wss *replay.Server
	proxies map[string]*proxytest.Server
	tls     *tls.Config // trusts the replay server's CA and the https proxy's CA

	mu  sync.Mutex
	sni []string // server names the wss replay server was asked for
}

func newProxyWorld(t *testing.T) *proxyWorld {
	t.Helper()
	// Registered first, so it runs after the servers and proxies have closed: every
	// tunnel, dial and handshake goroutine must be gone.
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, ignore) })
	w := &proxyWorld{proxies: map[string]*proxytest.Server{}}
	srvCA, err := cert.New(time.Hour, cert.LocalHosts...)
	mustOK(t, err)
	proxyCA, err := cert.New(time.Hour, cert.LocalHosts...)
	mustOK(t, err)
	dir := t.TempDir()
	srvFiles, err := srvCA.Write(dir)
	mustOK(t, err)
	proxyCAFile := filepath.Join(dir, "proxy-ca.pem")
	mustOK(t, os.WriteFile(proxyCAFile, proxyCA.CAPEM, 0o600))
	w.tls, err = transport.TLSConfig([]string{srvFiles.CA, proxyCAFile}, "")
	mustOK(t, err)

	w.ws, err = replay.New(replay.Config{})
	mustOK(t, err)
	t.Cleanup(func() { _ = w.ws.Close() })
	mustOK(t, w.ws.Listen("127.0.0.1:0"))
	stc := srvCA.ServerTLS()
	leaf := stc.Certificates[0]
	stc.Certificates = nil
	stc.GetCertificate = func(h *tls.ClientHelloInfo) (*tls.Certificate, error) {
		w.mu.Lock()
		w.sni = append(w.sni, h.ServerName)
		w.mu.Unlock()
		return &leaf, nil
	}
	w.wss, err = replay.New(replay.Config{TLS: stc})
	mustOK(t, err)
	t.Cleanup(func() { _ = w.wss.Close() })
	mustOK(t, w.wss.Listen("127.0.0.1:0"))

	for _, kind := range proxyKinds {
		pass := proxyPass
		if kind == "socks4" {
			pass = "" // a user id only
		}
		p, err := proxytest.Start(kind, proxyUser, pass, proxyCA.ServerTLS())
		mustOK(t, err)
		t.Cleanup(p.Close)
		w.proxies[kind] = p
	}
	return w
}

func (w *proxyWorld) lastSNI() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sni) == 0 {
		return ""
	}
	return w.sni[len(w.sni)-1]
}

func mustProxy(t *testing.T, raw string) *transport.Proxy {
	t.Helper()
	p, err := endpoint.ParseProxy(raw)
	mustOK(t, err)
	return p
}

// TestProxy dials every library through every kind of proxy to the replay server, over
// ws:// and wss://, and checks that the connection went through the tunnel (the proxy
// counted it), carries data both ways, answers the server's ping with its payload, that
// wss verified the target's certificate over the tunnel and sent the target's name as SNI.
func TestProxy(t *testing.T) {
	w := newProxyWorld(t)
	for _, kind := range proxyKinds {
		px := w.proxies[kind]
		d := &transport.Dialer{Timeout: waitTimeout, Proxy: mustProxy(t, px.URL()), ProxyTLS: w.tls}
		for _, scheme := range []string{"ws", "wss"} {
			srv, host := w.ws, w.ws.Addr()
			if scheme == "wss" {
				// A host name: the proxy resolves it (SOCKS5 domain, SOCKS4a, CONNECT host),
				// and TLS must name it for SNI and verify the certificate against it.
				_, port, _ := net.SplitHostPort(w.wss.Addr())
				srv, host = w.wss, net.JoinHostPort("localhost", port)
			}
			for _, tr := range transport.All() {
				t.Run(kind+"/"+scheme+"/"+tr.Name(), func(t *testing.T) {
					before := px.Stats().Tunnels[host]
					tag := fmt.Sprintf("%s-%s-%s", kind, scheme, tr.Name())
					conn, err := tr.Dial(ctxTimeout(t), transport.DialConfig{URL: scheme + "://" + host + "/ws",
						Header: http.Header{"X-Soak-Conn": {tag}}, NetDial: d.DialContext, TLS: w.tls})
					mustOK(t, err)
					rec := newRecorder()
					errc := make(chan error, 1)
					go func() { errc <- conn.Run(rec) }()
					defer func() {
						_ = conn.Abort()
						<-errc
					}()
					sc, err := srv.WaitConn(ctxTimeout(t), tag)
					mustOK(t, err)
					if got := px.Stats().Tunnels[host]; got != before+1 {
						t.Fatalf("the %s proxy opened %d tunnels to %s for this dial, want 1", kind, got-before, host)
					}
					if scheme == "wss" {
						if sni := w.lastSNI(); sni != "localhost" {
							t.Fatalf("SNI %q, want the target's name %q", sni, "localhost")
						}
					}
					mustOK(t, sc.SendText([]byte("through the "+kind+" proxy")))
					rec.waitFor(t, "1 message", func(r *recorder) bool { return len(r.msgs) == 1 })
					p := []byte("1712345678901")
					mustOK(t, sc.Ping(p))
					mustOK(t, sc.WaitPong(ctxTimeout(t), p))
					mustOK(t, conn.WriteText([]byte(`{"method":"LIST_SUBSCRIPTIONS","id":7}`)))
					rec.waitFor(t, "the reply", func(r *recorder) bool { return len(r.msgs) == 2 })
				})
			}
		}
	}
}

// TestProxyVerifiesTarget: through a proxy, a target certificate that no trusted CA
// signed is refused by every library, and so is a server name the certificate lacks.
func TestProxyVerifiesTarget(t *testing.T) {
	w := newProxyWorld(t)
	px := w.proxies["http"]
	d := &transport.Dialer{Timeout: waitTimeout, Proxy: mustProxy(t, px.URL()), ProxyTLS: w.tls}
	system, err := transport.TLSConfig(nil, "")
	mustOK(t, err)
	wrongName := w.tls.Clone()
	wrongName.ServerName = "other.example"
	for _, tr := range transport.All() {
		t.Run(tr.Name(), func(t *testing.T) {
			_, err := tr.Dial(ctxTimeout(t), transport.DialConfig{URL: w.wss.URL() + "/ws", NetDial: d.DialContext, TLS: system})
			var ue x509.UnknownAuthorityError
			if !errors.As(err, &ue) {
				t.Fatalf("untrusted target certificate through the proxy: got %v, want x509.UnknownAuthorityError", err)
			}
			_, err = tr.Dial(ctxTimeout(t), transport.DialConfig{URL: w.wss.URL() + "/ws", NetDial: d.DialContext, TLS: wrongName})
			var he x509.HostnameError
			if !errors.As(err, &he) {
				t.Fatalf("server name the certificate lacks: got %v, want x509.HostnameError", err)
			}
		})
	}
}

// TestProxyRejected: wrong credentials are refused by every kind of proxy; every library
// returns a clear error that names the proxy (password masked) and never the password.
func TestProxyRejected(t *testing.T) {
	w := newProxyWorld(t)
	wantCause := map[string]string{
		"socks5": "socks5: the proxy rejected the credentials of user",
		"socks4": "socks4: the proxy rejected user id",
		"http":   "rejected the credentials of user \"soak\" (407)",
		"https":  "rejected the credentials of user \"soak\" (407)",
	}
	for _, kind := range proxyKinds {
		px := w.proxies[kind]
		bad := px.URLWith("intruder", "wrong-"+proxyPass)
		if kind == "socks4" {
			bad = px.URLWith("intruder", "")
		}
		d := &transport.Dialer{Timeout: waitTimeout, Proxy: mustProxy(t, bad), ProxyTLS: w.tls}
		for _, tr := range transport.All() {
			t.Run(kind+"/"+tr.Name(), func(t *testing.T) {
				before := px.Stats().Rejected
				_, err := tr.Dial(ctxTimeout(t), transport.DialConfig{URL: w.ws.URL() + "/ws", NetDial: d.DialContext})
				if err == nil {
					t.Fatal("dial with wrong credentials succeeded")
				}
				msg := err.Error()
				if !strings.Contains(msg, strings.Replace(wantCause[kind], "soak", "intruder", 1)) {
					t.Errorf("error %q lacks the cause %q", msg, wantCause[kind])
				}
				if !strings.Contains(msg, "proxy "+kind+"://intruder") {
					t.Errorf("error %q does not name the proxy", msg)
				}
				if strings.Contains(msg, proxyPass) || strings.Contains(msg, "p%40ss") {
					t.Errorf("error %q shows the password", msg)
				}
				if got := px.Stats().Rejected; got != before+1 {
					t.Errorf("proxy rejected %d handshakes, want 1", got-before)
				}
			})
		}
	}
	// No credentials at all for a proxy that wants them.
	for _, kind := range []string{"socks5", "http"} {
		d := &transport.Dialer{Timeout: waitTimeout, Proxy: mustProxy(t, kind+"://"+w.proxies[kind].Addr())}
		_, err := d.DialContext(ctxTimeout(t), "tcp", w.ws.Addr())
		if err == nil || !strings.Contains(err.Error(), "requires authentication") {
			t.Errorf("%s without credentials: got %v, want 'requires authentication'", kind, err)
		}
	}
}

// TestProxyUnreachableAndStalled: a proxy port nobody listens on fails at once naming the
// proxy; a proxy that accepts and never answers is cut by the dial timeout, and by the
// context's cancellation, for each kind (https stalls in its TLS handshake).
func TestProxyUnreachableAndStalled(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	mustOK(t, err)
	dead := ln.Addr().String()
	ln.Close()
	d := &transport.Dialer{Timeout: waitTimeout, Proxy: mustProxy(t, "socks5://u:p%40ss@"+dead)}
	_, err = d.DialContext(context.Background(), "tcp", "127.0.0.1:9")
	if err == nil || !strings.Contains(err.Error(), "proxy socks5://u:****@"+dead) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("unreachable proxy: got %v, want connection refused naming the proxy", err)
	}

	for _, kind := range proxyKinds {
		t.Run(kind, func(t *testing.T) {
			px, err := proxytest.StartStalling(kind)
			mustOK(t, err)
			defer px.Close()
			const timeout = 300 * time.Millisecond
			d := &transport.Dialer{Timeout: timeout, Proxy: mustProxy(t, kind+"://"+px.Addr())}
			t0 := time.Now()
			_, err = d.DialContext(context.Background(), "tcp", "127.0.0.1:9")
			took := time.Since(t0)
			if !errors.Is(err, context.DeadlineExceeded) || took > timeout+2*time.Second {
				t.Fatalf("stalled proxy: got %v after %v, want a deadline error after about %v", err, took, timeout)
			}
			d.Timeout = 0
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			t0 = time.Now()
			_, err = d.DialContext(ctx, "tcp", "127.0.0.1:9")
			if took := time.Since(t0); !errors.Is(err, context.Canceled) || took > 2*time.Second {
				t.Fatalf("cancelled dial through a stalled proxy: got %v after %v", err, took)
			}
		})
	}
}

// TestProxyReceiveBuffer: SO_RCVBUF is set on the socket to the proxy, and can be read back
// through every kind of tunnel (the tunnel conn unwraps to the socket).
func TestProxyReceiveBuffer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_RCVBUF read-back semantics checked on Linux only")
	}
	w := newProxyWorld(t)
	const want = 96 << 10
	for _, kind := range proxyKinds {
		d := &transport.Dialer{RcvBuf: want, Timeout: waitTimeout, Proxy: mustProxy(t, w.proxies[kind].URL()), ProxyTLS: w.tls}
		conn, err := d.DialContext(ctxTimeout(t), "tcp", w.ws.Addr())
		mustOK(t, err)
		n, err := transport.ReceiveBuffer(conn)
		conn.Close()
		mustOK(t, err)
		if n != 2*want {
			t.Errorf("%s: SO_RCVBUF %d, want %d", kind, n, 2*want)
		}
	}
}

func TestParseProxy(t *testing.T) {
	for _, tc := range []struct {
		raw, scheme, addr, user, pass, masked string
	}{
		{"socks5://user:p%40ss@127.0.0.1:1080", "socks5", "127.0.0.1:1080", "user", "p@ss", "socks5://user:****@127.0.0.1:1080"},
		{"socks5://proxy.example", "socks5", "proxy.example:1080", "", "", "socks5://proxy.example"},
		{"SOCKS4://id@10.0.0.1", "socks4", "10.0.0.1:1080", "id", "", "socks4://id@10.0.0.1"},
		{"http://u%3Aser:pa%2Fss%25@[::1]:3128/", "http", "[::1]:3128", "u:ser", "pa/ss%", "http://u%3Aser:****@[::1]:3128"},
		{"https://proxy.example", "https", "proxy.example:443", "", "", "https://proxy.example"},
		{"http://u:@h:80", "http", "h:80", "u", "", "http://u@h:80"},
	} {
		p, err := endpoint.ParseProxy(tc.raw)
		if err != nil {
			t.Errorf("%s: %v", tc.raw, err)
			continue
		}
		if p.Scheme != tc.scheme || p.Addr != tc.addr || p.User != tc.user || p.Pass != tc.pass || p.String() != tc.masked {
			t.Errorf("%s: got %s %s %q %q %s, want %s %s %q %q %s", tc.raw, p.Scheme, p.Addr, p.User, p.Pass, p, tc.scheme, tc.addr, tc.user, tc.pass, tc.masked)
		}
	}
	for _, tc := range []struct{ raw, want string }{
		{"ftp://u:secret@h:21", `unsupported scheme "ftp"`},
		{"socks5://u:secret@h:99999", `bad port "99999"`},
		{"socks5://u:secret@h:1080/path", "unexpected path"},
		{"socks5://u:secret@:1080", "no host"},
		{"socks4://u:secret@h", "socks4 has no password"},
		{"socks5://:secret@h", "password without a user"},
		{"http://u:sec ret@h:1", "malformed proxy URL"},
		{"h:1080", "unsupported scheme"},
		{"socks5://u:secret@h]]0:1080", `proxy URL socks5://u:****@h]]0:1080: bad host "h]]0"`},
		{"socks5://u:secret@bücher.example", `proxy URL socks5://u:****@bücher.example: bad host "bücher.example"`},
		// Mistyped: the password is masked all the same.
		{"http//user:secret@host", `proxy URL ****@host: no scheme`},
		{"user:secret@host", `proxy URL user:****@host: unsupported scheme "user"`},
		{"socks5:/user:secret@host", `proxy URL socks5:/****@host: no host`},
		{`http:\\u:secret@h`, `proxy URL http:\\****@h: no host`},
		{"socks5://h:1/u:secret@x", `proxy URL socks5://****@x: unexpected path`},
		{"socks5://o'brien:secret@h/p", `proxy URL socks5://o'brien:****@h/p: unexpected path`},
		// Not parsed: the URL is not shown.
		{"socks5://user:sec ret@host", "malformed proxy URL: want"},
		{"http://user:sec%zzret@host", "malformed proxy URL: want"},
		{"://u:secret@h", "malformed proxy URL: want"},
		{"socks5://u:sec\nret@h", "malformed proxy URL: want"},
		{"socks5://u:secret@h\n", "malformed proxy URL: want"},
		{"socks5://u:secret@h#\n", "malformed proxy URL: want"},
	} {
		_, err := endpoint.ParseProxy(tc.raw)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.raw, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "sec ret") || strings.Contains(err.Error(), "sec%zzret") ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %q shows the password or is not one line", tc.raw, err)
		}
	}
}

func TestMask(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"proxy: socks5://user:p%40ss@host:1080\n", "proxy: socks5://user:****@host:1080\n"},
		{`{"proxy":"http://u:raw@pass@h:8080","x":1}`, `{"proxy":"http://u:****@h:8080","x":1}`},
		{"dial wss://u:pw@a/b and https://v:pw2@c:1/", "dial wss://u:****@a/b and https://v:****@c:1/"},
		{"socks4://id@h:1080 stays", "socks4://id@h:1080 stays"},
		{"proxy: 'socks5://u:p:w@h:1'", "proxy: 'socks5://u:****@h:1'"},
		// Every character a URL allows in a user or password, ' included.
		{"proxy socks5://o'brien:pw@h:1 and http://u:it's@h", "proxy socks5://o'brien:****@h:1 and http://u:****@h"},
		{`{"proxy":"socks5://u:a!$&'()*+,;=%41~-._@h:1"}`, `{"proxy":"socks5://u:****@h:1"}`},
		// Forms without ://.
		{"no url: user:pass@host", "no url: user:****@host"},
		{"proxy http//user:pw@host failed", "proxy http//user:****@host failed"},
		{"socks5:/user:pw@host", "socks5:/user:****@host"},
		{`http:\\u:pw@h`, `http:****@h`},
		{"://u:pw@h", "://u:****@h"},
		{"line\nuser:pw@host\n", "line\nuser:****@host\n"},
		// No password: left alone.
		{"wss://stream.binance.com:9443/stream?streams=btcusdt@depth20@100ms/ethusdt@trade", "wss://stream.binance.com:9443/stream?streams=btcusdt@depth20@100ms/ethusdt@trade"},
		{"127.0.0.1:9000/ws/btcusdt@depth: EOF", "127.0.0.1:9000/ws/btcusdt@depth: EOF"},
		{`{"stream":"btcusdt@trade"}`, `{"stream":"btcusdt@trade"}`},
		{"time=10:00:00 user@host", "time=10:00:00 user@host"},
	} {
		if got := endpoint.Mask(tc.in); got != tc.want {
			t.Errorf("Mask(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
