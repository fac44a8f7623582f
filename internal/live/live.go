// Package live is the view of a run while it goes on: /metrics in the
// Prometheus text format, fed once a second from the batches the controller
// has committed to the database, and the run's HTML report at /.
//
// Nothing here touches the per-message path: the controller hands over the
// batch it built for the database anyway, after the commit, and a scrape
// reads a snapshot under a lock that is taken once a second by the writer.
package live

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// lib is one library's latest state, as last committed.
type lib struct {
	msgs, bytes, reconnects, lost, stalls float64 // counters
	rss, goroutines, latP99, rate, conns  float64 // gauges (latency in seconds)
	cpu                                   float64 // counter: CPU seconds of the current process
	wire                                  float64 // counter: frame bytes read by the current process
	up                                    float64 // 1: the worker's frame for the latest second arrived
	hasWorker, hasProc                    bool
	sec                                   int64 // run second of the newest row taken in
}

// Renderer writes the run's HTML report from the database at dbPath (opened
// read-only by the renderer) to w.
type Renderer func(ctx context.Context, w io.Writer, dbPath string) error

// Server holds the live state of one run and serves it.
type Server struct {
	mu         sync.Mutex
	libs       map[string]*lib
	order      []string
	sec        int64 // run second of the newest committed sample row, any library
	dir, db    string
	render     Renderer
	renderMu   sync.Mutex // one render at a time
	reg        *prometheus.Registry
	cacheAt    time.Time
	cache      []byte
	cacheEvery time.Duration
	recorded   bool // a batch with samples was committed: the warm-up is over
}

// RenderEvery is the least time between two renders of the report for /:
// rendering a day-long run takes a CPU-second or two on the machine that
// runs the soak, so reloads within it get the last render.
const RenderEvery = 30 * time.Second

// New returns a Server; render, if not nil, renders the report on demand
// (at most once per RenderEvery); without it / serves the report.html file
// of the run directory as it is.
func New(render Renderer) *Server {
	s := &Server{libs: map[string]*lib{}, render: render, reg: prometheus.NewRegistry(), cacheEvery: RenderEvery}
	s.reg.MustRegister(s)
	return s
}

// RunStarted tells the server where the run writes (controller.Observer).
func (s *Server) RunStarted(dir, dbPath string) {
	s.mu.Lock()
	s.dir, s.db = dir, dbPath
	s.mu.Unlock()
}

// Observe takes in a batch the controller has committed (controller.Observer).
// It runs once a second on the controller's writer goroutine.
func (s *Server) Observe(b *store.Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for i := range b.Samples {
		x := &b.Samples[i]
		l := s.lib(x.Lib)
		if x.Sec < l.sec {
			continue // a late half of an older second: the library's state is already newer
		}
		l.sec, s.sec = x.Sec, max(s.sec, x.Sec)
		seen[x.Lib] = true
		l.up = 0
		if x.HasWorker {
			l.hasWorker, l.up = true, 1
			l.msgs, l.bytes = float64(x.MsgsTotal), float64(x.BytesTotal)
			l.wire = float64(x.WireBytesTotal)
			l.reconnects, l.lost = float64(x.ReconnectsTotal), float64(x.LostTotal)
			l.goroutines, l.conns = float64(x.Goroutines), float64(x.ConnsUp)
			l.latP99, l.rate = float64(x.LatP99)/1e6, float64(x.Msgs)
		}
		if x.HasProc {
			l.hasProc = true
			l.rss, l.cpu = float64(x.RSS), x.CPUUser+x.CPUSys
		}
	}
	if len(b.Samples) > 0 {
		s.recorded = true
		for name, l := range s.libs {
			if !seen[name] {
				l.up = 0 // no row at all: the worker is not running
			}
		}
	}
	for _, e := range b.Events {
		if e.Kind == wire.EventStall && e.Lib != "" {
			s.lib(e.Lib).stalls++
		}
	}
}

func (s *Server) lib(name string) *lib {
	l := s.libs[name]
	if l == nil {
		l = &lib{}
		s.libs[name] = l
		s.order = append(s.order, name)
		slices.Sort(s.order)
	}
	return l
}

// source says which half of a sample a metric comes from: a library whose
// half was never measured gets no series rather than a made-up zero.
type source int

const (
	fromWorker source = iota // the worker's per-second frame
	fromProc                 // the controller's process sample
	always                   // events or liveness: known from the start
)

type metric struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(*lib) float64
	src   source
}

// ColumnLabel is the label of every per-column series: its value is the
// column's name (wire.Column: a library's, or a variant's), as the store's
// lib. The name stays "lib", which dashboards already select on; a column
// name needs no escaping as a label value (wire.CheckColumnName).
const ColumnLabel = "lib"

// desc is the series of the catalogue's measure id (its Prom name), by column.
func desc(id, help string) *prometheus.Desc {
	m := measure.ByID(id)
	if m == nil || m.Prom == "" {
		panic("live: measure " + id + " has no Prometheus name") // the catalogue and this list go together (tested)
	}
	return prometheus.NewDesc(m.Prom, help, []string{ColumnLabel}, nil)
}

var (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
	metrics = []metric{
		{desc("messages", "WebSocket data messages received by the library's worker since the run started."), counter, func(l *lib) float64 { return l.msgs }, fromWorker},
		{desc("bytes", "Payload bytes of those messages."), counter, func(l *lib) float64 { return l.bytes }, fromWorker},
		{desc("wire_bytes", "WebSocket frame bytes the worker read (compressed as they came) since it started."), counter, func(l *lib) float64 { return l.wire }, fromWorker},
		{desc("reconnects", "Connections lost and re-dialled by the current worker process."), counter, func(l *lib) float64 { return l.reconnects }, fromWorker},
		{desc("lost", "Messages lost by sequence gaps, over all subscriptions of the current worker process."), counter, func(l *lib) float64 { return l.lost }, fromWorker},
		{desc("stalls", "Subscriptions that went silent past their stall threshold, since the run started."), counter, func(l *lib) float64 { return l.stalls }, always},
		{desc("msg_rate", "Messages received in the latest complete second."), gauge, func(l *lib) float64 { return l.rate }, fromWorker},
		{desc("latency_p99", "99th percentile of receive time minus event time over the latest complete second."), gauge, func(l *lib) float64 { return l.latP99 }, fromWorker},
		{desc("goroutines", "Goroutines of the worker process."), gauge, func(l *lib) float64 { return l.goroutines }, fromWorker},
		{desc("conns_up", "Connections of the worker that are open."), gauge, func(l *lib) float64 { return l.conns }, fromWorker},
		{desc("rss", "Resident set size of the worker process."), gauge, func(l *lib) float64 { return l.rss }, fromProc},
		{desc("cpu_seconds", "User plus system CPU seconds of the current worker process."), counter, func(l *lib) float64 { return l.cpu }, fromProc},
		{desc("worker_up", "1 when the worker's report for the latest second arrived, else 0."), gauge, func(l *lib) float64 { return l.up }, always},
	}
	secondDesc = prometheus.NewDesc("soak_run_second", "Run second of the newest sample row committed to the database; each library's values are those of its newest row up to this second.", nil, nil)
)

// Describe implements prometheus.Collector.
func (s *Server) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range metrics {
		ch <- m.desc
	}
	ch <- secondDesc
}

// Collect implements prometheus.Collector.
func (s *Server) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch <- prometheus.MustNewConstMetric(secondDesc, gauge, float64(s.sec))
	for _, m := range metrics {
		for _, name := range s.order {
			l := s.libs[name]
			if m.src == fromWorker && !l.hasWorker || m.src == fromProc && !l.hasProc {
				continue
			}
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(l), name)
		}
	}
}

// Handler serves / (the report), /report.html (the same) and /metrics. Unless public, a
// request whose Host header names neither a loopback address nor localhost (any port) gets
// 421: a web page whose name an attacker has pointed at 127.0.0.1 (DNS rebinding) cannot
// read the live view through the browser of the machine that runs it.
func (s *Server) Handler(public bool) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", s.report)
	mux.HandleFunc("GET /report.html", s.report)
	if public {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("soak live view: Host %q is not a loopback address or localhost; open it as http://127.0.0.1:PORT/", r.Host), http.StatusMisdirectedRequest)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// loopbackHost tells whether the Host header h (host or host:port) names loopback.
func loopbackHost(h string) bool {
	host, _, err := net.SplitHostPort(h)
	if err != nil {
		host = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]") // no port
	}
	ip := net.ParseIP(host)
	return strings.EqualFold(host, "localhost") || ip != nil && ip.IsLoopback()
}

func (s *Server) report(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	dir, db, recorded := s.dir, s.db, s.recorded
	s.mu.Unlock()
	switch {
	case db == "":
		placeholder(w, http.StatusServiceUnavailable, "The run has not started yet.")
		return
	case !recorded:
		// The warm-up: nothing to show yet, and nothing rendered, so nothing cached.
		placeholder(w, http.StatusServiceUnavailable, "The run is warming up: nothing is recorded yet.")
		return
	}
	if s.render != nil {
		page, err := s.rendered(r.Context(), db)
		if err != nil {
			placeholder(w, http.StatusServiceUnavailable, "The report cannot be rendered yet: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
		return
	}
	path := filepath.Join(dir, "report.html")
	if _, err := os.Stat(path); err != nil {
		placeholder(w, http.StatusOK, fmt.Sprintf("No report has been written yet for this run (%s). The numbers so far are at /metrics.", path))
		return
	}
	http.ServeFile(w, r, path)
}

// rendered returns the report, rendered at most once per cacheEvery and by
// one request at a time, so that reloads cannot pile work on the machine.
func (s *Server) rendered(ctx context.Context, db string) ([]byte, error) {
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	if s.cache != nil && time.Since(s.cacheAt) < s.cacheEvery {
		return s.cache, nil
	}
	var buf bytes.Buffer
	if err := s.render(ctx, &buf, db); err != nil {
		return nil, err
	}
	s.cache, s.cacheAt = buf.Bytes(), time.Now()
	return s.cache, nil
}

// placeholder is a page that says why there is no report yet and reloads itself.
func placeholder(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Refresh", "10")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html><meta charset=utf-8><title>soak: live view</title>\n<p>%s</p>\n<p><a href=\"/metrics\">/metrics</a> (Prometheus text format)</p>\n", html.EscapeString(msg))
}
