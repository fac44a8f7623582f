package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/wssoak/wssoak/internal/firehose"
	"github.com/wssoak/wssoak/internal/wire"
)

// maxFirehoseConns bounds -conns.
const maxFirehoseConns = 10000

var firehoseAddrFlag = listenFlag{"-addr", "-addr-public", "the firehose", "127.0.0.1:9500"}

// firehoseCmd runs the firehose alone: it prints its address, serves -conns
// connections (or until Ctrl-C), then prints what each one was sent.
func firehoseCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("firehose", stdout, stderr)
	a := firehoseFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := firehoseAddrFlag.check(*a.addr, *a.addrPublic); err != nil {
		return err
	}
	sc, err := firehose.Lookup(*a.scenario)
	if err != nil {
		return usageError{fmt.Errorf("flag -scenario: %w", err)}
	}
	nSet := false
	fs.Visit(func(f *flag.Flag) { nSet = nSet || f.Name == "n" })
	if !nSet {
		*a.n = firehose.DefaultN(sc)
	}
	if *a.n < 1 {
		return usageError{fmt.Errorf("flag -n: %d is not a message count: want 1 or more, such as 100000", *a.n)}
	}
	if *a.conns < 1 || *a.conns > maxFirehoseConns {
		return usageError{fmt.Errorf("flag -conns: %d is not a connection count: want 1 to %d", *a.conns, maxFirehoseConns)}
	}
	comp, err := wire.ParseCompression(*a.compression)
	if err != nil {
		return usageError{fmt.Errorf("flag -compression: %w", err)}
	}
	srv, err := firehose.New(firehose.Config{Scenario: sc, N: *a.n, Seed: uint64(*a.seed), Conns: *a.conns,
		Deflate: wire.Deflate{Compression: comp}, Logger: newLogger(stderr, slog.LevelInfo)})
	if err != nil {
		return usageError{fmt.Errorf("flag -n: %w", err)}
	}
	if err := srv.Listen(*a.addr); err != nil {
		return fmt.Errorf("firehose: %w", err)
	}
	defer srv.Close()
	fmt.Fprintln(stdout, srv.Addr())
	fmt.Fprintf(stdout, "firehose %s: %d messages a connection for %d connection(s); combined %s ; raw %s ; stats http://%s%s\n",
		sc.Name, *a.n, *a.conns, srv.URL(), srv.RawURL(), srv.Addr(), firehose.StatsPath)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	select {
	case <-srv.Done():
	case <-ctx.Done():
	}
	_ = srv.Close()
	for _, c := range srv.Stats().Conns {
		secs := c.End.Sub(c.Start).Seconds()
		rate := ""
		if secs > 0 {
			rate = fmt.Sprintf(" in %.3f s (%.0f msgs/s, %.1f MB/s)", secs, float64(c.Messages)/secs, float64(c.PayloadBytes)/secs/1e6)
		}
		status := fmt.Sprintf("close %d sent, %d received", c.CloseSent, c.CloseGot)
		if c.Err != "" {
			status = c.Err
		}
		fmt.Fprintf(stdout, "conn %d %s: %d messages, %d payload bytes, %d writes%s; %s\n",
			c.ID, c.Remote, c.Messages, c.PayloadBytes, c.Writes, rate, status)
	}
	return nil
}
