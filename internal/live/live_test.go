package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wssoak/wssoak/internal/store"
)

func sample(lib string, sec int64, worker, proc bool) store.Sample {
	s := store.Sample{Lib: lib, Sec: sec, TS: time.Unix(1_800_000_000+sec, 0)}
	if worker {
		s.HasWorker, s.Msgs, s.MsgsTotal, s.BytesTotal = true, 100, 100*sec, 20_000*sec
		s.WireBytesTotal = 7_000 * sec
		s.ReconnectsTotal, s.LostTotal, s.Goroutines, s.ConnsUp, s.LatP99 = 1, 2, 30, 3, 1500
	}
	if proc {
		s.HasProc, s.RSS, s.CPUUser, s.CPUSys = true, 14<<20, 0.5, 0.25
	}
	return s
}

func gather(t *testing.T, s *Server) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	s.Handler(Access{}).ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

func get(fams map[string]*dto.MetricFamily, name, lib string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		for _, l := range m.Label {
			if l.GetValue() == lib {
				if m.Counter != nil {
					return m.Counter.GetValue(), true
				}
				return m.Gauge.GetValue(), true
			}
		}
	}
	return 0, false
}

// TestVariantLabel: a variant's column is a series of its own, labelled
// with its name, beside its library's.
func TestVariantLabel(t *testing.T) {
	s := New(nil)
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gorilla", 1, true, true), sample("gorilla-gc25", 1, true, true)}})
	var labels []string
	for _, m := range gather(t, s)["soak_messages_total"].GetMetric() {
		for _, l := range m.Label {
			if l.GetName() != "run_id" { // every series has it (TestIdentityAndState)
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
		}
	}
	if strings.Join(labels, " ") != "lib=gorilla lib=gorilla-gc25" {
		t.Errorf("soak_messages_total labels %q, want one series per column", labels)
	}
}

func TestObserve(t *testing.T) {
	s := New(nil)
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true), sample("coder", 1, false, true)},
		Events: []store.Event{{Lib: "gws", Kind: "stall"}, {Lib: "gws", Kind: "stall_end"}, {Lib: "", Kind: "stall"}}})
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 2, true, true), sample("coder", 0, true, true)}}) // a late, older row
	f := gather(t, s)
	for _, c := range []struct {
		name, lib string
		want      float64
		ok        bool
	}{
		{"soak_messages_total", "gws", 200, true},
		{"soak_bytes_total", "gws", 40_000, true},
		{"soak_wire_bytes_total", "gws", 14_000, true},
		{"soak_messages_per_second", "gws", 100, true},
		{"soak_latency_p99_seconds", "gws", 0.0015, true},
		{"soak_cpu_seconds_total", "gws", 0.75, true},
		{"soak_rss_bytes", "coder", 14 << 20, true},
		{"soak_stalls_total", "gws", 1, true},
		{"soak_stalls_total", "coder", 0, true},
		{"soak_worker_up", "gws", 1, true},
		{"soak_worker_up", "coder", 0, true},       // no row for second 2
		{"soak_messages_total", "coder", 0, false}, // its only worker half was older than the state: never shown
	} {
		got, ok := get(f, c.name, c.lib)
		if ok != c.ok || got != c.want {
			t.Errorf("%s{lib=%q} = %v (present %v), want %v (present %v)", c.name, c.lib, got, ok, c.want, c.ok)
		}
	}
	if v := f["soak_run_second"].GetMetric()[0].GetGauge().GetValue(); v != 2 {
		t.Errorf("soak_run_second = %v, want 2", v)
	}
	// A worker that comes back is up again.
	s.Observe(&store.Batch{Samples: []store.Sample{sample("coder", 3, true, false)}})
	if v, _ := get(gather(t, s), "soak_worker_up", "coder"); v != 1 {
		t.Errorf("coder back: up = %v", v)
	}
	// Each library keeps its own newest second: gws's row for second 4,
	// committed after coder's second 5, is taken.
	s.Observe(&store.Batch{Samples: []store.Sample{sample("coder", 5, true, true)}})
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 4, true, false)}})
	if v, _ := get(gather(t, s), "soak_messages_total", "gws"); v != 400 {
		t.Errorf("gws after its second 4: messages %v, want 400", v)
	}
}

func TestReportPage(t *testing.T) {
	s := New(nil)
	page := func() (int, string) {
		rec := httptest.NewRecorder()
		s.Handler(Access{}).ServeHTTP(rec, httptest.NewRequest("GET", "http://localhost:8080/", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := page(); code != 503 || !strings.Contains(body, "not started") {
		t.Errorf("before the run: %d %q", code, body)
	}
	dir := t.TempDir()
	s.RunStarted(dir, filepath.Join(dir, "soak.db"))
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true)}})
	if code, body := page(); code != 200 || !strings.Contains(body, "No report has been written yet") {
		t.Errorf("before the report: %d %q", code, body)
	}
	if err := os.WriteFile(filepath.Join(dir, "report.html"), []byte("<p>the report</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, body := page(); code != 200 || body != "<p>the report</p>" {
		t.Errorf("with the report: %d %q", code, body)
	}

	// With a renderer: rendered on demand, at most once per cacheEvery.
	calls := 0
	r := New(func(_ context.Context, w io.Writer, db string) error {
		calls++
		_, err := io.WriteString(w, "rendered from "+filepath.Base(db))
		return err
	})
	r.RunStarted(dir, filepath.Join(dir, "soak.db"))
	r.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true)}})
	srv := httptest.NewServer(r.Handler(Access{}))
	defer srv.Close()
	for range 3 {
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "rendered from soak.db" {
			t.Errorf("rendered page %q", b)
		}
	}
	if calls != 1 {
		t.Errorf("renderer called %d times for 3 requests within %s, want 1", calls, r.cacheEvery)
	}

	// A render that fails is a 503 that reloads itself.
	f := New(func(context.Context, io.Writer, string) error { return errors.New("read run: no rows") })
	f.RunStarted(dir, filepath.Join(dir, "soak.db"))
	f.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true)}})
	rec := httptest.NewRecorder()
	f.Handler(Access{}).ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1/", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Refresh") == "" || !strings.Contains(rec.Body.String(), "read run: no rows") {
		t.Errorf("failed render: %d %v %q", rec.Code, rec.Header(), rec.Body.String())
	}
}

// TestReportWarmup: asked during the warm-up (the run started, no sample committed yet,
// events maybe), / is the 503 page that reloads itself, and renders nothing; the first
// request after a batch with samples gets a fresh render, not one made during the warm-up.
func TestReportWarmup(t *testing.T) {
	calls, db := 0, "empty" // what the database holds, as the renderer would show it
	s := New(func(_ context.Context, w io.Writer, _ string) error {
		calls++
		_, err := fmt.Fprintf(w, "render %d of the %s database", calls, db)
		return err
	})
	srv := httptest.NewServer(s.Handler(Access{}))
	defer srv.Close()
	get := func() (int, string, string) {
		resp, err := http.Get(srv.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Refresh"), string(b)
	}
	dir := t.TempDir()
	s.RunStarted(dir, filepath.Join(dir, "soak.db"))
	for i, b := range []*store.Batch{{}, {Events: []store.Event{{Lib: "gws", Kind: "connect", Sec: -2}}}} {
		s.Observe(b)
		if code, refresh, body := get(); code != http.StatusServiceUnavailable || refresh == "" || !strings.Contains(body, "warming up") || calls != 0 {
			t.Errorf("warm-up, batch %d: %d, Refresh %q, %q, %d renders; want 503, a Refresh, the warm-up page, no render", i, code, refresh, body, calls)
		}
	}
	db = "recorded"
	s.Observe(&store.Batch{Samples: []store.Sample{sample("gws", 1, true, true)}})
	if code, _, body := get(); code != 200 || body != "render 1 of the recorded database" {
		t.Errorf("after the first sample: %d %q, want 200 and a first render of the recorded database", code, body)
	}
}

// TestHostHeader: unless public, a request whose Host is not loopback or localhost gets
// 421 (DNS rebinding); any port is fine (an SSH tunnel may use another local one).
func TestHostHeader(t *testing.T) {
	s := New(nil)
	for _, public := range []bool{false, true} {
		srv := httptest.NewServer(s.Handler(Access{Public: public}))
		for _, tc := range []struct {
			host string
			ok   bool
		}{
			{srv.Listener.Addr().String(), true},
			{"127.0.0.1:8080", true},
			{"localhost:9000", true},
			{"LocalHost", true},
			{"[::1]:8080", true},
			{"[::1]", true},
			{"127.0.0.2", true},
			{"evil.example:8080", false},
			{"evil.example", false},
			{"localhost.evil.example:8080", false},
			{"192.0.2.1:8080", false},
			{"0.0.0.0:8080", false},
		} {
			for _, path := range []string{"/", "/metrics", "/report.html"} {
				req, err := http.NewRequest("GET", srv.URL+path, nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Host = tc.host
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if refused := resp.StatusCode == http.StatusMisdirectedRequest; refused != (!tc.ok && !public) {
					t.Errorf("public %v, Host %q, %s: status %d", public, tc.host, path, resp.StatusCode)
				}
			}
		}
		srv.Close()
	}
}

// BenchmarkScrape is the cost of one /metrics scrape with five libraries.
func BenchmarkScrape(b *testing.B) {
	s := New(nil)
	var batch store.Batch
	for _, lib := range []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"} {
		batch.Samples = append(batch.Samples, sample(lib, 1, true, true))
	}
	s.Observe(&batch)
	h := s.Handler(Access{})
	req := httptest.NewRequest("GET", "http://127.0.0.1/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}

// BenchmarkObserve is the writer goroutine's added cost per second.
func BenchmarkObserve(b *testing.B) {
	s := New(nil)
	var batch store.Batch
	for _, lib := range []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"} {
		batch.Samples = append(batch.Samples, sample(lib, 1, true, true))
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(&batch)
	}
}
