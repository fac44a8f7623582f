// Package report turns a run's database into the comparison table (and later
// the HTML report and CSV exports).
package report

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/wssoak/wssoak/internal/store"
)

// libOrder is the column order of the table.
var libOrder = []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"}

// Table is the reference comparison table: one row per metric, one column per library.
type Table struct {
	RunID   string
	Seconds int64 // planned window
	Libs    []string
	Rows    []Row
}

// Row is one metric across the libraries.
type Row struct {
	Name  string
	Cells []string  // one per library, formatted
	Nums  []float64 // the primary number behind each cell (for deltas and thresholds)
}

type libData struct {
	samples    []store.Sample
	streams    []store.StreamSample
	events     []store.Event
	worker     store.Worker
	reconnects map[string]int
	recDur     []float64
	faults     int
	charges    []store.LostCharge
	dials      []store.SlotDials
}

// Summarize computes the table from a run's database.
func Summarize(db *store.DB) (*Table, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	workers, err := db.Workers()
	if err != nil {
		return nil, err
	}
	samples, err := db.Samples("")
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
	charges, err := db.LostCharges()
	if err != nil {
		return nil, err
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		return nil, err
	}
	clock, err := readClockState(db, run)
	if err != nil {
		return nil, err
	}
	groups := planGroups(run.Settings["plan"])
	t := &Table{RunID: run.ID, Seconds: int64(run.Planned.Seconds())}
	data := map[string]*libData{}
	for _, w := range workers {
		data[w.Lib] = &libData{worker: w, reconnects: map[string]int{}}
		t.Libs = append(t.Libs, w.Lib)
	}
	sort.SliceStable(t.Libs, func(i, j int) bool { return rank(t.Libs[i]) < rank(t.Libs[j]) })
	for _, s := range samples {
		if d := data[s.Lib]; d != nil {
			d.samples = append(d.samples, s)
		}
	}
	for _, s := range streams {
		if d := data[s.Lib]; d != nil {
			d.streams = append(d.streams, s)
		}
	}
	var outages []store.Event // run-wide: the controller was down, or database writes failed
	for _, c := range charges {
		if d := data[c.Lib]; d != nil {
			d.charges = append(d.charges, c)
		}
	}
	for _, s := range dials {
		if d := data[s.Lib]; d != nil {
			d.dials = append(d.dials, s)
		}
	}
	for _, e := range events {
		if e.Lib == "" && (e.Kind == "outage" || e.Kind == "write_failed" || e.Kind == "missing") {
			outages = append(outages, e)
		}
		d := data[e.Lib]
		if d == nil {
			continue
		}
		d.events = append(d.events, e)
		switch e.Kind {
		case "disconnected":
			d.reconnects[e.Group]++
		case "reconnect":
			d.recDur = append(d.recDur, e.DurMs)
		case "fault":
			d.faults++
		}
	}
	row := func(name string, f func(d *libData) (string, float64)) {
		r := Row{Name: name}
		for _, lib := range t.Libs {
			s, n := f(data[lib])
			r.Cells = append(r.Cells, s)
			r.Nums = append(r.Nums, n)
		}
		t.Rows = append(t.Rows, r)
	}
	window := func(d *libData) []store.Sample {
		var out []store.Sample
		for _, s := range d.samples {
			if s.Sec >= 1 && (t.Seconds == 0 || s.Sec <= t.Seconds) {
				out = append(out, s)
			}
		}
		return out
	}
	// A value that was not measured (no worker frame, no process sample, no
	// latency recorded …) is shown as notMeasured with no number (NaN, stored
	// as NULL), never as 0: compare and the thresholds skip it.
	row("Messages / data", func(d *libData) (string, float64) {
		var msgs, bytes int64
		seen := false
		for _, s := range d.samples {
			if s.HasWorker {
				msgs, bytes = max(msgs, s.MsgsTotal), max(bytes, s.BytesTotal)
				seen = true
			}
		}
		if !seen {
			return notMeasured, math.NaN()
		}
		return fmt.Sprintf("%s / %s", count(float64(msgs)), size(float64(bytes))), float64(msgs)
	})
	row("Avg / peak msgs/s", func(d *libData) (string, float64) {
		sum, peak, n := RateSeconds(window(d))
		if n == 0 {
			return notMeasured, math.NaN()
		}
		avg := float64(sum) / float64(n)
		return fmt.Sprintf("%s / %s", num(avg), num(float64(peak))), avg
	})
	row("RSS start → end (peak)", func(d *libData) (string, float64) {
		var first, last, peak int64
		seen := false
		for _, s := range window(d) {
			if !s.HasProc {
				continue
			}
			if !seen {
				first, seen = s.RSS, true
			}
			last = s.RSS
			peak = max(peak, s.RSS)
		}
		if !seen {
			return notMeasured, math.NaN()
		}
		return fmt.Sprintf("%s → %s MB (%s)", mb(first), mb(last), mb(peak)), float64(last)
	})
	row("CPU avg (% of one core)", func(d *libData) (string, float64) {
		var sum float64
		var n int
		for _, s := range window(d) {
			if s.HasProc && s.Sec > 1 {
				sum += s.CPUPct
				n++
			}
		}
		if n == 0 {
			return notMeasured, math.NaN()
		}
		return fmt.Sprintf("%.1f %%", sum/float64(n)), sum / float64(n)
	})
	row("CPU s sampled / rusage", func(d *libData) (string, float64) {
		w := d.worker
		ru := w.RusageUser + w.RusageSys
		sampled, n := notMeasured, math.NaN()
		if CPUSampled(w) {
			sampled, n = fmt.Sprintf("%.2f", w.SampledCPU), w.SampledCPU
		}
		switch {
		case ru == 0:
			return sampled + " / " + notMeasured, n
		case math.IsNaN(n) || ru < minCPUCompared:
			return fmt.Sprintf("%s / %.2f", sampled, ru), n
		}
		return fmt.Sprintf("%s / %.2f (%+.1f %%)", sampled, ru, 100*(w.SampledCPU-ru)/ru), n
	})
	row("Faults seen", func(d *libData) (string, float64) {
		return fmt.Sprint(d.faults), float64(d.faults)
	})
	recName := "Reconnects"
	if len(groups) > 0 {
		recName += " (" + strings.Join(groups, " / ") + ")"
	}
	row(recName, func(d *libData) (string, float64) {
		var parts []string
		total := 0
		for _, g := range groups {
			parts = append(parts, fmt.Sprint(d.reconnects[g]))
			total += d.reconnects[g]
		}
		if len(parts) == 0 {
			parts = []string{"0"}
		}
		return strings.Join(parts, " / "), float64(total)
	})
	row("Reconnect duration (median / max)", func(d *libData) (string, float64) {
		if len(d.recDur) == 0 {
			return notMeasured, math.NaN() // no reconnect: no duration
		}
		s := slices.Clone(d.recDur)
		slices.Sort(s)
		return fmt.Sprintf("%s / %s", dur(s[len(s)/2]), dur(s[len(s)-1])), s[len(s)-1]
	})
	row("Max seconds without data", func(d *libData) (string, float64) {
		var m int64
		var which string
		for _, s := range d.streams {
			if s.MaxSilenceMs > m {
				m, which = s.MaxSilenceMs, s.Stream
			}
		}
		if which == "" {
			return notMeasured, math.NaN()
		}
		return fmt.Sprintf("%.1f s (%s)", float64(m)/1000, which), float64(m) / 1000
	})
	row("Lost / duplicate (sequence ids)", func(d *libData) (string, float64) {
		if len(d.streams) == 0 {
			return notMeasured, math.NaN() // no subscription totals recorded
		}
		var lost, dup int64
		for _, s := range d.streams {
			lost += s.LostTotal
			dup += s.DupTotal
		}
		return fmt.Sprintf("%d / %d", lost, dup), float64(lost)
	})
	row("Lost charged to library / source", func(d *libData) (string, float64) {
		if len(d.charges) == 0 {
			return notMeasured, math.NaN()
		}
		var lib, src int64
		for _, c := range d.charges {
			lib += c.Library
			src += c.Source
		}
		return fmt.Sprintf("%d / %d", lib, src), float64(lib)
	})
	row("Latency p50 / p99 (ms)", func(d *libData) (string, float64) {
		w := d.worker
		if w.LatCount == 0 {
			return notMeasured, math.NaN()
		}
		cell := fmt.Sprintf("%.2f / %.2f", float64(w.LatP50)/1000, float64(w.LatP99)/1000)
		if clock.latencySuspect() { // a live target, and this machine's clock was not synchronised
			cell += clockMark
		}
		return cell, float64(w.LatP99) / 1000
	})
	row("Errors / stalls", func(d *libData) (string, float64) {
		var errs, stalls int
		for _, e := range d.events {
			switch {
			case e.IsError():
				errs++
			case e.Kind == "stall":
				stalls++
			}
		}
		return fmt.Sprintf("%d / %d", errs, stalls), float64(errs + stalls)
	})
	// Seconds of the window (up to the last second recorded for any library)
	// without a worker row: a controller outage, a worker that was down, or
	// rows lost to failed writes.
	var lastSec int64
	for _, d := range data {
		for _, s := range d.samples {
			lastSec = max(lastSec, s.Sec)
		}
	}
	if t.Seconds > 0 {
		lastSec = min(lastSec, t.Seconds)
	}
	row("Seconds missing", func(d *libData) (string, float64) {
		have := map[int64]bool{}
		for _, s := range d.samples {
			if s.HasWorker && s.Sec >= 1 && s.Sec <= lastSec {
				have[s.Sec] = true
			}
		}
		miss := lastSec - int64(len(have))
		var notes []string
		for _, o := range outages {
			switch o.Kind {
			case "outage":
				notes = append(notes, fmt.Sprintf("outage at %.0f s: %s", o.Sec, dur(o.DurMs)))
			case "write_failed":
				notes = append(notes, fmt.Sprintf("writes failed at %.0f s for %s", o.Sec, dur(o.DurMs)))
			case "missing":
				notes = append(notes, fmt.Sprintf("%d rows lost from %.0f s", o.Code, o.Sec))
			}
		}
		if len(notes) == 0 {
			return fmt.Sprint(miss), float64(miss)
		}
		return fmt.Sprintf("%d (%s)", miss, strings.Join(notes, ", ")), float64(miss)
	})
	row("Dials / failed (status × n)", func(d *libData) (string, float64) {
		if len(d.dials) == 0 {
			return notMeasured, math.NaN()
		}
		var dials, fails int64
		st := map[string]int64{}
		for _, s := range d.dials {
			dials += s.Dials
			fails += s.DialFails
			for code, n := range s.Statuses {
				if code == "101" {
					// A 101 is never a refusal: databases written before
					// bad_accept counted a library's refused 101 under it.
					code = "accept"
				}
				st[code] += n
			}
		}
		out := fmt.Sprintf("%d / %d", dials, fails)
		if len(st) > 0 {
			var parts []string
			for _, code := range slices.Sorted(maps.Keys(st)) {
				parts = append(parts, fmt.Sprintf("%s×%d", code, st[code]))
			}
			out += " (" + strings.Join(parts, ", ") + ")"
		}
		return out, float64(fails)
	})
	row("Unrepairable slots", func(d *libData) (string, float64) {
		slots := map[int]bool{}
		for _, e := range d.events {
			if e.Kind == "unrepairable" {
				slots[e.Slot] = true
			}
		}
		for _, s := range d.dials {
			if s.Unrepairable {
				slots[s.Slot] = true
			}
		}
		return fmt.Sprint(len(slots)), float64(len(slots))
	})
	row("Stalled subscriptions at end", func(d *libData) (string, float64) {
		var names []string
		for _, s := range d.streams {
			if s.Stalled {
				names = append(names, s.Stream)
			}
		}
		if len(names) == 0 {
			return "0", 0
		}
		first := names[0]
		if len(names) > 1 {
			first += fmt.Sprintf(", +%d", len(names)-1)
		}
		return fmt.Sprintf("%d (%s)", len(names), first), float64(len(names))
	})
	return t, nil
}

// notMeasured is the cell of a value that was not measured.
const notMeasured = "-"

// CPUSampled reports whether the controller took a /proc sample of the
// library's worker (the store gives NaN when none was taken, e.g. when the
// run was interrupted during the warm-up, before the first one). A sampled
// 0.00 is a measurement: /proc counts 10 ms clock ticks.
func CPUSampled(w store.Worker) bool { return !math.IsNaN(w.SampledCPU) }

// minCPUCompared is the least rusage CPU (seconds) whose difference from the
// sampled CPU is shown as a percentage: /proc counts 10 ms ticks, so below
// 100 ticks a percentage says more about the tick than about the sampling.
const minCPUCompared = 1.0

// RateSeconds returns the messages, the highest count and the number of the
// seconds of ss (one library's, ordered by second) whose count covers exactly
// that one second: the worker's frame for second k counts the messages since
// its previous frame, which is one second earlier only when the row of k−1 is
// recorded too with totals that agree. The first second of the window (its
// count starts when the worker started, warm-up included), the first after a
// gap in the worker's reports (a stopped or restarted worker, a controller
// outage: it may hold several seconds), and a second whose predecessor's row
// was lost are left out of both the numerator and the denominator.
func RateSeconds(ss []store.Sample) (sum, peak, n int64) {
	var prev *store.Sample
	for i := range ss {
		s := &ss[i]
		if !s.HasWorker {
			prev = nil
			continue
		}
		if prev != nil && prev.Sec == s.Sec-1 && prev.MsgsTotal+s.Msgs == s.MsgsTotal {
			sum += s.Msgs
			peak = max(peak, s.Msgs)
			n++
		}
		prev = s
	}
	return sum, peak, n
}

func rank(lib string) int {
	if i := slices.Index(libOrder, lib); i >= 0 {
		return i
	}
	return len(libOrder)
}

// planGroups returns the connection group names in plan order.
func planGroups(planJSON string) []string {
	var p struct {
		Slots []struct {
			Group string `json:"group"`
		} `json:"slots"`
	}
	if json.Unmarshal([]byte(planJSON), &p) != nil {
		return nil
	}
	var out []string
	for _, s := range p.Slots {
		if !slices.Contains(out, s.Group) {
			out = append(out, s.Group)
		}
	}
	return out
}

// WriteText prints the table with aligned columns.
func (t *Table) WriteText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "\t%s\n", strings.Join(t.Libs, "\t"))
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\n", r.Name, strings.Join(r.Cells, "\t"))
	}
	tw.Flush()
}

// SummaryRows flattens the table for storage.
func (t *Table) SummaryRows() []store.SummaryRow {
	var out []store.SummaryRow
	for i, r := range t.Rows {
		for j, lib := range t.Libs {
			out = append(out, store.SummaryRow{Metric: r.Name, Lib: lib, Value: r.Cells[j], Num: r.Nums[j], Ord: i})
		}
	}
	return out
}

func count(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f G", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f M", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1f k", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

func size(b float64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.1f GB", b/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.1f MB", b/1e6)
	case b >= 1e3:
		return fmt.Sprintf("%.1f kB", b/1e3)
	}
	return fmt.Sprintf("%.0f B", b)
}

func num(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	if len(s) <= 3 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func mb(b int64) string { return fmt.Sprintf("%.1f", float64(b)/1e6) }

func dur(ms float64) string {
	if ms >= 1000 {
		return fmt.Sprintf("%.1f s", ms/1000)
	}
	return fmt.Sprintf("%.0f ms", ms)
}
