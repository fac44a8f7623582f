package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestServeStandalone: `soak serve` listens, serves Binance paths to any
// client, answers 404 elsewhere, and exits cleanly on SIGINT.
func TestServeStandalone(t *testing.T) {
	cmd := exec.Command(os.Args[0], "serve", "-addr", "127.0.0.1:0", "-speed", "10")
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(line) // replay server listening on ws://127.0.0.1:PORT (stats: ...)
	if len(f) < 5 || !strings.HasPrefix(f[4], "ws://127.0.0.1:") {
		t.Fatalf("unexpected first line %q", line)
	}
	base := f[4]
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, base+"/stream?streams=btcusdt@trade/btcusdt@depth20@100ms", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		ws.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, p, err := ws.ReadMessage()
		if err != nil {
			t.Fatalf("read: %v (streams seen %v)", err, seen)
		}
		for _, s := range []string{"btcusdt@trade", "btcusdt@depth20@100ms"} {
			if strings.HasPrefix(string(p), `{"stream":"`+s+`","data":{`) {
				seen[s] = true
			}
		}
	}
	ws.Close()
	_, resp, err := websocket.DefaultDialer.DialContext(ctx, base+"/nonsense", nil)
	if err == nil || resp == nil || resp.StatusCode != 404 {
		t.Errorf("unknown path: err %v, response %v; want a 404", err, resp)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGINT: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("serve did not exit on SIGINT")
	}
}
