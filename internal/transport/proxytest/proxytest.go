// Package proxytest runs small forward proxies on loopback for tests: SOCKS5 with
// user/password authentication, SOCKS4/4a, HTTP CONNECT with Basic authentication and
// HTTPS (the CONNECT proxy behind TLS). They tunnel real TCP and count what they did, so a
// test can prove that a connection really went through the proxy. Only for tests.
package proxytest

import (
	"bufio"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// Server is one running proxy.
type Server struct {
	Kind string // socks5, socks4, http, https
	User string // required user (socks4: user id); "" = no authentication
	Pass string
	// Stall makes the proxy accept TCP connections and then never answer.
	Stall bool

	ln    net.Listener
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]struct{}
	stats Stats
}

// Stats counts what a proxy did.
type Stats struct {
	Accepted int            // TCP connections from clients
	Rejected int            // handshakes refused for bad credentials
	Tunnels  map[string]int // tunnels opened, by the target the client asked for
}

// Start runs a proxy of kind on 127.0.0.1. For https, tlsCfg is the proxy's certificate.
func Start(kind, user, pass string, tlsCfg *tls.Config) (*Server, error) {
	return start(&Server{Kind: kind, User: user, Pass: pass}, tlsCfg)
}

// StartStalling runs a proxy that accepts connections and never answers.
func StartStalling(kind string) (*Server, error) {
	return start(&Server{Kind: kind, Stall: true}, nil)
}

func start(s *Server, tlsCfg *tls.Config) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	switch s.Kind {
	case "socks5", "socks4", "http":
	case "https":
		if tlsCfg == nil && !s.Stall {
			ln.Close()
			return nil, errors.New("proxytest: https needs a certificate")
		}
		if !s.Stall {
			ln = tls.NewListener(ln, tlsCfg)
		}
	default:
		ln.Close()
		return nil, fmt.Errorf("proxytest: unknown kind %q", s.Kind)
	}
	s.ln, s.conns = ln, map[net.Conn]struct{}{}
	s.stats.Tunnels = map[string]int{}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr is the proxy's host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the proxy's URL with the credentials percent-encoded.
func (s *Server) URL() string { return s.URLWith(s.User, s.Pass) }

// URLWith is the proxy's URL with other credentials.
func (s *Server) URLWith(user, pass string) string {
	u := &url.URL{Scheme: s.Kind, Host: s.Addr()}
	switch {
	case pass != "":
		u.User = url.UserPassword(user, pass)
	case user != "":
		u.User = url.User(user)
	}
	return u.String()
}

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Tunnels = make(map[string]int, len(s.stats.Tunnels))
	for k, v := range s.stats.Tunnels {
		st.Tunnels[k] = v
	}
	return st
}

// TunnelsTotal is the number of tunnels opened so far.
func (s *Server) TunnelsTotal() int {
	n := 0
	for _, v := range s.Stats().Tunnels {
		n += v
	}
	return n
}

// Close stops the proxy and cuts every connection and tunnel.
func (s *Server) Close() {
	_ = s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conns == nil {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			s.mu.Lock()
			s.conns = nil // closed: track refuses from now on
			s.mu.Unlock()
			return
		}
		s.mu.Lock()
		s.stats.Accepted++
		s.mu.Unlock()
		if !s.track(c) {
			_ = c.Close()
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.untrack(c)
			if s.Stall {
				_, _ = io.Copy(io.Discard, c) // read, never answer, until the client gives up
				return
			}
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReader(c)
			var target string
			var err error
			switch s.Kind {
			case "socks5":
				target, err = s.socks5(c, br)
			case "socks4":
				target, err = s.socks4(c, br)
			default:
				target, err = s.connect(c, br)
			}
			if err != nil || target == "" {
				return
			}
			_ = c.SetDeadline(time.Time{})
			s.tunnel(c, br, target)
		}()
	}
}

func (s *Server) reject() {
	s.mu.Lock()
	s.stats.Rejected++
	s.mu.Unlock()
}

// dialTarget connects to the target; the tunnel is counted once it is up.
func (s *Server) dialTarget(target string) (net.Conn, error) {
	return net.DialTimeout("tcp", target, 5*time.Second)
}

// tunnel copies both ways until either side ends, then closes both.
func (s *Server) tunnel(c net.Conn, br *bufio.Reader, target string) {
	up, err := s.dialTarget(target)
	if err != nil {
		return
	}
	_ = c.SetDeadline(time.Time{})
	s.mu.Lock()
	s.stats.Tunnels[target]++
	s.mu.Unlock()
	if !s.track(up) {
		_ = up.Close()
		return
	}
	defer s.untrack(up)
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, br); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}

// socks5 answers the greeting, checks user/password (RFC 1929) and reads CONNECT.
// It sends the success reply before the tunnel is up: the handshake answers come first.
func (s *Server) socks5(c net.Conn, br *bufio.Reader) (string, error) {
	var h [2]byte
	if _, err := io.ReadFull(br, h[:]); err != nil || h[0] != 5 {
		return "", errors.New("bad greeting")
	}
	methods := make([]byte, h[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return "", err
	}
	want := byte(0)
	if s.User != "" {
		want = 2
	}
	found := false
	for _, m := range methods {
		found = found || m == want
	}
	if !found {
		s.reject()
		_, _ = c.Write([]byte{5, 0xff})
		return "", errors.New("no acceptable method")
	}
	_, _ = c.Write([]byte{5, want})
	if want == 2 {
		var v [2]byte
		if _, err := io.ReadFull(br, v[:]); err != nil {
			return "", err
		}
		user := make([]byte, v[1])
		if _, err := io.ReadFull(br, user); err != nil {
			return "", err
		}
		if _, err := io.ReadFull(br, v[:1]); err != nil {
			return "", err
		}
		pass := make([]byte, v[0])
		if _, err := io.ReadFull(br, pass); err != nil {
			return "", err
		}
		if string(user) != s.User || string(pass) != s.Pass {
			s.reject()
			_, _ = c.Write([]byte{1, 1})
			return "", errors.New("bad credentials")
		}
		_, _ = c.Write([]byte{1, 0})
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[1] != 1 {
		return "", errors.New("bad request")
	}
	var host string
	switch req[3] {
	case 1, 4:
		ip := make([]byte, map[byte]int{1: 4, 4: 16}[req[3]])
		if _, err := io.ReadFull(br, ip); err != nil {
			return "", err
		}
		host = net.IP(ip).String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return "", err
		}
		host = string(name)
	default:
		_, _ = c.Write([]byte{5, 8, 0, 1, 0, 0, 0, 0, 0, 0})
		return "", errors.New("bad address type")
	}
	var p [2]byte
	if _, err := io.ReadFull(br, p[:]); err != nil {
		return "", err
	}
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(p[:]))))
	_, _ = c.Write([]byte{5, 0, 0, 1, 0, 0, 0, 0, 0, 0})
	return target, nil
}

// socks4 reads a SOCKS4 or SOCKS4a CONNECT and checks the user id.
func (s *Server) socks4(c net.Conn, br *bufio.Reader) (string, error) {
	var h [8]byte
	if _, err := io.ReadFull(br, h[:]); err != nil || h[0] != 4 || h[1] != 1 {
		return "", errors.New("bad request")
	}
	user, err := br.ReadString(0)
	if err != nil {
		return "", err
	}
	host := net.IP(h[4:8]).String()
	if h[4] == 0 && h[5] == 0 && h[6] == 0 && h[7] != 0 { // 4a
		name, err := br.ReadString(0)
		if err != nil {
			return "", err
		}
		host = name[:len(name)-1]
	}
	if s.User != "" && user[:len(user)-1] != s.User {
		s.reject()
		_, _ = c.Write([]byte{0, 0x5d, 0, 0, 0, 0, 0, 0})
		return "", errors.New("bad user id")
	}
	_, _ = c.Write([]byte{0, 0x5a, 0, 0, 0, 0, 0, 0})
	return net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(h[2:4])))), nil
}

// connect reads an HTTP CONNECT and checks Basic authentication.
func (s *Server) connect(c net.Conn, br *bufio.Reader) (string, error) {
	req, err := http.ReadRequest(br)
	if err != nil {
		return "", err
	}
	if req.Method != http.MethodConnect {
		_, _ = io.WriteString(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return "", errors.New("not CONNECT")
	}
	if s.User != "" {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(s.User+":"+s.Pass))
		if req.Header.Get("Proxy-Authorization") != want {
			s.reject()
			_, _ = io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"soak\"\r\nContent-Length: 0\r\n\r\n")
			return "", errors.New("bad credentials")
		}
	}
	_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
	return req.Host, nil
}
