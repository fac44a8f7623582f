package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/verdict"
	"github.com/wssoak/wssoak/internal/wire"
)

// page is everything the HTML report shows. Data is embedded in the page as
// JSON for the charts and the event log; the rest is rendered as HTML.
type page struct {
	Run      store.Run
	Clock    string        // the local clock's synchronisation (clockState.header)
	Duration time.Duration // started → ended (or → last sample while running)
	Status   string
	Host     []kv
	Settings []kv
	Workers  []store.Worker
	Table    *Table
	Best     []bestRow
	Groups   []groupRow
	Subs     []subRow
	Faults   []faultRow
	Verdicts []verdictRow
	Charts   []chart // drawn from their go-echarts options (chart.go)
	Data     pageData
}

type kv struct{ K, V string }

// pageData is the JSON embedded in the page (id "soak-data") for its
// script: the window's start (for the tooltips' elapsed time) and the event
// log. Its layout is fixed by the golden test.
type pageData struct {
	StartMs int64         `json:"start_ms"` // the window's start, Unix ms
	Events  eventLog      `json:"events"`
	Kinds   []string      `json:"kinds"`
	Counts  []eventCounts `json:"counts"` // every event, counted by library and kind
}

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

// appendNum writes f with at most 3 decimals (NaN as null).
func appendNum(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, math.Round(f*1000)/1000, 'f', -1, 64)
}

// marker is an event drawn on the reconnects chart: kind, at X on the line
// of library Lib ("" = run-wide, drawn at 0), N events folded into it.
type marker struct {
	Kind string
	X, Y float64
	Lib  string
	N    int
}

type eventLog struct {
	Total int      `json:"total"`
	Shown int      `json:"shown"`
	Cap   int      `json:"cap"` // per library and kind
	Rows  [][]any  `json:"rows"`
	Cols  []string `json:"cols"`
}

type eventCounts struct {
	Lib    string         `json:"lib"`
	ByKind map[string]int `json:"by_kind"`
}

// bestRow marks the best cell of a reference-table row and the deltas.
type bestRow struct {
	Name   string
	Better string // "higher", "lower" or "" (not ranked)
	Cells  []bestCell
}

type bestCell struct {
	Text  string
	Best  bool
	Delta string // against the best, "" for the best itself
}

type groupRow struct {
	Group, Lib           string
	Subs                 int
	Msgs, Lost, Dup, OOO int64
	MaxSilence           float64 // seconds
	Reconnects           int
	Short                bool // fewer messages than the group's best library
}

type subRow struct {
	Group, Stream        string
	Slot                 int
	Lib                  string
	Msgs, Lost, Dup, OOO int64
	MaxSilence           float64 // seconds
	Reconnects           int     // of the subscription's connection (slot)
	Sec                  int64   // second of the last stored total
	Short, First         bool    // fewer messages than the best library; first row of its subscription
	LibsOfSub            int     // rows of this subscription (for the row span)
}

// faultRow is what one library did in the faultWindow after the faults of
// one kind: how many of them, reconnects, their durations, stalls and lost
// messages (from the per-second totals).
type faultRow struct {
	Fault, Lib           string
	Faults               int
	Disconnects, Reconns int
	RecMedian, RecMax    float64 // ms
	Stalls               int
	Lost                 int64
}

// faultWindow is how long after a fault its consequences are charged to it.
const faultWindow = 30 * time.Second

// eventCap is how many events of one library and kind the log lists.
const eventCap = 500

// verdictRow is one threshold checked for one library.
type verdictRow struct {
	Lib, Threshold, Text string
	Broken, Skipped      bool // Skipped: not measured, neither passed nor broken
}

// build reads the database into a page.
func build(db *store.DB, checked []store.Verdict) (*page, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	workers, err := db.Workers()
	if err != nil {
		return nil, err
	}
	tbl, err := table(db, run)
	if err != nil {
		return nil, err
	}
	p := &page{Run: run, Workers: workers, Table: tbl, Status: run.Status}
	vs, err := db.Verdicts()
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		vs = checked
	}
	for _, v := range vs {
		p.Verdicts = append(p.Verdicts, verdictRow{Lib: v.Lib, Threshold: v.Threshold, Text: verdict.Format(v), Broken: v.Broken, Skipped: v.Skipped()})
	}
	libs := tbl.Libs
	slices.SortStableFunc(p.Workers, func(a, b store.Worker) int { return cmp.Compare(measure.Rank(a.Lib), measure.Rank(b.Lib)) })
	p.Data = pageData{StartMs: run.Started.UnixMilli()}
	libIdx := map[string]int{}
	for i, l := range libs {
		libIdx[l] = i
	}

	lastSec, err := db.LastSec()
	if err != nil {
		return nil, err
	}
	events, err := db.Events("")
	if err != nil {
		return nil, err
	}
	streams, err := db.LatestStreamSamples()
	if err != nil {
		return nil, err
	}

	switch {
	case !run.Ended.IsZero() && !run.Started.IsZero():
		p.Duration = run.Ended.Sub(run.Started)
	default:
		p.Duration = time.Duration(lastSec) * time.Second
	}
	p.Host = hostRows(run)
	p.Settings = settingRows(run)
	p.Best = bestRows(tbl)
	if p.Charts, err = buildCharts(db, lastSec, libs, libIdx, events); err != nil {
		return nil, err
	}
	clock, err := readClockState(db, run)
	if err != nil {
		return nil, err
	}
	p.Clock = clock.header()
	for i := range p.Charts {
		if c := &p.Charts[i]; c.ID == "lat_p50" || c.ID == "lat_p99" {
			c.Note = clock.chartNote()
		}
	}
	p.Data.Events, p.Data.Kinds, p.Data.Counts = eventRows(libs, events)
	p.Groups, p.Subs = streamTables(libs, run, streams, events)
	if p.Faults, err = faultRows(db, libs, events); err != nil {
		return nil, err
	}
	return p, nil
}

func hostRows(run store.Run) []kv {
	h := run.Host
	cores := h["cpu_logical"]
	if h["cpu_physical"] != "" {
		cores += " logical / " + h["cpu_physical"] + " physical"
	}
	mem := h["mem_total"]
	if n, err := strconv.ParseFloat(mem, 64); err == nil {
		mem = fmt.Sprintf("%.1f GB", n/1e9)
	}
	rows := []kv{
		{"CPU", h["cpu_model"]}, {"cores", cores}, {"kernel", h["kernel"]}, {"arch", h["arch"]},
		{"OS", h["os"]}, {"virtualization", h["virtualization"]}, {"memory", mem}, {"Go", run.GoVersion},
		{"clock source", h["clocksource"]}, {"CPU governor", h["cpu_governor"]}, {"load at start (1 / 5 / 15 min)", h["load_at_start"]},
	}
	return nonEmpty(rows)
}

func settingRows(run store.Run) []kv {
	s, h := run.Settings, run.Host
	rcv := s["rcvbuf"]
	if rcv == "0" {
		rcv = "0 (kernel default, autotuning)"
	} else if rcv != "" {
		rcv += " bytes"
	}
	lim := s["read_limit"]
	if lim != "" {
		lim += " bytes"
	}
	rows := []kv{
		{"keepalive (ping interval / pong timeout)", s["keepalive"]},
		{"read limit", lim},
		{"SO_RCVBUF", rcv},
		{"net.ipv4.tcp_rmem (min default max, bytes)", h["tcp_rmem"]},
		{"net.core.rmem_max (bytes)", h["rmem_max"]},
		{"net.core.rmem_default (bytes)", h["rmem_default"]},
		{"profile file", s["profile_path"]},
	}
	// Settings other helpers record are shown as they are, after the known ones.
	var extra []string
	for k := range s {
		switch k {
		case "plan", "keepalive", "read_limit", "rcvbuf", "profile_path":
			continue
		}
		extra = append(extra, k)
	}
	sort.Strings(extra)
	for _, k := range extra {
		rows = append(rows, kv{k, s[k]})
	}
	return nonEmpty(rows)
}

func nonEmpty(rows []kv) []kv {
	return slices.DeleteFunc(rows, func(r kv) bool { return strings.TrimSpace(r.V) == "" })
}

// bestRows marks the best value of every ranked row and the other cells'
// deltas against it, from the row's primary numbers.
func bestRows(t *Table) []bestRow {
	var out []bestRow
	for _, r := range t.Rows {
		br := bestRow{Name: r.Name}
		if r.Better == measure.Higher || r.Better == measure.Lower {
			br.Better = string(r.Better)
		}
		best := math.NaN()
		if br.Better != "" && len(r.Nums) > 1 && !allEqual(r.Nums) {
			for _, n := range r.Nums {
				if math.IsNaN(n) {
					continue
				}
				if math.IsNaN(best) || br.Better == "higher" && n > best || br.Better == "lower" && n < best {
					best = n
				}
			}
		}
		for i, text := range r.Cells {
			c := bestCell{Text: text}
			if !math.IsNaN(best) && i < len(r.Nums) && !math.IsNaN(r.Nums[i]) {
				if r.Nums[i] == best {
					c.Best = true
				} else {
					c.Delta = delta(r.Nums[i], best, r.Unit)
				}
			}
			br.Cells = append(br.Cells, c)
		}
		out = append(out, br)
	}
	return out
}

// allEqual says a row ranks nothing: every library has the same number.
func allEqual(ns []float64) bool {
	for _, n := range ns {
		if n != ns[0] {
			return false
		}
	}
	return true
}

// delta is v against the best b, in the row's unit and, when b
// is not zero, relative to it.
func delta(v, b float64, unit string) string {
	d := v - b
	var abs string
	switch unit {
	case "bytes":
		abs = fmt.Sprintf("%+.1f MB", d/1e6)
	case "%":
		abs = fmt.Sprintf("%+.2f points", d)
	case "ms":
		abs = fmt.Sprintf("%+.0f ms", d)
	case "s":
		abs = fmt.Sprintf("%+.1f s", d)
	case "msgs/s":
		abs = fmt.Sprintf("%+.1f msgs/s", d)
	case "":
		abs = fmt.Sprintf("%+g", d)
	default:
		abs = fmt.Sprintf("%+.0f %s", d, unit)
	}
	if b == 0 {
		return abs
	}
	rel := 100 * d / math.Abs(b)
	if math.Abs(rel) < 1 {
		return fmt.Sprintf("%s (%+.2g %%)", abs, rel)
	}
	return fmt.Sprintf("%s (%+.1f %%)", abs, rel)
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

// buildCharts builds the charts over time. A run of at most 2×maxBuckets
// seconds is drawn from every row; a longer one from maxBuckets buckets
// that SQLite folds to their minimum and maximum, so no spike is lost. Each
// chart's rows are then compacted (compact), which draws the same lines.
func buildCharts(db *store.DB, lastSec int64, libs []string, libIdx map[string]int, events []store.Event) ([]chart, error) {
	var width int64
	if lastSec > 2*maxBuckets {
		width = (lastSec + maxBuckets - 1) / maxBuckets
	}
	out := make([]chart, 0, len(chartMetrics)+len(hostMetrics))
	for _, m := range chartMetrics {
		out = append(out, chart{ID: m.id, Title: m.title, Unit: m.unit, Basis: m.basis, Step: m.step, Bucket: float64(width), Names: libs})
	}
	for _, h := range hostMetrics {
		out = append(out, chart{ID: h.id, Title: h.title, Unit: h.unit, Basis: h.basis, Bucket: float64(width), Names: h.names})
	}
	var g grid
	if width == 0 {
		samples, err := db.Samples("")
		if err != nil {
			return nil, err
		}
		host, err := db.HostSamples()
		if err != nil {
			return nil, err
		}
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
		buckets, err := db.SampleBuckets(width)
		if err != nil {
			return nil, err
		}
		hb, err := db.HostBuckets(width)
		if err != nil {
			return nil, err
		}
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
	out = slices.DeleteFunc(out, func(c chart) bool { return c.ID == "wire" && !c.anyAbove(0) })
	return out, nil
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

// markerKinds maps event kinds to the marker groups of the reconnects chart.
var markerKinds = map[wire.EventKind]string{
	wire.EventReconnect:     "reconnect",
	wire.EventStall:         "stall",
	wire.EventFault:         "fault",
	wire.EventWorkerRestart: "worker restart",
	wire.EventWorkerExit:    "worker exit",
	wire.EventWorkerHung:    "worker hung",
	wire.EventUnrepairable:  "unrepairable",
	wire.EventOutage:        "outage", // the controller was down (a resumed run): nothing recorded
}

// maxMarkers bounds the markers of one group and library; beyond it events
// are folded per time bucket (the marker's N counts them).
const maxMarkers = 1000

// markers places events on the reconnects chart on their library's line
// (run-wide events at 0).
func markers(libs []string, libIdx map[string]int, recon *chart, events []store.Event) []marker {
	y := func(li int, x float64) float64 {
		if li < 0 {
			return 0
		}
		col := recon.Cols[li]
		i, _ := slices.BinarySearch(recon.X, x)
		for i = min(i, len(col)-1); i >= 0; i-- {
			if !math.IsNaN(col[i]) && recon.X[i] <= math.Ceil(x) {
				return col[i]
			}
		}
		return 0
	}
	type key struct {
		kind string
		lib  int
	}
	byKey := map[key][]store.Event{}
	var keys []key
	var span float64
	for _, e := range events {
		kind, ok := markerKinds[e.Kind]
		if !ok {
			continue
		}
		li := -1
		if e.Lib != "" {
			var known bool
			if li, known = libIdx[e.Lib]; !known {
				continue
			}
		}
		k := key{kind, li}
		if _, seen := byKey[k]; !seen {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], e)
		span = max(span, e.Sec)
	}
	name := func(li int) string {
		if li < 0 {
			return ""
		}
		return libs[li]
	}
	w := math.Max(1, math.Ceil(span/maxMarkers))
	var out []marker
	for _, k := range keys {
		evs := byKey[k]
		if len(evs) <= maxMarkers {
			for _, e := range evs {
				out = append(out, marker{Kind: k.kind, X: e.Sec, Y: y(k.lib, e.Sec), Lib: name(k.lib), N: 1})
			}
			continue
		}
		for i := 0; i < len(evs); {
			b := math.Floor(evs[i].Sec / w)
			j := i
			for j < len(evs) && math.Floor(evs[j].Sec/w) == b {
				j++
			}
			out = append(out, marker{Kind: k.kind, X: evs[i].Sec, Y: y(k.lib, evs[i].Sec), Lib: name(k.lib), N: j - i})
			i = j
		}
	}
	return out
}

// eventRows lists at most eventCap events per library and kind (in time
// order) and counts all of them.
func eventRows(libs []string, events []store.Event) (eventLog, []string, []eventCounts) {
	log := eventLog{Total: len(events), Cap: eventCap,
		Cols: []string{"t (s after start)", "library", "kind", "group", "slot", "stream", "code", "duration (ms)", "detail"}}
	type key struct{ lib, kind string }
	seen := map[key]int{}
	counts := map[string]map[string]int{}
	var kinds []string
	for _, e := range events {
		kind := string(e.Kind)
		k := key{e.Lib, kind}
		seen[k]++
		if counts[e.Lib] == nil {
			counts[e.Lib] = map[string]int{}
		}
		counts[e.Lib][kind]++
		if !slices.Contains(kinds, kind) {
			kinds = append(kinds, kind)
		}
		if seen[k] > eventCap {
			continue
		}
		slot := any(e.Slot)
		if e.Slot < 0 {
			slot = ""
		}
		code := any(e.Code)
		if e.Code == 0 {
			code = ""
		}
		dur := any(math.Round(e.DurMs*10) / 10)
		if e.DurMs == 0 {
			dur = ""
		}
		lib := e.Lib
		if lib == "" {
			lib = "(run)"
		}
		log.Rows = append(log.Rows, []any{math.Round(e.Sec*1000) / 1000, lib, string(e.Kind), e.Group, slot, e.Stream, code, dur, e.Detail})
	}
	log.Shown = len(log.Rows)
	if log.Rows == nil {
		log.Rows = [][]any{}
	}
	sort.Strings(kinds)
	cs := []eventCounts{} // [] rather than null in the JSON, like kinds
	if kinds == nil {
		kinds = []string{}
	}
	for _, l := range append([]string{""}, libs...) {
		if m := counts[l]; m != nil {
			name := l
			if name == "" {
				name = "(run)"
			}
			cs = append(cs, eventCounts{Lib: name, ByKind: m})
		}
	}
	return log, kinds, cs
}

// streamTables builds the per-group and per-subscription tables from each
// subscription's latest totals; reconnects are the 'disconnected' events of
// the subscription's connection (slot), as in the reference table.
func streamTables(libs []string, run store.Run, streams []store.StreamSample, events []store.Event) ([]groupRow, []subRow) {
	type slotKey struct {
		lib  string
		slot int
	}
	recon := map[slotKey]int{}
	groupRecon := map[[2]string]int{}
	for _, e := range events {
		if e.Kind == wire.EventDisconnected {
			recon[slotKey{e.Lib, e.Slot}]++
			groupRecon[[2]string{e.Group, e.Lib}]++
		}
	}
	groups := measure.PlanGroups(run.Settings["plan"])
	for _, s := range streams {
		if !slices.Contains(groups, s.Group) {
			groups = append(groups, s.Group)
		}
	}
	libRank := func(l string) int {
		if i := slices.Index(libs, l); i >= 0 {
			return i
		}
		return len(libs) + measure.Rank(l)
	}
	ss := slices.Clone(streams)
	slices.SortStableFunc(ss, func(a, b store.StreamSample) int {
		return cmp.Or(cmp.Compare(slices.Index(groups, a.Group), slices.Index(groups, b.Group)),
			cmp.Compare(a.Slot, b.Slot), strings.Compare(a.Stream, b.Stream), cmp.Compare(libRank(a.Lib), libRank(b.Lib)))
	})
	var subs []subRow
	for i := 0; i < len(ss); {
		j := i
		var most int64
		for j < len(ss) && ss[j].Group == ss[i].Group && ss[j].Slot == ss[i].Slot && ss[j].Stream == ss[i].Stream {
			most = max(most, ss[j].MsgsTotal)
			j++
		}
		for k := i; k < j; k++ {
			s := ss[k]
			subs = append(subs, subRow{Group: s.Group, Stream: s.Stream, Slot: s.Slot, Lib: s.Lib, Msgs: s.MsgsTotal,
				Lost: s.LostTotal, Dup: s.DupTotal, OOO: s.OOOTotal, MaxSilence: float64(s.MaxSilenceMs) / 1000,
				Reconnects: recon[slotKey{s.Lib, s.Slot}], Sec: s.Sec, Short: s.MsgsTotal < most, First: k == i, LibsOfSub: j - i})
		}
		i = j
	}

	type gk struct{ group, lib string }
	agg := map[gk]*groupRow{}
	var order []gk
	for _, s := range subs {
		k := gk{s.Group, s.Lib}
		g := agg[k]
		if g == nil {
			g = &groupRow{Group: s.Group, Lib: s.Lib, Reconnects: groupRecon[[2]string{s.Group, s.Lib}]}
			agg[k] = g
			order = append(order, k)
		}
		g.Subs++
		g.Msgs += s.Msgs
		g.Lost += s.Lost
		g.Dup += s.Dup
		g.OOO += s.OOO
		g.MaxSilence = max(g.MaxSilence, s.MaxSilence)
	}
	slices.SortStableFunc(order, func(a, b gk) int {
		return cmp.Or(cmp.Compare(slices.Index(groups, a.group), slices.Index(groups, b.group)), cmp.Compare(libRank(a.lib), libRank(b.lib)))
	})
	var out []groupRow
	mostByGroup := map[string]int64{}
	for _, k := range order {
		mostByGroup[k.group] = max(mostByGroup[k.group], agg[k].Msgs)
	}
	for _, k := range order {
		g := agg[k]
		g.Short = g.Msgs < mostByGroup[k.group]
		out = append(out, *g)
	}
	return out, subs
}

// faultRows charges to each fault kind what every library did within
// faultWindow after each fault of that kind.
func faultRows(db *store.DB, libs []string, events []store.Event) ([]faultRow, error) {
	var faults []store.Event
	for _, e := range events {
		if e.Kind == wire.EventFault {
			faults = append(faults, e)
		}
	}
	if len(faults) == 0 {
		return nil, nil
	}
	// The events that count as consequences, per library, in time order.
	conseq := map[string][]store.Event{}
	for _, e := range events {
		switch e.Kind {
		case wire.EventDisconnected, wire.EventReconnect, wire.EventStall:
			conseq[e.Lib] = append(conseq[e.Lib], e)
		}
	}
	for _, evs := range conseq {
		slices.SortStableFunc(evs, func(a, b store.Event) int { return cmp.Compare(a.Sec, b.Sec) })
	}
	type fk struct{ fault, lib string }
	rows := map[fk]*faultRow{}
	lostFrom, lostTo, lostRow := map[string][]int64{}, map[string][]int64{}, map[string][]*faultRow{}
	durs := map[fk][]float64{}
	var kinds []string
	w := faultWindow.Seconds()
	for _, lib := range libs {
		// This library's faults (its own and run-wide ones), in time order.
		var mine []store.Event
		for _, f := range faults {
			if f.Lib == "" || f.Lib == lib {
				mine = append(mine, f)
			}
		}
		for fi, f := range mine {
			name := faultName(f)
			if !slices.Contains(kinds, name) {
				kinds = append(kinds, name)
			}
			end := f.Sec + w
			for _, next := range mine[fi+1:] {
				if next.Sec > f.Sec {
					end = min(end, next.Sec) // the next fault's consequences are its own
					break
				}
			}
			k := fk{name, lib}
			r := rows[k]
			if r == nil {
				r = &faultRow{Fault: name, Lib: lib}
				rows[k] = r
			}
			r.Faults++
			// Lost totals at whole seconds, so that windows do not overlap.
			lostFrom[lib] = append(lostFrom[lib], int64(math.Floor(f.Sec)))
			lostTo[lib] = append(lostTo[lib], int64(math.Floor(end)))
			lostRow[lib] = append(lostRow[lib], r)
			evs := conseq[lib]
			i, _ := slices.BinarySearchFunc(evs, f.Sec, func(e store.Event, t float64) int { return cmp.Compare(e.Sec, t) })
			for ; i < len(evs) && evs[i].Sec < end; i++ {
				switch evs[i].Kind {
				case wire.EventDisconnected:
					r.Disconnects++
				case wire.EventReconnect:
					r.Reconns++
					durs[k] = append(durs[k], evs[i].DurMs)
				case wire.EventStall:
					r.Stalls++
				}
			}
		}
	}
	for lib, rs := range lostRow {
		from, err := db.LostAt(lib, lostFrom[lib])
		if err != nil {
			return nil, err
		}
		to, err := db.LostAt(lib, lostTo[lib])
		if err != nil {
			return nil, err
		}
		for i, r := range rs {
			r.Lost += to[i] - from[i]
		}
	}
	var out []faultRow
	for _, name := range kinds {
		for _, lib := range libs {
			r := rows[fk{name, lib}]
			if r == nil {
				continue
			}
			if d := durs[fk{name, lib}]; len(d) > 0 {
				slices.Sort(d)
				r.RecMedian, r.RecMax = d[len(d)/2], d[len(d)-1]
			}
			out = append(out, *r)
		}
	}
	return out, nil
}

// faultName is the kind of a fault event (events.fault, which the store
// fills from the detail's first word for a database older than the column)
// with its code or status, if the detail names one.
func faultName(e store.Event) string {
	f := strings.Fields(strings.SplitN(e.Detail, ";", 2)[0])
	name := string(e.Fault)
	if name == "" {
		if e.Code != 0 {
			return "code " + strconv.Itoa(e.Code)
		}
		return "fault"
	}
	if len(f) > 1 && (strings.HasPrefix(f[1], "code=") || strings.HasPrefix(f[1], "status=")) {
		name += " " + f[1]
	}
	return name
}

// table is the reference table: the one stored when the run finished (what
// soak run printed), else computed now from the samples.
func table(db *store.DB, run store.Run) (*Table, error) {
	if run.Status != "running" {
		rows, err := db.Summary()
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 {
			return tableFromRows(run, rows), nil
		}
	}
	t, err := Summarize(db)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	return t, nil
}

// tableFromRows is the inverse of Table.SummaryRows. A row stored without
// an id (before the ids) is matched to its measure by name.
func tableFromRows(run store.Run, rows []store.SummaryRow) *Table {
	t := &Table{RunID: run.ID, Seconds: int64(run.Planned.Seconds())}
	for _, r := range rows {
		if r.Lib != "" && !slices.Contains(t.Libs, r.Lib) {
			t.Libs = append(t.Libs, r.Lib)
		}
	}
	slices.SortStableFunc(t.Libs, func(a, b string) int { return cmp.Compare(measure.Rank(a), measure.Rank(b)) })
	byOrd := map[int]int{} // ord → index in t.Rows
	for _, r := range rows {
		li := slices.Index(t.Libs, r.Lib)
		if li < 0 {
			continue
		}
		i, ok := byOrd[r.Ord]
		if !ok {
			i = len(t.Rows)
			byOrd[r.Ord] = i
			row := Row{Name: r.Metric, Cells: make([]string, len(t.Libs)), Nums: make([]float64, len(t.Libs))}
			if m := measure.Find(r.ID, r.Metric); m != nil {
				row.ID, row.Unit, row.Better = m.ID, m.Unit, m.Better
			}
			for j := range row.Cells {
				row.Cells[j], row.Nums[j] = "-", math.NaN()
			}
			t.Rows = append(t.Rows, row)
		}
		t.Rows[i].Cells[li], t.Rows[i].Nums[li] = r.Value, r.Num
	}
	return t
}

// SummarizeAndSave computes the table and stores it in db (the writer), as
// soak run does when a run ends; the report then shows the stored table.
func SummarizeAndSave(db *store.DB) (*Table, error) {
	t, err := Summarize(db)
	if err != nil {
		return nil, fmt.Errorf("summarize: %w", err)
	}
	return t, db.SaveSummary(t.SummaryRows())
}
