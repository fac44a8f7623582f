package report

import (
	_ "embed" // the bench page's template and script
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/unit"
	"github.com/wssoak/wssoak/internal/wire"
)

// The bench page (a database of kind bench, written by soak bench): per
// scenario, bar charts of msgs/s and CPU µs/msg per path, one colour per
// library, with the min–max of the counted runs drawn as whiskers (a custom
// series whose renderItem is a benchpage.js helper), the message-size sweep
// as a line chart when the bench was one, and the table. The options are
// go-echarts options serialized into the page as the soak charts' are.

var (
	//go:embed benchpage.html
	benchHTML string
	//go:embed benchpage.js
	benchJS string
)

// Paths of soak bench (internal/bench) the page treats apart: the ceiling
// (the firehose into a byte counter) is a line of the table, not a bar.
const benchCeiling = "ceiling"

// benchData is a bench database read for the page: its runs aggregated
// (the client bench's, or the server bench's when it holds those), a row a
// group of bars (every dimension but the path and the library).
type benchData struct {
	Agg   *measure.Agg
	Run   store.Run
	Rows  []measure.Dims // in the order they ran, without path and library
	Paths []string       // in the order they ran, the ceiling last
	Libs  []string       // in the order they ran
	Sweep string         // the -sweep argument, "" when the bench was not one
}

// Cell returns the cell of path p and library lib in row, or nil.
func (d *benchData) Cell(row measure.Dims, p, lib string) *measure.BenchCell {
	row.Path, row.Lib = p, lib
	return d.Agg.Cell(row)
}

// pathName is a path as the page names it: the server bench's runs have
// none, their side names them.
func (d *benchData) pathName(p string) string {
	if p == "" {
		return d.Agg.Set.Side
	}
	return p
}

// readBench reads a bench database.
func readBench(db *store.DB) (*benchData, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	rs, err := db.BenchResults()
	if err != nil {
		return nil, err
	}
	a := measure.AggregateBench(rs)
	if len(rs) == 0 {
		cs, err := db.ChatResults()
		if err != nil {
			return nil, err
		}
		a = measure.AggregateChat(cs)
	}
	d := &benchData{Agg: a, Run: run, Sweep: run.Settings["sweep"]}
	for _, c := range a.Cells {
		row := c.Dims
		row.Path, row.Lib = "", ""
		if !slices.Contains(d.Rows, row) {
			d.Rows = append(d.Rows, row)
		}
		if !slices.Contains(d.Paths, c.Path) {
			d.Paths = append(d.Paths, c.Path)
		}
		if !slices.Contains(d.Libs, c.Lib) {
			d.Libs = append(d.Libs, c.Lib)
		}
	}
	if i := slices.Index(d.Paths, benchCeiling); i >= 0 {
		d.Paths = append(slices.Delete(d.Paths, i, i+1), benchCeiling)
	}
	return d, nil
}

// barPaths are the paths the bar charts show: every one but the ceiling.
func (d *benchData) barPaths() []string {
	return slices.DeleteFunc(slices.Clone(d.Paths), func(p string) bool { return p == benchCeiling })
}

// benchChart is one chart of the bench page.
type benchChart struct {
	ID, Title, Note string
	Option          template.JS
}

// benchCharts builds the bench page's charts: per row one bar chart of the
// rate and one of the CPU its side leads with (measure.BenchSet), then the
// wire bytes chart and the sweep's line chart when the bench had them.
// The option JSON (formatters still marked) is what the golden test reads.
func benchCharts(d *benchData) ([]string, [][]byte, error) {
	var ids []string
	var out [][]byte
	for i, row := range d.Rows {
		for _, id := range []string{d.Agg.Set.Rate, d.Agg.Set.CPU} {
			j, err := json.Marshal(benchBar(d, row, measure.BenchByID(id)).JSON())
			if err != nil {
				return nil, nil, fmt.Errorf("encode chart option: %w", err)
			}
			ids, out = append(ids, fmt.Sprintf("s%d-%s", i, id)), append(out, j)
		}
	}
	if d.compressed() {
		j, err := json.Marshal(benchWire(d).JSON())
		if err != nil {
			return nil, nil, fmt.Errorf("encode chart option: %w", err)
		}
		ids, out = append(ids, "wire"), append(out, j)
	}
	if d.Sweep != "" {
		l := benchSweep(d)
		l.Validate()
		j, err := json.Marshal(l.JSON())
		if err != nil {
			return nil, nil, fmt.Errorf("encode chart option: %w", err)
		}
		ids, out = append(ids, "sweep"), append(out, j)
	}
	return ids, out, nil
}

// benchChartOpts are the options every chart of the bench page shares,
// with its x axis, the unit of its y axis and the room below the plot.
func benchChartOpts(x opts.XAxis, yUnit, bottom string) []charts.GlobalOpts {
	return []charts.GlobalOpts{
		charts.WithAnimation(false),
		charts.WithColorsOpts(palette),
		charts.WithGridOpts(opts.Grid{Left: "64", Right: "24", Top: "36", Bottom: bottom}),
		charts.WithLegendOpts(opts.Legend{Top: "4", Type: "scroll"}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(x),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: yUnit}),
	}
}

// benchBar is the bar chart of measure m in row: the paths along x, a bar a
// library (its median), and a whisker from min to max over each.
func benchBar(d *benchData, row measure.Dims, m *measure.Measure) *charts.Bar {
	paths := d.barPaths()
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = d.pathName(p)
	}
	b := charts.NewBar()
	b.SetGlobalOptions(benchChartOpts(opts.XAxis{Type: "category", Data: names}, m.Unit, "32")...)
	b.SetXAxis(names)
	for li, lib := range d.Libs {
		var bars []opts.BarData
		var whiskers []opts.CustomData
		for pi, p := range paths {
			c := d.Cell(row, p, lib)
			if c == nil || c.Runs == 0 {
				bars = append(bars, opts.BarData{Value: "-"}) // echarts: no bar
				continue
			}
			v := c.Stat(m.ID)
			bars = append(bars, opts.BarData{Name: fmt.Sprintf("%s %s: %d runs, min %s, max %s", lib, names[pi], c.Runs, unit.Figure(v.Min), unit.Figure(v.Max)), Value: round4(v.Median)})
			whiskers = append(whiskers, opts.CustomData{Value: []any{pi, round4(v.Min), round4(v.Max), li, len(d.Libs)}})
		}
		color := palette[li%len(palette)]
		b.AddSeries(lib, bars, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Color, s.BarGap, s.BarCategoryGap = color, barGap, barCategoryGap
		}))
		b.MultiSeries = append(b.MultiSeries, charts.SingleSeries{Name: lib, Type: types.ChartCustom, Data: whiskers,
			RenderItem: opts.FuncOpts("soak.whisker"), Color: color})
	}
	b.Validate()
	b.Accept(untypedBench{})
	return b
}

// compressed reports whether the bench ran scenarios with permessage-deflate
// (soak bench -compression) or in several encodings (-encodings: rows
// scenario-json, scenario-msgpack, …): the page then has the wire bytes chart.
func (d *benchData) compressed() bool {
	return slices.ContainsFunc(d.Rows, func(row measure.Dims) bool {
		return row.Encoding != "" || row.Compression != "" && row.Compression != wire.CompressionOff.String()
	})
}

// rowNames are the rows' names, in their order.
func (d *benchData) rowNames() []string {
	out := make([]string, len(d.Rows))
	for i, row := range d.Rows {
		out[i] = row.Row()
	}
	return out
}

// benchWire is the wire bytes chart: the scenarios (each under each
// compression setting) along x, a bar a library, its median frame bytes per
// message on the first path it ran.
func benchWire(d *benchData) *charts.Bar {
	m := measure.BenchByID("bench_wire_per_msg")
	b := charts.NewBar()
	b.SetGlobalOptions(benchChartOpts(opts.XAxis{Type: "category", Data: d.rowNames()}, m.Unit, "32")...)
	b.SetXAxis(d.rowNames())
	for li, lib := range d.Libs {
		var bars []opts.BarData
		for _, row := range d.Rows {
			v := math.NaN()
			for _, p := range d.barPaths() {
				if c := d.Cell(row, p, lib); c != nil && c.Runs > 0 && c.Stat(m.ID).Median > 0 {
					v = c.Stat(m.ID).Median
					break
				}
			}
			if math.IsNaN(v) {
				bars = append(bars, opts.BarData{Value: "-"})
				continue
			}
			bars = append(bars, opts.BarData{Name: fmt.Sprintf("%s %s: %s", lib, row.Row(), unit.Figure(v)), Value: round4(v)})
		}
		if !slices.ContainsFunc(bars, func(x opts.BarData) bool { return x.Value != "-" }) {
			continue // the raw reader: frame bytes not counted
		}
		color := palette[li%len(palette)]
		b.AddSeries(lib, bars, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
			s.Color, s.BarGap, s.BarCategoryGap = color, barGap, barCategoryGap
		}))
	}
	b.Validate()
	b.Accept(untypedBench{})
	return b
}

// barGap and barCategoryGap place the bars; soak.whisker lays its whiskers
// out with the same (echarts' api.barLayout).
const (
	barGap         = "20%"
	barCategoryGap = "30%"
)

// benchSweep is the sweep's line chart: MB/s (median) against the payload
// size, a line a library and path.
func benchSweep(d *benchData) *charts.Line {
	m := measure.BenchByID("bench_mb_rate")
	l := charts.NewLine()
	l.SetGlobalOptions(benchChartOpts(opts.XAxis{Type: "log", Name: "bytes/msg", NameLocation: "end"}, m.Unit, "40")...)
	i := 0
	for _, p := range d.Paths {
		for _, lib := range d.Libs {
			var pts []opts.LineData
			for _, row := range d.Rows {
				if c := d.Cell(row, p, lib); c != nil && c.Runs > 0 {
					pts = append(pts, opts.LineData{Value: []float64{math.Round(c.Stat("bench_payload_per_msg").Median), round4(c.Stat(m.ID).Median)}})
				}
			}
			if pts == nil {
				continue
			}
			name := lib + " " + p
			l.AddSeries(name, pts, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
				s.Color, s.SymbolSize, s.ShowSymbol = palette[i%len(palette)], 6, opts.Bool(true)
			}))
			i++
		}
	}
	return l
}

// untypedBench adds what go-echarts has no field for: the whiskers above the
// bars, out of the tooltip.
type untypedBench struct {
	charts.BaseConfigurationVisitor
}

func (untypedBench) VisitSeriesOpt(ms charts.MultiSeries) any {
	out := make([]any, len(ms))
	for i, s := range ms {
		out[i] = s
		if s.Type == types.ChartCustom {
			out[i] = struct {
				charts.SingleSeries
				Z       int  `json:"z"`
				Silent  bool `json:"silent"`
				Tooltip any  `json:"tooltip"`
			}{s, 5, true, struct {
				Show bool `json:"show"`
			}{false}}
		}
	}
	return out
}

// round4 keeps 4 significant digits: the option stays short and stable.
func round4(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return f
}

// benchRow is a row of the page's table: a row of the bench (its scenario
// and what else it varies) and a path, a cell a library.
type benchRow struct {
	Scenario, Path string
	Cells          []string
}

// benchTable is the table: the median rate, min–max, (median CPU), a row
// per bench row and path, a column per library.
func benchTable(d *benchData) []benchRow {
	var out []benchRow
	for _, r := range d.Rows {
		for _, p := range d.Paths {
			row := benchRow{Scenario: r.Row(), Path: d.pathName(p)}
			any := false
			for _, lib := range d.Libs {
				c := d.Cell(r, p, lib)
				switch {
				case c == nil:
					row.Cells = append(row.Cells, "")
					continue
				case c.Runs == 0:
					row.Cells = append(row.Cells, fmt.Sprintf("INVALID (%d run(s))", c.Invalid))
				default:
					r, cpu := c.Stat(d.Agg.Set.Rate), c.Stat(d.Agg.Set.CPU)
					s := fmt.Sprintf("%s %s–%s (%.3f µs)", unit.Figure(r.Median), unit.Figure(r.Min), unit.Figure(r.Max), cpu.Median)
					if c.Invalid > 0 {
						s += fmt.Sprintf(" [%d invalid]", c.Invalid)
					}
					row.Cells = append(row.Cells, s)
				}
				any = true
			}
			if any {
				out = append(out, row)
			}
		}
	}
	return out
}

// benchNotes are what the page says of its table and its charts, by side
// (HTML of this file, written out as it is).
var benchNotes = map[string]struct{ Table, Charts template.HTML }{
	measure.SideClient: {
		Table: `Each cell: median msgs/s, min–max over the counted runs (the warm-up round left out), and in
parentheses the median CPU µs/msg (user + sys of the client process). INVALID: no run of the cell delivered
exactly what the firehose sent.`,
		Charts: `Per scenario, a bar a library and path: the median over the counted runs, with a whisker from the
minimum to the maximum. The firehose's ceiling is in the table only.`},
	measure.SideServer: {
		Table: `Each cell: median deliveries/s (broadcasts the load clients received per second), min–max over the
counted runs (the warm-up round left out), and in parentheses the median server CPU µs/delivery (user + sys of the
server process). INVALID: no run of the cell had its clients receive exactly what the server wrote.`,
		Charts: `Per room size N, a bar a server library: the median over the counted runs, with a whisker from the
minimum to the maximum.`},
}

var benchTmpl = template.Must(template.New("bench").Funcs(template.FuncMap{
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
}).Parse(benchHTML))

// renderBench writes the bench page of db to w.
func renderBench(db *store.DB, w io.Writer, now time.Time) error {
	d, err := readBench(db)
	if err != nil {
		return err
	}
	ids, js, err := benchCharts(d)
	if err != nil {
		return err
	}
	var cs []benchChart
	for i, id := range ids {
		o, err := optionJS(js[i])
		if err != nil {
			return err
		}
		c := benchChart{ID: id, Option: o}
		if id == "wire" {
			c.Title, c.Note = "Wire bytes per message, by encoding and permessage-deflate",
				"median frame bytes a message the client read, on its first path; -msgpack, -packed: the encoding; +deflate: context takeover asked, +deflate_nct: no_context_takeover"
		} else if id == "sweep" {
			m := measure.BenchByID("bench_mb_rate")
			c.Title, c.Note = "Message-size sweep: "+m.Title+" by payload size ("+d.Sweep+")", "median over the counted runs, a line a library and path"
		} else {
			sc, mid, _ := strings.Cut(id, "-")
			n, _ := strconv.Atoi(strings.TrimPrefix(sc, "s"))
			m := measure.BenchByID(mid)
			c.Title = d.Rows[n].Row() + ": " + m.Title
			c.Note = "bar: median over the counted runs; whisker: min–max; " + string(m.Better) + " is better"
		}
		cs = append(cs, c)
	}
	var host []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range d.Run.Host {
			if !yield(k) {
				return
			}
		}
	}) {
		host = append(host, k+": "+d.Run.Host[k])
	}
	var versions []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range d.Run.Settings {
			if strings.HasPrefix(k, "version ") && !yield(k) {
				return
			}
		}
	}) {
		versions = append(versions, strings.TrimPrefix(k, "version ")+" "+d.Run.Settings[k])
	}
	return benchTmpl.Execute(w, struct {
		Run            store.Run
		Notes          struct{ Table, Charts template.HTML }
		Libs           []string
		Rows           []benchRow
		Charts         []benchChart
		Host, Versions []string
		Generated      time.Time
		Echarts        template.JS
		EchartsVersion string
		Script         template.JS
		CSS            template.CSS
	}{d.Run, benchNotes[d.Agg.Set.Side], d.Libs, benchTable(d), cs, host, versions, now, template.JS(echartsJS), strings.TrimSpace(echartsVersion),
		template.JS(benchJS), template.CSS(pageCSS)})
}
