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
	const n, rounds, k = 8, 20, 3
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	addr := startNode(t, ctx, "-n", "8").Addr()
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

// nodeAddr is the address of a running Node reference server.
type nodeAddr string

func (a nodeAddr) Addr() string { return string(a) }

// startNode starts the Node reference server with args (skipping the test
// without node or the ws package); it is killed when the test ends.
func startNode(t *testing.T, ctx context.Context, args ...string) nodeAddr {
	t.Helper()
	node, script, err := NodeServer("../..")
	if err != nil {
		t.Skip("Node reference server:", err)
	}
	cmd := exec.CommandContext(ctx, node, append([]string{script, "-addr", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("node server: %v", err)
	}
	return nodeAddr(strings.TrimSpace(line))
}

// TestNodeSlowReaderDropped: the Node server drops exactly the client that
// never reads, as the Go servers do.
func TestNodeSlowReaderDropped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	slowReaderDropped(t, startNode(t, ctx, "-n", "4", "-queue", "16"))
}
