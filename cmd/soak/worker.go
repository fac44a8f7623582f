package main

import (
	"context"
	"io"
	"log/slog"
	"os/signal"
	"syscall"

	"github.com/wssoak/wssoak/internal/runner/worker"
)

// workerCmd is the hidden subcommand the controller re-executes once per
// library: plan on stdin, frames on stdout, logs on stderr.
func workerCmd(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("worker", stdout, stderr)
	lib := workerFlags(fs).lib
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	// The controller decides when a worker stops (stdin); a terminal's
	// interrupt must not cut the final account short.
	signal.Ignore(syscall.SIGINT)
	log := newLogger(stderr, slog.LevelInfo)
	return worker.Run(ctx, *lib, stdin, stdout, log)
}
