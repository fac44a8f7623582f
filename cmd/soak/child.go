package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/runner/worker"
	"github.com/wssoak/wssoak/internal/wire"
)

// childHelp is what soak child -h prints.
var childHelp = help{
	synopsis: "soak child ROLE",
	about: `(internal) A process soak starts of itself, one ROLE each: worker (a library's worker of soak run),
replay (the run's replay server), chatsoak (the load of a side: server run), firehose and
benchclient (soak bench), chatload (soak bench -side server). Its spec comes as one JSON line on
stdin; it answers on stdout and logs on stderr; it ends when stdin closes.`,
	examples: []example{
		{"soak child worker", "a worker: the plan on stdin, frames on stdout"},
		{"soak child replay", "a run's replay server: its config on stdin, its address on stdout"},
	},
	args: 1,
}

// roleFunc is a child role: it reads its spec from stdin and plays it.
type roleFunc func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error

// childRoles are the processes soak starts of itself, as soak child ROLE.
var childRoles = map[string]roleFunc{
	"worker":      role(workerChild),
	"replay":      role(replayChild),
	"chatsoak":    role(chatSoakChild),
	"firehose":    role(firehoseChild),
	"benchclient": role(benchClientChild),
	"chatload":    role(chatLoadChild),
}

// role reads a child's spec the one way (child.ReadSpec), then plays the
// role with it and the rest of stdin.
func role[S any](play func(ctx context.Context, spec *S, stdin *bufio.Reader, stdout, stderr io.Writer) error) roleFunc {
	return func(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
		spec := new(S)
		rest, err := child.ReadSpec(stdin, spec)
		if err != nil {
			return err
		}
		return play(ctx, spec, rest, stdout, stderr)
	}
}

// childCmd is soak child ROLE: a process that soak run, soak bench or soak
// bench -side server starts (package child); hidden from soak -h.
func childCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("child", stdout, stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	roles := strings.Join(slices.Sorted(maps.Keys(childRoles)), ", ")
	if len(pos) != 1 {
		return fs.usageError(fmt.Errorf("child: want one ROLE (%s)", roles))
	}
	play, ok := childRoles[pos[0]]
	if !ok {
		return fs.usageError(fmt.Errorf("child: unknown role %q (known: %s)", pos[0], roles))
	}
	// The parent decides when a child stops (its stdin); a terminal's
	// interrupt must not cut the child's account short.
	signal.Ignore(syscall.SIGINT)
	if err := play(ctx, stdin, stdout, stderr); err != nil {
		return fmt.Errorf("child %s: %w", pos[0], err)
	}
	return nil
}

// workerChild is one library's worker of soak run: frames on stdout until
// "stop" or the end of stdin.
func workerChild(ctx context.Context, plan *wire.Plan, stdin *bufio.Reader, stdout, stderr io.Writer) error {
	return worker.Run(ctx, plan, stdin, stdout, newLogger(stderr, slog.LevelInfo))
}

// replayChild is the replay server of a run on a free loopback port (or on
// the config's Listen: its address behind the run's link): its address as
// the first line, then it serves until stdin ends.
func replayChild(_ context.Context, cfg *wire.Replay, stdin *bufio.Reader, stdout, stderr io.Writer) error {
	srv, err := startReplay(replay.Config{Replay: *cfg, Logger: newLogger(stderr, slog.LevelInfo)}, cfg.CertFile, cfg.KeyFile, cmp.Or(cfg.Listen, "127.0.0.1:0"))
	if err != nil {
		return err
	}
	defer srv.Close()
	if err := child.NewWriter(stdout).Write(wire.ReplayReady{Addr: srv.Addr()}); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, stdin)
	return nil
}

// chatSoakChild is the load of a side: server run: a record a line (seconds,
// events, each server's end) until the window is over and stdin ends.
func chatSoakChild(ctx context.Context, cfg *chat.SoakConfig, stdin *bufio.Reader, stdout, _ io.Writer) error {
	ctx, cancel := child.UntilEOF(ctx, stdin)
	defer cancel()
	w := child.NewWriter(stdout)
	chat.RunSoak(ctx, *cfg, func(r chat.SoakRecord) { _ = w.Write(r) })
	return w.Err()
}

// firehoseChild is the firehose of soak bench: its ServerInfo line, then it
// serves until stdin ends.
func firehoseChild(_ context.Context, spec *bench.ServerSpec, stdin *bufio.Reader, stdout, _ io.Writer) error {
	return bench.Serve(*spec, stdin, stdout)
}

// benchClientChild is a client of soak bench: one result line.
func benchClientChild(ctx context.Context, spec *bench.ClientSpec, _ *bufio.Reader, stdout, _ io.Writer) error {
	return child.NewWriter(stdout).Write(bench.RunClient(ctx, *spec))
}

// chatLoadChild is the load of soak bench -side server: one answer line.
func chatLoadChild(ctx context.Context, cfg *chat.LoadConfig, _ *bufio.Reader, stdout, _ io.Writer) error {
	res, err := chat.RunLoad(ctx, *cfg)
	out := chat.LoadAnswer{LoadResult: res}
	if err != nil {
		out.Err = err.Error()
	}
	return child.NewWriter(stdout).Write(out)
}
