package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
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

// TestServeRefusesPublicAddress: serve -addr outside loopback is a usage error naming
// -addr-public, before anything listens; an empty or unspecified host is every interface.
// The command itself is run only with addresses it could not bind anyway.
func TestServeRefusesPublicAddress(t *testing.T) {
	for _, addr := range []string{"192.0.2.1:9443", "example.invalid:9443"} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var stdout, stderr bytes.Buffer
		err := run(ctx, []string{"serve", "-addr", addr}, strings.NewReader(""), &stdout, &stderr)
		cancel()
		if err == nil || !strings.Contains(err.Error(), `flag -addr: "`+addr+`" is not a loopback address`) ||
			!strings.Contains(err.Error(), "-addr-public") || exitCode(err, io.Discard) != 2 || stdout.Len() > 0 {
			t.Fatalf("serve -addr %s: err %v, stdout %q; want a usage error naming -addr-public", addr, err, stdout.String())
		}
		// With -addr-public the address is tried (and cannot be bound here).
		err = run(context.Background(), []string{"serve", "-addr", addr, "-addr-public"}, strings.NewReader(""), &stdout, &stderr)
		if err == nil || strings.Contains(err.Error(), "-addr-public") || stdout.Len() > 0 {
			t.Errorf("serve -addr %s -addr-public: err %v, stdout %q; want a listen error", addr, err, stdout.String())
		}
	}
	for _, addr := range []string{"0.0.0.0:9443", ":9443", "[::]:9443"} {
		if err := addrFlag.check(addr, false); err == nil || !strings.Contains(err.Error(), "every interface") || !strings.Contains(err.Error(), "-addr-public") {
			t.Errorf("-addr %s: %v, want refused as every interface", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "[::1]:0", "localhost:9443"} {
		if err := addrFlag.check(addr, false); err != nil {
			t.Errorf("-addr %s refused: %v", addr, err)
		}
	}
}

// TestServeBanner: the printed address is where serve really listens: every interface
// for an empty or unspecified host, with the URL for this machine.
func TestServeBanner(t *testing.T) {
	for _, tc := range []struct {
		addr, bound string
		tls         bool
		want        string
	}{
		{"127.0.0.1:0", "127.0.0.1:4242", false, "replay server listening on ws://127.0.0.1:4242 (stats: http://127.0.0.1:4242/_soak/stats, faults: http://127.0.0.1:4242/_soak/faults)"},
		{"192.0.2.1:9443", "192.0.2.1:9443", true, "replay server listening on wss://192.0.2.1:9443 (stats: https://192.0.2.1:9443/_soak/stats, faults: https://192.0.2.1:9443/_soak/faults)"},
		{"0.0.0.0:0", "127.0.0.1:4242", false, "replay server listening on every interface, port 4242 (on this machine ws://127.0.0.1:4242; stats: http://127.0.0.1:4242/_soak/stats, faults: http://127.0.0.1:4242/_soak/faults)"},
		{":9443", "127.0.0.1:9443", true, "replay server listening on every interface, port 9443 (on this machine wss://127.0.0.1:9443; stats: https://127.0.0.1:9443/_soak/stats, faults: https://127.0.0.1:9443/_soak/faults)"},
		{"[::]:9443", "127.0.0.1:9443", false, "replay server listening on every interface, port 9443 (on this machine ws://127.0.0.1:9443; stats: http://127.0.0.1:9443/_soak/stats, faults: http://127.0.0.1:9443/_soak/faults)"},
	} {
		if got := serveBanner(tc.addr, tc.bound, tc.tls); got != tc.want {
			t.Errorf("serveBanner(%q, %q, %v) =\n%s\nwant\n%s", tc.addr, tc.bound, tc.tls, got, tc.want)
		}
	}
}
