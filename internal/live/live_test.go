package live

import (
	"context"
	"errors"
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
	s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
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
		s.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := page(); code != 200 || !strings.Contains(body, "not started") {
		t.Errorf("before the run: %d %q", code, body)
	}
	dir := t.TempDir()
	s.RunStarted(dir, filepath.Join(dir, "soak.db"))
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
	srv := httptest.NewServer(r.Handler())
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

	// A render that fails (nothing recorded yet) is a 503 that reloads itself.
	f := New(func(context.Context, io.Writer, string) error { return errors.New("read run: no rows") })
	f.RunStarted(dir, filepath.Join(dir, "soak.db"))
	rec := httptest.NewRecorder()
	f.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Refresh") == "" || !strings.Contains(rec.Body.String(), "read run: no rows") {
		t.Errorf("failed render: %d %v %q", rec.Code, rec.Header(), rec.Body.String())
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
	h := s.Handler()
	req := httptest.NewRequest("GET", "/metrics", nil)
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
