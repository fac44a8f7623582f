package report

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wssoak/wssoak/internal/store"
)

// chromiumPath finds Debian's chromium (installed by .ci/run).
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestReportInBrowser opens reports from file:// in headless Chromium with
// networking disabled, and asserts that every chart drew (colored pixels
// inside its plot area, and as many points as the data holds), that the
// page asked for nothing over the network and that the console shows no
// error: the fixture (every point drawn; also zoom and the event filter)
// and a long run (bucketed, no event at all), and a run without data yet.
// On the fixture it also shows an axis and a marker tooltip (the formatters
// the options name).
func TestReportInBrowser(t *testing.T) {
	bin := chromiumPath()
	if bin == "" {
		t.Skip("chromium not installed (apt-get install chromium; .ci/run installs it): browser test skipped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b := startBrowser(ctx, t, bin)

	t.Run("fixture", func(t *testing.T) {
		s := openReport(ctx, t, b, fixtureDB(t))

		// The tooltips' formatters (page.js helpers named by the options):
		// the axis tooltip at the spike, and a marker's.
		const tips = `new Promise(done => {
		  soakCharts.msgs.dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: 76});
		  soakCharts.reconnects.dispatchAction({type: 'showTip', seriesIndex: 3, dataIndex: 0});
		  requestAnimationFrame(() => requestAnimationFrame(() => done(JSON.stringify(
		    ['msgs', 'reconnects'].map(id => document.getElementById('chart-' + id).innerText)))));
		})`
		var tipText [2]string
		if err := b.eval(ctx, s, tips, &tipText); err != nil {
			t.Fatal(err)
		}
		for i, want := range [][]string{
			{"2026-11-01 12:01:17 UTC (+00:01:17)", "gorilla: 9,000 msgs/s", "gws: 9,000 msgs/s"},
			{"reconnect · gws", "2026-11-01 12:00:41 UTC (+00:00:41)"},
		} {
			for _, w := range want {
				if !strings.Contains(tipText[i], w) {
					t.Errorf("tooltip %q lacks %q", tipText[i], w)
				}
			}
		}

		// Zoom one chart: every other follows (echarts.connect).
		const zoom = `(() => {
		  soakCharts.msgs.dispatchAction({type: 'dataZoom', start: 20, end: 40});
		  return JSON.stringify(Object.entries(soakCharts).map(([id, c]) => [id, c.getOption().dataZoom[0].start, c.getOption().dataZoom[0].end]));
		})()`
		var zooms [][3]any
		if err := b.eval(ctx, s, zoom, &zooms); err != nil {
			t.Fatal(err)
		}
		for _, z := range zooms {
			if z[1] != 20.0 || z[2] != 40.0 {
				t.Errorf("chart %v zoom %v–%v after zooming msgs to 20–40 %%: not synchronised", z[0], z[1], z[2])
			}
		}

		// The event log lists every event; the library filter narrows it.
		const filter = `(() => {
		  const all = document.querySelectorAll('#ev-body tr').length;
		  const sel = document.getElementById('ev-lib');
		  sel.value = 'gws'; sel.dispatchEvent(new Event('change'));
		  const gws = document.querySelectorAll('#ev-body tr').length;
		  const kinds = document.getElementById('ev-kind').options.length - 1;
		  return JSON.stringify([all, gws, kinds]);
		})()`
		var rows [3]int
		if err := b.eval(ctx, s, filter, &rows); err != nil {
			t.Fatal(err)
		}
		if rows != [3]int{8, 3, 8} {
			t.Errorf("event log rows all/gws/kinds = %v, want [8 3 8]", rows)
		}
		// At 1400 × 1000 the report opens with the answer: the summary,
		// the checks and the comparison table begin on the first screen;
		// the run, the host and the settings follow, collapsed.
		const screen = `JSON.stringify({h: window.innerHeight, w: window.innerWidth,
		  summary: document.getElementById('summary').getBoundingClientRect().top,
		  checks: document.querySelector('#summary table.checks').getBoundingClientRect().top,
		  table: document.getElementById('table').getBoundingClientRect().top,
		  run: document.getElementById('run').getBoundingClientRect().top,
		  runOpen: document.querySelector('#run > details').open})`
		var at struct {
			H, W                        int
			Summary, Checks, Table, Run float64
			RunOpen                     bool
		}
		if err := b.eval(ctx, s, screen, &at); err != nil {
			t.Fatal(err)
		}
		if at.W != 1400 || at.H < 900 || at.Summary >= 1000 || at.Checks >= 1000 || at.Table >= 1000 || at.Run < at.Table || at.RunOpen {
			t.Errorf("first screen %d × %d: summary at %.0f px, checks at %.0f, comparison at %.0f, run at %.0f (open %v); "+
				"want the summary, the checks and the comparison within the first 1000 px, the run after them, collapsed",
				at.W, at.H, at.Summary, at.Checks, at.Table, at.Run, at.RunOpen)
		}
		// No line drops to 0 after the window: each chart's last row is
		// the window's last second or before, and the messages of that
		// second are what every column received, not 0.
		const ends = `JSON.stringify(Object.entries(soakCharts).map(([id, c]) => {
		  const src = c.getOption().dataset[0].source;
		  return [id, src.length ? src[src.length - 1] : []];
		}))`
		var last [][2]json.RawMessage
		if err := b.eval(ctx, s, ends, &last); err != nil {
			t.Fatal(err)
		}
		end := float64(fixtureStart.Add(120 * time.Second).UnixMilli())
		for _, l := range last {
			var id string
			var row []*float64
			if json.Unmarshal(l[0], &id) != nil || json.Unmarshal(l[1], &row) != nil || len(row) == 0 {
				t.Errorf("chart %s: last row %s", l[0], l[1])
				continue
			}
			if *row[0] > end {
				t.Errorf("chart %s: a row %.0f ms after the window's end", id, *row[0]-end)
			}
			if id == "msgs" {
				for i, v := range row[1:] {
					if v == nil || *v == 0 {
						t.Errorf("msgs chart line %d drops to %v at its last row", i, v)
					}
				}
			}
		}
		for _, p := range b.problems(s) {
			t.Errorf("browser: %s", p)
		}
	})

	t.Run("long run", func(t *testing.T) {
		s := openReport(ctx, t, b, longRunDB(t))
		for _, p := range b.problems(s) {
			t.Errorf("browser: %s", p)
		}
	})

	// A bench (and a sweep): every bar chart drew its bars and each
	// library's whiskers (soak.whisker made a graphic per point), the sweep
	// its lines.
	for _, sweep := range []string{"", "300..30000"} {
		t.Run("bench "+sweep, func(t *testing.T) {
			s := openBench(ctx, t, b, benchDB(t, sweep))
			for _, p := range b.problems(s) {
				t.Errorf("browser: %s", p)
			}
		})
	}

	// A run that has just started: charts without rows still come up
	// (empty datasets), without an error.
	t.Run("no data yet", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "soak.db")
		db, err := store.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.CreateRun(store.Run{ID: "new", Name: "new", Target: "x", Started: fixtureStart, Planned: time.Hour, Status: "running"}); err != nil {
			t.Fatal(err)
		}
		if err := db.UpsertWorker(store.Worker{Lib: "gorilla"}); err != nil {
			t.Fatal(err)
		}
		db.Close()
		s := openReport(ctx, t, b, path)
		for _, p := range b.problems(s) {
			t.Errorf("browser: %s", p)
		}
	})
}

// openReport renders the database at dbPath, opens the report in a new tab
// and checks its charts against its embedded data; it returns the tab's
// session.
func openReport(ctx context.Context, t *testing.T, b *browser, dbPath string) string {
	t.Helper()
	htmlPath, html := renderFile(t, dbPath)
	cs, opts := reportCharts(t, dbPath, html)
	type want struct {
		id    string
		lines []string
		rows  int
	}
	var wants []want
	for i, c := range cs {
		var o chartOption
		if err := json.Unmarshal(opts[i], &o); err != nil {
			t.Fatal(err)
		}
		wants = append(wants, want{c.ID, o.lines(), len(o.Dataset[0].Source)})
	}
	s, err := b.newPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable", "Network.enable"} {
		if _, err := b.call(ctx, s, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.call(ctx, s, "Page.navigate", map[string]any{"url": "file://" + htmlPath}); err != nil {
		t.Fatal(err)
	}
	if err := b.waitEvent(ctx, s, "Page.loadEventFired"); err != nil {
		t.Fatal(err)
	}

	// Each chart: its plot rectangle (grid), colored pixels inside it, and
	// the points echarts holds per series. Two animation frames first, so
	// that zrender has painted.
	const probe = `new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
	  const out = {charts: {}, plots: document.querySelectorAll('.plot').length};
	  for (const [id, c] of Object.entries(window.soakCharts || {})) {
	    const el = document.getElementById('chart-' + id);
	    const canvas = el.querySelector('canvas');
	    const r = c.getModel().getComponent('grid').coordinateSystem.getRect();
	    const k = canvas.width / el.clientWidth;
	    const img = canvas.getContext('2d').getImageData(Math.round(r.x * k), Math.round(r.y * k), Math.round(r.width * k), Math.round(r.height * k)).data;
	    let colored = 0, painted = 0;
	    for (let i = 0; i < img.length; i += 4) {
	      if (img[i + 3] === 0) continue;
	      painted++;
	      if (Math.max(img[i], img[i + 1], img[i + 2]) - Math.min(img[i], img[i + 1], img[i + 2]) > 60) colored++;
	    }
	    out.charts[id] = {colored, painted, group: c.group,
	      counts: c.getModel().getSeries().filter(s => s.subType === 'line').map(s => s.getData().count())};
	  }
	  done(JSON.stringify(out));
	})))`
	var res struct {
		Plots  int `json:"plots"`
		Charts map[string]struct {
			Colored, Painted int
			Group            string
			Counts           []int
		} `json:"charts"`
	}
	if err := b.eval(ctx, s, probe, &res); err != nil {
		t.Fatal(err)
	}
	if res.Plots != len(wants) || len(res.Charts) != len(wants) {
		t.Errorf("%d plot containers and %d charts drawn, want %d (the charts built)", res.Plots, len(res.Charts), len(wants))
	}
	for _, c := range wants {
		got, ok := res.Charts[c.id]
		if !ok {
			t.Errorf("chart %s was not created", c.id)
			continue
		}
		if c.rows > 0 && got.Colored < 50 { // a chart without rows draws its axes only
			t.Errorf("chart %s: %d colored pixels in its plot area (%d painted): nothing drawn", c.id, got.Colored, got.Painted)
		}
		if got.Group != "soak" {
			t.Errorf("chart %s is not in the connected group", c.id)
		}
		if len(got.Counts) != len(c.lines) {
			t.Errorf("chart %s: %d line series, want %d", c.id, len(got.Counts), len(c.lines))
			continue
		}
		for i, name := range c.lines {
			if got.Counts[i] != c.rows {
				t.Errorf("chart %s series %s: echarts holds %d points, the dataset %d rows", c.id, name, got.Counts[i], c.rows)
			}
		}
	}
	return s
}

// openBench renders the bench database at dbPath, opens its page in a new
// tab and checks that each chart drew: colored pixels in its plot area,
// every bar and line point echarts holds, and a graphic for every whisker.
func openBench(ctx context.Context, t *testing.T, b *browser, dbPath string) string {
	t.Helper()
	htmlPath, html := renderFile(t, dbPath)
	ids, js := benchOptions(t, dbPath, html)
	type series struct {
		Type string
		Data []json.RawMessage
	}
	want := map[string][]series{}
	for i, j := range js {
		var o struct{ Series []series }
		if err := json.Unmarshal(j, &o); err != nil {
			t.Fatal(err)
		}
		want[ids[i]] = o.Series
	}
	s, err := b.newPage(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"Runtime.enable", "Log.enable", "Page.enable", "Network.enable"} {
		if _, err := b.call(ctx, s, m, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.call(ctx, s, "Page.navigate", map[string]any{"url": "file://" + htmlPath}); err != nil {
		t.Fatal(err)
	}
	if err := b.waitEvent(ctx, s, "Page.loadEventFired"); err != nil {
		t.Fatal(err)
	}
	const probe = `new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => {
	  const out = {charts: {}, plots: document.querySelectorAll('.plot').length};
	  for (const [id, c] of Object.entries(window.soakCharts || {})) {
	    const el = document.getElementById('chart-' + id);
	    const canvas = el.querySelector('canvas');
	    const r = c.getModel().getComponent('grid').coordinateSystem.getRect();
	    const k = canvas.width / el.clientWidth;
	    const img = canvas.getContext('2d').getImageData(Math.round(r.x * k), Math.round(r.y * k), Math.round(r.width * k), Math.round(r.height * k)).data;
	    let colored = 0;
	    for (let i = 0; i < img.length; i += 4) {
	      if (img[i + 3] !== 0 && Math.max(img[i], img[i + 1], img[i + 2]) - Math.min(img[i], img[i + 1], img[i + 2]) > 60) colored++;
	    }
	    out.charts[id] = {colored, series: c.getModel().getSeries().map(s => {
	      const d = s.getData();
	      let drawn = 0;
	      for (let i = 0; i < d.count(); i++) if (d.getItemGraphicEl(i)) drawn++;
	      return [s.subType, d.count(), drawn];
	    })};
	  }
	  done(JSON.stringify(out));
	})))`
	var res struct {
		Plots  int `json:"plots"`
		Charts map[string]struct {
			Colored int
			Series  [][3]any
		} `json:"charts"`
	}
	if err := b.eval(ctx, s, probe, &res); err != nil {
		t.Fatal(err)
	}
	if res.Plots != len(ids) || len(res.Charts) != len(ids) {
		t.Errorf("%d plot containers and %d charts drawn, want %d", res.Plots, len(res.Charts), len(ids))
	}
	for _, id := range ids {
		got, ok := res.Charts[id]
		if !ok {
			t.Errorf("chart %s was not created", id)
			continue
		}
		if got.Colored < 50 {
			t.Errorf("chart %s: %d colored pixels in its plot area: nothing drawn", id, got.Colored)
		}
		if len(got.Series) != len(want[id]) {
			t.Errorf("chart %s: %d series, want %d", id, len(got.Series), len(want[id]))
			continue
		}
		for i, w := range want[id] {
			g := got.Series[i]
			points := 0
			for _, d := range w.Data {
				if !strings.Contains(string(d), `"-"`) {
					points++
				}
			}
			if g[0] != w.Type || g[2] != float64(points) {
				t.Errorf("chart %s series %d: %v (type, points, drawn), want %s with %d drawn", id, i, g, w.Type, points)
			}
		}
	}
	return s
}

// browser is headless Chromium driven over the DevTools protocol.
type browser struct {
	t    testing.TB
	cmd  *exec.Cmd
	conn *websocket.Conn

	mu       sync.Mutex
	next     int
	pending  map[int]chan cdpMsg
	events   []cdpMsg
	eventsCh chan struct{}
	errs     map[string][]string // by session
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

var devtoolsRE = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// startBrowser starts Chromium with every network path closed: a proxy
// that refuses, a resolver that finds nothing, no background traffic.
func startBrowser(ctx context.Context, t *testing.T, bin string) *browser {
	t.Helper()
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--no-default-browser-check", "--disable-dev-shm-usage", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-extensions", "--disable-default-apps", "--metrics-recording-only", "--mute-audio",
		"--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--user-data-dir="+t.TempDir(), "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
		"--window-size=1400,1000", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its helpers die with it
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	b := &browser{t: t, cmd: cmd, pending: map[int]chan cdpMsg{}, eventsCh: make(chan struct{}, 1), errs: map[string][]string{}}
	t.Cleanup(b.close)
	found := make(chan string, 1)
	var logMu sync.Mutex
	var log strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := devtoolsRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	var wsURL string
	select {
	case wsURL = <-found:
	case <-ctx.Done():
		logMu.Lock()
		defer logMu.Unlock()
		t.Fatalf("chromium did not announce its DevTools endpoint:\n%s", log.String())
	}
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, wsURL, nil)
	if err != nil {
		t.Fatalf("connect to chromium: %v", err)
	}
	conn.SetReadLimit(64 << 20)
	b.conn = conn
	go b.read()
	return b
}

func (b *browser) read() {
	for {
		var m cdpMsg
		if err := b.conn.ReadJSON(&m); err != nil {
			b.mu.Lock()
			for id, ch := range b.pending {
				close(ch)
				delete(b.pending, id)
			}
			b.mu.Unlock()
			return
		}
		b.mu.Lock()
		if m.ID != 0 {
			if ch := b.pending[m.ID]; ch != nil {
				ch <- m
				delete(b.pending, m.ID)
			}
		} else {
			b.events = append(b.events, m)
			b.record(m)
			select {
			case b.eventsCh <- struct{}{}:
			default:
			}
		}
		b.mu.Unlock()
	}
}

// record keeps what counts as a problem: console errors, exceptions, error
// log entries, and any request that is not for a file: or data: URL.
func (b *browser) record(m cdpMsg) {
	switch m.Method {
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(m.Params, &p) == nil && (p.Type == "error" || p.Type == "assert" || p.Type == "warning") {
			b.errs[m.SessionID] = append(b.errs[m.SessionID], fmt.Sprintf("console.%s %v", p.Type, p.Args))
		}
	case "Runtime.exceptionThrown":
		b.errs[m.SessionID] = append(b.errs[m.SessionID], "exception: "+string(m.Params))
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level, Text, URL string
			} `json:"entry"`
		}
		if json.Unmarshal(m.Params, &p) == nil && (p.Entry.Level == "error" || p.Entry.Level == "warning") {
			b.errs[m.SessionID] = append(b.errs[m.SessionID], fmt.Sprintf("log %s: %s %s", p.Entry.Level, p.Entry.Text, p.Entry.URL))
		}
	case "Network.requestWillBeSent":
		var p struct {
			Request struct{ URL string } `json:"request"`
		}
		if json.Unmarshal(m.Params, &p) == nil && !strings.HasPrefix(p.Request.URL, "file:") && !strings.HasPrefix(p.Request.URL, "data:") {
			b.errs[m.SessionID] = append(b.errs[m.SessionID], "network request: "+p.Request.URL)
		}
	}
}

// problems returns what record kept for a tab.
func (b *browser) problems(session string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errs[session]...)
}

// call sends one command (to a page session, or the browser when session
// is "") and returns its result.
func (b *browser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	if params == nil {
		raw = nil
	}
	ch := make(chan cdpMsg, 1)
	b.mu.Lock()
	b.next++
	id := b.next
	b.pending[id] = ch
	err = b.conn.WriteJSON(cdpMsg{ID: id, Method: method, Params: raw, SessionID: session})
	b.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("%s: connection to chromium closed", method)
		}
		if m.Error != nil {
			return nil, fmt.Errorf("%s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		return m.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// newPage opens a tab and returns its session id.
func (b *browser) newPage(ctx context.Context) (string, error) {
	res, err := b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		return "", err
	}
	var tgt struct {
		TargetID string `json:"targetId"`
	}
	if err := json.Unmarshal(res, &tgt); err != nil {
		return "", err
	}
	res, err = b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": tgt.TargetID, "flatten": true})
	if err != nil {
		return "", err
	}
	var att struct {
		SessionID string `json:"sessionId"`
	}
	err = json.Unmarshal(res, &att)
	return att.SessionID, err
}

// waitEvent waits until an event named method has arrived for a tab.
func (b *browser) waitEvent(ctx context.Context, session, method string) error {
	for {
		b.mu.Lock()
		for _, e := range b.events {
			if e.Method == method && e.SessionID == session {
				b.mu.Unlock()
				return nil
			}
		}
		b.mu.Unlock()
		select {
		case <-b.eventsCh:
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w", method, ctx.Err())
		}
	}
}

// eval evaluates expr (a string, or a promise of one, holding JSON) in the
// page and decodes that JSON into out.
func (b *browser) eval(ctx context.Context, session, expr string, out any) error {
	res, err := b.call(ctx, session, "Runtime.evaluate", map[string]any{
		"expression": expr, "awaitPromise": true, "returnByValue": true})
	if err != nil {
		return err
	}
	var r struct {
		Result struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return err
	}
	if r.ExceptionDetails != nil {
		return fmt.Errorf("evaluate: %s", r.ExceptionDetails)
	}
	s, ok := r.Result.Value.(string)
	if !ok {
		return fmt.Errorf("evaluate: got %s %v, want a JSON string", r.Result.Type, r.Result.Value)
	}
	return json.Unmarshal([]byte(s), out)
}

// close ends Chromium: politely, then its whole process group.
func (b *browser) close() {
	if b.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = b.call(ctx, "", "Browser.close", nil)
		cancel()
		b.conn.Close()
	}
	done := make(chan error, 1)
	go func() { done <- b.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		if err := <-done; err != nil && !errors.Is(err, os.ErrProcessDone) {
			b.t.Logf("chromium: %v", err)
		}
	}
	// Helpers that outlived the browser process (same group) go too.
	_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
}
