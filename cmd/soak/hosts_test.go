package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
)

// TestHTTPPublicNeedsToken: -http-public without a token is refused before
// anything listens (exit code 2, saying how to give one); a short token
// likewise; the token never appears in the error.
func TestHTTPPublicNeedsToken(t *testing.T) {
	t.Setenv(tokenEnv, "")
	_, _, err := runSoak(t, "run", "-duration", "1s", "-http", "0.0.0.0:0", "-http-public", "-out", t.TempDir())
	if err == nil || exitCode(err, io.Discard) != 2 || !strings.Contains(err.Error(), "-http-token-file") || !strings.Contains(err.Error(), tokenEnv) {
		t.Errorf("-http-public without a token: %v", err)
	}
	t.Setenv(tokenEnv, "shortsecret")
	_, _, err = runSoak(t, "run", "-duration", "1s", "-http", "0.0.0.0:0", "-http-public", "-out", t.TempDir())
	if err == nil || exitCode(err, io.Discard) != 2 || strings.Contains(err.Error(), "shortsecret") {
		t.Errorf("a short token: %v", err)
	}
	for _, args := range [][]string{{"-metrics-only"}, {"-http-token-file", "x"}, {"-http-public"}} {
		_, _, err = runSoak(t, append([]string{"run", "-duration", "1s", "-out", t.TempDir()}, args...)...)
		if err == nil || exitCode(err, io.Discard) != 2 || !strings.Contains(err.Error(), "give -http") {
			t.Errorf("%v without -http: %v", args, err)
		}
	}
}

// TestHTTPToken: a run whose live view has a token (from a file) answers
// 401 without it and serves /metrics with it; the token is in no output,
// log or file of the run.
func TestHTTPToken(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	const token = "tok-3f9a1c7e5b2d4086"
	dir := t.TempDir()
	tokenFile := writeProfile(t, dir, "token", token+"\n")
	out := filepath.Join(dir, "out")
	cmd, addr, stdout, stderr := startLiveRun(t, "-duration", "3s", "-libs", "gorilla", "-out", out, "-http", "127.0.0.1:0",
		"-http-token-file", tokenFile, "-linger", "0", "-v")
	defer cmd.Process.Kill()
	base := "http://" + addr
	get := func(auth string) int {
		req, _ := http.NewRequest("GET", base+"/metrics", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", code)
	}
	if code := get("Bearer " + token); code != http.StatusOK {
		t.Errorf("with the token: %d, want 200", code)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("soak run: %v\n%s", err, stderr.String())
	}
	for what, text := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String()} {
		if strings.Contains(text, token) {
			t.Errorf("%s shows the token", what)
		}
	}
	if !strings.Contains(stderr.String(), `auth="bearer token"`) {
		t.Errorf("the log does not say the live view has a token:\n%s", stderr.String())
	}
	err := filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), token) {
			t.Errorf("%s holds the token", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestRunDir: -dir makes the run in DIR itself; the same command again
// refuses a DIR whose run ended (exit code 2: a service must not start
// another run in its place); a DIR whose run never recorded its end is
// resumed (here too late: its window is over, which the resume says).
func TestRunDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	tmp := t.TempDir()
	prof := writeProfile(t, tmp, "svc.yaml", "name: svc\nduration: 1s\nwarmup: 1s\nlibraries: [gorilla]\nsymbols: [btcusdt]\n")
	dir := filepath.Join(tmp, "svc", "run")
	args := []string{"run", "-dir", dir, "-profile", prof, "-label", "region=fra"}
	if _, stderr, err := runSoak(t, args...); err != nil {
		t.Fatalf("first run: %v\n%s", err, stderr)
	}
	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.Run()
	db.Close()
	if err != nil || run.Status != "done" || run.Settings["labels"] != `{"region":"fra"}` {
		t.Fatalf("the run in -dir: %+v, %v", run, err)
	}
	_, _, err = runSoak(t, args...)
	if err == nil || exitCode(err, io.Discard) != 2 || !strings.Contains(err.Error(), "ended (done)") {
		t.Errorf("again on an ended run: %v", err)
	}
	// A crash: the run recorded as running, owned by no process.
	rw, err := store.Open(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := rw.ReopenRun("running"); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	stdout, _, err := runSoak(t, args...)
	if !strings.Contains(stdout, "resuming "+dir) || err == nil || !strings.Contains(err.Error(), "nothing is left to run") {
		t.Errorf("a crashed run in -dir: stdout %q, err %v; want it resumed, and told its window is over", stdout, err)
	}
	for _, bad := range [][]string{{"-out", "x"}, {"-resume", dir}} {
		_, _, err := runSoak(t, append([]string{"run", "-dir", dir}, bad...)...)
		if err == nil || exitCode(err, io.Discard) != 2 {
			t.Errorf("-dir with %v: %v", bad, err)
		}
	}
}

// TestReportRuns: soak report over three run directories, two of one
// profile (labelled as two hosts) and one of another: one page, the odd run
// warned about on stderr and marked in the page, each column's percentiles
// those recomputed from its stored minute digests, and the merged row over
// the two runs of the profile; -strict refuses the odd run (exit 2). soak
// export of the three writes one CSV per table with run and host columns.
func TestReportRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("three real runs")
	}
	t.Parallel()
	tmp := t.TempDir()
	hosts := writeProfile(t, tmp, "hosts.yaml", "name: hosts\nduration: 2s\nwarmup: 1s\nlibraries: [gorilla, gws]\nsymbols: [btcusdt]\nreplay:\n  speed: 5\n")
	other := writeProfile(t, tmp, "other.yaml", "name: other\nduration: 2s\nwarmup: 1s\nlibraries: [gorilla]\nsymbols: [btcusdt]\n")
	var dirs []string
	for i, args := range [][]string{{"-profile", hosts, "-label", "region=fra"}, {"-profile", hosts, "-label", "region=sgp"}, {"-profile", other}} {
		dir := filepath.Join(tmp, fmt.Sprint("run", i))
		if _, stderr, err := runSoak(t, append([]string{"run", "-dir", dir}, args...)...); err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, stderr)
		}
		dirs = append(dirs, dir)
	}
	page := filepath.Join(tmp, "runs.html")
	stdout, stderr, err := runSoak(t, append([]string{"report", "-o", page}, dirs...)...)
	if err != nil {
		t.Fatalf("soak report: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, page) || !strings.Contains(stderr, "warning:") || !strings.Contains(stderr, `profile "other", not "hosts"`) {
		t.Errorf("stdout %q, stderr %q: want the page and a warning on the odd run", stdout, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	html := string(b)
	for _, want := range []string{"region=fra", "region=sgp", "⚠ other profile", "unpaired", "all runs of hosts"} {
		if !strings.Contains(html, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	// Each column's percentiles, and the two hosts' runs merged, recomputed
	// from the stored digests.
	merged := map[string]*sampler.Digest{}
	for i, dir := range dirs {
		db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
		if err != nil {
			t.Fatal(err)
		}
		run, _ := db.Run()
		lat, err := report.RunLatency(db)
		db.Close()
		if err != nil || len(lat) == 0 {
			t.Fatalf("run %d: digests %v, %v", i, lat, err)
		}
		for col, d := range lat {
			s := d.Summary()
			row := fmt.Sprintf("<td>%s</td><td>%d</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>", col, s.Count,
				float64(s.P50)/1000, float64(s.P90)/1000, float64(s.P99)/1000, float64(s.P999)/1000, float64(s.Max)/1000)
			if !strings.Contains(html, row) {
				t.Errorf("run %s, %s: the page has no row %s", run.ID, col, row)
			}
			if i < 2 {
				if merged[col] == nil {
					merged[col] = sampler.NewDigest()
				}
				merged[col].Merge(d)
			}
		}
	}
	for col, d := range merged {
		s := d.Summary()
		row := fmt.Sprintf("<td><b>all runs of hosts</b></td><td>%s</td><td>%d</td><td>%.3f</td>", col, s.Count, float64(s.P50)/1000)
		if !strings.Contains(html, row) {
			t.Errorf("merged %s: the page has no row %s", col, row)
		}
	}
	_, _, err = runSoak(t, append([]string{"report", "-strict", "-o", filepath.Join(tmp, "strict.html")}, dirs...)...)
	if err == nil || exitCode(err, io.Discard) != 2 || !strings.Contains(err.Error(), "-strict") {
		t.Errorf("-strict with the odd run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "strict.html")); err == nil {
		t.Error("-strict refused, yet wrote its page")
	}

	csvDir := filepath.Join(tmp, "csv")
	if _, stderr, err := runSoak(t, append([]string{"export", "-dir", csvDir}, dirs...)...); err != nil {
		t.Fatalf("soak export of three runs: %v\n%s", err, stderr)
	}
	recs := readCSVFile(t, filepath.Join(csvDir, "samples.csv"))
	if recs[0][0] != "run" || recs[0][1] != "host" {
		t.Fatalf("samples.csv header %v", recs[0])
	}
	hostsSeen := map[string]bool{}
	for _, r := range recs[1:] {
		hostsSeen[r[1]] = true
	}
	if !hostsSeen["region=fra"] || !hostsSeen["region=sgp"] || len(hostsSeen) != 3 {
		t.Errorf("samples.csv hosts %v, want the three runs'", hostsSeen)
	}
}
