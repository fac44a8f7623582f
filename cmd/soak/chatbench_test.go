package main

import (
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/chat"
)

// TestChatBench runs a tiny server bench (rooms of 4, one counted round)
// through real server and load processes: every run is valid, and in every
// run the deliveries the clients counted equal the server's own count of
// writes and what the rounds make.
func TestChatBench(t *testing.T) {
	out := t.TempDir()
	stdout, stderr, err := runSoak(t, "bench", "-side", "server", "-clients", "4", "-runs", "1", "-deliveries", "100", "-out", out)
	if err != nil {
		t.Fatalf("soak bench -side server: %v\n%s", err, stderr)
	}
	m, err := filepath.Glob(filepath.Join(out, "bench-chat-*", "results.json"))
	if err != nil || len(m) != 1 {
		t.Fatalf("results: %v (%v), want one results.json", m, err)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Results []bench.ChatResult `json:"results"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	const n, rounds = 4, 7 // ⌈100 / (4×4)⌉ rounds of 16 deliveries
	// Each library plain, and best where it has one.
	servers := len(chat.Libs) + len(chat.HasBest(chat.Libs))
	if len(rec.Results) != 2*servers {
		t.Fatalf("%d results, want %d (a warm-up and a counted run per server)", len(rec.Results), 2*servers)
	}
	seen := map[string]int{}
	for _, r := range rec.Results {
		seen[r.Lib+"/"+r.Strategy]++
		want := int64(n * n * rounds)
		if !r.Valid || r.Client.Deliveries != want || r.ServerDeliveries != want || r.Drops != 0 {
			t.Errorf("%s round %d: valid %v (%s), clients %d, server %d deliveries, %d drops; want valid, %d, %d, 0",
				r.Lib, r.Round, r.Valid, r.Invalid, r.Client.Deliveries, r.ServerDeliveries, r.Drops, want, want)
		}
		if r.Client.Sent != n*rounds || r.ServerUserNS+r.ServerSysNS <= 0 || r.ServerMaxRSSKiB <= 0 {
			t.Errorf("%s round %d: sent %d (want %d), server CPU %d ns, RSS %d KiB", r.Lib, r.Round, r.Client.Sent, n*rounds,
				r.ServerUserNS+r.ServerSysNS, r.ServerMaxRSSKiB)
		}
	}
	for _, lib := range chat.Libs {
		for _, st := range chat.Strategies {
			_, has := chat.Best(lib)
			if want := map[bool]int{true: 2}[st == chat.StrategyPlain || has]; seen[lib+"/"+st] != want {
				t.Errorf("%s %s: %d runs, want %d", lib, st, seen[lib+"/"+st], want)
			}
		}
		if !strings.Contains(stdout, "4  "+lib+" ") {
			t.Errorf("table lacks the row of %s:\n%s", lib, stdout)
		}
	}
	// Recorded as a bench: soak report draws its bars, a group per room size.
	dir := filepath.Dir(m[0])
	if _, stderr, err := runSoak(t, "report", dir); err != nil {
		t.Fatalf("soak report %s: %v\n%s", dir, err, stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(page), "chat N=4 plain: ") || !strings.Contains(string(page), "chat N=4 best: ") {
		t.Errorf("report.html: %v; want the bench page with the charts of chat N=4, plain and best", err)
	}
	for _, w := range []string{"deliveries/s", "server CPU µs/delivery", "p99", "limit", "host: "} {
		if !strings.Contains(stdout, w) {
			t.Errorf("table lacks %q:\n%s", w, stdout)
		}
	}
}

// TestChatBenchBadInput: one clear usage error naming the flag.
func TestChatBenchBadInput(t *testing.T) {
	// Arguments that make a bench cheap: a refusal that does not happen
	// shows as a short bench that exits 0 (clipped: each append copies).
	cheap := slices.Clip([]string{"-libs", "gorilla", "-clients", "2", "-runs", "1", "-deliveries", "10", "-cpus", "none", "-out", t.TempDir()})
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-clients", "0"}, "flag -clients"},
		{[]string{"-clients", "a,b"}, "flag -clients"},
		{[]string{"-libs", "banana"}, "flag -libs"},
		{[]string{"-runs", "0"}, "flag -runs"},
		{[]string{"-queue", "0"}, "flag -queue"},
		{[]string{"-cpus", "x"}, "flag -cpus"},
		{[]string{"-out", "/proc/nope"}, "flag -out"},
		// A name twice would be twin rows of one server, their spread pooled.
		{append(cheap, "-clients", "4,4"), "flag -clients: room size 4 listed twice"},
		{append(cheap, "-clients", "4,8,04"), "flag -clients: room size 4 listed twice"},
		{append(cheap, "-libs", "gorilla,gorilla"), `flag -libs: library "gorilla" listed twice`},
		{append(cheap, "-cpus", "0:1,1"), `flag -cpus: "0:1,1": "1,1" names CPU 1 twice`},
		// An empty value is refused, not the default used instead.
		{append(cheap, "-libs", ""), "flag -libs: no value"},
		{append(cheap, "-clients", " "), "flag -clients: no value"},
		{append(cheap, "-cpus", ""), "flag -cpus: no value"},
	}
	for _, tc := range tests {
		args := append([]string{"bench", "-side", "server"}, tc.args...)
		_, _, err := runSoak(t, args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("soak %v: %v; want one usage error line naming %s", args, err, tc.want)
		}
	}
	if _, _, err := runSoak(t, "chatbench", "-side", "client"); err == nil || !strings.Contains(err.Error(), "flag -side") {
		t.Errorf("chatbench -side client: %v; want a usage error naming -side", err)
	}
	for _, args := range [][]string{{"chatserver", "-lib", "nope"}, {"chatserver", "-n", "0"}, {"chatserver", "-addr", "0.0.0.0:0"}} {
		var ue usageError
		if _, _, err := runSoak(t, args...); !errors.As(err, &ue) {
			t.Errorf("soak %v: %v; want a usage error", args, err)
		}
	}
}

// TestBenchSide: -side is a flag of soak bench's one flag set. Its value
// picks the side (seen here by which side's check refuses a bad value),
// a value other than client or server is refused naming what it takes, and
// a flag of one side only is refused with the other, before anything runs.
func TestBenchSide(t *testing.T) {
	type sideCase struct {
		args []string
		want string // in the one error line
	}
	tests := []sideCase{
		// The side chosen: a room size is checked by the server side only,
		// a -format by the client side only.
		{[]string{"-side", "server", "-clients", "0"}, `flag -clients: "0" is not a room size`},
		{[]string{"--side=server", "-clients", "0"}, `flag -clients: "0" is not a room size`},
		{[]string{"-runs", "3", "-side=server", "-clients", "0"}, `flag -clients: "0" is not a room size`},
		{[]string{"-side", "client", "-format", "csv"}, `flag -format: "csv" is not a format`},
		{[]string{"-format", "csv"}, `flag -format: "csv" is not a format`},
		// What -side takes.
		{[]string{"-side", "client2"}, `invalid value "client2" for flag -side: want client or server`},
		{[]string{"-side", ""}, `invalid value "" for flag -side: want client or server`},
		{[]string{"-side"}, "flag needs an argument: -side"},
	}
	for _, f := range sideFlags[sideServer] {
		want := "flag -" + f + ": only with -side server, not -side client"
		tests = append(tests, sideCase{[]string{"-" + f, "4"}, want}, sideCase{[]string{"-side", "client", "-" + f, "4"}, want})
	}
	for _, f := range sideFlags[sideClient] {
		tests = append(tests, sideCase{[]string{"-side", "server", "-" + f, "1"}, "flag -" + f + ": only with -side client, not -side server"})
	}
	for _, tc := range tests {
		out := t.TempDir()
		args := append([]string{"bench", "-out", out}, tc.args...)
		_, _, err := runSoak(t, args...)
		var line strings.Builder
		if code := exitCode(err, &line); code != 2 || strings.Count(line.String(), "\n") != 1 || !strings.Contains(line.String(), tc.want) {
			t.Errorf("soak %q: exit code %d, error line %q; want 2 and one line with %q", args, code, line.String(), tc.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("soak %q: a refused bench left %v", args, entries)
		}
	}
	// soak -h and soak bench -h say what -side takes.
	for _, args := range [][]string{{"-h"}, {"bench", "-h"}} {
		stdout, _, err := runSoak(t, args...)
		if err != nil && !errors.Is(err, flag.ErrHelp) || !strings.Contains(stdout, "-side server") || !strings.Contains(stdout, "-side client") {
			t.Errorf("soak %q: %v; want the help naming -side client and -side server:\n%s", args, err, stdout)
		}
	}
	if stdout, _, _ := runSoak(t, "bench", "-h"); !strings.Contains(stdout, "-side SIDE") || !strings.Contains(stdout, "(default client)") {
		t.Errorf("soak bench -h documents no -side SIDE, default client:\n%s", stdout)
	}
	// The old name: one line naming the new, and the server side only.
	_, stderr, err := runSoak(t, "chatbench", "-clients", "0")
	if !strings.HasPrefix(stderr, "soak chatbench is deprecated and goes away in the next release: use soak bench -side server\n") ||
		err == nil || !strings.Contains(err.Error(), "flag -clients: \"0\" is not a room size") {
		t.Errorf("soak chatbench -clients 0: %v, stderr %q; want the deprecation line and the server side's refusal", err, stderr)
	}
}
