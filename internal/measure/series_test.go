package measure

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// seriesRun writes a 130-second run of two libraries whose every second is
// known: RSS 50 MB + 10 kB a second (36 MB/h), heap 8 MB, p99 alternating
// 2 and 4 ms except second 10 (none), CPU 5 % (gws 7 %), two seconds of
// drain; a minute digest for gws; the server's counts; a reset fault and
// the reconnects it caused.
func seriesRun(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	start := time.Unix(1_800_000_000, 0)
	if err := db.CreateRun(store.Run{ID: "s", Name: "s", Target: "local", Started: start, Planned: 130 * time.Second}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for _, lib := range []string{"gorilla", "gws"} {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "m", Version: "v", Pid: 1, LatCount: 5, LatP50: 3000, LatP99: 3000}); err != nil {
			t.Fatal(err)
		}
		cpu := 5.0
		if lib == "gws" {
			cpu = 7
		}
		for sec := int64(1); sec <= 132; sec++ {
			p99 := int64(2000 + 2000*(sec%2))
			if sec == 10 {
				p99 = 0 // a second without a message
			}
			b.Samples = append(b.Samples, store.Sample{Lib: lib, Sec: sec, TS: start.Add(time.Duration(sec) * time.Second),
				HasWorker: true, Msgs: 10, MsgsTotal: 10 * sec, HeapBytes: 8e6, LatP99: p99,
				HasProc: true, RSS: 50e6 + sec*1e4, CPUPct: cpu})
		}
		b.StreamSamples = append(b.StreamSamples,
			store.StreamSample{Lib: lib, Slot: 0, Group: "g", Stream: "btcusdt@trade", Sec: 132, MsgsTotal: 700},
			store.StreamSample{Lib: lib, Slot: 1, Group: "g", Stream: "ethusdt@trade", Sec: 132, MsgsTotal: 620})
	}
	l := sampler.NewLatency()
	for range 98 {
		l.Record(1000)
	}
	l.Record(50_000)
	l.Record(50_000)
	d := sampler.NewDigest()
	d.AddLatency(l)
	b.Digests = []store.LatencyDigest{{Lib: "gws", Sec: 60, Digest: d.Encode()}}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * 1e9)) }
	b.Events = []store.Event{
		{Lib: "gorilla", TS: at(40), Sec: 40, Kind: wire.EventFault, Fault: wire.FaultDrop, Slot: -1, Detail: "drop n=3"},
		{Lib: "gws", TS: at(40), Sec: 40, Kind: wire.EventFault, Fault: wire.FaultDrop, Slot: -1, Detail: "drop n=3"},
		{Lib: "gws", TS: at(41), Sec: 41, Kind: wire.EventReconnect, Slot: 0, DurMs: 250, Detail: "detect=1ms lost=4 back=1/1"},
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	err = db.SaveServerCounts([]store.ServerCount{
		{Tag: "gorilla/0/0", Stream: "btcusdt@trade", Sent: 300}, {Tag: "gorilla/0/1", Stream: "btcusdt@trade", Sent: 400},
		{Tag: "gorilla/1/0", Stream: "ethusdt@trade", Sent: 620}, {Tag: "gorilla/1/0", Stream: "", Sent: 1},
		{Tag: "gws/0/0", Stream: "btcusdt@trade", Sent: 700}, {Tag: "gws/1/0", Stream: "ethusdt@trade", Sent: 623},
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestSeriesAndRankedRows(t *testing.T) {
	r, err := Compute(seriesRun(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Series) != 2 {
		t.Fatalf("%d series, want one per column", len(r.Series))
	}
	gws := r.Series[1]
	if len(gws.CPU) != 130 || len(gws.RSS) != 130 || len(gws.Heap) != 130 || len(gws.LatP99) != 130 {
		t.Errorf("series of %d, %d, %d, %d seconds; want the window's 130 (no drain)", len(gws.CPU), len(gws.RSS), len(gws.Heap), len(gws.LatP99))
	}
	if !math.IsNaN(gws.CPU[0]) || gws.CPU[1] != 7 || !math.IsNaN(gws.LatP99[9]) || gws.LatP99[10] != 4 || gws.RSS[129] != 50e6+130e4 {
		t.Errorf("CPU second 1 %v (want NaN: the start), second 2 %v; p99 second 10 %v (want NaN), 11 %v; RSS second 130 %v",
			gws.CPU[0], gws.CPU[1], gws.LatP99[9], gws.LatP99[10], gws.RSS[129])
	}
	if len(gws.Faults) != 1 || gws.Faults[0].Kind != wire.FaultDrop || len(gws.Reconnects) != 1 || gws.Reconnects[0].Lost != 4 || gws.Reconnects[0].DurMs != 250 {
		t.Errorf("faults %+v, reconnects %+v", gws.Faults, gws.Reconnects)
	}
	// p99: 65 seconds of 4 ms and 64 of 2 ms (second 10, even, has none)
	wantP99 := (65*4.0 + 64*2.0) / 129
	for id, want := range map[string][2]Cell{
		// median of seconds 66..130: second 98
		"rss_level":        {{Text: "51.0 MB", Num: 50e6 + 98e4}, {Text: "51.0 MB", Num: 50e6 + 98e4}},
		"rss_trend":        {{Text: "+36.0 MB/h", Num: 36}, {Text: "+36.0 MB/h", Num: 36}},
		"heap":             {{Text: "8.0", Num: 8e6}, {Text: "8.0", Num: 8e6}},
		"cpu_avg":          {{Text: "5.0 %", Num: 5}, {Text: "7.0 %", Num: 7}},
		"latency_mean_p99": {{Text: "3.01", Num: wantP99}, {Text: "3.01", Num: wantP99}},
		// gws's from its digest (98 of 1 ms, 2 of 50 ms), gorilla's from the worker
		"latency": {{Text: "3.00 / 3.00", Num: 3}, {Text: "1.00 / 50.17", Num: 50.175}},
		// gorilla's two connections of slot 0 add up; its "" stream is no subscription
		"server_truth": {{Text: "✓ 2 subscriptions", Num: 0}, {Text: "✗ 1 of 2 differ (slot 1 ethusdt@trade: received 620, server sent 623)", Num: 1}},
	} {
		row := r.Row(id)
		if row == nil {
			t.Errorf("%s: no row", id)
			continue
		}
		for i, w := range want {
			got := row.Cells[i]
			if got.Text != w.Text || math.Abs(got.Num-w.Num) > 1e-6*math.Max(1, math.Abs(w.Num)) {
				t.Errorf("%s %s: %+v, want %+v", id, r.Cols[i].Lib, got, w)
			}
		}
	}
}

// TestServerTruthNotCompared: a reset fault, or a worker restart, makes
// the server's counts and the library's rightly differ: not compared.
func TestServerTruthNotCompared(t *testing.T) {
	c := &column{run: &runInfo{}, sent: &SentCheck{Subs: 2, Mismatches: []SentSub{{Stream: "x", Received: 1, Sent: 2}}}}
	if got := c.sentCell(); got.Num != 1 {
		t.Errorf("plain: %+v", got)
	}
	c.dropKinds = []wire.FaultKind{wire.FaultReset}
	if got := c.sentCell(); !math.IsNaN(got.Num) || got.Text != "not compared: a reset fault discards messages in flight" {
		t.Errorf("after a reset: %+v", got)
	}
	c.restarts = 1
	if got := c.sentCell(); !math.IsNaN(got.Num) || got.Text != Restarted(1) {
		t.Errorf("restarted: %+v", got)
	}
	if got := (&column{run: &runInfo{}}).sentCell(); got.Text != NotMeasured {
		t.Errorf("no server counts: %+v", got)
	}
}

func TestLostOf(t *testing.T) {
	for detail, want := range map[string]int64{
		"detect=5ms backoff=0ms dial=1ms handshake=1ms subscribed=0ms first_data=3ms lost=12 back=2/2": 12,
		"lost=0 back=1/1": 0,
		"back=1/1":        -1,
		"lost=x":          -1,
		"lost=-3":         -1,
	} {
		if got := lostOf(detail); got != want {
			t.Errorf("lostOf(%q) = %d, want %d", detail, got, want)
		}
	}
}
