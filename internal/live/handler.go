package live

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"html"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Access says who may read the live view and what of it.
type Access struct {
	// Public serves any Host header; otherwise a request whose Host names
	// neither a loopback address nor localhost gets 421 (DNS rebinding).
	Public bool
	// Token, when set, is the bearer token every request must carry
	// (Authorization: Bearer TOKEN); one without it gets 401. It is
	// compared in constant time and never written anywhere.
	Token string
	// MetricsOnly serves /metrics alone: the report stays private.
	MetricsOnly bool
}

// Handler serves / (the report), /report.html (the same) and /metrics, as a
// says. Unless public, a request whose Host header names neither a loopback
// address nor localhost (any port) gets 421: a web page whose name an
// attacker has pointed at 127.0.0.1 (DNS rebinding) cannot read the live view
// through the browser of the machine that runs it.
func (s *Server) Handler(a Access) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	if !a.MetricsOnly {
		mux.HandleFunc("GET /{$}", s.report)
		mux.HandleFunc("GET /report.html", s.report)
	}
	var h http.Handler = mux
	if a.Token != "" {
		h = bearer(a.Token, h)
	}
	if a.Public {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("soak live view: Host %q is not a loopback address or localhost; open it as http://127.0.0.1:PORT/", r.Host), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// bearer lets through the requests that carry token as their bearer
// token. The comparison is of the two tokens' hashes, in constant time, so
// that neither the token's length nor its prefix leaks by timing.
func bearer(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="soak"`)
			http.Error(w, "soak live view: a bearer token is required (Authorization: Bearer TOKEN)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// loopbackHost tells whether the Host header h (host or host:port) names loopback.
func loopbackHost(h string) bool {
	host, _, err := net.SplitHostPort(h)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]") // no port
	}
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	dir, db, recorded := s.dir, s.db, s.recorded
	s.mu.Unlock()
	switch {
	case db == "":
		placeholder(w, http.StatusServiceUnavailable, "The run has not started yet.")
		return
	case !recorded:
		// The warm-up: nothing to show yet, and nothing rendered, so nothing cached.
		placeholder(w, http.StatusServiceUnavailable, "The run is warming up: nothing is recorded yet.")
		return
	}
	if s.render != nil {
		page, err := s.rendered(r.Context(), db)
		if err != nil {
			placeholder(w, http.StatusServiceUnavailable, "The report cannot be rendered yet: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
		return
	}
	path := filepath.Join(dir, "report.html")
	if _, err := os.Stat(path); err != nil {
		placeholder(w, http.StatusOK, fmt.Sprintf("No report has been written yet for this run (%s). The numbers so far are at /metrics.", path))
		return
	}
	http.ServeFile(w, r, path)
}

// rendered returns the report, rendered at most once per cacheEvery and by
// one request at a time, so that reloads cannot pile work on the machine.
func (s *Server) rendered(ctx context.Context, db string) ([]byte, error) {
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	if s.cache != nil && time.Since(s.cacheAt) < s.cacheEvery {
		return s.cache, nil
	}
	var buf bytes.Buffer
	if err := s.render(ctx, &buf, db); err != nil {
		return nil, err
	}
	s.cache, s.cacheAt = buf.Bytes(), time.Now()
	return s.cache, nil
}

// placeholder is a page that says why there is no report yet and reloads itself.
func placeholder(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Refresh", "10")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>soak: live view</title>\n<p>%s</p>\n<p><a href=\"/metrics\">/metrics</a> (Prometheus text format)</p>\n", html.EscapeString(msg))
}
