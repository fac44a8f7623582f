package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"golang.org/x/term"

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

// startLive listens on addr, logs the bound address ("live view" addr=...)
// and serves the live view until stop is called.
func startLive(addr string, public bool, log *slog.Logger) (*live.Server, func(), error) {
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
	srv := &http.Server{Handler: lv.Handler(public), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("live view", "err", err)
		}
	}()
	log.Info("live view", "addr", ln.Addr().String(), "report", "http://"+ln.Addr().String()+"/", "metrics", "http://"+ln.Addr().String()+"/metrics")
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
