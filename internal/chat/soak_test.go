package chat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
	"go.uber.org/goleak"
)

// soakServers starts a server of every library with cfg (its Lib set per
// server) and returns their rooms and a function that closes them.
func soakServers(t *testing.T, cfg Config) ([]SoakRoom, func()) {
	t.Helper()
	var rooms []SoakRoom
	var servers []*Server
	stop := func() {
		for _, s := range servers {
			_ = s.Close()
		}
	}
	for _, lib := range Libs {
		cfg.Lib = lib
		srv, err := New(cfg)
		if err == nil {
			err = srv.Listen("127.0.0.1:0")
		}
		if err != nil {
			stop()
			t.Fatal(err)
		}
		servers = append(servers, srv)
		rooms = append(rooms, SoakRoom{Lib: lib, URL: srv.URL(), Stats: "http://" + srv.Addr() + StatsPath})
	}
	return rooms, stop
}

// TestRunSoak: the soak load on the five servers in this process, with a
// slow reader, a half-open client, a reset and an oversize message: the clients' deliveries equal the server's writes
// exactly, the server dropped exactly the slow and the half-open client
// (each counted apart), the reset ones and
// the one the server closed for its oversize message came back (no
// goroutine of the load left), and a record for every second.
func TestRunSoak(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), // fasthttp's package-wide clock and worker pool stay
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
	libs := Libs
	rooms, stop := soakServers(t, Config{N: 6, Queue: 16})
	defer stop() // before goleak's check
	// A stopped reader is dropped once the server's socket buffer (autotuned
	// up to 4 MiB on loopback) and its queue of 16 are full: ~80 messages of
	// 64 KiB. The window gives it 7 s of a 50/s load, ~350 messages: on a
	// loaded machine the load skips ticks it cannot keep (seen: 5 s and a
	// queue of 64 were not enough at load 8), and the margin covers that.
	cfg := SoakConfig{Rooms: rooms, N: 6, Rate: 50, Payload: 64 << 10, Start: time.Now().Add(500 * time.Millisecond), Duration: 8 * time.Second,
		Faults: []SoakFault{{Kind: wire.FaultSlowReader, At: time.Second, N: 1}, {Kind: wire.FaultHalfOpen, At: time.Second, N: 1},
			{Kind: wire.FaultReset, At: 5 * time.Second, N: 2},
			{Kind: wire.FaultOversize, At: 6 * time.Second, N: 1, Size: DefaultReadLimit + 1}}}
	secs := map[string]int{}
	ends := map[string]*SoakResult{}
	events := map[string][]string{}
	drops := map[string]map[wire.FaultKind]int{}
	codes := map[string][]int{} // the close codes of the clients closed for an oversize message
	RunSoak(context.Background(), cfg, func(r SoakRecord) {
		switch r.T {
		case RecordSec:
			secs[r.Lib]++
		case RecordEnd:
			ends[r.Lib] = r.End
		case RecordEvent:
			events[r.Lib] = append(events[r.Lib], string(r.Kind)+" "+r.Detail)
			if r.Kind == wire.EventReconnect && len(r.Codes) > 0 {
				codes[r.Lib] = append(codes[r.Lib], r.Codes...)
			}
			if r.Kind == wire.EventDropped {
				if drops[r.Lib] == nil {
					drops[r.Lib] = map[wire.FaultKind]int{}
				}
				drops[r.Lib][r.Fault] += r.Count
			}
		}
	})
	for _, lib := range libs {
		res := ends[lib]
		if res == nil {
			t.Fatalf("%s: no end record", lib)
		}
		t.Logf("%s: %+v server %+v events %q", lib, *res, *res.Server, events[lib])
		if res.Err != "" {
			t.Errorf("%s: %s", lib, res.Err)
			continue
		}
		if err := res.Truth(); err != nil {
			t.Errorf("%s: %v", lib, err)
		}
		if res.SlowInjected != 1 || res.HalfOpen != 1 || res.Resets != 2 || res.Oversize != 1 || res.Reconnects != 3 {
			t.Errorf("%s: slow %d half-open %d resets %d oversize %d reconnects %d, want 1, 1, 2, 1, 3", lib, res.SlowInjected, res.HalfOpen, res.Resets, res.Oversize, res.Reconnects)
		}
		if res.SlowDropped != 1 || res.HalfOpenDrop != 1 || res.Server.Drops != 2 || res.Rejoins != 2 {
			t.Errorf("%s: dropped %d slow, %d half-open (server: %d), %d rejoins; want 1, 1 (2), 2", lib, res.SlowDropped, res.HalfOpenDrop, res.Server.Drops, res.Rejoins)
		}
		if dropped := drops[lib]; dropped[wire.FaultSlowReader] != 1 || dropped[wire.FaultHalfOpen] != 1 {
			t.Errorf("%s: dropped events %v, want one slow_reader and one half_open", lib, dropped)
		}
		if len(codes[lib]) != 1 || codes[lib][0] != CloseTooBig {
			t.Errorf("%s: oversize close codes %v, want [%d]", lib, codes[lib], CloseTooBig)
		}
		if secs[lib] != 8 {
			t.Errorf("%s: %d seconds recorded, want 8", lib, secs[lib])
		}
	}
}

// TestSoakFaultsAllFired: every fault the schedule asks for fires on every
// room, none thinned, also when the load starts behind (the window began a
// second ago: ten ticks late, which the load skips, not their faults): a
// reset of one client every tick (the shortest period) for 3 s is 30
// resets on each of the five servers, and the account says so.
func TestSoakFaultsAllFired(t *testing.T) {
	rooms, stop := soakServers(t, Config{N: 3})
	defer stop()
	const asked = 30
	cfg := SoakConfig{Rooms: rooms, N: 3, Rate: 20, Start: time.Now().Add(-time.Second), Duration: 3 * time.Second,
		Faults: []SoakFault{{Kind: wire.FaultReset, Every: SoakTick, N: 1}}}
	fired := map[string]int{}
	ends := map[string]*SoakResult{}
	RunSoak(context.Background(), cfg, func(r SoakRecord) {
		switch {
		case r.T == RecordEvent && r.Kind == wire.EventFault:
			fired[r.Lib]++
		case r.T == RecordEnd:
			ends[r.Lib] = r.End
		}
	})
	for _, lib := range Libs {
		res := ends[lib]
		if res == nil {
			t.Fatalf("%s: no end record", lib)
		}
		if res.Err != "" {
			t.Errorf("%s: %s", lib, res.Err)
		}
		if fired[lib] != asked || res.Resets != asked || res.Reconnects != asked {
			t.Errorf("%s: %d fault events, %d resets, %d reconnects; want %d of each", lib, fired[lib], res.Resets, res.Reconnects, asked)
		}
	}
}

// TestSoakFaultTooOften: a fault that repeats more often than a tick (the
// profile refuses it) is refused by the load too, not thinned: every
// room's end record says why, and no client is dialled.
func TestSoakFaultTooOften(t *testing.T) {
	cfg := SoakConfig{Rooms: []SoakRoom{{Lib: "gorilla", URL: "ws://127.0.0.1:1/", Stats: "http://127.0.0.1:1" + StatsPath}}, N: 2, Rate: 10,
		Start: time.Now(), Duration: time.Second, Faults: []SoakFault{{Kind: wire.FaultReset, Every: time.Millisecond, N: 1}}}
	var end *SoakResult
	RunSoak(context.Background(), cfg, func(r SoakRecord) {
		if r.T == RecordEnd {
			end = r.End
		}
	})
	if end == nil || !strings.Contains(end.Err, "every 1ms") || !strings.Contains(end.Err, SoakTick.String()) {
		t.Fatalf("end %+v: want an error naming every 1ms and the minimum %v", end, SoakTick)
	}
}
