package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/bench"
)

// liveChildren lists this process's children that are not zombies (pid
// and command line), from /proc.
func liveChildren(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, pid := range children(t, os.Getpid()) {
		if _, state := procStat(pid); state == "" || state == "Z" {
			continue
		}
		cmd, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		out = append(out, fmt.Sprint(pid, " ", strings.ReplaceAll(string(cmd), "\x00", " ")))
	}
	return out
}

// noChildren fails the test when a child of this process is left (after a
// short grace for one being reaped).
func noChildren(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := liveChildren(t)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, l := range left { // ours: end them, so that the next case starts clean
				pid, _, _ := strings.Cut(l, " ")
				if p, err := strconv.Atoi(pid); err == nil {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			}
			t.Fatalf("processes left behind: %q", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// cancelOnWrite cancels a context at the first progress line.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) {
	c.cancel()
	return len(p), nil
}

// TestChatBenchLeavesNoChild: however a server bench ends — a library
// twice in the list (an orphan server was seen), interrupted mid-way, a
// server that fails to start, load processes that fail — no chat server or
// load process of it is left running.
func TestChatBenchLeavesNoChild(t *testing.T) {
	if left := liveChildren(t); len(left) != 0 {
		t.Skipf("this test process has children already: %q", left)
	}
	base := bench.ChatConfig{Exe: os.Args[0], Clients: []int{4}, Runs: 1, Deliveries: 100, PerRound: 1, Queue: 64}
	tests := []struct {
		name   string
		adjust func(c *bench.ChatConfig, cancel context.CancelFunc)
		fails  bool // RunChat returns an error; otherwise its loads do
	}{
		{"library twice", func(c *bench.ChatConfig, _ context.CancelFunc) { c.Libs = []string{"gorilla", "gorilla"} }, true},
		{"interrupted", func(c *bench.ChatConfig, cancel context.CancelFunc) {
			c.Libs, c.Runs, c.Deliveries = []string{"gorilla", "gws"}, 5, 2000
			c.Progress = cancelOnWrite{cancel}
		}, true},
		{"server fails to start", func(c *bench.ChatConfig, _ context.CancelFunc) { c.Libs = []string{"gorilla", "nosuchlib"} }, true},
		{"load fails", func(c *bench.ChatConfig, _ context.CancelFunc) {
			c.Libs, c.ChildTimeout = []string{"gorilla"}, 300*time.Millisecond
			c.Clients, c.Deliveries = []int{64}, 10_000_000 // more than a load process does in 300 ms
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := base
			tc.adjust(&cfg, cancel)
			res, err := bench.RunChat(ctx, cfg)
			if tc.fails && err == nil {
				t.Errorf("no error; want the bench to fail (%d results)", len(res))
			}
			if !tc.fails && (len(res) == 0 || res[0].Err == "") {
				t.Errorf("results %+v: want the load processes failed", res)
			}
			t.Logf("ended with %v", err)
			noChildren(t)
		})
	}
}
