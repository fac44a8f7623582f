// Package live is the view of a run while it goes on: /metrics in the
// Prometheus text format, fed once a second from the batches the controller
// has committed to the database, and the run's HTML report at /.
//
// Nothing here touches the per-message path: the controller hands over the
// batch it built for the database anyway, after the commit, and a scrape
// reads a snapshot under a lock that is taken once a second by the writer.
//
// Every series carries the run's id (run_id), so that Prometheus tells two
// runs apart, one after the other on one port or side by side on several
// hosts, without relabelling; soak_run_info carries the run's identity and
// the user's labels for joins, soak_run_state where the run is in its life.
package live

import (
	"context"
	"io"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

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

	restarts, dialsOK, dialsFailed, dropped float64 // counters
	// subs are the subscriptions' latest cumulative losses, of which the
	// part found after a reconnect (lost across); the rest was lost while
	// connected.
	subs map[subKey]subLoss
	// lastW is the newest second with a worker row, missing the seconds
	// without one since the first second this view saw.
	lastW, missing int64
	lat            *latency // nil until the first latency digest
}

type subKey struct {
	slot          int
	group, stream string
}

type subLoss struct{ lost, across int64 }

// connected is the ids lost while a connection was up, as the
// subscriptions last reported (every 10 s, or 60 s in long runs).
func (l *lib) connected() float64 {
	var n int64
	for _, s := range l.subs {
		n += s.lost - s.across
	}
	return float64(n)
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
	firstSec   int64 // the first second this view saw (-1: none yet): seconds before it are the database's
	dir, db    string
	render     Renderer
	renderMu   sync.Mutex // one render at a time
	reg        *prometheus.Registry
	cacheAt    time.Time
	cache      []byte
	cacheEvery time.Duration
	recorded   bool // a batch with samples was committed: the warm-up is over

	runID      string
	info       *identity     // nil until the run is recorded
	state      wire.RunState // "" until the run is recorded
	faults     map[faultKey]float64
	busy, stol float64 // machine-seconds of host CPU busy and stolen
}

type faultKey struct {
	lib  string
	kind wire.FaultKind
}

// RenderEvery is the least time between two renders of the report for /:
// rendering a day-long run takes a CPU-second or two on the machine that
// runs the soak, so reloads within it get the last render.
const RenderEvery = 30 * time.Second

// New returns a Server; render, if not nil, renders the report on demand
// (at most once per RenderEvery); without it / serves the report.html file
// of the run directory as it is.
func New(render Renderer) *Server {
	s := &Server{libs: map[string]*lib{}, render: render, reg: prometheus.NewRegistry(), cacheEvery: RenderEvery,
		faults: map[faultKey]float64{}, firstSec: -1}
	s.reg.MustRegister(s)
	return s
}

// RunStarted tells the server where the run writes (controller.Observer).
func (s *Server) RunStarted(dir, dbPath string) {
	s.mu.Lock()
	s.dir, s.db = dir, dbPath
	if s.runID == "" {
		s.runID = filepath.Base(dir) // a run directory is named by its run's id; RunRecorded says for sure
	}
	s.mu.Unlock()
}

// RunRecorded takes in the run's identity (controller.StateObserver), and
// registers the controller's own Go and process collectors under its id.
func (s *Server) RunRecorded(r store.Run) {
	id := newIdentity(r)
	s.mu.Lock()
	first := s.info == nil
	s.runID, s.info = r.ID, id
	s.mu.Unlock()
	if first {
		own := prometheus.WrapRegistererWith(prometheus.Labels{"run_id": r.ID}, s.reg)
		own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
}

// RunState takes in the run's state (controller.StateObserver). At the
// end, no worker is up any more.
func (s *Server) RunState(st wire.RunState) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state = st
	switch st {
	case wire.StateDone, wire.StateInterrupted, wire.StateFailed:
		for _, l := range s.libs {
			l.up = 0
		}
	}
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
		if s.firstSec < 0 {
			s.firstSec = x.Sec
		}
		if x.HasWorker {
			s.countSecond(l, x.Sec)
		}
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
			l.dropped = max(l.dropped, float64(x.DroppedTotal))
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
	for _, x := range b.StreamSamples {
		l := s.lib(x.Lib)
		if l.subs == nil {
			l.subs = map[subKey]subLoss{}
		}
		l.subs[subKey{x.Slot, x.Group, x.Stream}] = subLoss{x.LostTotal, x.LostAcrossTotal}
	}
	for _, e := range b.Events {
		s.event(&e)
	}
	for _, h := range b.Host {
		s.busy += h.CPUPct / 100
		s.stol += h.StealPct / 100
	}
	s.digests(b)
}

// countSecond counts the seconds without a worker row before sec: a gap
// after the newest one, or, for a row that comes late, one gap less.
func (s *Server) countSecond(l *lib, sec int64) {
	switch {
	case l.lastW == 0 && !l.hasWorker:
		l.missing += max(sec-max(s.firstSec, 1), 0)
		l.lastW = sec
	case sec > l.lastW:
		l.missing += sec - l.lastW - 1
		l.lastW = sec
	case sec < l.lastW && l.missing > 0:
		l.missing-- // each second's worker half is written once: this one filled a gap
	}
}

// event counts what the alarms need of an event.
func (s *Server) event(e *store.Event) {
	switch e.Kind {
	case wire.EventStall:
		if e.Lib != "" {
			s.lib(e.Lib).stalls++
		}
	case wire.EventWorkerRestart:
		s.lib(e.Lib).restarts++
	case wire.EventConnected:
		s.lib(e.Lib).dialsOK++
	case wire.EventDialError:
		s.lib(e.Lib).dialsFailed++
	case wire.EventFault:
		s.faults[faultKey{e.Lib, e.Fault}]++
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
