package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/runner/child"
	"github.com/wssoak/wssoak/internal/wire"
)

// TestChildHidden: the child roles are behind soak child alone, which soak
// -h does not list; the old top-level names are gone.
func TestChildHidden(t *testing.T) {
	stdout, _, err := runSoak(t, "-h")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"child", "worker", "benchclient", "benchserver", "chatload", "chatsoak"} {
		if strings.Contains(stdout, "soak "+name) {
			t.Errorf("soak -h lists soak %s", name)
		}
	}
	for _, old := range []string{"worker", "benchclient", "benchserver", "chatload", "chatsoak"} {
		_, _, err := runSoak(t, old)
		if _, ok := err.(usageError); !ok || !strings.Contains(err.Error(), `unknown command "`+old+`"`) {
			t.Errorf("soak %s: %v; want an unknown command", old, err)
		}
	}
	if _, _, err := runSoak(t, "serve", "-child"); err == nil || !strings.Contains(err.Error(), "flag provided but not defined: -child") {
		t.Errorf("soak serve -child: %v; want an unknown flag", err)
	}
}

// TestChildRoles: soak child takes one known role; a role's spec that does
// not decode is refused with the one reader's error, naming the role (in a
// process of its own, as the launcher starts it: a role ignores SIGINT).
func TestChildRoles(t *testing.T) {
	tests := []struct {
		args  []string
		stdin string
		want  string
		usage bool
	}{
		{[]string{"child"}, "", "child: want one ROLE (benchclient, chatload, chatsoak, firehose, replay, worker)", true},
		{[]string{"child", "worker", "replay"}, "", "child: want one ROLE", true},
		{[]string{"child", "bogus"}, "", `child: unknown role "bogus"`, true},
		{[]string{"child", "worker"}, "", "child worker: read spec: stdin closed before the spec", false},
		{[]string{"child", "replay"}, "{\n", "child replay: decode spec: ", false},
		{[]string{"child", "benchclient"}, `{"lib":3}` + "\n", "child benchclient: decode spec: ", false},
		{[]string{"child", "worker"}, `{"v":2,"lib":"gorilla"}` + "\n", "child worker: plan version 2, want 1", false},
	}
	for _, tc := range tests {
		if tc.usage {
			_, _, err := runSoak(t, tc.args...)
			if _, ok := err.(usageError); !ok || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("soak %q: %v; want a usage error starting %q", tc.args, err, tc.want)
			}
			continue
		}
		cmd := exec.Command(os.Args[0], tc.args...)
		cmd.Stdin = strings.NewReader(tc.stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(stderr.String(), "soak: "+tc.want) {
			t.Errorf("soak %q: %v, exit code %d, stderr %q; want 1 and %q", tc.args, err, code, stderr.String(), tc.want)
		}
	}
}

// TestChildReplay: a run's replay server as the launcher starts it: soak
// child replay reads its config, listens on loopback, prints its address as
// one JSON line, serves there, and ends when its stdin closes.
func TestChildReplay(t *testing.T) {
	cfg := wire.DefaultReplay()
	cfg.Symbols = []string{"btcusdt"}
	p, err := child.Start(child.Options{Name: "replay server", Exe: os.Args[0], Args: []string{"child", "replay"}, Spec: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop(time.Second)
	line, err := p.ReadLine(context.Background(), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	p.DiscardOut()
	var ready wire.ReplayReady
	if err := json.Unmarshal(line, &ready); err != nil || !strings.HasPrefix(ready.Addr, "127.0.0.1:") {
		t.Fatalf("ready line %q: %+v, %v", line, ready, err)
	}
	resp, err := http.Get("http://" + ready.Addr + wire.PathStats)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the replay server's stats: %v %v", resp, err)
	}
	resp.Body.Close()
	p.CloseStdin()
	select {
	case <-p.Done():
		if code := p.ExitCode(); code != 0 {
			t.Errorf("exit code %d after stdin closed: %s", code, p.Stderr())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("soak child replay still serving 10 s after its stdin closed")
	}
}
