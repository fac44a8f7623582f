package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/chat"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
)

// Pin places the server bench's processes and returns what the header says
// about it: on cpus when this machine has them all; not at all with none;
// by default the servers on CPU 0 and the load client on CPU 1 when the
// machine has both, so that neither side takes the other's core.
func (c *ChatConfig) Pin(cpus profile.CPUs, none bool) []string {
	var notes []string
	switch {
	case none:
		notes = append(notes, "not pinned (-cpus none): servers and load client share every CPU")
	case cpus.Pinned():
		if missing := cpus.Missing(UsableCPUs()); len(missing) > 0 {
			notes = append(notes, fmt.Sprintf("-cpus %s: not pinned, this machine lacks CPU(s) %v", cpus, missing))
		} else {
			c.ServerCPUs, c.ClientCPUs = cpus.Server, cpus.Client
		}
	default:
		if have := UsableCPUs(); have[0] && have[1] {
			c.ServerCPUs, c.ClientCPUs = []int{0}, []int{1}
		} else {
			notes = append(notes, "not pinned: this machine lacks CPU 0 or 1")
		}
	}
	if c.ServerCPUs != nil {
		notes = append(notes, fmt.Sprintf("pinned: servers on CPU(s) %v, load client on %v (each process's GOMAXPROCS follows)", c.ServerCPUs, c.ClientCPUs))
	}
	return notes
}

// RunAndRecordChat runs the server bench cfg (RunChat) and records it in
// rec.Dir: results.json (every run), table.txt (the header and the table)
// and soak.db, a run of kind bench whose results are chat results, so that
// soak report draws it (a group of bars per room size, one bar a server)
// and soak export and compare read it. Errors as RunAndRecord's.
func RunAndRecordChat(ctx context.Context, cfg ChatConfig, rec Recording) (*Recorded, error) {
	var err error
	if cfg.Exe, err = executable(cfg.Exe); err != nil {
		return nil, err
	}
	host, _ := sampler.HostInfo()
	var results []ChatResult
	var runErr error
	start, elapsed := timeRun(host, false, func() { results, runErr = RunChat(ctx, cfg) })
	var tbuf, fbuf bytes.Buffer
	agg, head := AggregateChat(results), chatHeader(rec, host, cfg, elapsed)
	PrintChat(&tbuf, cfg, agg, head, true)
	PrintChat(&fbuf, cfg, agg, head, false)
	js, _ := json.MarshalIndent(struct {
		ID      string            `json:"id"`
		Host    map[string]string `json:"host"`
		Config  ChatConfig        `json:"config"`
		Elapsed float64           `json:"elapsed_s"`
		Results []ChatResult      `json:"results"`
	}{rec.ID, host, cfg, elapsed.Seconds(), results}, "", " ")
	if err := writeFiles(rec.Dir, map[string][]byte{"results.json": js, "table.txt": tbuf.Bytes()}); err != nil {
		return nil, err
	}
	rows := make([]store.ChatResult, len(results))
	for i, r := range results {
		rows[i] = r.Row()
	}
	run := store.Run{ID: rec.ID, Name: "bench -side server", Target: "chat", Started: start, Ended: start.Add(elapsed), Host: host,
		Settings: map[string]string{"side": "server"}}
	if err := writeRun(filepath.Join(rec.Dir, "soak.db"), run, cfg, runErr, func(db *store.DB) error { return db.WriteChatResults(rows) }); err != nil {
		return nil, err
	}
	return &Recorded{Table: tbuf.Bytes(), Fitted: fbuf.Bytes(), RunErr: runErr}, nil
}

// chatHeader is the lines the server bench's table starts with: what ran,
// the host, the room protocol, the load client, the reference row, then
// rec's notes.
func chatHeader(rec Recording, host map[string]string, cfg ChatConfig, elapsed time.Duration) []string {
	var sizes []string
	for _, n := range cfg.Clients {
		sizes = append(sizes, strconv.Itoa(n))
	}
	h := []string{
		fmt.Sprintf("soak bench -side server %s: %d chat server(s) × N = %s, %d counted round(s) after a warm-up, %.0f s",
			rec.ID, len(cfg.Libs), strings.Join(sizes, ", "), cfg.Runs, elapsed.Seconds()),
		fmt.Sprintf("host: %s; %s logical CPUs; kernel %s; clocksource %s; load %s; steal %s during the bench; %s/%s %s",
			orDash(host["cpu_model"]), orDash(host["cpu_logical"]), orDash(host["kernel"]), orDash(host["clocksource"]),
			orDash(host["load_at_start"]), orDash(host["steal_during"]), runtime.GOOS, runtime.GOARCH, runtime.Version()),
		fmt.Sprintf("room protocol of Bun's chat bench; per run ≥ %d deliveries in rounds of N×N×%d (each client sends %d, every client receives all); queue %d a connection",
			cfg.Deliveries, cfg.PerRound, cfg.PerRound, cfg.Queue),
		"load client: one process, a library-free RFC 6455 reader/writer (rawws) per connection, one clock reading per socket read",
	}
	if cfg.Node != "" {
		h = append(h, fmt.Sprintf("%s: Node's ws package (%s, node %s), the reference row", chat.NodeLib, chat.NodeDir, nodeVersion(cfg.Node)))
	}
	return append(h, rec.Notes...)
}

// nodeVersion is what node --version prints.
func nodeVersion(node string) string {
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
