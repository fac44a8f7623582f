package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
)

// chatBenchArgs are the flags of soak bench -side server (soak chatbench).
type chatBenchArgs struct {
	side, libs, clients, cpus, out *string
	runs, queue, perRound          *int
	deliveries                     *int64
}

func chatBenchFlags(fs *flagSet) *chatBenchArgs {
	return &chatBenchArgs{
		side:       fs.String("side", "server", "`SIDE` measured: server (the libraries as chat servers)"),
		libs:       fs.String("libs", strings.Join(chat.Libs, ","), "comma-separated server libraries `LIBS` (default: the five, and "+chat.NodeLib+" when node and its ws package are installed)"),
		clients:    fs.String("clients", "16,32,64", "comma-separated room sizes `LIST`: N clients per room"),
		runs:       fs.Int("runs", 5, "`N` counted rounds after one warm-up round (library order alternating)"),
		deliveries: fs.Int64("deliveries", 100_000, "`N` deliveries per run (whole load rounds of N×N×per-round)"),
		perRound:   fs.Int("per-round", 1, "`N` messages each client sends per load round"),
		queue:      fs.Int("queue", chat.DefaultQueue, "`N` messages a connection may have queued; a client past it is dropped with close 1008"),
		cpus:       fs.String("cpus", "", "pin the servers and the load client to CPU `LISTS` SERVER:CLIENT, such as 0:1 (default 0:1 when the machine has both; none: not pinned)"),
		out:        fs.String("out", "out", "make the bench directory in `DIR`"),
	}
}

// nodeVersion is what node --version prints.
func nodeVersion(node string) string {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// serverSide reports whether soak bench's arguments ask for -side server.
func serverSide(args []string) bool {
	for i, a := range args {
		a = strings.TrimPrefix(a, "-")
		switch {
		case a == "-side=server" || a == "side=server":
			return true
		case (a == "-side" || a == "side") && i+1 < len(args) && args[i+1] == "server":
			return true
		}
	}
	return false
}

// chatBenchCmd runs the server bench.
func chatBenchCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("chatbench", stdout, stderr)
	a := chatBenchFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if *a.side != "server" {
		return usageError{fmt.Errorf("flag -side: %q: want server (soak bench without -side measures the clients)", *a.side)}
	}
	for _, name := range []string{"libs", "clients", "cpus"} {
		if set[name] && strings.TrimSpace(fs.Lookup(name).Value.String()) == "" {
			return usageError{fmt.Errorf("flag -%s: no value: leave the flag out for its default", name)}
		}
	}
	cfg := bench.ChatConfig{Runs: *a.runs, Deliveries: *a.deliveries, PerRound: *a.perRound, Queue: *a.queue, Progress: stderr}
	var notes []string
	node, script, nodeErr := chat.NodeServer(".")
	libs := splitList(*a.libs)
	if !set["libs"] {
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
			return usageError{fmt.Errorf("flag -libs: library %q listed twice", l)}
		case l == chat.NodeLib && nodeErr != nil:
			return usageError{fmt.Errorf("flag -libs: %s: %w", l, nodeErr)}
		case l == chat.NodeLib:
			cfg.Node, cfg.NodeScript = node, script
		case !slices.Contains(chat.Libs, l):
			return usageError{fmt.Errorf("flag -libs: unknown library %q (known: %s, %s)", l, strings.Join(chat.Libs, ", "), chat.NodeLib)}
		}
		cfg.Libs = append(cfg.Libs, l)
	}
	if len(cfg.Libs) == 0 {
		return usageError{errors.New("flag -libs: no library: want names such as gorilla,gws")}
	}
	for _, s := range splitList(*a.clients) {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1000 {
			return usageError{fmt.Errorf("flag -clients: %q is not a room size: want 1 to 1000, such as 16,32,64", s)}
		}
		if slices.Contains(cfg.Clients, n) {
			return usageError{fmt.Errorf("flag -clients: room size %d listed twice", n)}
		}
		cfg.Clients = append(cfg.Clients, n)
	}
	if len(cfg.Clients) == 0 {
		return usageError{errors.New("flag -clients: no room size: want sizes such as 16,32,64")}
	}
	switch {
	case cfg.Runs < 1 || cfg.Runs > 1000:
		return usageError{fmt.Errorf("flag -runs: %d is not a number of rounds: want 1 to 1000", cfg.Runs)}
	case cfg.Deliveries < 1:
		return usageError{fmt.Errorf("flag -deliveries: %d: want 1 or more", cfg.Deliveries)}
	case cfg.PerRound < 1 || cfg.PerRound > 10000:
		return usageError{fmt.Errorf("flag -per-round: %d: want 1 to 10000", cfg.PerRound)}
	case cfg.Queue < 1 || cfg.Queue > 1<<20:
		return usageError{fmt.Errorf("flag -queue: %d is not a queue length: want 1 to %d", cfg.Queue, 1<<20)}
	}
	switch {
	case *a.cpus == "none":
		notes = append(notes, "not pinned (-cpus none): servers and load client share every CPU")
	case *a.cpus != "":
		c, err := profile.ParseCPUs(*a.cpus)
		if err != nil {
			return usageError{fmt.Errorf("flag -cpus: %w", err)}
		}
		if missing := absentCPUs(c); len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("-cpus %s: not pinned, this machine lacks CPU(s) %v", *a.cpus, missing))
		} else {
			cfg.ServerCPUs, cfg.ClientCPUs = c.Server, c.Client
		}
	default:
		if have := bench.UsableCPUs(); have[0] && have[1] {
			cfg.ServerCPUs, cfg.ClientCPUs = []int{0}, []int{1}
		} else {
			notes = append(notes, "not pinned: this machine lacks CPU 0 or 1")
		}
	}
	if cfg.ServerCPUs != nil {
		notes = append(notes, fmt.Sprintf("pinned: servers on CPU(s) %v, load client on %v (each process's GOMAXPROCS follows)", cfg.ServerCPUs, cfg.ClientCPUs))
	}
	id := "bench-chat-" + time.Now().UTC().Format("20060102-150405")
	dir := filepath.Join(*a.out, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usageError{fmt.Errorf("flag -out: %w", err)}
	}
	if err := writeProbe(dir); err != nil {
		return usageError{fmt.Errorf("flag -out: %w", err)}
	}
	var err error
	if cfg.Exe, err = os.Executable(); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	host, _ := sampler.HostInfo()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	start := time.Now()
	hs := sampler.NewHost()
	_, hsErr := hs.Sample()
	results, runErr := bench.RunChat(ctx, cfg)
	elapsed := time.Since(start)
	if s, err := hs.Sample(); err == nil && hsErr == nil {
		host["steal_during"] = fmt.Sprintf("%.1f %%", s.StealPct)
	}
	var sizes []string
	for _, n := range cfg.Clients {
		sizes = append(sizes, strconv.Itoa(n))
	}
	header := []string{
		fmt.Sprintf("soak bench -side server %s: %d chat server(s) × N = %s, %d counted round(s) after a warm-up, %.0f s",
			id, len(cfg.Libs), strings.Join(sizes, ", "), cfg.Runs, elapsed.Seconds()),
		fmt.Sprintf("host: %s; %s logical CPUs; kernel %s; clocksource %s; load %s; steal %s during the bench; %s/%s %s",
			orDash(host["cpu_model"]), orDash(host["cpu_logical"]), orDash(host["kernel"]), orDash(host["clocksource"]),
			orDash(host["load_at_start"]), orDash(host["steal_during"]), runtime.GOOS, runtime.GOARCH, runtime.Version()),
		fmt.Sprintf("room protocol of Bun's chat bench; per run ≥ %d deliveries in rounds of N×N×%d (each client sends %d, every client receives all); queue %d a connection",
			cfg.Deliveries, cfg.PerRound, cfg.PerRound, cfg.Queue),
		"load client: one process, a library-free RFC 6455 reader/writer (rawws) per connection, one clock reading per socket read",
	}
	if cfg.Node != "" {
		header = append(header, fmt.Sprintf("%s: Node's ws package (%s, node %s), the reference row", chat.NodeLib, chat.NodeDir, nodeVersion(cfg.Node)))
	}
	header = append(header, notes...)
	var tbuf bytes.Buffer
	bench.PrintChat(&tbuf, cfg, bench.AggregateChat(results), header)
	rec := struct {
		ID      string             `json:"id"`
		Host    map[string]string  `json:"host"`
		Config  bench.ChatConfig   `json:"config"`
		Elapsed float64            `json:"elapsed_s"`
		Results []bench.ChatResult `json:"results"`
	}{id, host, cfg, elapsed.Seconds(), results}
	js, _ := json.MarshalIndent(rec, "", " ")
	for name, b := range map[string][]byte{"results.json": js, "table.txt": tbuf.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("bench: %w", err)
		}
	}
	if err := writeChatDB(filepath.Join(dir, "soak.db"), id, host, rec.Config, start, elapsed, runErr, results); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	_, _ = stdout.Write(tbuf.Bytes())
	fmt.Fprintf(stdout, "\nresults: %s (soak.db, results.json, table.txt); soak report %s draws the bars\n", dir, dir)
	if runErr != nil {
		return fmt.Errorf("bench: %w", runErr)
	}
	return nil
}

// writeChatDB records the server bench as a bench database, so that soak
// report draws it (the bench page: a group of bars per room size, one bar a
// server) and soak export and compare read its runs: a run of kind bench
// whose results are chat results (store.ChatResult), one per load run.
func writeChatDB(path, id string, host map[string]string, cfg bench.ChatConfig, start time.Time, elapsed time.Duration,
	runErr error, results []bench.ChatResult) error {
	rows := make([]store.ChatResult, len(results))
	for i, r := range results {
		rows[i] = r.Row()
	}
	run := store.Run{ID: id, Name: "bench -side server", Target: "chat", Started: start, Ended: start.Add(elapsed), Host: host,
		Settings: map[string]string{"side": "server"}}
	return writeBenchRun(path, run, cfg, runErr, func(db *store.DB) error { return db.WriteChatResults(rows) })
}
