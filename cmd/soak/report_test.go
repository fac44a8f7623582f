package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/runner/outcome"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	older, newer := filepath.Join(out, "20261101-000000-a"), filepath.Join(out, "20261102-000000-b")
	for _, d := range []string{older, newer} {
		if _, _, err := runSoak(t, "synth", d, "-duration", "40m", "-symbols", "2"); err != nil {
			t.Fatal(err)
		}
	}

	// No argument: the latest run under -out. The synthetic run's profile
	// limits reconnects to 50 and it has 104 per library: exit code 3, and
	// the report shows the verdicts.
	stdout, stderr, err := runSoak(t, "report", "-out", out)
	var te outcome.ThresholdError
	if !errors.As(err, &te) || exitCode(err, io.Discard) != outcome.ExitThreshold {
		t.Fatalf("report: %v, want a threshold error (exit %d)\n%s", err, outcome.ExitThreshold, stderr)
	}
	if !strings.Contains(stdout, "threshold broken: gws max_reconnects: 104 reconnects > limit 50 reconnects") {
		t.Errorf("stdout does not name the broken threshold:\n%s", stdout)
	}
	html := filepath.Join(newer, "report.html")
	if !strings.Contains(stdout, "report: "+html) {
		t.Errorf("stdout %q does not name %s", stdout, html)
	}
	if _, err := os.Stat(filepath.Join(older, "report.html")); err == nil {
		t.Errorf("the older run got a report too")
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"soak report: synth", `id="chart-msgs"`, "Fault outcomes", "min and max per 3 s bucket",
		`<tr class="broken"><td>gws</td><td><code>max_reconnects</code></td><td>gws max_reconnects: 104 reconnects &gt; limit 50 reconnects</td><td>BROKEN</td></tr>`} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// A run directory, a database, and -o (flags after the argument too).
	if _, _, err := runSoak(t, "report", older); !errors.As(err, &te) {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(older, "report.html")); err != nil {
		t.Error(err)
	}
	dest := filepath.Join(dir, "elsewhere.html")
	if _, _, err := runSoak(t, "report", filepath.Join(older, "soak.db"), "-o", dest); !errors.As(err, &te) {
		t.Fatal(err)
	}
	if _, err := os.Stat(dest); err != nil {
		t.Error(err)
	}
	left, _ := filepath.Glob(filepath.Join(older, ".report.html.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no run", []string{"report", "-out", filepath.Join(dir, "none")}, "no run found under"},
		{"missing path", []string{"report", filepath.Join(dir, "nope")}, "no such file"},
		{"dir without db", []string{"report", dir}, "no soak.db in this directory"},
		// Two runs make the page over several runs, which takes no baseline.
		{"two arguments with a baseline", []string{"report", "-baseline", "gws", older, newer}, "a baseline is a column of one run"},
		{"two arguments, one missing", []string{"report", "-o", filepath.Join(dir, "x.html"), older, filepath.Join(dir, "nope")}, "no such file"},
		{"not a database", []string{"report", filepath.Join(older, "report.html")}, "open db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runSoak(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestRunWritesReport runs a short soak with report.every 1s: report.html
// appears while the run goes on (status running) and is rewritten at the
// end (status done).
func TestRunWritesReport(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "r.yaml", `name: r
duration: 6s
warmup: 1s
libraries: [gorilla, gws]
symbols: [btcusdt]
report:
  every: 1s
replay:
  speed: 5
`)
	out := filepath.Join(dir, "out")
	_, stdout, done := startSoak(t, "run", "-profile", prof, "-out", out)
	var during string
	deadline := time.After(30 * time.Second)
poll:
	for {
		select {
		case err := <-done:
			t.Fatalf("run ended (%v) before a report was written during it:\n%s", err, stdout.String())
		case <-deadline:
			t.Fatal("no report.html within 30 s")
		case <-time.After(100 * time.Millisecond):
			found, _ := filepath.Glob(filepath.Join(out, "*", "report.html"))
			if len(found) == 1 {
				b, err := os.ReadFile(found[0])
				if err == nil && len(b) > 0 {
					during = string(b)
					break poll
				}
			}
		}
	}
	if !strings.Contains(during, `class="status">running`) {
		t.Errorf("the report written during the run does not say running")
	}
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, stdout.String())
	}
	found, _ := filepath.Glob(filepath.Join(out, "*", "report.html"))
	if len(found) != 1 {
		t.Fatalf("report files %v", found)
	}
	b, err := os.ReadFile(found[0])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `class="status">done`) {
		t.Errorf("the final report does not say done")
	}
	if !strings.Contains(stdout.String(), "report: "+found[0]) {
		t.Errorf("stdout does not name the report:\n%s", stdout.String())
	}
}
