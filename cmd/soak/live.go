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

// checkLoopback refuses a listen address outside loopback unless public is
// set: the live view has no authentication.
func checkLoopback(addr string, public bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageError{fmt.Errorf("flag -http: bad address %q: want HOST:PORT such as 127.0.0.1:8080", addr)}
	}
	if public {
		return nil
	}
	ip := net.ParseIP(host)
	if host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageError{fmt.Errorf("flag -http: %s is not a loopback address and the live view has no authentication; "+
		"use 127.0.0.1:PORT, or add -http-public to serve it there anyway", addr)}
}

// startLive listens on addr, logs the bound address ("live view" addr=...)
// and serves the live view until stop is called.
func startLive(addr string, public bool, log *slog.Logger) (*live.Server, func(), error) {
	if err := checkLoopback(addr, public); err != nil {
		return nil, nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("live view: %w", err)
	}
	lv := live.New(renderReport)
	srv := &http.Server{Handler: lv.Handler(), ReadHeaderTimeout: 10 * time.Second}
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
