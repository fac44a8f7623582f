package report

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/verdict"
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
	Table    *measure.EndTable
	Best     []bestRow
	Headline string // every failed check named, "" when none failed
	Checks   []checkRow
	Summary  []kv // a line per dimension
	Baseline string
	Groups   []groupRow
	Subs     []subRow
	Faults   []faultRow
	Verdicts []verdictRow
	Charts   []chart // drawn from their go-echarts options (chart.go)
	Side     string  // measure.SideClient, or SideServer: the columns are chat servers
	// HostLine is the host in a few words, for the collapsed run section.
	HostLine   string
	WorkerRows []workerRow
	Data       pageData
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

// broadcastNote is what a server-side soak's latency charts rest on.
const broadcastNote = "The load client stamps a message when one of its clients sends it and measures it where each other client " +
	"receives it: one process, one clock, so no clock synchronisation enters it; it includes the load client's own delays."

// workerRow is a column's process as the Libraries (Servers) table shows it.
type workerRow struct {
	store.Worker
	Exit string // its exit code, or why there is none
}

// workerRows are the workers with their exit: the code once one was
// recorded (-1: killed by a signal), "running" while the run goes on,
// else "not recorded" (a run that did not record its end).
func workerRows(ws []store.Worker, status string) []workerRow {
	out := make([]workerRow, len(ws))
	for i, w := range ws {
		out[i].Worker = w
		switch {
		case !w.Ended.IsZero() && w.ExitCode == -1:
			out[i].Exit = "-1 (killed by a signal)"
		case !w.Ended.IsZero():
			out[i].Exit = strconv.Itoa(w.ExitCode)
		case status == store.StatusRunning:
			out[i].Exit = "running"
		default:
			out[i].Exit = "not recorded"
		}
	}
	return out
}

// hostLine is the host in a few words: CPU, cores, kernel.
func hostLine(run store.Run) string {
	h := run.Host
	var parts []string
	if h["cpu_model"] != "" {
		parts = append(parts, h["cpu_model"])
	}
	if h["cpu_logical"] != "" {
		parts = append(parts, h["cpu_logical"]+" cores")
	}
	if h["kernel"] != "" {
		parts = append(parts, "Linux "+h["kernel"])
	}
	return strings.Join(parts, ", ")
}

// checkRow is a line of the Checks block.
type checkRow struct {
	State, Name, Text string
	Fail, Skip        bool
}

// verdictRow is one threshold checked for one library.
type verdictRow struct {
	Lib, Threshold, Text string
	Broken, Skipped      bool // Skipped: not measured, neither passed nor broken
}

// build reads the run in db and makes its page, its ranked rows marked
// against baseline when one is given.
func build(db *store.DB, checked []store.Verdict, baseline string) (*page, error) {
	d, err := load(db)
	if err != nil {
		return nil, err
	}
	if baseline != "" && !slices.Contains(d.table.Libs, baseline) {
		return nil, fmt.Errorf("baseline %s is not a column of this run (%s)", baseline, strings.Join(d.table.Libs, ", "))
	}
	d.baseline = baseline
	return pageOf(d, checked)
}

// pageOf makes the page of a run's data: what the analysis derives from its
// rows (charts, markers, event log, stream and fault tables, best marks) and
// the view's own rows. checked are shown when the run stored no verdicts.
func pageOf(d *runData, checked []store.Verdict) (*page, error) {
	run, tbl := d.run, d.table
	p := &page{Run: run, Workers: d.workers, Table: tbl, Status: run.Status}
	vs := d.verdicts
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
	switch {
	case !run.Ended.IsZero() && !run.Started.IsZero():
		p.Duration = run.Ended.Sub(run.Started)
	default:
		p.Duration = time.Duration(d.lastSec) * time.Second
	}
	p.Host = hostRows(run)
	p.HostLine = hostLine(run)
	p.WorkerRows = workerRows(p.Workers, run.Status)
	p.Settings = settingRows(run)
	f := Findings{Table: tbl, Ranking: d.ranking, Checks: verdict.Checks(tbl, d.workers, vs), Baseline: d.baseline}
	p.Best, p.Baseline = bestRows(f), d.baseline
	p.Headline = verdict.Headline(f.Checks)
	p.Summary = summaryLines(f)
	for _, c := range f.Checks {
		text := c.Note
		if c.State == verdict.Fail {
			text = strings.Join(c.Failed, "; ")
		}
		p.Checks = append(p.Checks, checkRow{State: string(c.State), Name: c.Name, Text: text, Fail: c.State == verdict.Fail, Skip: c.State == verdict.Skip})
	}
	p.Side = measure.SideOf(run)
	p.Charts = buildCharts(d.series, d.chartSec, p.Side, libs, libIdx, d.events)
	p.Clock = d.clock.header()
	for i := range p.Charts {
		if c := &p.Charts[i]; c.ID == "lat_p50" || c.ID == "lat_p99" {
			c.Note = d.clock.chartNote()
			if p.Side == measure.SideServer {
				c.Note = broadcastNote
			}
		}
	}
	p.Data.Events, p.Data.Kinds, p.Data.Counts = eventRows(libs, d.events)
	p.Groups, p.Subs = streamTables(libs, run, d.streams, d.events)
	var err error
	if p.Faults, err = faultRows(libs, d.events, d.lostAt); err != nil {
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
