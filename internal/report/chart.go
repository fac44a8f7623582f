package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"regexp"
	"strconv"

	"github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"
	"github.com/go-echarts/go-echarts/v2/types"
)

// The charts' options are typed go-echarts options (charts.Line with its
// axes, zoom, legend and tooltip), built here from each chart's frame and
// serialized as one small option snippet per chart into our own page, where
// page.js hands it to echarts.init/setOption. The data travels as the
// chart's dataset (one row per instant: the time in Unix ms, then one column
// per series), so the time column is shared by all of a chart's lines.

// palette colors the series in order (libraries, or host measures).
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"}

// markerStyle draws a marker group of the reconnects chart.
type markerStyle struct{ kind, symbol, color string }

// markerStyles lists the marker groups (markerKinds) in the legend's order.
var markerStyles = []markerStyle{
	{"reconnect", "triangle", "#555"},
	{"stall", "diamond", "#e6a700"},
	{"fault", "pin", "#c00"},
	{"worker exit", "rect", "#900"},
	{"worker restart", "rect", "#000"},
	{"worker hung", "rect", "#609"},
	{"unrepairable", "circle", "#f0f"},
	{"outage", "arrow", "#06c"},
}

// chartView is a chart as the page shows it: the caption's facts and the
// option snippet (a JavaScript object literal: JSON whose formatter strings
// are unwrapped into function references).
type chartView struct {
	*chart
	Option template.JS
}

// chartViews builds the option snippet of each of p's charts.
func chartViews(p *page) ([]chartView, error) {
	out := make([]chartView, len(p.Charts))
	for i := range p.Charts {
		j, err := optionJSON(lineChart(&p.Charts[i], p.Data.StartMs))
		if err != nil {
			return nil, err
		}
		js, err := optionJS(j)
		if err != nil {
			return nil, err
		}
		out[i] = chartView{&p.Charts[i], js}
	}
	return out, nil
}

// lineChart is the go-echarts line chart of c, with the window starting at
// startMs (Unix ms).
func lineChart(c *chart, startMs int64) *charts.Line {
	l := charts.NewLine()
	scale := c.ID != "reconnects" // a count from 0 keeps its 0
	l.SetGlobalOptions(
		charts.WithAnimation(false),
		charts.WithColorsOpts(palette),
		// Room on the right for the X axis's name ("UTC"), which echarts
		// draws past the axis's end: 24 px clipped it to "U".
		charts.WithGridOpts(opts.Grid{Left: "64", Right: "48", Top: "36", Bottom: "64"}),
		charts.WithLegendOpts(opts.Legend{Top: "4", Type: "scroll"}),
		charts.WithTooltipOpts(opts.Tooltip{Trigger: "axis", Formatter: jsCall("soak.axisTip", c.Unit)}),
		charts.WithXAxisOpts(opts.XAxis{Type: "time", Name: "UTC", NameLocation: "end"}),
		charts.WithYAxisOpts(opts.YAxis{Type: "value", Name: c.Unit, Scale: opts.Bool(scale)}),
		charts.WithDataZoomOpts(opts.DataZoom{Type: "inside", FilterMode: "none"},
			opts.DataZoom{Type: "slider", FilterMode: "none"}),
	)
	l.AddDataset(opts.Dataset{Source: rows{c, startMs}})
	var step any
	if c.Step {
		step = "end"
	}
	for i, name := range c.Names {
		l.MultiSeries = append(l.MultiSeries, charts.SingleSeries{
			Name: name, Type: types.ChartLine, ShowSymbol: opts.Bool(false), SymbolSize: 3,
			ConnectNulls: opts.Bool(false), Step: step, Color: palette[i%len(palette)],
			LineStyle: &opts.LineStyle{Width: 1.2}, Encode: &opts.Encode{X: 0, Y: i + 1},
		})
	}
	if len(c.Markers) > 0 {
		s := charts.NewScatter()
		for _, st := range markerStyles {
			var data []opts.ScatterData
			for _, m := range c.Markers {
				if m.Kind != st.kind {
					continue
				}
				name := m.Lib
				if name == "" {
					name = "run-wide"
				}
				if m.N > 1 {
					name += fmt.Sprintf(" · %d events in this bucket", m.N)
				}
				data = append(data, opts.ScatterData{Name: name, Value: [2]float64{msAt(startMs, m.X), m.Y}})
			}
			if data != nil {
				s.AddSeries(st.kind, data, charts.WithSeriesOpts(func(s *charts.SingleSeries) {
					s.Symbol, s.SymbolSize, s.Color = st.symbol, 9, st.color
					s.SeriesTooltip = &opts.SeriesTooltip{Formatter: opts.FuncOpts("soak.markerTip")}
				}))
			}
		}
		l.Overlap(s)
	}
	l.Accept(untyped{})
	return l
}

// untyped adds the options go-echarts has no field for: UTC time on the
// axis and in tooltips, the Y axis name's alignment, the slider's place
// under the grid, and the markers drawn above the lines with a tooltip of
// their own.
type untyped struct {
	charts.BaseConfigurationVisitor
}

func (untyped) Visit(o map[string]any) { o["useUTC"] = true }

func (untyped) VisitYAxis(ys []opts.YAxis) any {
	out := make([]any, len(ys))
	for i, y := range ys {
		out[i] = struct {
			opts.YAxis
			NameTextStyle opts.TextStyle `json:"nameTextStyle"`
		}{y, opts.TextStyle{Align: "left"}}
	}
	return out
}

func (untyped) VisitDataZooms(zs []opts.DataZoom) any {
	out := make([]any, len(zs))
	for i, z := range zs {
		out[i] = z
		if z.Type == "slider" {
			out[i] = struct {
				opts.DataZoom
				Height int `json:"height"`
				Bottom int `json:"bottom"`
			}{z, 20, 8}
		}
	}
	return out
}

func (untyped) VisitSeriesOpt(ms charts.MultiSeries) any {
	out := make([]any, len(ms))
	for i, s := range ms {
		out[i] = s
		if s.Type == types.ChartScatter {
			out[i] = struct {
				charts.SingleSeries
				Z       int `json:"z"`
				Tooltip any `json:"tooltip"`
			}{s, 5, struct {
				Trigger   string        `json:"trigger"`
				Formatter types.FuncStr `json:"formatter"`
			}{"item", s.SeriesTooltip.Formatter}}
		}
	}
	return out
}

// jsCall is a formatter option: fn (a page.js helper) called with arg,
// which returns the formatter function.
func jsCall(fn, arg string) types.FuncStr {
	a, _ := json.Marshal(arg) // escapes <, > and &: safe inside <script>
	return opts.FuncOpts(fn + "(" + string(a) + ")")
}

// funcMark wraps go-echarts' function options in the serialized JSON.
const funcMark = "__f__"

// optionJSON is the chart's option as JSON (formatters still marked): what
// the golden test compares.
func optionJSON(l *charts.Line) ([]byte, error) {
	l.Validate()
	b, err := json.Marshal(l.JSON())
	if err != nil {
		return nil, fmt.Errorf("encode chart option: %w", err)
	}
	return b, nil
}

// optionJS turns the option JSON into the JavaScript object literal the page
// runs: each marked string becomes its JavaScript text, a page.js formatter
// (checked against formatterRE, so that no string from the database can
// become code). JSON escapes <, > and &, so no string can close the page's
// <script> either.
func optionJS(j []byte) (template.JS, error) {
	open, closing := []byte(`"`+funcMark), []byte(funcMark+`"`)
	var out []byte
	for {
		i := bytes.Index(j, open)
		if i < 0 {
			break
		}
		body := j[i+len(open):]
		n := bytes.Index(body, closing)
		if n < 0 {
			return "", fmt.Errorf("chart option: unterminated function at %d", i)
		}
		var fn string
		if err := json.Unmarshal(append(append([]byte{'"'}, body[:n]...), '"'), &fn); err != nil || !formatterRE.MatchString(fn) {
			return "", fmt.Errorf("chart option: %q is not a page formatter", body[:n])
		}
		out = append(append(out, j[:i]...), fn...)
		j = body[n+len(closing):]
	}
	return template.JS(append(out, j...)), nil
}

// formatterRE is what a function option may be: a page.js helper, or one
// called with a JSON string.
var formatterRE = regexp.MustCompile(`^soak\.[A-Za-z]+(\("(?:[^"\\<>&]|\\.)*"\))?$`)

// rows is a chart's dataset source: [[ms, y1, y2, …], …], null for NaN.
type rows struct {
	c       *chart
	startMs int64
}

func (r rows) MarshalJSON() ([]byte, error) {
	c := r.c
	b := make([]byte, 0, len(c.X)*(16+8*len(c.Cols))+2)
	b = append(b, '[')
	for i, x := range c.X {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendFloat(b, msAt(r.startMs, x), 'f', -1, 64)
		for _, col := range c.Cols {
			b = append(b, ',')
			b = appendNum(b, col[i])
		}
		b = append(b, ']')
	}
	return append(b, ']'), nil
}

// appendNum writes f with at most 3 decimals (NaN as null).
func appendNum(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, math.Round(f*1000)/1000, 'f', -1, 64)
}

// msAt is the Unix ms of sec seconds after the window's start.
func msAt(startMs int64, sec float64) float64 {
	return float64(startMs) + math.Round(sec*1000)
}
