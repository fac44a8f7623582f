package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

var fixtureStart = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

// fixtureDB writes a two-minute run of three libraries whose every value is
// a known function of the second, with a gap, a missing process half, a
// reconnect, a stall, a fault and a worker restart. It returns the path of
// the closed database.
func fixtureDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := fixtureStart
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	plan := `{"slots":[{"group":"arr"},{"group":"markets"}]}`
	if err := db.CreateRun(store.Run{ID: "20261101-120000-fixture", Name: "fixture", Target: "ws://127.0.0.1:9443",
		ProfileText: "name: fixture\nduration: 2m\n# <script>alert(1)</script> stays text\n",
		Started:     start, Ended: at(122), Planned: 120 * time.Second, Status: "done", GoVersion: "go1.26.8",
		Host: map[string]string{"cpu_model": "Test CPU", "cpu_logical": "2", "kernel": "6.1.0-test", "clocksource": "kvm-clock", "tcp_rmem": "4096 131072 6291456",
			"clock_synced": "true", "clock_state": "0", "clock_status": "8193", "clock_esterror_us": "800", "clock_maxerror_us": "20000"},
		Settings: map[string]string{"plan": plan, "keepalive": "20s/1m0s", "read_limit": "16777216", "rcvbuf": "0", "profile_path": "fixture.yaml"},
	}); err != nil {
		t.Fatal(err)
	}
	libs := []string{"gws", "gorilla", "gobwas"} // out of report order on purpose
	b := &store.Batch{}
	for li, lib := range libs {
		if err := db.UpsertWorker(store.Worker{Lib: lib, Module: "example.com/" + lib, Version: "v1.2.3", Pid: 100 + li,
			Started: start, Ended: at(122), RusageUser: 1, RusageSys: 0.5, SampledCPU: 1.5, MaxRSS: 20e6,
			LatCount: 1000, LatP50: 800, LatP99: 4000, LatMax: 9000, Runtime: "GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off"}); err != nil {
			t.Fatal(err)
		}
		var total, rec, lost int64
		for sec := int64(1); sec <= 122; sec++ {
			if lib == "gws" && sec == 45 {
				lost = 3 // counted after the reconnect; charged to the fault at 40 s
			}
			if lib == "gobwas" && sec >= 50 && sec < 55 {
				continue // five seconds without a row: the lines must break
			}
			msgs := 1000 + 10*sec
			if sec == 77 {
				msgs = 9000 // a spike
			}
			latP50, latP99, latMax := 700+10*sec, 3000+100*int64(li), int64(9000)
			if lib == "gws" && sec == 41 {
				msgs = 0 // the reconnect second: no latency sample
				rec = 1
				latP50, latP99, latMax = 0, 0, 0
			}
			if sec > 120 { // the drain: nothing is sent any more
				msgs, latP50, latP99, latMax = 0, 0, 0, 0
			}
			total += msgs
			s := store.Sample{Lib: lib, Sec: sec, TS: at(float64(sec)), HasWorker: true, Msgs: msgs, Bytes: msgs * 200,
				MsgsTotal: total, BytesTotal: total * 200, Goroutines: 10 + li, HeapBytes: (2 + sec/30) * 1e6, ConnsUp: 2,
				ReconnectsTotal: rec, LostTotal: lost, LatP50: latP50, LatP99: latP99, LatMax: latMax,
				HasProc: !(lib == "gws" && sec == 30), RSS: int64(15e6 + float64(li)*1e6 + float64(sec)*1e4),
				CPUUser: 0.01 * float64(sec), CPUSys: 0.002 * float64(sec), CPUPct: float64(2 + li), FDs: 9, Threads: 7}
			b.Samples = append(b.Samples, s)
		}
		for _, sec := range []int64{60, 120} {
			for _, st := range []struct {
				grp, name string
				slot      int
			}{{"arr", "!miniTicker@arr", 0}, {"markets", "btcusdt@trade", 1}, {"markets", "ethusdt@trade", 1}} {
				msgs := sec * 10
				var lost int64
				if lib == "gws" && st.name == "btcusdt@trade" && sec == 120 {
					msgs -= 3
					lost = 3
				}
				b.StreamSamples = append(b.StreamSamples, store.StreamSample{Lib: lib, Slot: st.slot, Group: st.grp, Stream: st.name,
					Sec: sec, MsgsTotal: msgs, BytesTotal: msgs * 100, LostTotal: lost, MaxSilenceMs: 1200 + int64(li)*100, LastSeq: msgs})
			}
		}
	}
	// The clock, synchronised: at the window's start and a minute later.
	b.Clock = []store.ClockSample{
		{Sec: 1, TS: at(1), Synced: true, Status: 0x2001, EstErrorUs: 900, MaxErrorUs: 25_000},
		{Sec: 61, TS: at(61), Synced: true, Status: 0x2001, EstErrorUs: 1500, MaxErrorUs: 40_000},
	}
	for sec := int64(1); sec <= 122; sec++ {
		b.Host = append(b.Host, store.HostSample{Sec: sec, TS: at(float64(sec)), Load1: 0.5 + float64(sec%10)/10, Load5: 0.6,
			Load15: 0.55, CPUPct: 20 + float64(sec%7), StealPct: float64(sec%5) / 2, IOWaitPct: 0.1, MemUsed: 1e9, MemAvail: 3e9})
	}
	b.Events = []store.Event{
		{Lib: "gws", TS: at(-1.5), Sec: -1.5, Kind: "connected", Slot: 1, Group: "markets"},
		{TS: at(40), Sec: 40, Kind: wire.EventFault, Fault: wire.FaultReset, Slot: -1, Detail: "reset markets"},
		{Lib: "gws", TS: at(40.2), Sec: 40.2, Kind: "disconnected", Slot: 1, Group: "markets", Code: 1006, Detail: "connection reset by peer"},
		{Lib: "gws", TS: at(41.3), Sec: 41.3, Kind: "reconnect", Slot: 1, Group: "markets", DurMs: 1100, Detail: "detect=1ms backoff=600ms"},
		{Lib: "gobwas", TS: at(70), Sec: 70, Kind: "stall", Slot: 1, Group: "markets", Stream: "ethusdt@trade", Detail: "silent 3s <b>"},
		{Lib: "gorilla", TS: at(90), Sec: 90, Kind: "worker_exit", Slot: -1, Code: 2, Detail: "exit code 2"},
		{Lib: "gorilla", TS: at(91), Sec: 91, Kind: "worker_restart", Slot: -1, Detail: "restart 1"},
		{TS: at(110), Sec: 110, Kind: "outage", Slot: -1, DurMs: 1500, Detail: "controller down; resumed"},
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	return path
}

// renderFile renders the database at dbPath into dir/report.html.
func renderFile(t testing.TB, dbPath string) (string, []byte) {
	t.Helper()
	out := filepath.Join(filepath.Dir(dbPath), "report.html")
	if err := WriteFile(context.Background(), dbPath, out, Options{Now: fixtureStart.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, html
}

var dataRE = regexp.MustCompile(`(?s)<script type="application/json" id="soak-data">(.*?)</script>`)

// embeddedData returns the report's data JSON from the page.
func embeddedData(t testing.TB, html []byte) []byte {
	t.Helper()
	m := dataRE.FindSubmatch(html)
	if m == nil {
		t.Fatal("no soak-data script in the page")
	}
	return m[1]
}

// chartOption is the part of a chart's go-echarts option the tests read.
type chartOption struct {
	Dataset []struct {
		Source [][]*float64 `json:"source"`
	} `json:"dataset"`
	Series []struct {
		Name   string `json:"name"`
		Type   string `json:"type"`
		Encode struct {
			X, Y int
		} `json:"encode"`
		Data []struct {
			Name  string     `json:"name"`
			Value [2]float64 `json:"value"`
		} `json:"data"`
	} `json:"series"`
	YAxis []struct {
		Name string `json:"name"`
	} `json:"yAxis"`
}

// lines returns the line series' names.
func (o *chartOption) lines() []string {
	var names []string
	for _, s := range o.Series {
		if s.Type == "line" {
			names = append(names, s.Name)
		}
	}
	return names
}

// points returns series name's [x ms, y] points (y NaN for null).
func (o *chartOption) points(name string) [][2]float64 {
	for _, s := range o.Series {
		if s.Name != name || s.Type != "line" {
			continue
		}
		var ps [][2]float64
		for _, row := range o.Dataset[0].Source {
			y := math.NaN()
			if row[s.Encode.Y] != nil {
				y = *row[s.Encode.Y]
			}
			ps = append(ps, [2]float64{*row[s.Encode.X], y})
		}
		return ps
	}
	return nil
}

// reportCharts builds the charts of the database at dbPath and returns
// those drawn with each one's option JSON (formatters marked, as in the
// golden file), checking that html embeds each option's snippet, and that
// it says of each chart with nothing to draw that it is empty.
func reportCharts(t testing.TB, dbPath string, html []byte) ([]chart, [][]byte) {
	t.Helper()
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p, err := build(db, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	var js [][]byte
	var drawn []chart
	for i := range p.Charts {
		if p.Charts[i].Empty { // said so, not drawn
			if want := `<p class="none" id="chart-` + p.Charts[i].ID + `-none">None during the run.</p>`; !bytes.Contains(html, []byte(want)) {
				t.Errorf("page does not say chart %s is empty", p.Charts[i].ID)
			}
			if bytes.Contains(html, []byte(`soak.draw("`+p.Charts[i].ID+`"`)) {
				t.Errorf("the empty chart %s is drawn", p.Charts[i].ID)
			}
			continue
		}
		drawn = append(drawn, p.Charts[i])
		j, err := optionJSON(lineChart(&p.Charts[i], p.Data.StartMs))
		if err != nil {
			t.Fatal(err)
		}
		snippet, err := optionJS(j)
		if err != nil {
			t.Fatal(err)
		}
		if want := "soak.draw(\"" + p.Charts[i].ID + "\", " + string(snippet) + ");\n"; !bytes.Contains(html, []byte(want)) {
			t.Errorf("page lacks the option snippet of chart %s", p.Charts[i].ID)
		}
		js = append(js, j)
	}
	return drawn, js
}

// checkGolden compares got with testdata/name (rewritten with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking the diff)", golden)
	}
}

// rowRE matches a dataset row or a [x, y] value spread over lines by
// json.Indent, to put it back on one line.
var rowRE = regexp.MustCompile(`\[\n\s+(-?[0-9.e+-]+|null)((?:,\n\s+(?:-?[0-9.e+-]+|null))+)\n\s+\]`)

func oneLineRows(b []byte) []byte {
	return rowRE.ReplaceAllFunc(b, func(m []byte) []byte {
		f := bytes.Fields(bytes.Trim(m, "[]"))
		return append(append([]byte("["), bytes.Join(f, []byte(" "))...), ']')
	})
}

// TestReportData checks the data embedded in the report of the fixture
// against testdata/report-data.golden and the charts' options against
// testdata/report-charts.golden (rewrite both with -update after checking),
// and the values that matter against the fixture's known truth.
func TestReportData(t *testing.T) {
	path := fixtureDB(t)
	_, html := renderFile(t, path)
	raw := embeddedData(t, html)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", " "); err != nil {
		t.Fatalf("embedded data is not JSON: %v", err)
	}
	checkGolden(t, "report-data.golden", pretty.Bytes())

	cs, opts := reportCharts(t, path, html)
	var all bytes.Buffer
	for i, j := range opts {
		var one bytes.Buffer
		if err := json.Indent(&one, j, "", " "); err != nil {
			t.Fatalf("chart %s option is not JSON: %v", cs[i].ID, err)
		}
		fmt.Fprintf(&all, "chart %s\n%s\n", cs[i].ID, oneLineRows(one.Bytes()))
	}
	checkGolden(t, "report-charts.golden", all.Bytes())

	var d struct {
		StartMs int64    `json:"start_ms"`
		Events  eventLog `json:"events"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	if d.StartMs != fixtureStart.UnixMilli() {
		t.Errorf("start_ms %d, want %d", d.StartMs, fixtureStart.UnixMilli())
	}
	var ids []string
	byID := map[string]*chartOption{}
	for i, c := range cs {
		ids = append(ids, c.ID)
		if c.Unit == "" || c.Basis == "" {
			t.Errorf("chart %s does not state its unit and basis", c.ID)
		}
		if c.Bucket != 0 {
			t.Errorf("chart %s of a 2-minute run is bucketed (%v s)", c.ID, c.Bucket)
		}
		var o chartOption
		if err := json.Unmarshal(opts[i], &o); err != nil {
			t.Fatal(err)
		}
		if len(o.YAxis) != 1 || o.YAxis[0].Name != c.Unit {
			t.Errorf("chart %s Y axis %+v, want one named %q", c.ID, o.YAxis, c.Unit)
		}
		byID[c.ID] = &o
	}
	if got := strings.Join(ids, ","); got != "msgs,rss,cpu,lat_p50,lat_p99,heap,goroutines,reconnects,host_cpu,host_load" {
		t.Errorf("chart ids %s", got)
	}
	if got := strings.Join(byID["msgs"].lines(), ","); got != "gorilla,gobwas,gws" {
		t.Errorf("msgs chart lines %s, want one per library in the report order gorilla,gobwas,gws", got)
	}
	if got := strings.Join(byID["host_cpu"].lines(), ","); got != "steal,iowait,busy" {
		t.Errorf("host_cpu chart lines %s", got)
	}
	ms := func(sec float64) float64 { return float64(fixtureStart.UnixMilli()) + sec*1000 }
	at := func(chart, name string, sec float64) (float64, bool) {
		ps := byID[chart].points(name)
		if ps == nil {
			t.Fatalf("no series %s in chart %s", name, chart)
		}
		for _, p := range ps {
			if p[0] == ms(sec) {
				return p[1], true
			}
		}
		return 0, false
	}
	if v, ok := at("msgs", "gorilla", 77); !ok || v != 9000 {
		t.Errorf("msgs/s spike at 77 s: %v %v, want 9000", v, ok)
	}
	if v, ok := at("msgs", "gobwas", 50); !ok || !math.IsNaN(v) {
		t.Errorf("gobwas's missing seconds 50–54 do not break its line: %v %v", v, ok)
	}
	if v, ok := at("lat_p50", "gws", 41); !ok || !math.IsNaN(v) {
		t.Errorf("gws's second without messages has a latency: %v %v", v, ok)
	}
	if v, ok := at("rss", "gobwas", 100); !ok || v != 18 { // 15 + 2 (third written) + 100 × 0.01
		t.Errorf("gobwas RSS at 100 s: %v MB, want 18", v)
	}
	// Goroutines are flat per library, and gobwas misses 50–54: only the
	// ends of the three runs of equal rows are kept.
	var xs []float64
	for _, p := range byID["goroutines"].points("gorilla") {
		xs = append(xs, p[0])
	}
	if want := []float64{ms(1), ms(49), ms(50), ms(54), ms(55), ms(120)}; !slices.Equal(xs, want) {
		t.Errorf("goroutines rows at %v, want the ends of the runs %v (the drain's seconds 121–122 not drawn)", xs, want)
	}
	// The last rows of every chart are the window's: none after second 120
	// (the drain, where nothing was sent), and the messages of its last
	// second are what was received, not 0.
	for id, o := range byID {
		for _, name := range o.lines() {
			ps := o.points(name)
			if len(ps) == 0 || ps[len(ps)-1][0] > ms(120) {
				t.Errorf("chart %s line %s: rows after the window (last at %v)", id, name, ps[len(ps)-1][0])
			}
		}
	}
	if v, ok := at("msgs", "gorilla", 120); !ok || v != 2200 {
		t.Errorf("msgs/s at the window's last second: %v %v, want 2200", v, ok)
	}
	kinds := map[string]int{}
	for _, s := range byID["reconnects"].Series {
		if s.Type != "scatter" {
			continue
		}
		for _, m := range s.Data {
			kinds[s.Name]++
			if s.Name == "reconnect" && (m.Name != "gws" || m.Value[1] != 1 || m.Value[0] != ms(41.3)) {
				t.Errorf("reconnect marker %+v, want on gws's line at 41.3 s, y=1", m)
			}
		}
	}
	for _, k := range []string{"reconnect", "stall", "fault", "worker restart", "worker exit", "outage"} {
		if kinds[k] != 1 {
			t.Errorf("%d %q markers, want 1", kinds[k], k)
		}
	}
	if d.Events.Total != 8 || d.Events.Shown != 8 {
		t.Errorf("event log total %d shown %d, want 8 and 8", d.Events.Total, d.Events.Shown)
	}
}

// TestReportPage checks the HTML around the data: header, escaping, the
// reference table's marks, the tables, and that nothing is loaded from
// elsewhere.
func TestReportPage(t *testing.T) {
	_, html := renderFile(t, fixtureDB(t))
	page := string(html)
	for _, want := range []string{
		"soak report: fixture", "ws://127.0.0.1:9443", "kvm-clock", "2026-11-01 12:00:00 UTC", "Test CPU", "6.1.0-test", "go1.26.8",
		"example.com/gws", "v1.2.3", "<td><code>GOMAXPROCS=2 GOGC=100 GOMEMLIMIT=off</code></td>", "20s/1m0s", "16777216 bytes", "4096 131072 6291456", "<details>",
		"&lt;script&gt;alert(1)&lt;/script&gt; stays text", // the profile text is escaped
		`id="chart-msgs"`, `id="chart-host_load"`,
		"Fault outcomes", "reset", // the fault's kind
		// gws after the fault: 1 disconnect, 1 reconnect of 1.1 s, 3 lost; the others nothing.
		`<tr><td>reset</td><td>gws</td><td class="n">1</td><td class="n">1</td><td class="n">1</td><td class="n">1.1 s / 1.1 s</td><td class="n">0</td><td class="n bad">3</td></tr>`,
		`<tr><td>reset</td><td>gorilla</td><td class="n">1</td><td class="n">0</td><td class="n">0</td><td class="n">- / -</td><td class="n">0</td><td class="n">0</td></tr>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>alert(1)") {
		t.Error("profile text is not escaped")
	}
	for _, bad := range []string{"src=\"http", "href=\"http", "@import", "src=\"//", "<link "} {
		if strings.Contains(page, bad) {
			t.Errorf("page refers to something outside itself: %q", bad)
		}
	}
	// Outside the inlined echarts (which names the SVG namespace), the page
	// names no URL at all: no CDN, no go-echarts asset host.
	if n := strings.Count(page, echartsJS); n != 1 {
		t.Errorf("echarts inlined %d times, want once", n)
	}
	own := strings.Replace(page, echartsJS, "", 1)
	for _, bad := range []string{"http:", "https:", "//cdn", "cdn.", "go-echarts.github.io", "<script src", "__f__"} {
		if strings.Contains(own, bad) {
			t.Errorf("page (echarts aside) contains %q", bad)
		}
	}
	if n := strings.Count(page, "soak.draw("); n != 10 {
		t.Errorf("%d chart snippets, want 10", n)
	}
	// One ★, earned: gws's CPU is 2 % every second against 3 and 4 %. No
	// ★ on a row never ranked (messages, msgs/s), however its numbers
	// differ; the check rows say ✓ or ✗.
	if n := strings.Count(page, `<td class="best">★`); n != 2 || !strings.Contains(page, `<td class="best">★ 2.0 %</td><td class="call">★ gws</td>`) {
		t.Errorf("%d ★ in the reference table, want gws's on CPU (and on latency: 3.0 ms a second against 3.1 and 3.2)", n)
	}
	for _, row := range []string{"<th>Messages / data</th>", "<th>Avg / peak msgs/s</th>"} {
		i := strings.Index(page, row)
		if j := strings.Index(page[i:], "</tr>"); i < 0 || strings.Contains(page[i:i+j], "★") || !strings.Contains(page[i:i+j], `<td class="call"></td>`) {
			t.Errorf("row %s: a ★ or a call on a row never ranked", row)
		}
	}
	if !strings.Contains(page, `<tr class="check"><th>Seconds missing</th>`) || !strings.Contains(page, `<td class="call bad" title="gobwas: 5 (outage at 110 s: 1.5 s)">✗</td>`) {
		t.Error("seconds missing is not a check row with its ✗")
	}
	if !strings.Contains(page, `<p class="headline">✗ 2 checks failed: Lost while connected (library / source) (gws), Seconds missing (gobwas)</p>`) {
		t.Error("the failed checks are not named at the top")
	}
	// Lost: gws lost 3 ids on btcusdt@trade; the others 0: gws's cell shows "+3 ids".
	if !strings.Contains(page, "<small>&#43;3 ids</small>") { // html/template writes + as &#43;
		t.Error("lost row lacks gws's delta against the best (0)")
	}
	if !strings.Contains(page, `class="n short">1,197`) {
		t.Error("gws's short subscription (1,197 of 1,200 messages) is not highlighted")
	}
}

// longRunDB writes a 6,000 s run of one library (longer than 2×maxBuckets
// seconds, so it is bucketed) with a one-second spike at 1234 s, a dip at
// 4321 s, a 100 s gap at 3000 s, a host steal spike at 2222 s, and no event.
func longRunDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const secs = 6000
	if err := db.CreateRun(store.Run{ID: "long", Name: "long", Target: "x", Started: fixtureStart, Planned: secs * time.Second,
		Status: "running"}); err != nil {
		t.Fatal(err)
	}
	if err := db.UpsertWorker(store.Worker{Lib: "gorilla"}); err != nil {
		t.Fatal(err)
	}
	b := &store.Batch{}
	for sec := int64(1); sec <= secs; sec++ {
		if sec >= 3000 && sec < 3100 {
			continue // a gap longer than a bucket
		}
		msgs := int64(500 + sec%7)
		switch sec {
		case 1234:
			msgs = 99999 // a one-second spike
		case 4321:
			msgs = 1 // a one-second dip
		}
		b.Samples = append(b.Samples, store.Sample{Lib: "gorilla", Sec: sec, TS: fixtureStart.Add(time.Duration(sec) * time.Second),
			HasWorker: true, Msgs: msgs, MsgsTotal: sec * 500, HasProc: true, RSS: 1e7})
		steal := 1.0
		if sec == 2222 {
			steal = 50 // a one-second steal spike
		}
		b.Host = append(b.Host, store.HostSample{Sec: sec, TS: fixtureStart.Add(time.Duration(sec) * time.Second), StealPct: steal, Load1: 1})
	}
	if err := db.Write(b); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path
}

// TestReportBucketsLongRun renders a run longer than 2×maxBuckets seconds:
// the charts are bucketed, the spike and the dip survive, a gap stays a
// gap, and no series exceeds 2×maxBuckets points (plus gap markers).
func TestReportBucketsLongRun(t *testing.T) {
	path := longRunDB(t)
	_, html := renderFile(t, path)
	cs, opts := reportCharts(t, path, html)
	var msgs, host chartOption
	if err := json.Unmarshal(opts[0], &msgs); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(opts[len(opts)-2], &host); err != nil {
		t.Fatal(err)
	}
	if c := cs[0]; c.ID != "msgs" || c.Bucket != 6 {
		t.Fatalf("first chart %s bucket %v s, want msgs in 6 s buckets", c.ID, c.Bucket)
	}
	ps := msgs.points("gorilla")
	if len(ps) > 2*(maxBuckets+1) {
		t.Errorf("%d points, want at most %d", len(ps), 2*(maxBuckets+1))
	}
	start := float64(fixtureStart.UnixMilli())
	var hi, lo = 0.0, math.Inf(1)
	gap := false
	for _, p := range ps {
		if math.IsNaN(p[1]) {
			if sec := (p[0] - start) / 1000; sec >= 3000 && sec < 3100 {
				gap = true
			}
			continue
		}
		hi, lo = max(hi, p[1]), min(lo, p[1])
	}
	if hi != 99999 || lo != 1 {
		t.Errorf("bucketed series max %v min %v, want the spike 99999 and the dip 1", hi, lo)
	}
	if !gap {
		t.Error("the 100 s gap does not break the bucketed line")
	}
	var steal float64
	for _, p := range host.points("steal") {
		if !math.IsNaN(p[1]) {
			steal = max(steal, p[1])
		}
	}
	if c := cs[len(cs)-2]; c.ID != "host_cpu" || c.Bucket != 6 || steal != 50 {
		t.Errorf("host chart %s bucket %v s, steal max %v: want host_cpu in 6 s buckets keeping the spike 50", c.ID, c.Bucket, steal)
	}
}

// TestEchartsAsset checks the vendored echarts against the checksums that
// scripts/update-echarts.sh recorded, and that its license travels with it.
func TestEchartsAsset(t *testing.T) {
	sums, err := os.ReadFile(filepath.Join("assets", "echarts.sha256"))
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("bad checksum line %q", line)
		}
		b, err := os.ReadFile(filepath.Join("assets", f[1]))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != f[0] {
			t.Errorf("%s: sha256 %s, recorded %s (run scripts/update-echarts.sh)", f[1], got, f[0])
		}
		seen++
	}
	if seen != 3 {
		t.Errorf("%d files checksummed, want echarts.min.js, LICENSE and NOTICE", seen)
	}
	v := strings.TrimSpace(echartsVersion)
	if !strings.HasPrefix(v, "5.") || !strings.Contains(echartsJS, `version="`+v+`"`) {
		t.Errorf("embedded echarts does not declare the recorded version %q", v)
	}
}

// TestMarkerStyles: every marker group has a style (a group without one
// would not be drawn).
func TestMarkerStyles(t *testing.T) {
	for kind, group := range markerKinds {
		if !slices.ContainsFunc(markerStyles, func(s markerStyle) bool { return s.kind == group }) {
			t.Errorf("event kind %s: marker group %q has no style in markerStyles", kind, group)
		}
	}
}
