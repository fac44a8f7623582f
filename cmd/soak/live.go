package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/live"
	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/store"
)

// listenFlag is a flag that names a listen address of a server without authentication,
// and the flag that allows an address outside loopback for it.
type listenFlag struct {
	name, public, what, example string
}

var (
	httpFlag = listenFlag{"-http", "-http-public", "the live view", "127.0.0.1:8080"}
	addrFlag = listenFlag{"-addr", "-addr-public", "the replay server", "127.0.0.1:9443"}
)

// check refuses a listen address outside loopback unless public is set: an empty or
// unspecified host (:8080, 0.0.0.0:8080, [::]:8080) is every interface. localhost is
// loopback.
func (f listenFlag) check(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError{fmt.Errorf("flag %s: bad address %q: want HOST:PORT such as %s", f.name, addr, f.example)}
	}
	if public {
		return nil
	}
	ip := net.ParseIP(host)
	if host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	where := "not a loopback address"
	if host == "" || ip != nil && ip.IsUnspecified() {
		where = "every interface, not loopback only"
	}
	return usageError{fmt.Errorf("flag %s: %q is %s, and %s has no authentication; "+
		"use 127.0.0.1:PORT, or add %s to serve it there anyway", f.name, addr, where, f.what, f.public)}
}

// tokenEnv is the environment variable that holds the live view's bearer
// token when no -http-token-file is given.
const tokenEnv = "SOAK_HTTP_TOKEN"

// minToken is the shortest bearer token taken: a guessable one is no lock.
const minToken = 16

// liveSetup is how the live view is served: who may read what, over TLS or not.
type liveSetup struct {
	addr   string
	access live.Access
	tls    *tls.Config
}

// liveFlags checks the live view's flags and reads its token and
// certificate. The token is never part of an error, a log line or the help.
func liveFlags(fs *flagSet, a *runArgs) (liveSetup, error) {
	ls := liveSetup{addr: *a.http, access: live.Access{Public: *a.httpPublic, MetricsOnly: *a.metricsOnly}}
	if *a.http == "" {
		for _, name := range []string{"http-public", "http-token-file", "http-cert", "http-key", "metrics-only"} {
			if given(fs, name) {
				return ls, usageError{fmt.Errorf("flag -%s: it is a setting of the live view: give -http HOST:PORT too", name)}
			}
		}
		return ls, nil
	}
	if err := httpFlag.check(*a.http, *a.httpPublic); err != nil {
		return ls, err
	}
	switch {
	case *a.tokenFile != "":
		b, err := os.ReadFile(*a.tokenFile)
		if err != nil {
			return ls, usageError{fmt.Errorf("flag -http-token-file: %w", err)}
		}
		first, _, _ := strings.Cut(string(b), "\n")
		ls.access.Token = strings.TrimSpace(first)
		if ls.access.Token == "" {
			return ls, usageError{fmt.Errorf("flag -http-token-file: %s holds no token on its first line", *a.tokenFile)}
		}
	case given(fs, "http-token-file"):
		return ls, usageError{errors.New("flag -http-token-file: empty: want the file that holds the token")}
	default:
		ls.access.Token = strings.TrimSpace(os.Getenv(tokenEnv))
	}
	if ls.access.Token != "" && len(ls.access.Token) < minToken {
		return ls, usageError{fmt.Errorf("the live view's bearer token has %d characters: want at least %d (random ones)", len(ls.access.Token), minToken)}
	}
	if *a.httpPublic && ls.access.Token == "" {
		return ls, usageError{fmt.Errorf("flag -http-public: the live view would be open to anyone who reaches the port: give it a bearer token "+
			"(the first line of -http-token-file FILE, or $%s)", tokenEnv)}
	}
	if (*a.httpCert == "") != (*a.httpKey == "") {
		return ls, usageError{errors.New("flags -http-cert and -http-key go together")}
	}
	if *a.httpCert != "" {
		tc, err := cert.ServerFiles(*a.httpCert, *a.httpKey)
		if err != nil {
			return ls, usageError{fmt.Errorf("flag -http-cert: %w", err)}
		}
		ls.tls = tc
	}
	return ls, nil
}

// startLive listens on ls.addr, logs the bound address ("live view" addr=...)
// and serves the live view until stop is called.
func startLive(ls liveSetup, log *slog.Logger) (*live.Server, func(), error) {
	addr, public := ls.addr, ls.access.Public
	if err := httpFlag.check(addr, public); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("live view: %w", err)
	}
	if err := httpFlag.check(ln.Addr().String(), public); err != nil { // localhost that is not loopback here
		ln.Close()
		return nil, nil, err
	}
	lv := live.New(renderReport)
	srv := &http.Server{Handler: lv.Handler(ls.access), ReadHeaderTimeout: 10 * time.Second, TLSConfig: ls.tls}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var err error
		if ls.tls != nil {
			err = srv.ServeTLS(ln, "", "")
		} else {
			err = srv.Serve(ln)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("live view", "err", err)
		}
	}()
	scheme := "http://"
	if ls.tls != nil {
		scheme = "https://"
	}
	base := scheme + ln.Addr().String()
	attrs := []any{"addr", ln.Addr().String(), "metrics", base + "/metrics"}
	if !ls.access.MetricsOnly {
		attrs = append(attrs, "report", base+"/")
	}
	if ls.access.Token != "" {
		attrs = append(attrs, "auth", "bearer token") // that there is one, never what it is
	}
	log.Info("live view", attrs...)
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
	return lv, stop, nil
}

// renderReport renders the report of the database at dbPath from a
// read-only connection of its own, so the run's writer is never blocked.
func renderReport(ctx context.Context, w io.Writer, dbPath string) error {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	return report.Render(ctx, db, w, report.Options{})
}

// isTerminal tells whether w is a terminal (the progress line is then
// rewritten in place).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
