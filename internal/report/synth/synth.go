// Package synth writes a synthetic run database of any length, shaped like a
// real one (per-second samples for every library, host samples, subscription
// totals, a latency digest per library per minute, reconnects, stalls,
// faults and a worker restart), so the report's
// rendering time and size can be measured on a 24-hour run without waiting a
// day. The numbers are made up; only their volume and shape are realistic.
package synth

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// Config sizes the synthetic run.
type Config struct {
	Duration    time.Duration // measured window; default 24 h
	Libs        []string      // default: the five libraries
	Symbols     int           // markets per library; default 50 (5 streams each, + arr + 20 depth)
	StreamEvery int64         // seconds between subscription totals; default 60 (as runs over 2 h)
	Reconnects  int           // per library over the run; default 80
	Faults      int           // faults (a reset of every connection), each one event per library; default 24
	Seed        uint64
}

func (c *Config) defaults() {
	if c.Duration <= 0 {
		c.Duration = 24 * time.Hour
	}
	if len(c.Libs) == 0 {
		c.Libs = slices.Clone(wire.Libraries)
	}
	if c.Symbols <= 0 {
		c.Symbols = 50
	}
	if c.StreamEvery <= 0 {
		c.StreamEvery = 60
	}
	if c.Reconnects < 0 {
		c.Reconnects = 0
	} else if c.Reconnects == 0 {
		c.Reconnects = 80
	}
	if c.Faults == 0 {
		c.Faults = 24
	}
}

type sub struct {
	group, stream string
	slot          int
	rate          float64 // msgs/s
}

// Write creates the database at path (its directory is created; an
// existing file is an error) and fills it.
func Write(path string, c Config) error {
	c.defaults()
	if _, err := os.Stat(path); err == nil {
		return fmt.Errorf("synth: %s exists", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("synth: %w", err)
	}
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	if err := fill(db, c); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}

func fill(db *store.DB, c Config) error {
	rng := rand.New(rand.NewPCG(c.Seed, 0x50a4))
	start := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	secs := int64(c.Duration / time.Second)

	// The reference subscription set: arr, five streams per market, depth for 20.
	subs := []sub{{group: "arr", stream: "!miniTicker@arr", slot: 0, rate: 1}}
	for i := 0; i < c.Symbols; i++ {
		for _, s := range []struct {
			name string
			rate float64
		}{{"aggTrade", 3}, {"trade", 4}, {"kline_1m", 0.5}, {"bookTicker", 20}, {"depth20@100ms", 10}} {
			subs = append(subs, sub{group: "markets", stream: fmt.Sprintf("sym%03dusdt@%s", i, s.name), slot: 1 + i/20, rate: s.rate * (0.2 + 1.6*rng.Float64())})
		}
	}
	depthSlot := 1 + (c.Symbols+19)/20
	for i := 0; i < min(20, c.Symbols); i++ {
		subs = append(subs, sub{group: "depth", stream: fmt.Sprintf("sym%03dusdt@depth@100ms", i), slot: depthSlot, rate: 10})
	}
	var rate float64
	for _, s := range subs {
		rate += s.rate
	}

	plan := `{"slots":[{"group":"arr"},{"group":"markets"},{"group":"depth"}]}`
	err := db.CreateRun(store.Run{ID: start.Format("20060102-150405") + "-synth", Name: "synth", Target: "ws://synthetic",
		ProfileText: fmt.Sprintf("# a synthetic run written by soak synth\nname: synth\nduration: %s\n"+
			"thresholds:\n  max_reconnects: 50\n  max_lost: 1000000\n", c.Duration),
		Started: start, Ended: start.Add(c.Duration + 2*time.Second), Planned: c.Duration, Status: "done", GoVersion: "go1.26",
		Host: map[string]string{"cpu_model": "synthetic CPU", "cpu_logical": "2", "kernel": "6.1.0", "arch": "x86_64",
			"tcp_rmem": "4096 131072 6291456"},
		Settings: map[string]string{"plan": plan, "keepalive": "20s/1m0s", "read_limit": "16777216", "rcvbuf": "0"}})
	if err != nil {
		return err
	}

	// Reconnect instants per library, and run-wide faults.
	recAt := map[string][]float64{}
	var evs []store.Event
	for _, lib := range c.Libs {
		for i := 0; i < c.Reconnects; i++ {
			recAt[lib] = append(recAt[lib], rng.Float64()*float64(secs))
		}
	}
	for i := 0; i < c.Faults; i++ {
		at := float64(secs) * (float64(i) + 0.5) / float64(c.Faults)
		for _, lib := range c.Libs { // one event per library, as the controller records them
			evs = append(evs, store.Event{Lib: lib, TS: start.Add(time.Duration(at * 1e9)), Sec: at, Kind: wire.EventFault, Slot: -1,
				Detail: fmt.Sprintf("reset; %d connections", depthSlot+1)})
			recAt[lib] = append(recAt[lib], at+0.01)
		}
	}
	restartLib, restartAt := c.Libs[len(c.Libs)-1], float64(secs)*0.61
	for _, lib := range c.Libs {
		for _, at := range recAt[lib] {
			slot := rng.IntN(depthSlot + 1)
			group := "markets"
			switch slot {
			case 0:
				group = "arr"
			case depthSlot:
				group = "depth"
			}
			d := 5 + 200*rng.ExpFloat64()
			ts := func(s float64) time.Time { return start.Add(time.Duration(s * 1e9)) }
			evs = append(evs,
				store.Event{Lib: lib, TS: ts(at), Sec: at, Kind: wire.EventDisconnected, Slot: slot, Group: group, Code: 1006, Detail: "unexpected EOF"},
				store.Event{Lib: lib, TS: ts(at + d/2000), Sec: at + d/2000, Kind: wire.EventDial, Slot: slot, Group: group},
				store.Event{Lib: lib, TS: ts(at + d/1500), Sec: at + d/1500, Kind: wire.EventConnected, Slot: slot, Group: group},
				store.Event{Lib: lib, TS: ts(at + d/1000), Sec: at + d/1000, Kind: wire.EventFirstData, Slot: slot, Group: group},
				store.Event{Lib: lib, TS: ts(at + d/1000), Sec: at + d/1000, Kind: wire.EventReconnect, Slot: slot, Group: group, DurMs: d})
			if rng.IntN(10) == 0 {
				evs = append(evs, store.Event{Lib: lib, TS: ts(at + 3), Sec: at + 3, Kind: wire.EventStall, Slot: slot, Group: group, Stream: subs[rng.IntN(len(subs))].stream})
			}
		}
	}
	evs = append(evs,
		store.Event{Lib: restartLib, TS: start.Add(time.Duration(restartAt * 1e9)), Sec: restartAt, Kind: wire.EventWorkerExit, Slot: -1, Code: 2, Detail: "exit code 2"},
		store.Event{Lib: restartLib, TS: start.Add(time.Duration((restartAt + 1) * 1e9)), Sec: restartAt + 1, Kind: wire.EventWorkerRestart, Slot: -1, Detail: "restart 1"})

	for _, lib := range c.Libs {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "github.com/example/" + lib, Version: "v1.0.0", Pid: 1000,
			Started: start, Ended: start.Add(c.Duration), RusageUser: 0.08 * float64(secs), RusageSys: 0.015 * float64(secs),
			SampledCPU: 0.095 * float64(secs), MaxRSS: 130e6, LatCount: int64(rate) * secs, LatP50: 900, LatP99: 4000, LatMax: 90000}); err != nil {
			return err
		}
	}

	slices.SortStableFunc(evs, func(a, b store.Event) int { return cmp.Compare(a.Sec, b.Sec) })

	// Per-second rows, written 10 minutes per transaction.
	type libState struct {
		msgs, bytes, rec int64
		recIdx           int
		lost             int64
		totals           []int64 // per subscription
	}
	state := map[string]*libState{}
	for _, lib := range c.Libs {
		state[lib] = &libState{totals: make([]int64, len(subs))}
		slices.Sort(recAt[lib])
	}
	// A worker's minute of latency as the workers store it (a digest), drawn
	// from a log-normal around 0.9 ms with its p99 near 4 ms at the run's
	// rate; a few minutes' worth per library, each minute one of them. They
	// draw from their own generator, so the rest of the run is the same
	// with them or without.
	lrng := rand.New(rand.NewPCG(c.Seed, 0x1a7))
	const minuteKinds = 16
	minutes := map[string][][]byte{}
	for li, lib := range c.Libs {
		for range minuteKinds {
			l := sampler.NewLatency()
			batch := make([]int64, 0, 1024)
			for range int(rate * 60) {
				batch = append(batch, int64(math.Exp(math.Log(850+20*float64(li))+0.64*lrng.NormFloat64())))
				if len(batch) == cap(batch) {
					l.RecordBatch(batch)
					batch = batch[:0]
				}
			}
			l.RecordBatch(batch)
			d := sampler.NewDigest()
			d.AddLatency(l)
			minutes[lib] = append(minutes[lib], d.Encode())
		}
	}

	b := &store.Batch{}
	ei := 0
	for sec := int64(1); sec <= secs+2; sec++ {
		t := start.Add(time.Duration(sec) * time.Second)
		day := math.Sin(2 * math.Pi * float64(sec) / 86400)
		burst := 1.0
		if rng.IntN(3600) == 0 {
			burst = 3 + 3*rng.Float64() // a spike: the peak a minute average would hide
		}
		base := rate * (1 + 0.3*day) * burst
		for li, lib := range c.Libs {
			st := state[lib]
			msgs := int64(base * (0.97 + 0.06*rng.Float64()))
			for st.recIdx < len(recAt[lib]) && recAt[lib][st.recIdx] < float64(sec) {
				st.rec++
				st.recIdx++
				st.lost += int64(rng.IntN(3))
			}
			st.msgs += msgs
			st.bytes += msgs * 230
			grow := float64(sec) / float64(secs)
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: t,
				HasWorker: true, Msgs: msgs, Bytes: msgs * 230, MsgsTotal: st.msgs, BytesTotal: st.bytes,
				Goroutines: 12 + 2*li + rng.IntN(2), HeapBytes: int64(4e6 + 8e6*grow + 2e6*rng.Float64()), ConnsUp: depthSlot + 1,
				ReconnectsTotal: st.rec, LostTotal: st.lost,
				LatP50: int64(800 + 200*rng.Float64()), LatP99: int64(3000 + 2000*rng.Float64()*burst), LatMax: int64(9000 * burst),
				HasProc: true, RSS: int64((62 + float64(10*li) + 60*grow) * 1e6 * (1 + 0.01*rng.Float64())),
				CPUUser: 0.08 * float64(sec), CPUSys: 0.015 * float64(sec), CPUPct: (9 + float64(li) + 2*rng.Float64()) * burst,
				FDs: 12, Threads: 8})
			if sec%60 == 0 {
				b.Digests = append(b.Digests, store.LatencyDigest{Lib: lib, Sec: sec, Digest: minutes[lib][lrng.IntN(minuteKinds)]})
			}
			if sec%c.StreamEvery == 0 || sec == secs+2 {
				for i, s := range subs {
					st.totals[i] += int64(s.rate * float64(c.StreamEvery))
					b.StreamSamples = append(b.StreamSamples, store.StreamSample{Lib: lib, Slot: s.slot, Group: s.group,
						Stream: s.stream, Sec: sec, MsgsTotal: st.totals[i], BytesTotal: st.totals[i] * 230,
						MaxSilenceMs: int64(1000 + 4000*rng.Float64()), LastSeq: st.totals[i]})
				}
			}
		}
		b.Host = append(b.Host, store.HostSample{Sec: sec, TS: t, Load1: 0.6 + 0.3*day + 0.2*rng.Float64(), Load5: 0.6 + 0.3*day,
			Load15: 0.6 + 0.25*day, CPUPct: 30 + 5*day + 5*rng.Float64(), StealPct: 0.5 * rng.ExpFloat64(), IOWaitPct: 0.2 * rng.Float64(),
			MemUsed: 900e6, MemAvail: 1100e6})
		for ; ei < len(evs) && evs[ei].Sec < float64(sec); ei++ {
			b.Events = append(b.Events, evs[ei])
		}
		if sec%600 == 0 || sec == secs+2 {
			if err := db.Write(b); err != nil {
				return err
			}
			b = &store.Batch{}
		}
	}
	return nil
}
