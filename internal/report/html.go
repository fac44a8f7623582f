package report

import (
	"bytes"
	"context"
	_ "embed" // the page template, its script and echarts
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/store"
)

// Options tune a report.
type Options struct {
	// Now stamps the page ("generated at"); zero = time.Now().
	Now time.Time
	// Verdicts, when the database has none stored, are shown instead
	// (checked now by a caller that may not write the database).
	Verdicts []store.Verdict
	// Baseline, when set, marks every column better, worse or = against
	// this one instead of the leader's ★ (Holm's correction).
	Baseline string
}

var (
	//go:embed assets/echarts.min.js
	echartsJS string
	//go:embed assets/echarts.version
	echartsVersion string
	//go:embed page.html
	pageHTML string
	//go:embed page.js
	pageJS string
	//go:embed page.css
	pageCSS string
)

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"utc": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	},
	"dur":  func(d time.Duration) string { return d.Round(time.Second).String() },
	"num":  func(n int64) string { return num(float64(n)) },
	"secs": func(s float64) string { return fmt.Sprintf("%.1f", s) },
	"ms":   func(v float64) string { return fmtMs(v) },
	"addf": func(a, b float64) float64 { return a + b },
	// cpus is CPU seconds, or "-" when none were measured (see measure.CPUSampled).
	"cpus": func(s float64) string {
		if math.IsNaN(s) || s < 0 {
			return notMeasured
		}
		return fmt.Sprintf("%.2f", s)
	},
	"mbf": func(b int64) float64 { return float64(b) / 1e6 },
}).Parse(pageHTML))

// Render writes the HTML report of the run in db to w. It only reads db, so
// it may run on a read-only connection while the run goes on.
//
// A bench's database (soak bench) is rendered as the bench page.
func Render(ctx context.Context, db *store.DB, w io.Writer, opts Options) error {
	if kind, err := db.Kind(); err != nil {
		return err
	} else if kind == store.KindBench {
		now := opts.Now
		if now.IsZero() {
			now = time.Now()
		}
		return renderBench(db, w, now)
	}
	p, err := build(db, opts.Verdicts, opts.Baseline)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(p.Data)
	if err != nil {
		return fmt.Errorf("encode report data: %w", err)
	}
	views, err := chartViews(p)
	if err != nil {
		return err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	return pageTmpl.Execute(w, struct {
		*page
		ChartViews     []chartView // p.Charts with their options
		Generated      time.Time
		MaxPoints      int
		MaxBuckets     int
		FaultWindow    time.Duration
		DataJSON       template.JS
		Echarts        template.JS
		EchartsVersion string
		Script         template.JS
		CSS            template.CSS
	}{p, views, now, 2 * maxBuckets, maxBuckets, faultWindow, template.JS(data), template.JS(echartsJS), strings.TrimSpace(echartsVersion), template.JS(pageJS), template.CSS(pageCSS)})
}

// WriteFile renders the database at dbPath (opened read-only) into htmlPath,
// atomically: a reader sees the old report or the new one, never half.
func WriteFile(ctx context.Context, dbPath, htmlPath string, opts Options) error {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	var buf bytes.Buffer
	if err := Render(ctx, db, &buf, opts); err != nil {
		return fmt.Errorf("render %s: %w", dbPath, err)
	}
	// A temporary file renamed over htmlPath (mode 0600; a symlink there is
	// replaced, not followed).
	if err := rundir.WriteFile(htmlPath, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

func fmtMs(v float64) string {
	if v == 0 || math.IsNaN(v) {
		return "-"
	}
	return dur(v)
}

// Refresh rewrites htmlPath from the database at dbPath every interval
// until ctx is done. It reads on its own read-only connection, so the run's
// writer is never blocked; a failed rewrite goes to onErr and the loop goes
// on (the previous report stays in place).
func Refresh(ctx context.Context, dbPath, htmlPath string, every time.Duration, onErr func(error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := WriteFile(ctx, dbPath, htmlPath, Options{}); err != nil && ctx.Err() == nil {
			onErr(err)
		}
	}
}
