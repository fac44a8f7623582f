package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/bench"
)

// benchCmd runs soak bench: the libraries as clients of a firehose, or with
// -side server as chat servers.
func benchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return benchSide(ctx, args, stdout, stderr, sideClient)
}

// chatBenchCmd is soak chatbench, the old name of soak bench -side server,
// kept for one release: it says so on stderr and measures the server side.
func chatBenchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fmt.Fprintln(stderr, "soak chatbench is deprecated and goes away in the next release: use soak bench -side server")
	return benchSide(ctx, args, stdout, stderr, sideServer)
}

// benchSide parses soak bench's flags, -side defaulting to def, and runs
// the side they name.
func benchSide(ctx context.Context, args []string, stdout, stderr io.Writer, def side) error {
	fs := newFlagSet("bench", stdout, stderr)
	a := benchFlags(fs, def)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if def == sideServer && a.side != sideServer {
		return usageError{fmt.Errorf("flag -side: soak chatbench is soak bench -side server; for -side %s run soak bench", a.side)}
	}
	if err := checkSide(fs, a.side); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if a.side == sideServer {
		return benchServer(ctx, fs, a, stdout, stderr)
	}
	return benchClient(ctx, fs, a, stdout, stderr)
}

// benchClient runs the client bench: the bench profile with the flags laid
// over it, recorded in a directory of its own under -out.
func benchClient(ctx context.Context, fs *flagSet, a *benchArgs, stdout, stderr io.Writer) error {
	p, err := loadBench(fs, *a.profile)
	if err != nil {
		return err
	}
	var rec bench.Recording
	if given(fs, "sweep") {
		if rec.Sizes, err = sweepProfile(fs, p, *a.sweep); err != nil {
			return err
		}
		rec.Sweep = *a.sweep
	}
	cfg, notes := bench.ConfigFromProfile(p)
	rec.Notes = notes
	if *a.format != "table" && *a.format != "gobench" {
		return usageError{fmt.Errorf("flag -format: %q is not a format: want table or gobench", *a.format)}
	}
	if rec.ID, rec.Dir, err = bench.NewDir(*a.out, bench.ClientPrefix, time.Now()); err != nil {
		return usageError{fmt.Errorf("flag -out: %w", err)}
	}
	cfg.Progress = stderr
	out, err := bench.RunAndRecord(ctx, cfg, rec)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if *a.format == "gobench" {
		_, _ = stdout.Write(out.Gobench)
	} else {
		table := out.Fitted
		if *a.wide {
			table = out.Table
		}
		_, _ = stdout.Write(table)
		fmt.Fprintf(stdout, "\nresults: %s (soak.db, results.json, table.txt, bench.txt for benchstat)\n", rec.Dir)
	}
	if out.RunErr != nil {
		return fmt.Errorf("bench: %w", out.RunErr)
	}
	return nil
}
