package main

import (
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/replay"
	"github.com/wssoak/wssoak/internal/wire"
)

const topProfile = `name: top
duration: 6s
warmup: 2s
libraries: [gorilla, gws]
symbols: {top: 3, quote: USDT}
groups:
  - name: arr
    streams: ["!miniTicker@arr", "!ticker@arr"]
  - name: retired
    streams: ["!ticker@arr"]
  - name: markets
    streams: ["{symbol}@aggTrade", "{symbol}@bookTicker"]
  - name: depth
    streams: ["{symbol}@depth@100ms"]
    symbols: {top: 2, quote: USDT}
replay:
  seed: 11
  speed: 5
`

// TestRunTopSymbolsAndRetiredStream: symbols given as {top: N} are resolved
// once through the replay server's REST ticker (stablecoins excluded), the
// same list reaches every worker, and a retired stream is subscribed, served
// silently and reported as stalled in the events, the per-subscription totals
// and the table.
func TestRunTopSymbolsAndRetiredStream(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	// The truth: the same replay server's ticker, ranked by the documented rule.
	ref, err := replay.New(replay.Config{Replay: wire.Replay{Seed: 11}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	tickers, err := binance.FetchTickers24h(t.Context(), http.DefaultClient, "http://"+ref.Addr())
	ref.Close()
	if err != nil {
		t.Fatal(err)
	}
	top3, _ := binance.TopSymbols(tickers, 3, "USDT")
	top2, _ := binance.TopSymbols(tickers, 2, "USDT")

	dir := t.TempDir()
	out := dir + "/out"
	stdout, stderr, err := runSoak(t, "run", "-profile", writeProfile(t, dir, "top.yaml", topProfile), "-out", out)
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stderr, `stream \"!ticker@arr\" was retired`) {
		t.Errorf("no warning about the retired stream in the log:\n%s", stderr)
	}
	db := openRun(t, out)
	run, err := db.Run()
	if err != nil {
		t.Fatal(err)
	}
	var lists map[string][]string
	if err := json.Unmarshal([]byte(run.Settings["symbols"]), &lists); err != nil {
		t.Fatalf("settings symbols %q: %v", run.Settings["symbols"], err)
	}
	if !reflect.DeepEqual(lists, map[string][]string{"top 3 USDT": top3, "top 2 USDT": top2}) {
		t.Errorf("stored symbols %v, want top 3 %v and top 2 %v", lists, top3, top2)
	}
	var plan wire.Plan
	if err := json.Unmarshal([]byte(run.Settings["plan"]), &plan); err != nil {
		t.Fatal(err)
	}
	var depth []string
	for _, s := range plan.Slots {
		if s.Group == "depth" {
			depth = append(depth, s.Streams...)
		}
	}
	if want := []string{top2[0] + "@depth@100ms", top2[1] + "@depth@100ms"}; !reflect.DeepEqual(depth, want) {
		t.Errorf("depth streams %v, want %v", depth, want)
	}

	streams, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, s := range streams {
		seen[s.Lib]++
		sym, _, _ := strings.Cut(s.Stream, "@")
		switch {
		case s.Stream == "!ticker@arr":
			if !s.Stalled || s.StallsTotal != 1 || s.MsgsTotal != 0 || s.MaxSilenceMs < 5000 {
				t.Errorf("%s %s: stalled %v stalls %d msgs %d: want a stalled, silent subscription", s.Lib, s.Stream, s.Stalled, s.StallsTotal, s.MsgsTotal)
			}
		case s.Stalled || s.MsgsTotal == 0:
			t.Errorf("%s %s: stalled %v msgs %d", s.Lib, s.Stream, s.Stalled, s.MsgsTotal)
		case s.Group != "arr" && !slices.Contains(top3, sym):
			t.Errorf("%s %s: not a resolved symbol %v", s.Lib, s.Stream, top3)
		}
	}
	if seen["gorilla"] != 2+1+3*2+2 || seen["gws"] != seen["gorilla"] {
		t.Errorf("subscriptions per library %v, want 11 each", seen)
	}
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	stalls := map[string]int{}
	for _, e := range events {
		if e.Kind == wire.EventDisconnected {
			t.Errorf("a connection was dropped (a slot of only silent streams must not be aborted): %+v", e)
		}
		if e.Kind == wire.EventStall {
			if e.Stream != "!ticker@arr" {
				t.Errorf("unexpected stall %+v", e)
			}
			stalls[e.Lib]++
		}
	}
	if stalls["gorilla"] != 2 || stalls["gws"] != 2 {
		t.Errorf("stall events %v, want two per library for !ticker@arr", stalls)
	}
	if !strings.Contains(stdout, "Stalled at end") /* the row's short name */ || strings.Count(stdout, "2 (!ticker@arr, +1)") != 2 {
		t.Errorf("the table does not show the stalled subscription:\n%s", stdout)
	}
}

// TestRunTopSymbolsRESTError: a REST base that does not answer stops the run
// with one error naming the URL.
func TestRunTopSymbolsRESTError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "rest.yaml", "name: rest\nduration: 5s\nsymbols: {top: 3, quote: USDT}\nrest: http://"+addr+"\n")
	_, _, err = runSoak(t, "run", "-profile", prof, "-out", dir+"/out")
	want := "resolve symbols (top 3 USDT, " + prof + ":3): get http://" + addr + "/api/v3/ticker/24hr"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v\nwant it to contain %q", err, want)
	}
}
