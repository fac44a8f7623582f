package report

import (
	"bytes"
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// clockRun writes a 2-minute run with latency recorded, against the local
// replay server or a live target, with the clock reading at the start (host
// info; none when start is nil) and the readings of clock_samples.
func clockRun(t *testing.T, local bool, start *store.ClockSample, samples []store.ClockSample) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	t0 := time.Unix(1_800_000_000, 0)
	plan := `{"local":false,"slots":[{"group":"g"}]}`
	target := "wss://stream.binance.com:9443"
	if local {
		plan, target = `{"local":true,"slots":[{"group":"g"}]}`, "ws://127.0.0.1:40000"
	}
	host := map[string]string{"kernel": "6.1"}
	if start != nil {
		host["clock_synced"] = map[bool]string{true: "true", false: "false"}[start.Synced]
		host["clock_esterror_us"] = itoa(start.EstErrorUs)
		host["clock_maxerror_us"] = itoa(start.MaxErrorUs)
	}
	if err := db.CreateRun(store.Run{ID: "c", Name: "c", Target: target, Started: t0, Planned: 120 * time.Second,
		Host: host, Settings: map[string]string{"plan": plan}}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1, LatCount: 100, LatP50: 2500, LatP99: 9000}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{Clock: samples}
	for sec := int64(1); sec <= 3; sec++ {
		b.Samples = append(b.Samples, store.Sample{Lib: "gws", Sec: sec, TS: t0.Add(time.Duration(sec) * time.Second),
			HasWorker: true, Msgs: 1, MsgsTotal: sec, LatP50: 2500, LatP99: 9000})
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	return db
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestClockInTableAndReport: the latency cell is marked "clock not
// synchronised" exactly when the target is live and the clock was not
// synchronised at a reading of the run (the start, or inside the window);
// the Run section and the note under the latency charts say what was
// recorded, and for the local target that latency does not depend on it.
func TestClockInTableAndReport(t *testing.T) {
	synced := func(sec, est, maxe int64) store.ClockSample {
		return store.ClockSample{Sec: sec, Synced: true, EstErrorUs: est, MaxErrorUs: maxe}
	}
	unsynced := func(sec int64) store.ClockSample {
		return store.ClockSample{Sec: sec, State: 5, Status: 0x40, EstErrorUs: 16_000_000, MaxErrorUs: 16_000_000}
	}
	for _, tt := range []struct {
		name    string
		local   bool
		start   *store.ClockSample
		samples []store.ClockSample
		cell    string
		header  string
		note    string
	}{
		{"live, synchronised", false, &store.ClockSample{Synced: true, EstErrorUs: 400, MaxErrorUs: 9000},
			[]store.ClockSample{synced(1, 1500, 40_000), synced(61, 700, 30_000)}, "2.50 / 9.00",
			"synchronised, est. error ±1,500 µs (maximum error ±40,000 µs; 3 readings)",
			"synchronised at every reading (3), the kernel"},
		{"live, unsynchronised inside the window", false, &store.ClockSample{Synced: true, EstErrorUs: 400, MaxErrorUs: 9000},
			[]store.ClockSample{synced(1, 1500, 40_000), unsynced(61)}, "2.50 / 9.00 (clock not synchronised)",
			"not synchronised (at 1 of 3 readings; maximum error ±16,000,000 µs)",
			"NOT synchronised at 1 of 3 readings: latency can be off by any amount"},
		{"live, unsynchronised at the start", false, &store.ClockSample{EstErrorUs: 16_000_000, MaxErrorUs: 16_000_000},
			nil, "2.50 / 9.00 (clock not synchronised)", "not synchronised (at 1 of 1 reading;", "NOT synchronised at 1 of 1 reading:"},
		{"live, unsynchronised only after the window", false, nil,
			[]store.ClockSample{synced(1, 1500, 40_000), unsynced(121)}, "2.50 / 9.00",
			"synchronised, est. error ±1,500 µs (maximum error ±40,000 µs; 1 reading)", "synchronised at every reading (1)"},
		{"live, not recorded", false, nil, nil, "2.50 / 9.00", "not recorded", "clock synchronisation was not recorded"},
		{"local, unsynchronised", true, &store.ClockSample{}, []store.ClockSample{unsynced(1)}, "2.50 / 9.00",
			"not synchronised (at 2 of 2 readings; maximum error ±16,000,000 µs); local target: latency does not depend on it",
			"so latency does not depend on that clock"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db := clockRun(t, tt.local, tt.start, tt.samples)
			tbl, err := measure.Summarize(db)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range tbl.Rows {
				if r.Name == "Latency p50 / p99 (ms)" && (r.Cells[0] != tt.cell || r.Nums[0] != 9) {
					t.Errorf("latency cell %q (%v), want %q (9)", r.Cells[0], r.Nums[0], tt.cell)
				}
			}
			var buf bytes.Buffer
			if err := Render(context.Background(), db, &buf, Options{}); err != nil {
				t.Fatal(err)
			}
			page := buf.String()
			if !strings.Contains(page, "<tr><th>clock sync (kernel, adjtimex)</th><td>"+tt.header) {
				t.Errorf("Run section lacks the clock line %q", tt.header)
			}
			if n := strings.Count(page, tt.note); n != 2 { // under the lat_p50 and lat_p99 charts
				t.Errorf("%d latency notes with %q, want 2", n, tt.note)
			}
		})
	}
}
