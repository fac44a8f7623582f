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

// firehoseHelp is what soak firehose -h prints.
var firehoseHelp = help{
	synopsis: "soak firehose [-addr HOST:PORT] [-scenario NAME] [-n N] [-conns N] [-seed N]",
	about: `Run the firehose on its own: a WebSocket server that never paces. Each connection gets
the scenario's N pre-encoded Binance-shaped messages as fast as the socket takes them, then
a close 1000; after -conns connections it exits. Prints the address it listens on as the
first line, then the combined-stream and raw URLs; GET /_firehose/stats returns what it sent
on each connection. Scenarios: aggTrade, kline, depth20, depth, tickerArr, mix.`,
	examples: []example{
		{"soak firehose", "one connection of 200,000 aggTrade messages, on a free loopback port"},
		{"soak firehose -addr 127.0.0.1:9500 -scenario depth -n 20000 -conns 5", "five connections of 20,000 depth diffs (9 KB each) on port 9500"},
	},
	flags: func(fs *flagSet) any { return firehoseFlags(fs) },
}

// firehoseArgs are the flags of soak firehose.
type firehoseArgs struct {
	addr, scenario, compression *string
	addrPublic                  *bool
	n, conns                    *int
	seed                        *int64
}

func firehoseFlags(fs *flagSet) *firehoseArgs {
	return &firehoseArgs{
		addr:        fs.String("addr", "127.0.0.1:0", "listen on `HOST:PORT` (loopback, port 0: a free one; see -addr-public)"),
		addrPublic:  fs.Bool("addr-public", false, "allow -addr on an address other than loopback (the firehose has no authentication)"),
		scenario:    fs.String("scenario", "aggTrade", "the scenario `NAME`: aggTrade, kline, depth20, depth, tickerArr or mix"),
		n:           fs.Int("n", 0, "`N` messages per connection (default: about 40 MB of the scenario's messages, 200,000 aggTrade)"),
		conns:       fs.Int("conns", 1, "serve `N` connections, then exit (at most 10000)"),
		seed:        fs.Int64("seed", 1, "random seed `N` of the generated values"),
		compression: fs.String("compression", "off", "the permessage-deflate `COMPRESSION` the firehose accepts: off, on (either mode, as the client offers) or no_context_takeover (imposed)"),
	}
}

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
