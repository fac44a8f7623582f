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

// benchMeasures are the measures the bar charts show, by catalogue id.
var benchMeasures = []string{"bench_msg_rate", "bench_cpu_per_msg"}

// benchData is a bench database read for the page.
type benchData struct {
	Run       store.Run
	Scenarios []string // in the order they ran
	Paths     []string // in the order they ran, the ceiling last
	Libs      []string // in the order they ran
	Cells     map[measure.Dims]*measure.BenchCell
	Sweep     string // the -sweep argument, "" when the bench was not one
}

// Cell returns the cell of scenario sc, path p and library lib, or nil.
func (d *benchData) Cell(sc, p, lib string) *measure.BenchCell {
	return d.Cells[measure.Dims{Scenario: sc, Path: p, Lib: lib}]
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
	d := &benchData{Run: run, Cells: map[measure.Dims]*measure.BenchCell{}, Sweep: run.Settings["sweep"]}
	add := func(list *[]string, v string) {
		if !slices.Contains(*list, v) {
			*list = append(*list, v)
		}
	}
	for _, c := range measure.BenchCells(rs) {
		add(&d.Scenarios, c.Scenario)
		add(&d.Paths, c.Path)
		add(&d.Libs, c.Lib)
		d.Cells[c.Dims] = c
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

// benchCharts builds the bench page's charts: per scenario one bar chart a
// measure of benchMeasures, then the sweep's line chart when there is one.
// The option JSON (formatters still marked) is what the golden test reads.
func benchCharts(d *benchData) ([]string, [][]byte, error) {
	var ids []string
	var out [][]byte
	for i, sc := range d.Scenarios {
		for _, id := range benchMeasures {
			j, err := json.Marshal(benchBar(d, sc, measure.BenchByID(id)).JSON())
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

// benchBar is the bar chart of measure m in scenario sc: the paths along x,
// a bar a library (its median), and a whisker from min to max over each.
func benchBar(d *benchData, sc string, m *measure.Measure) *charts.Bar {
	paths := d.barPaths()
	b := charts.NewBar()
	b.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithColorsOpts(palette),
		charts.WithGridOpts(opts.Grid{Left: "64", Right: "24", Top: "36", Bottom: "32"}),
		charts.WithLegendOpts(opts.Legend{Top: "4", Type: "scroll"}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: paths}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.Unit}),
	)
	b.SetXAxis(paths)
	for li, lib := range d.Libs {
		var bars []opts.BarData
		var whiskers []opts.CustomData
		for pi, p := range paths {
			c := d.Cell(sc, p, lib)
			if c == nil || c.Runs == 0 {
				bars = append(bars, opts.BarData{Value: "-"}) // echarts: no bar
				continue
			}
			v := c.Values[m.ID]
			bars = append(bars, opts.BarData{Name: fmt.Sprintf("%s %s: %d runs, min %s, max %s", lib, p, c.Runs, unit.Figure(v.Min), unit.Figure(v.Max)), Value: round4(v.Median)})
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
	return slices.ContainsFunc(d.Scenarios, func(row string) bool {
		sc, _, deflated := strings.Cut(row, "+deflate")
		return deflated || strings.HasSuffix(sc, "-json") || strings.HasSuffix(sc, "-msgpack") || strings.HasSuffix(sc, "-packed")
	})
}

// benchWire is the wire bytes chart: the scenarios (each under each
// compression setting) along x, a bar a library, its median frame bytes per
// message on the first path it ran.
func benchWire(d *benchData) *charts.Bar {
	m := measure.BenchByID("bench_wire_per_msg")
	b := charts.NewBar()
	b.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithColorsOpts(palette),
		charts.WithGridOpts(opts.Grid{Left: "64", Right: "24", Top: "36", Bottom: "32"}),
		charts.WithLegendOpts(opts.Legend{Top: "4", Type: "scroll"}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "category", Data: d.Scenarios}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.Unit}),
	)
	b.SetXAxis(d.Scenarios)
	for li, lib := range d.Libs {
		var bars []opts.BarData
		for _, sc := range d.Scenarios {
			v := math.NaN()
			for _, p := range d.barPaths() {
				if c := d.Cell(sc, p, lib); c != nil && c.Runs > 0 && c.Values[m.ID].Median > 0 {
					v = c.Values[m.ID].Median
					break
				}
			}
			if math.IsNaN(v) {
				bars = append(bars, opts.BarData{Value: "-"})
				continue
			}
			bars = append(bars, opts.BarData{Name: fmt.Sprintf("%s %s: %s", lib, sc, unit.Figure(v)), Value: round4(v)})
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
	l.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithColorsOpts(palette),
		charts.WithGridOpts(opts.Grid{Left: "64", Right: "24", Top: "36", Bottom: "40"}),
		charts.WithLegendOpts(opts.Legend{Top: "4", Type: "scroll"}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "item"}),
		charts.WithXAxisOpts(opts.XAxis{Type: "log", Name: "bytes/msg", NameLocation: "end"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: m.Unit}),
	)
	i := 0
	for _, p := range d.Paths {
		for _, lib := range d.Libs {
			var pts []opts.LineData
			for _, sc := range d.Scenarios {
				if c := d.Cell(sc, p, lib); c != nil && c.Runs > 0 {
					pts = append(pts, opts.LineData{Value: []float64{math.Round(c.Payload), round4(c.Values[m.ID].Median)}})
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

// benchRow is a row of the page's table: a scenario and path, a cell a
// library.
type benchRow struct {
	Scenario, Path string
	Cells          []string
}

// benchTable is the table: median msgs/s, min–max, (median CPU µs/msg), a
// row per scenario and path, a column per library.
func benchTable(d *benchData) []benchRow {
	var out []benchRow
	for _, sc := range d.Scenarios {
		for _, p := range d.Paths {
			row := benchRow{Scenario: sc, Path: p}
			any := false
			for _, lib := range d.Libs {
				c := d.Cell(sc, p, lib)
				switch {
				case c == nil:
					row.Cells = append(row.Cells, "")
					continue
				case c.Runs == 0:
					row.Cells = append(row.Cells, fmt.Sprintf("INVALID (%d run(s))", c.Invalid))
				default:
					r, cpu := c.Values["bench_msg_rate"], c.Values["bench_cpu_per_msg"]
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
			c.Title = d.Scenarios[n] + ": " + m.Title
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
		Libs           []string
		Rows           []benchRow
		Charts         []benchChart
		Host, Versions []string
		Generated      time.Time
		Echarts        template.JS
		EchartsVersion string
		Script         template.JS
		CSS            template.CSS
	}{d.Run, d.Libs, benchTable(d), cs, host, versions, now, template.JS(echartsJS), strings.TrimSpace(echartsVersion),
		template.JS(benchJS), template.CSS(pageCSS)})
}
