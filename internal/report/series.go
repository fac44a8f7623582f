package report

import (
	"math"
	"slices"

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
	Names     []string
	X         []float64
	Cols      [][]float64 // Cols[series][row]
	Markers   []marker
}

// metric is one per-library chart: how to read it from a raw sample and
// from a bucket (min, max).
type metric struct {
	id, title, unit, basis string
	step                   bool
	worker                 bool // from the worker half of the sample (else the process half)
	raw                    func(s *store.Sample) float64
	bucket                 func(b *store.Bucket) (lo, hi float64, ok bool)
}

func i2(v [2]int64, scale float64) (float64, float64, bool) {
	return float64(v[0]) / scale, float64(v[1]) / scale, true
}

var chartMetrics = []metric{
	{"msgs", "Messages received", "msgs/s", "per second: messages received in the second ending at t", false, true,
		func(s *store.Sample) float64 { return float64(s.Msgs) },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.Msgs, 1) }},
	{"wire", "WebSocket frame bytes read", "kB/s", "per second: frame bytes read in the second ending at t, headers included, compressed as they came (drawn when the run recorded them)", false, true,
		func(s *store.Sample) float64 { return float64(s.WireBytes) / 1e3 },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.Wire, 1e3) }},
	{"rss", "Resident memory (RSS) of the worker process", "MB", "sampled every second (10^6 bytes)", false, false,
		func(s *store.Sample) float64 { return float64(s.RSS) / 1e6 },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.RSS, 1e6) }},
	{"cpu", "CPU of the worker process", "% of one core", "per 1 s interval: CPU time / wall time", false, false,
		func(s *store.Sample) float64 { return s.CPUPct },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.CPUPct100, 100) }},
	{"lat_p50", "Latency p50 (receive time − event time E)", "ms", "per 1 s interval: median of that second's messages (none in a second without messages)", false, true,
		func(s *store.Sample) float64 { return latMs(s, s.LatP50) },
		func(b *store.Bucket) (float64, float64, bool) {
			lo, hi, _ := i2(b.LatP50, 1000)
			return lo, hi, b.HasLat
		}},
	{"lat_p99", "Latency p99 (receive time − event time E)", "ms", "per 1 s interval: 99th percentile of that second's messages", false, true,
		func(s *store.Sample) float64 { return latMs(s, s.LatP99) },
		func(b *store.Bucket) (float64, float64, bool) {
			lo, hi, _ := i2(b.LatP99, 1000)
			return lo, hi, b.HasLat
		}},
	{"heap", "Go heap in use (runtime HeapAlloc) of the worker", "MB", "sampled every second (10^6 bytes)", false, true,
		func(s *store.Sample) float64 { return float64(s.HeapBytes) / 1e6 },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.Heap, 1e6) }},
	{"goroutines", "Goroutines of the worker", "count", "sampled every second", false, true,
		func(s *store.Sample) float64 { return float64(s.Goroutines) },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.Goroutines, 1) }},
	{"reconnects", "Reconnects, with events as markers", "count", "cumulative since the start (markers: events at their instant)", true, true,
		func(s *store.Sample) float64 { return float64(s.ReconnectsTotal) },
		func(b *store.Bucket) (float64, float64, bool) { return i2(b.Reconnects, 1) }},
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
func buildCharts(rows seriesRows, lastSec int64, libs []string, libIdx map[string]int, events []store.Event) []chart {
	width := rows.width
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
			out[i].Markers = markers(libs, libIdx, &out[i], events)
		}
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

// latMs is a latency in ms, or NaN for a second without messages (no latency).
func latMs(s *store.Sample, us int64) float64 {
	if s.Msgs == 0 {
		return math.NaN()
	}
	return float64(us) / 1000
}
