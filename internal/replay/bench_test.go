package replay

import (
	"encoding/json"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/binance"
	"github.com/wssoak/wssoak/internal/wire"
)

// benchStreams returns 300 stream names: 60 symbols × 5 stream types.
func benchStreams() []string {
	kinds := []string{"trade", "aggTrade", "bookTicker", "depth@100ms", "depth20@100ms"}
	var out []string
	for i := range 60 {
		for _, k := range kinds {
			out = append(out, fmt.Sprintf("sym%dusdt@%s", i, k))
		}
	}
	return out
}

// BenchmarkFanout measures the scheduler's fan-out path: step a generator,
// render each variant once, hand the bytes to 5 subscriber queues. One op
// fires each of 300 streams once (1,500 deliveries).
func BenchmarkFanout(b *testing.B) {
	cfg := Config{Replay: wire.Replay{Seed: 1}}
	s, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	h := newHub(&s.cfg) // not started: the benchmark drives it
	conns := make([]*Conn, 5)
	for i := range conns {
		conns[i] = &Conn{s: s, out: make(chan item, 1<<14), quit: make(chan struct{}), streams: map[string]*streamStat{}}
		conns[i].combined = i%2 == 1 // raw and combined variants, as a mixed soak would have
	}
	names := benchStreams()
	for _, n := range names {
		st, err := binance.ParseStream(n)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range conns {
			h.subscribe(&sub{c: c, v: c.variant(), st: c.stat(n)}, st)
		}
	}
	topics := append([]*topic(nil), h.sched...)
	drain := func() {
		for _, c := range conns {
			for len(c.out) > 0 {
				<-c.out
			}
		}
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	b.ResetTimer()
	delivered := 0
	for b.Loop() {
		h.mu.Lock()
		for _, tp := range topics {
			h.fire(tp)
			h.advance(tp)
		}
		h.mu.Unlock()
		for _, c := range conns {
			delivered += len(c.out)
		}
		drain()
	}
	b.StopTimer()
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "msgs/s")
	b.ReportMetric(float64(ms1.Mallocs-ms0.Mallocs)/float64(delivered), "allocs/msg")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(delivered), "B/msg")
}

// BenchmarkServeLoad runs the real server with 300 streams at real rates and 5
// reading clients for 3 s per op and reports the server process's CPU use.
// The process CPU includes the 5 test clients.
func BenchmarkServeLoad(b *testing.B) {
	names := benchStreams()
	for b.Loop() {
		serveLoad(b, names)
	}
}

func serveLoad(b *testing.B, names []string) {
	s, err := New(Config{Replay: wire.Replay{Seed: 1}, MaxControlPerSec: 1000})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Listen("127.0.0.1:0"); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var clients []*client
	for i := range 5 {
		c := dial(b, s, "/ws", fmt.Sprint("c", i))
		for j := 0; j < len(names); j += 100 {
			params, _ := json.Marshal(names[j : j+100])
			msg := fmt.Sprintf(`{"method":"SUBSCRIBE","params":%s,"id":%d}`, params, j)
			if got := askReply(b, c, msg); got != fmt.Sprintf(`{"result":null,"id":%d}`, j) {
				b.Fatalf("reply %s", got)
			}
		}
		clients = append(clients, c)
	}
	cpu0 := cpuTime()
	t0 := time.Now()
	done := make(chan int, len(clients))
	for _, c := range clients {
		go func() {
			msgs, _ := readFor(c, 3*time.Second)
			done <- len(msgs)
		}()
	}
	total := 0
	for range clients {
		total += <-done
	}
	wall := time.Since(t0)
	cpu := cpuTime() - cpu0
	b.ReportMetric(float64(total)/wall.Seconds(), "msgs/s")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu%")
	for _, cs := range s.Stats().Conns {
		if !cs.Closed.IsZero() {
			b.Fatalf("conn %s closed: %d %s", cs.Tag, cs.CloseCode, cs.CloseReason)
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
