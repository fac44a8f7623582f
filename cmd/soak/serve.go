package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/wire"
)

// serveHelp is what soak serve -h prints.
var serveHelp = help{
	synopsis: "soak serve [-addr HOST:PORT] [-profile FILE] [-seed N] [-speed FACTOR] [-cert FILE -key FILE]",
	about: `Run the Binance-like replay server on its own until Ctrl-C, to point any client at it.
GET /_soak/stats returns what it sent on every connection, GET /_soak/faults the faults it
injected (the profile's faults: run on the server's clock from its start).`,
	examples: []example{
		{"soak serve", "on ws://127.0.0.1:9443 with the built-in profile's streams and rates"},
		{"soak serve -addr 127.0.0.1:9000 -profile profiles/faults.yaml -speed 10", "that profile's replay section and faults, ten times faster"},
		{"soak serve -cert cert.pem -key key.pem", "wss:// with that certificate"},
	},
	flags: func(fs *flagSet) any { return serveFlags(fs) },
}

// serveArgs are the flags of soak serve.
type serveArgs struct {
	addr, profile, cert, key, compression *string
	addrPublic                            *bool
	seed                                  *int64
	speed                                 *float64
}

func serveFlags(fs *flagSet) *serveArgs {
	return &serveArgs{
		addr:        fs.String("addr", "127.0.0.1:9443", "listen on `HOST:PORT` (loopback; see -addr-public)"),
		addrPublic:  fs.Bool("addr-public", false, "allow -addr on an address other than loopback (the replay server has no authentication)"),
		profile:     fs.String("profile", "", "profile `FILE` whose replay section configures the server (default: built-in)"),
		compression: fs.String("compression", "", "the permessage-deflate `COMPRESSION` the server accepts: off, on (either mode, as the client offers) or no_context_takeover (imposed); default: the profile's compression"),
		seed:        fs.Int64("seed", 0, "random seed `N` of the generated streams (default: the profile's)"),
		speed:       fs.Float64("speed", 0, "rate `FACTOR` (default: the profile's)"),
		cert:        fs.String("cert", "", "PEM certificate (chain) `FILE`: serve wss:// (with -key)"),
		key:         fs.String("key", "", "PEM private key `FILE` of -cert"),
	}
}

// serveCmd runs the Binance-like replay server on its own (a run's replay
// server is soak child replay).
func serveCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", stdout, stderr)
	a := serveFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	addr, addrPublic, profilePath, seed, speed := a.addr, a.addrPublic, a.profile, a.seed, a.speed
	certFile, keyFile := a.cert, a.key
	if err := addrFlag.check(*addr, *addrPublic); err != nil {
		return err
	}
	if (*certFile == "") != (*keyFile == "") {
		return usageError{errors.New("flags -cert and -key go together")}
	}
	set := map[string]bool{} // the flags given, whatever their value (a seed may be negative)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["speed"] && !(*speed > 0 && *speed <= profile.MaxSpeed) {
		return usageError{fmt.Errorf("flag -speed: %v is not a rate factor: want a number above 0 and at most %d, such as 1 or 10", *speed, profile.MaxSpeed)}
	}
	p := profile.Default()
	if *profilePath != "" {
		var err error
		if p, err = profile.Load(*profilePath); err != nil {
			return err
		}
	}
	cfg := replay.Config{Replay: p.ReplayConfig(), Logger: newLogger(stderr, slog.LevelInfo)}
	if set["seed"] {
		cfg.Seed = *seed
	}
	if set["speed"] {
		cfg.Speed = *speed
	}
	if set["compression"] {
		c, err := wire.ParseCompression(*a.compression)
		if err != nil {
			return usageError{fmt.Errorf("flag -compression: %w", err)}
		}
		cfg.Compression = c
	}
	srv, err := startReplay(cfg, *certFile, *keyFile, *addr)
	if err != nil {
		return err
	}
	defer srv.Close()
	fmt.Fprintln(stdout, serveBanner(*addr, srv.Addr(), *certFile != ""))
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return nil
}

// startReplay starts a replay server listening on addr, serving wss:// with
// the certificate and key files when given.
func startReplay(cfg replay.Config, certFile, keyFile, addr string) (*replay.Server, error) {
	if certFile != "" {
		tc, err := cert.ServerFiles(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("replay server: %w", err)
		}
		cfg.TLS = tc
	}
	srv, err := replay.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("replay server: %w", err)
	}
	if err := srv.Listen(addr); err != nil {
		_ = srv.Close() // its generators run already
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	return srv, nil
}

// serveBanner is the line serve prints once it listens on addr (as given) at bound, the
// address the replay server reports (where an unspecified host is 127.0.0.1). With an
// empty or unspecified host (-addr-public), it says every interface.
func serveBanner(addr, bound string, tls bool) string {
	ws, base := "ws://"+bound, "http://"+bound
	if tls {
		ws, base = "wss://"+bound, "https://"+bound
	}
	host, _, _ := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		_, port, _ := net.SplitHostPort(bound)
		return fmt.Sprintf("replay server listening on every interface, port %s (on this machine %s; stats: %s/_soak/stats, faults: %s/_soak/faults)", port, ws, base, base)
	}
	return fmt.Sprintf("replay server listening on %s (stats: %s/_soak/stats, faults: %s/_soak/faults)", ws, base, base)
}
