// Package dashboard builds the Grafana dashboard of soak runs scraped by
// Prometheus (deploy/grafana/soak.json), in Go, from the series the live
// view serves (internal/live): so that a renamed series fails a test here
// instead of leaving an empty panel. Its variables pick hosts ($host, a label
// the scrape or the agent adds), runs ($run, run_id) and libraries ($lib).
package dashboard

//go:generate go run ./gen -o ../../deploy/grafana/soak.json

//lint:file-ignore SA1019 the v1 dashboard schema is the one every Grafana imports (v2 needs Grafana 12's new dashboards API); the SDK marks it deprecated in favour of v2

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"
)

// UID is the dashboard's uid: a link to it survives a re-import.
const UID = "soak-runs"

// query is one PromQL expression of a panel and its legend.
type query struct {
	expr, legend string
}

// panel is one time series panel.
type panel struct {
	title, unit, help string
	queries           []query
}

// Selectors of the variables: every soak series carries run_id and lib;
// host is the scrape's (relabelling, an agent's external_labels), and
// matches the series without one when $host is All (.*).
const (
	sel    = `run_id=~"$run",lib=~"$lib",host=~"$host"`
	runSel = `run_id=~"$run",host=~"$host"`
)

var ds = common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${datasource}")}

// rows are the dashboard's rows of time series panels, in order.
var rows = []struct {
	title  string
	panels []panel
}{
	{"Throughput", []panel{
		{"Messages / s", "short", "WebSocket data messages received per second, per library and run.",
			[]query{{`sum by (run_id, lib) (rate(soak_messages_total{` + sel + `}[$__rate_interval]))`, "{{lib}} {{run_id}}"}}},
		{"Wire bytes / s", "Bps", "WebSocket frame bytes read per second (compressed as they came).",
			[]query{{`sum by (run_id, lib) (rate(soak_wire_bytes_total{` + sel + `}[$__rate_interval]))`, "{{lib}} {{run_id}}"}}},
	}},
	{"Resources", []panel{
		{"CPU (% of one core)", "percent", "User plus system CPU of each worker process.",
			[]query{{`100 * sum by (run_id, lib) (rate(soak_cpu_seconds_total{` + sel + `}[$__rate_interval]))`, "{{lib}} {{run_id}}"}}},
		{"RSS", "bytes", "Resident set size of each worker process.",
			[]query{{`sum by (run_id, lib) (soak_rss_bytes{` + sel + `})`, "{{lib}} {{run_id}}"}}},
		{"Host CPU busy and stolen", "percentunit", "The fraction of the machine busy, and taken by the hypervisor for other guests (steal).",
			[]query{
				{`sum by (run_id) (rate(soak_host_cpu_busy_seconds_total{` + runSel + `}[$__rate_interval]))`, "busy {{run_id}}"},
				{`sum by (run_id) (rate(soak_host_cpu_steal_seconds_total{` + runSel + `}[$__rate_interval]))`, "steal {{run_id}}"},
			}},
	}},
	{"Resilience", []panel{
		{"Reconnects", "short", "Connections lost and re-dialled.",
			[]query{{`sum by (run_id, lib) (increase(soak_reconnects_total{` + sel + `}[$__rate_interval]))`, "{{lib}} {{run_id}}"}}},
		{"Lost ids", "short", "Sequence ids lost, while connected (an alarm) or across a reconnect (the outage's).",
			[]query{{`sum by (run_id, lib, when) (increase(soak_lost_messages_total{` + sel + `}[$__rate_interval]))`, "{{lib}} {{when}} {{run_id}}"}}},
		{"Failed dials and worker restarts", "short", "Dials that failed, and worker processes started again after they died.",
			[]query{
				{`sum by (run_id, lib) (increase(soak_dials_total{` + sel + `,result="failed"}[$__rate_interval]))`, "dials failed {{lib}} {{run_id}}"},
				{`sum by (run_id, lib) (increase(soak_worker_restarts_total{` + sel + `}[$__rate_interval]))`, "restarts {{lib}} {{run_id}}"},
			}},
		{"Faults injected", "short", "Faults the replay server applied, by kind.",
			[]query{{`sum by (run_id, kind) (increase(soak_faults_total{` + runSel + `}[$__rate_interval]))`, "{{kind}} {{run_id}}"}}},
		{"Seconds missing and events dropped", "short", "Seconds without a worker's row, and events a worker dropped: both should stay 0.",
			[]query{
				{`sum by (run_id, lib) (soak_missing_seconds{` + sel + `})`, "missing s {{lib}} {{run_id}}"},
				{`sum by (run_id, lib) (soak_events_dropped_total{` + sel + `})`, "dropped {{lib}} {{run_id}}"},
			}},
	}},
	{"Latency", []panel{
		{"Latency p50 / p99", "s", "Receive time minus event time, quantiles of the latency histogram over the interval.",
			[]query{
				{`histogram_quantile(0.5, sum by (run_id, lib, le) (rate(soak_latency_seconds_bucket{` + sel + `}[$__rate_interval])))`, "p50 {{lib}} {{run_id}}"},
				{`histogram_quantile(0.99, sum by (run_id, lib, le) (rate(soak_latency_seconds_bucket{` + sel + `}[$__rate_interval])))`, "p99 {{lib}} {{run_id}}"},
			}},
		{"Latency p99 over the selected hosts", "s", "One p99 per library from the histograms of every selected run and host added up: a quantile that aggregates, unlike an average of p99s.",
			[]query{{`histogram_quantile(0.99, sum by (lib, le) (rate(soak_latency_seconds_bucket{` + sel + `}[$__rate_interval])))`, "p99 {{lib}}"}}},
	}},
}

// Build builds the dashboard.
func Build() (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder("soak runs").
		Uid(UID).
		Description("Soak runs scraped from their live view (soak run -http): throughput, CPU, memory, resilience and latency per library, run and host.").
		Tags([]string{"soak", "websocket"}).
		Refresh("10s").
		Time("now-1h", "now").
		Timezone(common.TimeZoneUtc).
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		WithVariable(dashboard.NewDatasourceVariableBuilder("datasource").Label("Prometheus").Type("prometheus")).
		WithVariable(variable("host", "Host", `label_values(soak_run_info, host)`)).
		WithVariable(variable("run", "Run", `label_values(soak_run_info{host=~"$host"}, run_id)`)).
		WithVariable(variable("lib", "Library", `label_values(soak_messages_total{run_id=~"$run"}, lib)`))

	var id uint32
	next := func() uint32 { id++; return id } // panel ids, stable from one generation to the next
	b.WithRow(dashboard.NewRowBuilder("Runs").Id(next()))
	b.WithPanel(stat.NewPanelBuilder().Id(next()).
		Title("Run state").
		Description("The state of each selected run: warmup, running, draining, then done, interrupted or failed (kept on the live view for -linger after the end).").
		Datasource(ds).Height(5).Span(8).
		TextMode(common.BigValueTextModeName).
		ColorMode(common.BigValueColorModeNone).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"})).
		WithTarget(target(query{`max by (run_id, state) (soak_run_state{` + runSel + `}) == 1`, "{{run_id}}: {{state}}"})))
	b.WithPanel(table.NewPanelBuilder().Id(next()).
		Title("Runs").
		Description("Each selected run's identity: profile, versions, the host's kernel and CPU, and the user's labels (-label, the profile's labels:).").
		Datasource(ds).Height(5).Span(16).
		Footer(common.NewTableFooterOptionsBuilder().Reducer([]string{})). // its schema wants a list, even an empty one
		WithTarget(target(query{`soak_run_info{` + runSel + `}`, ""}).Format(prometheus.PromQueryFormatTable).Instant()))
	for _, r := range rows {
		b.WithRow(dashboard.NewRowBuilder(r.title).Id(next()))
		for _, p := range r.panels {
			tp := timeseries.NewPanelBuilder().Id(next()).Title(p.title).Description(p.help).Unit(p.unit).
				Datasource(ds).Height(8).Span(12).
				Legend(common.NewVizLegendOptionsBuilder().DisplayMode(common.LegendDisplayModeTable).
					Placement(common.LegendPlacementBottom).ShowLegend(true).Calcs([]string{"mean", "max"}))
			for _, q := range p.queries {
				tp.WithTarget(target(q))
			}
			b.WithPanel(tp)
		}
	}
	return b.Build()
}

// variable is a query variable of label values, several or all selectable;
// All matches every value, and series without the label.
func variable(name, label, q string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).Label(label).
		Datasource(ds).
		Query(dashboard.StringOrMap{String: cog.ToPtr(q)}).
		Definition(q).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).IncludeAll(true).AllValue(".*")
}

func target(q query) *prometheus.DataqueryBuilder {
	t := prometheus.NewDataqueryBuilder().Datasource(ds).Expr(q.expr)
	if q.legend != "" {
		t.LegendFormat(q.legend)
	}
	return t
}

// JSON is the dashboard as deploy/grafana/soak.json holds it: indented, one
// newline at the end.
func JSON() ([]byte, error) {
	d, err := Build()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// labelValues is a variable's query: label_values(SELECTOR, LABEL).
var labelValues = regexp.MustCompile(`^label_values\((.*), *[a-zA-Z_]+\)$`)

// Exprs are the dashboard's PromQL expressions as Grafana sends them to
// Prometheus: each panel's targets, and the selector of each variable's
// label_values query, with the variables and $__rate_interval substituted
// by values a query could have (a run, a library, every host; 1m).
func Exprs(d dashboard.Dashboard) []string {
	var out []string
	add := func(e string) {
		r := strings.NewReplacer("$__rate_interval", "1m", "$run", "20270101-000000-local", "$lib", "gorilla|gws", "$host", ".*")
		out = append(out, r.Replace(e))
	}
	for _, v := range d.Templating.List {
		if v.Query != nil && v.Query.String != nil {
			if m := labelValues.FindStringSubmatch(*v.Query.String); m != nil {
				add(m[1])
			}
		}
	}
	for _, p := range d.Panels {
		if p.Panel == nil {
			continue
		}
		for _, t := range p.Panel.Targets {
			if q, ok := t.(*prometheus.Dataquery); ok {
				add(q.Expr)
			}
		}
	}
	return out
}
