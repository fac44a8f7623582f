package live

import (
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/wire"
)

// source says which half of a sample a metric comes from: a library whose
// half was never measured gets no series rather than a made-up zero.
type source int

const (
	fromWorker source = iota // the worker's per-second frame
	fromProc                 // the controller's process sample
	always                   // events or liveness: known from the start
)

// metric is one per-library family: one series by value, or several by
// values, each with its value of the family's extra label.
type metric struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	value  func(*lib) float64
	values func(*lib, func(v float64, label string))
	src    source
}

// ColumnLabel is the label of every per-column series: its value is the
// column's name (wire.Column: a library's, or a variant's), as the store's
// lib. The name stays "lib", which dashboards already select on; a column
// name needs no escaping as a label value (wire.CheckColumnName).
const ColumnLabel = "lib"

// desc is the series of the catalogue's measure id (its Prom name), by run
// and column, and by the extra labels.
func desc(id, help string, extra ...string) *prometheus.Desc {
	m := measure.ByID(id)
	if m == nil || m.Prom == "" {
		panic("live: measure " + id + " has no Prometheus name") // the catalogue and this list go together (tested)
	}
	return prometheus.NewDesc(m.Prom, help, append([]string{"run_id", ColumnLabel}, extra...), nil)
}

var (
	counter = prometheus.CounterValue
	gauge   = prometheus.GaugeValue
	metrics = []metric{
		{desc: desc("messages", "WebSocket data messages received by the library's worker since the run started."), typ: counter, value: func(l *lib) float64 { return l.msgs }, src: fromWorker},
		{desc: desc("bytes", "Payload bytes of those messages."), typ: counter, value: func(l *lib) float64 { return l.bytes }, src: fromWorker},
		{desc: desc("wire_bytes", "WebSocket frame bytes the worker read (compressed as they came) since the run started."), typ: counter, value: func(l *lib) float64 { return l.wire }, src: fromWorker},
		{desc: desc("reconnects", "Connections lost and re-dialled since the run started."), typ: counter, value: func(l *lib) float64 { return l.reconnects }, src: fromWorker},
		{desc: desc("lost", "Messages lost by sequence gaps since the run started: when=\"connected\" while a connection was up (as the subscriptions last reported), when=\"across\" the rest (found after a reconnect).", "when"), typ: counter,
			values: func(l *lib, emit func(float64, string)) {
				conn := min(l.connected(), l.lost)
				emit(conn, "connected")
				emit(l.lost-conn, "across")
			}, src: fromWorker},
		{desc: desc("stalls", "Subscriptions that went silent past their stall threshold, since the run started."), typ: counter, value: func(l *lib) float64 { return l.stalls }, src: always},
		{desc: desc("msg_rate", "Messages received in the latest complete second."), typ: gauge, value: func(l *lib) float64 { return l.rate }, src: fromWorker},
		{desc: desc("latency_p99", "99th percentile of receive time minus event time over the latest complete second."), typ: gauge, value: func(l *lib) float64 { return l.latP99 }, src: fromWorker},
		{desc: desc("goroutines", "Goroutines of the worker process."), typ: gauge, value: func(l *lib) float64 { return l.goroutines }, src: fromWorker},
		{desc: desc("conns_up", "Connections of the worker that are open."), typ: gauge, value: func(l *lib) float64 { return l.conns }, src: fromWorker},
		{desc: desc("rss", "Resident set size of the worker process."), typ: gauge, value: func(l *lib) float64 { return l.rss }, src: fromProc},
		{desc: desc("cpu_seconds", "User plus system CPU seconds of the current worker process."), typ: counter, value: func(l *lib) float64 { return l.cpu }, src: fromProc},
		{desc: desc("worker_up", "1 when the worker's report for the latest second arrived, else 0 (0 for every library once the run ended)."), typ: gauge, value: func(l *lib) float64 { return l.up }, src: always},
		{desc: desc("worker_restarts", "Times the library's worker process died and was started again."), typ: counter, value: func(l *lib) float64 { return l.restarts }, src: always},
		{desc: desc("dials", "Dials of the library's connections by result: ok (the handshake succeeded) or failed.", "result"), typ: counter,
			values: func(l *lib, emit func(float64, string)) {
				emit(l.dialsOK, "ok")
				emit(l.dialsFailed, "failed")
			}, src: always},
		{desc: desc("dropped_events", "Events the worker dropped because its channel to the controller was full."), typ: counter, value: func(l *lib) float64 { return l.dropped }, src: fromWorker},
		{desc: desc("seconds_missing", "Seconds, up to the newest second written, without the worker's row (a worker down, a frame lost), since this process began watching the run."), typ: gauge, value: func(l *lib) float64 { return float64(l.missing) }, src: fromWorker},
	}
	// latencyDesc is the latency histogram, per library, from the workers'
	// minute digests.
	latencyDesc = desc("latency", "Receive time minus event time of every message, from the workers' latency histograms (one each minute and at the end); classic buckets, negative values (a clock ahead of the server's) counted as 0.")
	faultsDesc  = desc("faults", "Faults the replay server applied, by kind; lib is empty for those that hit every library at once.", "kind")

	secondDesc = prometheus.NewDesc("soak_run_second", "Run second of the newest sample row committed to the database; each library's values are those of its newest row up to this second.", []string{"run_id"}, nil)
	stateDesc  = prometheus.NewDesc("soak_run_state", "1 for the state the run is in (warmup, running, draining, then done, interrupted or failed), 0 for the others.", []string{"run_id", "state"}, nil)
	startDesc  = prometheus.NewDesc("soak_run_start_timestamp_seconds", "Unix time the run's measured window started (or starts, during the warm-up).", []string{"run_id"}, nil)
	endDesc    = prometheus.NewDesc("soak_run_planned_end_timestamp_seconds", "Unix time the run's measured window is planned to end.", []string{"run_id"}, nil)
	busyDesc   = prometheus.NewDesc("soak_host_cpu_busy_seconds_total", "Machine-seconds the host's CPUs were busy (all but idle and iowait): a second with every core busy adds 1, so rate() is the busy fraction of the machine.", []string{"run_id"}, nil)
	infoDesc   = prometheus.NewDesc("soak_run_info", "", nil, nil) // its name; the run's own, with its labels, is made when the run is recorded
	stealDesc  = prometheus.NewDesc("soak_host_cpu_steal_seconds_total", "Machine-seconds of the host's CPU time taken by the hypervisor for other guests: rate() is the stolen fraction of the machine.", []string{"run_id"}, nil)
)

// perLib are the descriptions of every per-library family.
func perLib() []*prometheus.Desc {
	out := []*prometheus.Desc{latencyDesc, faultsDesc}
	for _, m := range metrics {
		out = append(out, m.desc)
	}
	return out
}

// Describe implements prometheus.Collector: it describes nothing, so that
// the registry takes the server as unchecked: soak_run_info's label names
// (the user's labels) are known only once the run is recorded.
func (s *Server) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector. Nothing is served before the
// run has an id: every series carries it.
func (s *Server) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.runID
	if s.info != nil {
		ch <- s.info.metric()
		ch <- prometheus.MustNewConstMetric(startDesc, gauge, float64(s.info.start.UnixMilli())/1e3, id)
		ch <- prometheus.MustNewConstMetric(endDesc, gauge, float64(s.info.end.UnixMilli())/1e3, id)
	}
	if s.state != "" {
		for _, st := range wire.RunStates {
			v := 0.0
			if st == s.state {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(stateDesc, gauge, v, id, string(st))
		}
	}
	if !s.recorded && len(s.libs) == 0 {
		return
	}
	ch <- prometheus.MustNewConstMetric(secondDesc, gauge, float64(s.sec), id)
	ch <- prometheus.MustNewConstMetric(busyDesc, counter, s.busy, id)
	ch <- prometheus.MustNewConstMetric(stealDesc, counter, s.stol, id)
	for _, m := range metrics {
		for _, name := range s.order {
			l := s.libs[name]
			if m.src == fromWorker && !l.hasWorker || m.src == fromProc && !l.hasProc {
				continue
			}
			if m.values != nil {
				m.values(l, func(v float64, label string) {
					ch <- prometheus.MustNewConstMetric(m.desc, m.typ, v, id, name, label)
				})
				continue
			}
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(l), id, name)
		}
	}
	for _, name := range s.order {
		if lat := s.libs[name].lat; lat != nil {
			ch <- lat.metric(latencyDesc, id, name)
		}
	}
	for k, n := range s.faults {
		ch <- prometheus.MustNewConstMetric(faultsDesc, counter, n, id, k.lib, string(k.kind))
	}
}

// SeriesNames are the names of the soak_* families the live view serves
// (a histogram's _bucket, _sum and _count under its own name): the alert
// rules and the dashboard may use no other.
func SeriesNames() []string {
	var out []string
	for _, d := range append(perLib(), secondDesc, stateDesc, startDesc, endDesc, busyDesc, stealDesc, infoDesc) {
		out = append(out, descName(d))
	}
	return out
}

// descName is a description's metric name.
func descName(d *prometheus.Desc) string {
	s := d.String() // Desc{fqName: "soak_…", …}
	_, rest, _ := strings.Cut(s, `fqName: "`)
	name, _, _ := strings.Cut(rest, `"`)
	return name
}
