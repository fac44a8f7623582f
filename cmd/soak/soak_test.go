//go:build soak

package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/wire"
)

// TestSoakLong runs five minutes with the replay server closing every
// connection after 20 s (its lifetime, as Binance does after 24 h), so every
// slot of every library reconnects about fifteen times. Accounting must stay
// exact across all of them and nothing may grow. Run with scripts/soak-test.sh.
func TestSoakLong(t *testing.T) {
	dir := t.TempDir()
	prof := writeProfile(t, dir, "long.yaml", `name: long
duration: 5m
warmup: 2s
symbols: [btcusdt, ethusdt, solusdt]
replay:
  seed: 11
  speed: 5
  lifetime: 20s
`)
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", dir)
	if err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout, stderr)
	}
	t.Logf("\n%s", stdout)
	db := openRun(t, dir)

	type connStat struct {
		attempt           int
		sent, first, last int64
	}
	server := map[string][]connStat{} // lib/slot/stream -> connections
	counts, _ := db.ServerCounts()
	for _, c := range counts {
		var lib string
		var slot, attempt int
		if _, err := fmt.Sscanf(strings.ReplaceAll(c.Tag, "/", " "), "%s %d %d", &lib, &slot, &attempt); err != nil || c.Stream == "" {
			continue
		}
		k := fmt.Sprintf("%s/%d/%s", lib, slot, c.Stream)
		server[k] = append(server[k], connStat{attempt, c.Sent, c.FirstSeq, c.LastSeq})
	}
	streams, _ := db.LatestStreamSamples()
	for _, s := range streams {
		k := fmt.Sprintf("%s/%d/%s", s.Lib, s.Slot, s.Stream)
		cs := server[k]
		slices.SortFunc(cs, func(a, b connStat) int { return a.attempt - b.attempt })
		var sent, skipped int64
		for i, c := range cs {
			sent += c.sent
			if i > 0 && c.sent > 0 && cs[i-1].sent > 0 {
				skipped += c.first - cs[i-1].last - 1
			}
		}
		if len(cs) < 10 {
			t.Errorf("%s: %d connections, want a reconnect every 20 s", k, len(cs))
		}
		if s.MsgsTotal != sent {
			t.Errorf("%s: received %d, server sent %d", k, s.MsgsTotal, sent)
		}
		if (strings.HasSuffix(s.Stream, "@trade") || strings.HasSuffix(s.Stream, "@aggTrade")) && s.LostTotal != skipped {
			t.Errorf("%s: %d lost, server skipped %d ids across %d outages", k, s.LostTotal, skipped, len(cs)-1)
		}
		if s.DupTotal != 0 || s.OOOTotal != 0 {
			t.Errorf("%s: dup %d ooo %d", k, s.DupTotal, s.OOOTotal)
		}
	}
	events, _ := db.Events("")
	per := map[string][2]int{} // lib -> lifetime closes, reconnects
	for _, e := range events {
		v := per[e.Lib]
		switch {
		case e.Kind == wire.EventDisconnected && e.Code == 1001:
			v[0]++
		case e.Kind == wire.EventDisconnected:
			t.Errorf("unexpected loss %+v", e)
		case e.Kind == wire.EventReconnect:
			v[1]++
		}
		per[e.Lib] = v
	}
	for lib, v := range per {
		if v[0] < 30 || v[0] != v[1] {
			t.Errorf("%s: %d lifetime closes, %d reconnects; want them equal and at least 30", lib, v[0], v[1])
		}
	}
	for _, lib := range wire.Libraries {
		samples, _ := db.Samples(lib)
		if len(samples) < 300 {
			t.Fatalf("%s: %d rows for a 300 s run", lib, len(samples))
		}
		early, late := samples[30], samples[len(samples)-5]
		if late.Goroutines > early.Goroutines+2 {
			t.Errorf("%s: goroutines %d at %d s, %d at %d s", lib, early.Goroutines, early.Sec, late.Goroutines, late.Sec)
		}
		if late.RSS > early.RSS+10<<20 {
			t.Errorf("%s: RSS %d at %d s, %d at %d s", lib, early.RSS, early.Sec, late.RSS, late.Sec)
		}
		if late.FDs > early.FDs+2 {
			t.Errorf("%s: open files %d at %d s, %d at %d s", lib, early.FDs, early.Sec, late.FDs, late.Sec)
		}
	}
}
