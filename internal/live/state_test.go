package live

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// labelsOf are a series' labels by name.
func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestIdentityAndState: once the run is recorded, soak_run_info carries its
// identity and the user's labels, soak_run_state its state, and every series
// served (the controller's own Go and process series too) its run_id; at the
// end no worker is up.
func TestIdentityAndState(t *testing.T) {
	s := New(nil)
	start := time.Unix(1_800_000_000, 0)
	s.RunRecorded(store.Run{ID: "20270115-080000-local", Name: "local", Target: "ws://127.0.0.1:9", GoVersion: "go1.26.8",
		Started: start, Planned: 2 * time.Minute, Host: map[string]string{"kernel": "6.1.0", "cpu_model": "Test CPU", "virtualization": "kvm guest"},
		Settings: map[string]string{"labels": `{"region":"fra","instance_type":"c6i.large"}`}})
	s.RunState(wire.StateRunning)
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true)}})
	f := gather(t, s)
	info := f["soak_run_info"].GetMetric()
	if len(info) != 1 {
		t.Fatalf("soak_run_info: %d series", len(info))
	}
	got := labelsOf(info[0])
	for k, want := range map[string]string{"run_id": "20270115-080000-local", "profile": "local", "target": "ws://127.0.0.1:9", "go_version": "go1.26.8",
		"kernel": "6.1.0", "cpu_model": "Test CPU", "virtualization": "kvm guest", "region": "fra", "instance_type": "c6i.large"} {
		if got[k] != want {
			t.Errorf("soak_run_info{%s} = %q, want %q", k, got[k], want)
		}
	}
	if got["version"] == "" {
		t.Error("soak_run_info has no version")
	}
	if v := f["soak_run_start_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue(); v != 1_800_000_000 {
		t.Errorf("start %v", v)
	}
	if v := f["soak_run_planned_end_timestamp_seconds"].GetMetric()[0].GetGauge().GetValue(); v != 1_800_000_120 {
		t.Errorf("planned end %v", v)
	}
	state := func(f map[string]*dto.MetricFamily) string {
		on := ""
		ms := f["soak_run_state"].GetMetric()
		if len(ms) != len(wire.RunStates) {
			t.Errorf("soak_run_state: %d series, want one per state (%d)", len(ms), len(wire.RunStates))
		}
		for _, m := range ms {
			if m.GetGauge().GetValue() == 1 {
				if on != "" {
					t.Errorf("two states at 1: %s and %s", on, labelsOf(m)["state"])
				}
				on = labelsOf(m)["state"]
			}
		}
		return on
	}
	if st := state(f); st != "running" {
		t.Errorf("state %q, want running", st)
	}
	own := 0
	for name, fam := range f {
		for _, m := range fam.GetMetric() {
			if id := labelsOf(m)["run_id"]; id != "20270115-080000-local" {
				t.Errorf("%s: run_id %q", name, id)
			}
		}
		if strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			own++
		}
	}
	if own == 0 {
		t.Error("no go_ or process_ series of the controller itself")
	}
	if v, _ := get(f, "soak_worker_up", "gws"); v != 1 {
		t.Errorf("up during the run: %v", v)
	}
	s.RunState(wire.StateDone)
	f = gather(t, s)
	if st := state(f); st != "done" {
		t.Errorf("state %q, want done", st)
	}
	if v, _ := get(f, "soak_worker_up", "gws"); v != 0 {
		t.Errorf("up after the end: %v, want 0", v)
	}
}

// TestAlarmCounters: each series an alarm reads, from the batches it comes from.
func TestAlarmCounters(t *testing.T) {
	s := New(nil)
	row := func(sec, lost, dropped int64) store.Sample {
		x := sample("gws", sec, true, true)
		x.LostTotal, x.DroppedTotal = lost, dropped
		return x
	}
	s.Observe(&store.Batch{
		Samples: []store.Sample{row(1, 0, 0), row(2, 7, 3)},
		StreamSamples: []store.StreamSample{
			{Lib: "gws", Slot: 0, Stream: "btcusdt@trade", Sec: 2, LostTotal: 5, LostAcrossTotal: 4},
			{Lib: "gws", Slot: 1, Stream: "ethusdt@trade", Sec: 2, LostTotal: 1, LostAcrossTotal: 0},
		},
		Events: []store.Event{
			{Lib: "gws", Kind: wire.EventConnected}, {Lib: "gws", Kind: wire.EventConnected}, {Lib: "gws", Kind: wire.EventDialError},
			{Lib: "gws", Kind: wire.EventWorkerRestart},
			{Kind: wire.EventFault, Fault: wire.FaultReset}, {Kind: wire.EventFault, Fault: wire.FaultReset},
			{Lib: "gws", Kind: wire.EventFault, Fault: wire.FaultReject},
		},
		Host: []store.HostSample{{Sec: 1, CPUPct: 50, StealPct: 10}, {Sec: 2, CPUPct: 25, StealPct: 0}},
	})
	// Second 3 has no worker row yet, second 4 has: one missing.
	s.Observe(&store.Batch{Samples: []store.Sample{row(4, 7, 3)}})
	f := gather(t, s)
	series := func(name string, want map[string]string) (float64, bool) {
		for _, m := range f[name].GetMetric() {
			ls, ok := labelsOf(m), true
			for k, v := range want {
				ok = ok && ls[k] == v
			}
			if ok {
				return m.GetCounter().GetValue() + m.GetGauge().GetValue(), true
			}
		}
		return 0, false
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		// 7 lost in all; the subscriptions say 6, of which 4 across a reconnect:
		// 2 while connected, the other 5 counted across (the 1 not reported yet among them).
		{"soak_lost_messages_total", map[string]string{"lib": "gws", "when": "connected"}, 2},
		{"soak_lost_messages_total", map[string]string{"lib": "gws", "when": "across"}, 5},
		{"soak_dials_total", map[string]string{"lib": "gws", "result": "ok"}, 2},
		{"soak_dials_total", map[string]string{"lib": "gws", "result": "failed"}, 1},
		{"soak_worker_restarts_total", map[string]string{"lib": "gws"}, 1},
		{"soak_events_dropped_total", map[string]string{"lib": "gws"}, 3},
		{"soak_faults_total", map[string]string{"lib": "", "kind": "reset"}, 2},
		{"soak_faults_total", map[string]string{"lib": "gws", "kind": "reject"}, 1},
		{"soak_missing_seconds", map[string]string{"lib": "gws"}, 1},
		{"soak_host_cpu_busy_seconds_total", nil, 0.75},
		{"soak_host_cpu_steal_seconds_total", nil, 0.1},
	} {
		if got, ok := series(c.name, c.labels); !ok || got != c.want {
			t.Errorf("%s%v = %v (present %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// Second 3's worker half, written late, fills the gap.
	s.Observe(&store.Batch{Samples: []store.Sample{row(3, 7, 3)}})
	f = gather(t, s)
	if got, _ := series("soak_missing_seconds", map[string]string{"lib": "gws"}); got != 0 {
		t.Errorf("missing after the late row: %v, want 0", got)
	}
}

// TestLatencyBuckets: a range lands in the first bucket whose bound is at
// or above its lowest value, the buckets served cumulative, the sum at the
// ranges' middles.
func TestLatencyBuckets(t *testing.T) {
	var l latency
	l.add(50, 50, 3)       // 50 µs: the first bucket (100 µs)
	l.add(1000, 1009, 2)   // from 1 ms: le 0.001
	l.add(1010, 1019, 1)   // just above: le 0.0025
	l.add(60e6, 60.5e6, 4) // a minute: above every bound, in the count only
	var m dto.Metric
	if err := l.metric(latencyDesc, "run", "gws").Write(&m); err != nil {
		t.Fatal(err)
	}
	h := m.GetHistogram()
	if h.GetSampleCount() != 10 {
		t.Errorf("count %d, want 10", h.GetSampleCount())
	}
	if want := (50*3 + 1004.5*2 + 1014.5 + 60.25e6*4) / 1e6; math.Abs(h.GetSampleSum()-want) > 1e-9 {
		t.Errorf("sum %v, want %v", h.GetSampleSum(), want)
	}
	want := map[float64]uint64{0.0001: 3, 0.00025: 3, 0.0005: 3, 0.001: 5, 0.0025: 6, 10: 6}
	for _, b := range h.GetBucket() {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("le %v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
}

// TestLatencyFromDigests: the workers' minute digests in the batches make
// the histogram, count and buckets as the latencies recorded.
func TestLatencyFromDigests(t *testing.T) {
	s := New(nil)
	minute := func(us ...int64) []byte {
		l := sampler.NewLatency()
		for _, v := range us {
			l.Record(v)
		}
		d := sampler.NewDigest()
		d.AddLatency(l)
		return d.Encode()
	}
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 60, true, true)},
		Digests: []store.LatencyDigest{{Lib: "gws", Sec: 60, Digest: minute(200, 300, 4000)}}})
	s.Observe(&store.Batch{Digests: []store.LatencyDigest{{Lib: "gws", Sec: 120, Digest: minute(200, 2_000_000)}, {Lib: "gws", Sec: 121, Digest: []byte("junk")}}})
	var h *dto.Histogram
	for _, m := range gather(t, s)["soak_latency_seconds"].GetMetric() {
		if labelsOf(m)["lib"] == "gws" {
			h = m.GetHistogram()
		}
	}
	if h == nil || h.GetSampleCount() != 5 {
		t.Fatalf("gws latency histogram: %v, want 5 values", h)
	}
	want := map[float64]uint64{0.00025: 2, 0.0005: 3, 0.005: 4, 2.5: 5}
	for _, b := range h.GetBucket() {
		if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
			t.Errorf("le %v: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
		}
	}
}

// TestBearerToken: with a token, a request without it, or with another,
// gets 401 (saying how to authenticate, never what the token is); with it,
// the page. MetricsOnly serves /metrics alone.
func TestBearerToken(t *testing.T) {
	const token = "s3cret-token-0123456789"
	s := New(nil)
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true)}})
	srv := httptest.NewServer(s.Handler(Access{Public: true, Token: token, MetricsOnly: true}))
	defer srv.Close()
	for _, c := range []struct {
		path, auth string
		want       int
	}{
		{"/metrics", "", http.StatusUnauthorized},
		{"/metrics", "Bearer wrong-token-0123456789", http.StatusUnauthorized},
		{"/metrics", "Bearer " + token[:len(token)-1], http.StatusUnauthorized},
		{"/metrics", "Basic " + token, http.StatusUnauthorized},
		{"/metrics", "Bearer " + token, http.StatusOK},
		{"/", "Bearer " + token, http.StatusNotFound},
		{"/report.html", "Bearer " + token, http.StatusNotFound},
		{"/", "", http.StatusUnauthorized},
	} {
		req, _ := http.NewRequest("GET", srv.URL+c.path, nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s with %q: %d, want %d", c.path, c.auth, resp.StatusCode, c.want)
		}
		if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s: 401 without WWW-Authenticate", c.path)
		}
		if resp.StatusCode != http.StatusOK && strings.Contains(string(b), "s3cret") {
			t.Errorf("%s: the answer shows the token: %q", c.path, b)
		}
	}
}
