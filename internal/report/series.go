package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// chart is one chart over time, as data: a frame with one row per instant
// (X, seconds after the window's start) and one column per series (Names;
// NaN where a series has no value, which breaks its line), and event
// markers. chart.go turns it into go-echarts options. ID is fixed (the
// page, the browser test and the golden file find charts by it).
type chart struct {
	ID, Title string
	Unit      string  // of the Y axis
	Basis     string  // per second, per interval, cumulative, sampled …
	Bucket    float64 // downsampling bucket in seconds (0 = every second)
	Step      bool
	Note      string // shown under the chart (the latency charts: the clocks)
	// Coincide says which lines were drawn as one (coincide): "" when none.
	Coincide string
	// Empty: nothing happened to draw (no value above 0, no marker): the
	// page says so instead of an empty grid.
	Empty   bool
	Names   []string
	X       []float64
	Cols    [][]float64 // Cols[series][row]
	Markers []marker
}

// metric is one per-library chart: how to read it from a raw sample and
// from a bucket (min, max).
type metric struct {
	id, title, unit, basis string
	step                   bool
	worker                 bool // from the worker half of the sample (else the process half)
	raw                    func(s *store.Sample) float64
	bucket                 func(b *store.Bucket) (lo, hi float64, ok bool)
	// side is the kind of soak the chart is drawn for: measure.SideClient,
	// measure.SideServer, or "" for both.
	side string
}

func i2(v [2]int64, scale float64) (float64, float64, bool) {
	return float64(v[0]) / scale, float64(v[1]) / scale, true
}

var chartMetrics = []metric{
	{id: "msgs", title: "Messages received", unit: "msgs/s", basis: "per second: messages received in the second ending at t", worker: true, side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return float64(s.Msgs) },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Msgs, 1) }},
	{id: "msgs", title: "Deliveries written by the server", unit: "deliveries/s", basis: "per second: broadcasts the chat server wrote to its clients in the second ending at t", worker: true, side: measure.SideServer,
		raw:    func(s *store.Sample) float64 { return float64(s.Msgs) },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Msgs, 1) }},
	{id: "wire", title: "WebSocket frame bytes read", unit: "kB/s", basis: "per second: frame bytes read in the second ending at t, headers included, compressed as they came (drawn when the run recorded them)", worker: true, side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return float64(s.WireBytes) / 1e3 },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Wire, 1e3) }},
	{id: "rss", title: "Resident memory (RSS) of the worker process", unit: "MB", basis: "sampled every second (10^6 bytes)", side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return float64(s.RSS) / 1e6 },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.RSS, 1e6) }},
	{id: "rss", title: "Resident memory (RSS) of the server process", unit: "MB", basis: "sampled every second (10^6 bytes)", side: measure.SideServer,
		raw:    func(s *store.Sample) float64 { return float64(s.RSS) / 1e6 },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.RSS, 1e6) }},
	{id: "cpu", title: "CPU of the worker process", unit: "% of one core", basis: "per 1 s interval: CPU time / wall time", side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return s.CPUPct },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.CPUPct100, 100) }},
	{id: "cpu", title: "CPU of the server process", unit: "% of one core", basis: "per 1 s interval: CPU time / wall time", side: measure.SideServer,
		raw:    func(s *store.Sample) float64 { return s.CPUPct },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.CPUPct100, 100) }},
	{id: "lat_p50", title: "Latency p50 (receive time − event time E)", unit: "ms", basis: "per 1 s interval: median of that second's messages (none in a second without a latency sample)", worker: true, side: measure.SideClient,
		raw: func(s *store.Sample) float64 { return latMs(s, s.LatP50) }, bucket: latBucket(func(b *store.Bucket) [2]int64 { return b.LatP50 })},
	{id: "lat_p50", title: "Broadcast latency p50 (a message sent by one client → received by each other)", unit: "ms", basis: "per 1 s interval: median of that second's deliveries, as the load client measured them (none in a second without one)", worker: true, side: measure.SideServer,
		raw: func(s *store.Sample) float64 { return latMs(s, s.LatP50) }, bucket: latBucket(func(b *store.Bucket) [2]int64 { return b.LatP50 })},
	{id: "lat_p99", title: "Latency p99 (receive time − event time E)", unit: "ms", basis: "per 1 s interval: 99th percentile of that second's messages", worker: true, side: measure.SideClient,
		raw: func(s *store.Sample) float64 { return latMs(s, s.LatP99) }, bucket: latBucket(func(b *store.Bucket) [2]int64 { return b.LatP99 })},
	{id: "lat_p99", title: "Broadcast latency p99 (a message sent by one client → received by each other)", unit: "ms", basis: "per 1 s interval: 99th percentile of that second's deliveries, as the load client measured them", worker: true, side: measure.SideServer,
		raw: func(s *store.Sample) float64 { return latMs(s, s.LatP99) }, bucket: latBucket(func(b *store.Bucket) [2]int64 { return b.LatP99 })},
	{id: "heap", title: "Go heap in use (runtime HeapAlloc) of the worker", unit: "MB", basis: "sampled every second (10^6 bytes)", worker: true, side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return float64(s.HeapBytes) / 1e6 },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Heap, 1e6) }},
	{id: "goroutines", title: "Goroutines of the worker", unit: "count", basis: "sampled every second", worker: true, side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return float64(s.Goroutines) },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Goroutines, 1) }},
	{id: "goroutines", title: "Goroutines of the server", unit: "count", basis: "sampled every second (its /_stats)", worker: true, side: measure.SideServer,
		raw:    func(s *store.Sample) float64 { return float64(s.Goroutines) },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Goroutines, 1) }},
	{id: "drops", title: "Clients dropped by the server (slow readers, half-open clients)", unit: "clients/s", basis: "per second: clients the server dropped for a full queue in the second ending at t (its /_stats)", worker: true, side: measure.SideServer,
		raw: func(s *store.Sample) float64 {
			if !s.HasDrops {
				return math.NaN()
			}
			return float64(s.Drops)
		},
		bucket: func(b *store.Bucket) (float64, float64, bool) {
			lo, hi, _ := i2(b.Drops, 1)
			return lo, hi, b.HasDrops
		}},
	{id: "writes", title: "Write syscalls per delivery of the server", unit: "writes per delivery", basis: "per second: the server's write syscalls ÷ its deliveries in the second (under 1: broadcasts batched into one write)", worker: true, side: measure.SideServer,
		raw: func(s *store.Sample) float64 {
			if !s.HasDrops || s.Msgs == 0 {
				return math.NaN()
			}
			return float64(s.Writes) / float64(s.Msgs)
		},
		bucket: func(b *store.Bucket) (float64, float64, bool) { return b.WritesPer[0], b.WritesPer[1], b.HasWrites }},
	{id: "reconnects", title: "Reconnects, with events as markers", unit: "count", basis: "cumulative since the start (markers: events at their instant)", step: true, worker: true, side: measure.SideClient,
		raw:    func(s *store.Sample) float64 { return float64(s.ReconnectsTotal) },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Reconnects, 1) }},
	{id: "reconnects", title: "Client reconnects, with events as markers", unit: "count", basis: "cumulative since the start: clients the load reset, or the server closed, and dialled again (markers: events at their instant)", step: true, worker: true, side: measure.SideServer,
		raw:    func(s *store.Sample) float64 { return float64(s.ReconnectsTotal) },
		bucket: func(b *store.Bucket) (float64, float64, bool) { return i2(b.Reconnects, 1) }},
}

// metricsOf are the per-library charts of a side's soak.
func metricsOf(side string) []metric {
	return slices.DeleteFunc(slices.Clone(chartMetrics), func(m metric) bool { return m.side != "" && m.side != side })
}

// latBucket reads a latency bucket: none when the bucket had no second
// with a latency sample.
func latBucket(of func(b *store.Bucket) [2]int64) func(b *store.Bucket) (float64, float64, bool) {
	return func(b *store.Bucket) (float64, float64, bool) {
		lo, hi, _ := i2(of(b), 1000)
		return lo, hi, b.HasLat
	}
}

// hostMetrics are the host charts: series names and their values.
var hostMetrics = []struct {
	id, title, unit, basis string
	names                  []string
	raw                    func(h *store.HostSample) []float64
	bucket                 func(h *store.HostBucket) [][2]float64
}{
	{"host_cpu", "Host CPU: steal, iowait and busy", "% of all CPUs", "per 1 s interval", []string{"steal", "iowait", "busy"},
		func(h *store.HostSample) []float64 { return []float64{h.StealPct, h.IOWaitPct, h.CPUPct} },
		func(h *store.HostBucket) [][2]float64 { return [][2]float64{h.Steal, h.IOWait, h.CPU} }},
	{"host_load", "Host load average", "runnable tasks", "sampled every second (the kernel's 1, 5 and 15 min averages)", []string{"load1", "load5", "load15"},
		func(h *store.HostSample) []float64 { return []float64{h.Load1, h.Load5, h.Load15} },
		func(h *store.HostBucket) [][2]float64 { return [][2]float64{h.Load1, h.Load5, h.Load15} }},
}

// buildCharts builds the charts over time from rows read by readSeries. A
// run of at most 2×maxBuckets seconds is drawn from every row; a longer one
// from maxBuckets buckets that SQLite folds to their minimum and maximum, so
// no spike is lost. Each chart's rows are then compacted (compact), which
// draws the same lines.
func buildCharts(rows seriesRows, lastSec int64, side string, libs []string, libIdx map[string]int, events []store.Event) []chart {
	width := rows.width
	chartMetrics := metricsOf(side)
	out := make([]chart, 0, len(chartMetrics)+len(hostMetrics))
	for _, m := range chartMetrics {
		out = append(out, chart{ID: m.id, Title: m.title, Unit: m.unit, Basis: m.basis, Step: m.step, Bucket: float64(width), Names: libs})
	}
	for _, h := range hostMetrics {
		out = append(out, chart{ID: h.id, Title: h.title, Unit: h.unit, Basis: h.basis, Bucket: float64(width), Names: h.names})
	}
	var g grid
	if width == 0 {
		samples, host := rows.samples, rows.host
		for i := range samples {
			g.see(samples[i].Sec)
		}
		for i := range host {
			g.see(host[i].Sec)
		}
		g.layout(out, 1, 1, lastSec)
		for i := range samples {
			s := &samples[i]
			li, ok := libIdx[s.Lib]
			if !ok {
				continue
			}
			r := g.row(s.Sec)
			for mi, m := range chartMetrics {
				if m.worker && s.HasWorker || !m.worker && s.HasProc {
					out[mi].Cols[li][r] = m.raw(s)
				}
			}
		}
		for j := range host {
			r := g.row(host[j].Sec)
			for i, h := range hostMetrics {
				for k, v := range h.raw(&host[j]) {
					out[len(chartMetrics)+i].Cols[k][r] = v
				}
			}
		}
	} else {
		buckets, hb := rows.buckets, rows.hostBuckets
		for i := range buckets {
			g.see(buckets[i].From / width)
		}
		for i := range hb {
			g.see(hb[i].From / width)
		}
		g.layout(out, width, 2, lastSec)
		for i := range buckets {
			b := &buckets[i]
			li, ok := libIdx[b.Lib]
			if !ok {
				continue
			}
			r := g.row(b.From / width)
			for mi, m := range chartMetrics {
				if m.worker && !b.HasWorker || !m.worker && !b.HasProc {
					continue
				}
				if lo, hi, ok := m.bucket(b); ok {
					out[mi].Cols[li][r], out[mi].Cols[li][r+1] = lo, hi
				}
			}
		}
		for j := range hb {
			r := g.row(hb[j].From / width)
			for i, h := range hostMetrics {
				for k, v := range h.bucket(&hb[j]) {
					c := &out[len(chartMetrics)+i]
					c.Cols[k][r], c.Cols[k][r+1] = v[0], v[1]
				}
			}
		}
	}
	for i := range out {
		out[i].compact()
		if out[i].ID == "reconnects" {
			out[i].Markers = markers(libs, libIdx, &out[i], events) // on every line, before they are merged
		}
		if i < len(chartMetrics) {
			out[i].coincide()
		}
		out[i].Empty = !out[i].anyAbove(0) && len(out[i].Markers) == 0
	}
	// A run recorded before wire bytes (or with none read) has no wire chart.
	return slices.DeleteFunc(out, func(c chart) bool { return c.ID == "wire" && !c.anyAbove(0) })
}

// anyAbove reports whether some value of the chart is above v.
func (c *chart) anyAbove(v float64) bool {
	for _, col := range c.Cols {
		for _, x := range col {
			if x > v {
				return true
			}
		}
	}
	return false
}

// grid lays the rows of all charts out on one time axis: every second (or
// bucket) from the first seen to the last, each as perKey rows (a bucket's
// minimum, then its maximum), NaN until filled, so that a second or a
// bucket without data breaks the lines.
type grid struct {
	lo, hi int64 // keys seen: seconds, or bucket numbers
	seen   bool
	perKey int
}

func (g *grid) see(k int64) {
	if !g.seen {
		g.lo, g.hi, g.seen = k, k, true
	}
	g.lo, g.hi = min(g.lo, k), max(g.hi, k)
}

// row is the first row of key k.
func (g *grid) row(k int64) int { return int(k-g.lo) * g.perKey }

// layout sizes every chart's frame: keys of width seconds, drawn at their
// middle (the part of it inside seconds 1…lastSec).
func (g *grid) layout(cs []chart, width int64, perKey int, lastSec int64) {
	g.perKey = perKey
	n := 0
	if g.seen {
		n = int(g.hi-g.lo+1) * perKey
	}
	x := make([]float64, n)
	for k := g.lo; g.seen && k <= g.hi; k++ {
		from, to := k*width, (k+1)*width-1
		if width > 1 {
			from, to = max(from, 1), max(min(to, lastSec), from)
		}
		for j := range perKey {
			x[g.row(k)+j] = float64(from+to) / 2
		}
	}
	for i := range cs {
		cs[i].X = x
		cs[i].Cols = make([][]float64, len(cs[i].Names))
		for k := range cs[i].Cols {
			col := make([]float64, n)
			for r := range col {
				col[r] = math.NaN()
			}
			cs[i].Cols[k] = col
		}
	}
}

// latMs is a latency in ms, or NaN for a second without a latency sample.
func latMs(s *store.Sample, us int64) float64 {
	if s.NoLat {
		return math.NaN()
	}
	return float64(us) / 1000
}

// coincideShare is how close two lines are drawn as one: their largest
// difference at most this share of the chart's range of values.
const coincideShare = 0.005

// coincide draws as one the lines that coincide: every value of one within
// coincideShare of the chart's range of another's (gaps alike), named
// "a = b = c" and said so in Coincide, so that no line hides behind
// another's colour unsaid. The first line of each set is drawn.
func (c *chart) coincide() {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, col := range c.Cols {
		for _, v := range col {
			if !math.IsNaN(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if !(hi >= lo) || len(c.Cols) < 2 {
		return
	}
	tol := coincideShare * (hi - lo)
	near := func(a, b []float64) (float64, bool) {
		worst := 0.0
		for i := range a {
			if math.IsNaN(a[i]) != math.IsNaN(b[i]) {
				return 0, false
			}
			if d := math.Abs(a[i] - b[i]); !math.IsNaN(d) {
				if d > tol {
					return 0, false
				}
				worst = max(worst, d)
			}
		}
		return worst, true
	}
	var names []string
	var cols [][]float64
	var said []string
	used := make([]bool, len(c.Cols))
	for i := range c.Cols {
		if used[i] {
			continue
		}
		set, worst := []string{c.Names[i]}, 0.0
		for j := i + 1; j < len(c.Cols); j++ {
			if d, ok := near(c.Cols[i], c.Cols[j]); !used[j] && ok {
				used[j] = true
				set, worst = append(set, c.Names[j]), max(worst, d)
			}
		}
		names, cols = append(names, strings.Join(set, " = ")), append(cols, c.Cols[i])
		if len(set) > 1 {
			how := "identical"
			if worst > 0 {
				how = fmt.Sprintf("within %s %s of each other", fmtNum(worst), c.Unit)
			}
			said = append(said, fmt.Sprintf("%s coincide (%s): drawn once, as %s", joinAnd(set), how, set[0]))
		}
	}
	c.Names, c.Cols, c.Coincide = names, cols, strings.Join(said, "; ")
}

// joinAnd joins names as "a, b and c".
func joinAnd(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// fmtNum is a difference between lines in a few digits.
func fmtNum(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.2g", v)
}
