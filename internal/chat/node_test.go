package chat

import (
	"bufio"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestNodeRoom: the Node ws reference server keeps the room protocol and its
// /_stats counts as the Go servers do (deliveries equal the clients' count,
// exactly). Skipped, saying why, without node or the ws package (.ci/run
// installs it with npm ci; no test downloads anything).
func TestNodeRoom(t *testing.T) {
	node, script, err := NodeServer("../..")
	if err != nil {
		t.Skip("Node reference server:", err)
	}
	const n, rounds, k = 8, 20, 3
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, "-n", "8", "-addr", "127.0.0.1:0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("node server: %v", err)
	}
	addr := strings.TrimSpace(line)
	res, err := RunLoad(ctx, LoadConfig{URL: "ws://" + addr + "/", N: n, Rounds: rounds, PerRound: k, Payload: 40,
		RoundTimeout: 20 * time.Second, StatsURL: "http://" + addr + StatsPath})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(n * n * rounds * k)
	got := res.ServerEnd.Deliveries - res.ServerStart.Deliveries
	if res.Deliveries != want || got != want || !res.ServerEnd.Settled || res.ServerEnd.Drops != 0 {
		t.Errorf("deliveries: clients %d, server %d (settled %v, drops %d); want %d", res.Deliveries, got,
			res.ServerEnd.Settled, res.ServerEnd.Drops, want)
	}
	if res.ServerEnd.Lib != NodeLib || res.ServerEnd.UserNS <= 0 || res.ServerEnd.MaxRSSKiB <= 0 {
		t.Errorf("stats %+v: want lib %s, CPU and RSS", res.ServerEnd, NodeLib)
	}
}
