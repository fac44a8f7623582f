package report

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
)

// RunInput is one run of the page over several runs: the argument that
// named it and its database, open read-only.
type RunInput struct {
	Arg string
	DB  *store.DB
}

// RunsOptions configure the page over several runs.
type RunsOptions struct {
	// Strict refuses runs of different profiles instead of marking them.
	Strict bool
	Now    func() time.Time // the page's "written at"; default time.Now
}

// runsRun is one run as the page shows it.
type runsRun struct {
	Label, ID, Profile, Status, Window, Kernel, CPU, Virt, Labels string
	Odd                                                           bool // of another profile than the first run's
	Cols                                                          []string
	cells                                                         map[[2]string]string // summary id, column → value
	lat                                                           map[string]*sampler.Digest
}

// runsLat is a column's latency, merged from the minute digests.
type runsLat struct {
	Run, Col                 string
	Count                    int64
	P50, P90, P99, P999, Max string
}

// WriteRuns renders one offline page comparing several soak runs (soak
// report RUN_A RUN_B …): each run's host record and labels, the end tables
// side by side with columns grouped by run, and each column's latency
// percentiles from its stored minute histograms merged over the run (and,
// per column name, over every run of the first run's profile), never
// averaged from percentiles. Runs of another profile than the first's are
// marked and warned about (returned), or refused with Strict.
func WriteRuns(w io.Writer, in []RunInput, o RunsOptions) (warnings []string, err error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	var runs []*runsRun
	var order []string            // summary ids, in the first run's order then new ones
	titles := map[string]string{} // summary id → its row's title
	for _, ri := range in {
		r, err := loadRunsRun(ri)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	for _, r := range runs[1:] {
		if r.Profile != runs[0].Profile {
			r.Odd = true
			msg := fmt.Sprintf("run %s is of profile %q, not %q as %s: its numbers are not of the same experiment", r.ID, r.Profile, runs[0].Profile, runs[0].ID)
			if o.Strict {
				return nil, fmt.Errorf("%s (-strict)", msg)
			}
			warnings = append(warnings, msg)
		}
	}
	for i, ri := range in {
		rows, err := ri.DB.Summary()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ri.Arg, err)
		}
		for _, row := range rows {
			id := row.ID
			if id == "" {
				id = row.Metric
			}
			if _, ok := titles[id]; !ok {
				titles[id] = row.Metric
				order = append(order, id)
			}
			runs[i].cells[[2]string{id, row.Lib}] = row.Value
		}
	}
	page := runsPage{Written: o.Now().UTC().Format(time.RFC3339), Warnings: warnings, Runs: runs}
	for _, id := range order {
		row := runsRow{Title: titles[id]}
		for _, r := range runs {
			for _, c := range r.Cols {
				row.Cells = append(row.Cells, r.cells[[2]string{id, c}])
			}
		}
		page.Rows = append(page.Rows, row)
	}
	all := map[string]*sampler.Digest{} // column → merged over the runs of the first run's profile
	var allCols []string
	for _, r := range runs {
		for _, c := range r.Cols {
			d := r.lat[c]
			if d == nil {
				continue
			}
			page.Latency = append(page.Latency, latRow(r.Label, c, d))
			if r.Odd {
				continue
			}
			if all[c] == nil {
				all[c] = sampler.NewDigest()
				allCols = append(allCols, c)
			}
			all[c].Merge(d)
		}
	}
	for _, c := range allCols {
		page.Merged = append(page.Merged, latRow("all runs of "+runs[0].Profile, c, all[c]))
	}
	return warnings, runsTmpl.Execute(w, page)
}

func latRow(run, col string, d *sampler.Digest) runsLat {
	s := d.Summary()
	ms := func(us int64) string { return fmt.Sprintf("%.3f", float64(us)/1000) }
	return runsLat{Run: run, Col: col, Count: s.Count, P50: ms(s.P50), P90: ms(s.P90), P99: ms(s.P99), P999: ms(s.P999), Max: ms(s.Max)}
}

// RunLatency is each column's latency of a run, its minute digests merged:
// what the page over several runs shows.
func RunLatency(db *store.DB) (map[string]*sampler.Digest, error) {
	out := map[string]*sampler.Digest{}
	err := db.EachLatencyDigest(func(x *store.LatencyDigest) error {
		d := out[x.Lib]
		if d == nil {
			d = sampler.NewDigest()
			out[x.Lib] = d
		}
		return d.AddEncoded(x.Digest)
	})
	return out, err
}

func loadRunsRun(ri RunInput) (*runsRun, error) {
	run, err := ri.DB.Run()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ri.Arg, err)
	}
	r := &runsRun{ID: run.ID, Profile: run.Name, Status: run.Status, Kernel: run.Host["kernel"], CPU: run.Host["cpu_model"],
		Virt: run.Host["virtualization"], cells: map[[2]string]string{}}
	if !run.Started.IsZero() {
		r.Window = run.Started.UTC().Format("2006-01-02 15:04:05") + " UTC, " + run.Planned.String()
	}
	var labels map[string]string
	if s := run.Settings["labels"]; s != "" {
		if err := json.Unmarshal([]byte(s), &labels); err != nil {
			return nil, fmt.Errorf("%s: labels: %w", ri.Arg, err)
		}
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+labels[k])
	}
	r.Labels = strings.Join(parts, ", ")
	r.Label = run.ID
	if r.Labels != "" {
		r.Label += " (" + r.Labels + ")"
	}
	if s := run.Settings["libraries"]; s != "" {
		r.Cols = strings.Split(s, ",")
	} else {
		ws, err := ri.DB.Workers()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", ri.Arg, err)
		}
		for _, w := range ws {
			r.Cols = append(r.Cols, w.Lib)
		}
	}
	if r.lat, err = RunLatency(ri.DB); err != nil {
		return nil, fmt.Errorf("%s: latency digests: %w", ri.Arg, err)
	}
	return r, nil
}

type runsRow struct {
	Title string
	Cells []string
}

type runsPage struct {
	Written         string
	Warnings        []string
	Runs            []*runsRun
	Rows            []runsRow
	Latency, Merged []runsLat
}

var runsTmpl = template.Must(template.New("runs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>soak: {{len .Runs}} runs</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;vertical-align:top}
th:first-child,td:first-child{text-align:left}thead th{background:#f2f2f2}
.odd{background:#fff3cd}.warn{background:#fff3cd;border:1px solid #e0b000;padding:.5em 1em}
.note{color:#555;max-width:60em}
</style></head><body>
<h1>soak: {{len .Runs}} runs side by side</h1>
<p class="note">Written {{.Written}}. Each run is a host's (or an hour's) own experiment: a difference between two runs' columns is
<b>unpaired</b> — it holds the hosts' differences (CPU, kernel, network, the venue's load at the time) as well as the
libraries', and no paired statistic of one run (its ★ and intervals) spans two runs. Latency percentiles are those of each
column's stored minute histograms merged, never averages of percentiles.</p>
{{range .Warnings}}<p class="warn">⚠ {{.}}</p>
{{end}}
<h2>Runs</h2>
<table><thead><tr><th>run</th><th>profile</th><th>status</th><th>window</th><th>kernel</th><th>CPU</th><th>virtualization</th><th>labels</th></tr></thead><tbody>
{{range .Runs}}<tr{{if .Odd}} class="odd"{{end}}><td>{{.ID}}{{if .Odd}} ⚠{{end}}</td><td>{{.Profile}}</td><td>{{.Status}}</td><td>{{.Window}}</td><td>{{.Kernel}}</td><td>{{.CPU}}</td><td>{{.Virt}}</td><td>{{.Labels}}</td></tr>
{{end}}</tbody></table>
<h2>End tables</h2>
<table><thead><tr><th rowspan="2"></th>{{range .Runs}}<th colspan="{{len .Cols}}"{{if .Odd}} class="odd"{{end}}>{{.Label}}{{if .Odd}} ⚠ other profile{{end}}</th>{{end}}</tr>
<tr>{{range .Runs}}{{range .Cols}}<th>{{.}}</th>{{end}}{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><td>{{.Title}}</td>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody></table>
<h2>Latency from the minute histograms (ms)</h2>
<table><thead><tr><th>run</th><th>column</th><th>messages</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr></thead><tbody>
{{range .Latency}}<tr><td>{{.Run}}</td><td>{{.Col}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
{{end}}{{range .Merged}}<tr><td><b>{{.Run}}</b></td><td>{{.Col}}</td><td>{{.Count}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
{{end}}</tbody></table>
</body></html>
`))
