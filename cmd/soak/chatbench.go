package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/spelling"
)

// benchServer runs soak bench -side server, the libraries as chat servers,
// recorded in a directory of its own under -out.
func benchServer(ctx context.Context, fs *flagSet, a *benchArgs, stdout, stderr io.Writer) error {
	cfg, notes, err := chatConfig(fs, a)
	if err != nil {
		return err
	}
	cfg.Progress = stderr
	rec := bench.Recording{Notes: notes}
	if rec.ID, rec.Dir, err = bench.NewDir(*a.out, bench.ChatPrefix, time.Now()); err != nil {
		return usageError{fmt.Errorf("flag -out: %w", err)}
	}
	out, err := bench.RunAndRecordChat(ctx, cfg, rec)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	table := out.Fitted
	if *a.wide {
		table = out.Table
	}
	_, _ = stdout.Write(table)
	fmt.Fprintf(stdout, "\nresults: %s (soak.db, results.json, table.txt); soak report %s draws the bars\n", rec.Dir, rec.Dir)
	if out.RunErr != nil {
		return fmt.Errorf("bench: %w", out.RunErr)
	}
	return nil
}

// chatConfig checks the server bench's flags and returns its config and
// what its header says of it (no reference row, where it is pinned).
func chatConfig(fs *flagSet, a *benchArgs) (bench.ChatConfig, []string, error) {
	cfg := bench.ChatConfig{Runs: *a.runs, Deliveries: *a.deliveries, PerRound: *a.perRound, Queue: *a.queue}
	for _, name := range []string{"libs", "clients", "cpus", "strategies"} {
		if given(fs, name) && strings.TrimSpace(fs.Lookup(name).Value.String()) == "" {
			return cfg, nil, usageError{fmt.Errorf("flag -%s: no value: leave the flag out for its default", name)}
		}
	}
	var notes []string
	node, script, nodeErr := chat.NodeServer(".")
	libs := splitList(*a.libs)
	if !given(fs, "libs") {
		libs = slices.Clone(chat.Libs)
		if nodeErr == nil {
			libs = append(libs, chat.NodeLib)
		} else {
			notes = append(notes, fmt.Sprintf("no %s reference row: %v", chat.NodeLib, nodeErr))
		}
	}
	for _, l := range libs {
		switch {
		case slices.Contains(cfg.Libs, l):
			// A library twice would be two rows of one server, their spread pooled.
			return cfg, nil, usageError{fmt.Errorf("flag -libs: library %q listed twice", l)}
		case l == chat.NodeLib && nodeErr != nil:
			return cfg, nil, usageError{fmt.Errorf("flag -libs: %s: %w", l, nodeErr)}
		case l == chat.NodeLib:
			cfg.Node, cfg.NodeScript = node, script
		case !slices.Contains(chat.Libs, l):
			known := append(slices.Clone(chat.Libs), chat.NodeLib)
			msg := fmt.Sprintf("flag -libs: unknown library %q (known: %s)", l, strings.Join(known, ", "))
			if near := spelling.Nearest(l, known); near != "" {
				msg += fmt.Sprintf("; did you mean %q?", near)
			}
			return cfg, nil, usageError{errors.New(msg)}
		}
		cfg.Libs = append(cfg.Libs, l)
	}
	if len(cfg.Libs) == 0 {
		return cfg, nil, usageError{errors.New("flag -libs: no library: want names such as gorilla,gws")}
	}
	for _, s := range splitList(*a.clients) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return cfg, nil, usageError{fmt.Errorf("flag -clients: %q is not a room size: want 1 to 1000, such as 16,32,64", s)}
		}
		if slices.Contains(cfg.Clients, n) {
			return cfg, nil, usageError{fmt.Errorf("flag -clients: room size %d listed twice", n)}
		}
		cfg.Clients = append(cfg.Clients, n)
	}
	if len(cfg.Clients) == 0 {
		return cfg, nil, usageError{errors.New("flag -clients: no room size: want sizes such as 16,32,64")}
	}
	for _, s := range splitList(*a.strategies) {
		if !slices.Contains(chat.Strategies, s) || slices.Contains(cfg.Strategies, s) {
			return cfg, nil, usageError{fmt.Errorf("flag -strategies: %q: want each of %s at most once", s, strings.Join(chat.Strategies, ", "))}
		}
		cfg.Strategies = append(cfg.Strategies, s)
	}
	if len(cfg.Strategies) == 0 {
		return cfg, nil, usageError{errors.New("flag -strategies: no strategy: want plain, best or both")}
	}
	switch {
	case cfg.Runs < 1 || cfg.Runs > 1000:
		return cfg, nil, usageError{fmt.Errorf("flag -runs: %d is not a number of rounds: want 1 to 1000", cfg.Runs)}
	case cfg.Deliveries < 1:
		return cfg, nil, usageError{fmt.Errorf("flag -deliveries: %d: want 1 or more", cfg.Deliveries)}
	case cfg.PerRound < 1 || cfg.PerRound > 10000:
		return cfg, nil, usageError{fmt.Errorf("flag -per-round: %d: want 1 to 10000", cfg.PerRound)}
	case cfg.Queue < 1 || cfg.Queue > 1<<20:
		return cfg, nil, usageError{fmt.Errorf("flag -queue: %d is not a queue length: want 1 to %d", cfg.Queue, 1<<20)}
	}
	var cpus profile.CPUs
	if *a.cpus != "" && *a.cpus != "none" {
		var err error
		if cpus, err = profile.ParseCPUs(*a.cpus); err != nil {
			return cfg, nil, usageError{fmt.Errorf("flag -cpus: %w", err)}
		}
	}
	notes = append(notes, cfg.Pin(cpus, *a.cpus == "none")...)
	return cfg, notes, nil
}
