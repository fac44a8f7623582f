package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/transport/proxytest"
	"github.com/wssoak/wssoak/internal/wire"
)

const crashProfile = `name: crash
duration: 6s
warmup: 1s
libraries: [gorilla, coder, gws]
symbols: [btcusdt, ethusdt]
replay:
  speed: 5
`

// children returns the pids whose parent is pid, from /proc.
func children(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procStat(p); ppid == pid {
			out = append(out, p)
		}
	}
	return out
}

// procStat returns a process's parent pid and state ("" when it is gone).
func procStat(pid int) (int, string) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, ""
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid, f[0]
}

// gone reports whether pid has exited (a zombie waiting for init counts).
func gone(pid int) bool {
	_, st := procStat(pid)
	return st == "" || st == "Z" || st == "X"
}

// startRun starts `soak run` as a separate process and waits until its run
// is recorded; it returns the process, the run directory and the window start.
func startRun(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, string, time.Time) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out := args[len(args)-1] // the -out directory: the last argument, or the one after -out
	if i := slices.Index(args, "-out"); i >= 0 && i+1 < len(args) {
		out = args[i+1]
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if dbs, _ := filepath.Glob(filepath.Join(out, "*", "soak.db")); len(dbs) == 1 {
			if db, err := store.OpenReadOnly(dbs[0]); err == nil {
				run, err := db.Run()
				db.Close()
				if err == nil {
					return cmd, &outb, filepath.Dir(dbs[0]), run.Started
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatalf("no run recorded after 20 s:\n%s", outb.String())
	return nil, nil, "", time.Time{}
}

// crashOnce starts a run, SIGKILLs the controller at start+at, and checks
// what it left: the children exit by themselves, the database opens and is
// intact, the table renders, and at most the last second is missing. It
// returns the run directory, the kill's second and the seconds missing.
func crashOnce(t *testing.T, at time.Duration) (string, int64, int64) {
	t.Helper()
	base := t.TempDir()
	prof := writeProfile(t, base, "crash.yaml", crashProfile)
	cmd, outb, dir, start := startRun(t, "run", "-profile", prof, "-out", filepath.Join(base, "out"))
	time.Sleep(time.Until(start.Add(at)))
	kids := children(t, cmd.Process.Pid)
	killAt := time.Now()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if len(kids) < 1 {
		t.Fatalf("no children seen before the kill:\n%s", outb.String())
	}
	// Children notice the controller's death (stdin EOF, PDEATHSIG) and exit.
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range kids {
		for !gone(k) {
			if time.Now().After(deadline) {
				syscall.Kill(k, syscall.SIGKILL)
				t.Fatalf("child %d still alive 10 s after the controller was killed", k)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	t.Logf("%d children gone %v after the kill", len(kids), time.Since(killAt).Round(time.Millisecond))

	path := filepath.Join(dir, "soak.db")
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	var check string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity_check: %q %v", check, err)
	}
	raw.Close()
	db, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatalf("open after crash: %v", err)
	}
	defer db.Close()
	tbl, err := measure.Summarize(db)
	if err != nil {
		t.Fatalf("summarize after crash: %v", err)
	}
	var txt bytes.Buffer
	report.WriteText(&txt, tbl)
	// soak report renders the crashed run's HTML report.
	html := filepath.Join(t.TempDir(), "report.html")
	if _, stderr, err := runSoak(t, "report", "-o", html, dir); err != nil {
		t.Errorf("soak report after the crash: %v\n%s", err, stderr)
	} else if fi, err := os.Stat(html); err != nil || fi.Size() < 10000 {
		t.Errorf("report.html after the crash: %v %v", fi, err)
	}
	killSec := int64(killAt.Sub(start) / time.Second)
	samples, err := db.Samples("")
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	for _, s := range samples {
		if s.HasWorker {
			last[s.Lib] = max(last[s.Lib], s.Sec)
		}
	}
	var missing int64
	for _, lib := range []string{"gorilla", "coder", "gws"} {
		if killSec >= 2 && !strings.Contains(txt.String(), lib) {
			t.Errorf("table lacks %s:\n%s", lib, txt.String())
		}
		missing = max(missing, killSec-last[lib])
	}
	if missing > 1 {
		t.Errorf("killed at %.3f s into the window (second %d): last rows %v: %d seconds missing, want at most 1",
			killAt.Sub(start).Seconds(), killSec, last, missing)
	}
	return dir, killSec, max(missing, 0)
}

// TestCrashSafety kills the controller with SIGKILL at random instants,
// from the warm-up to the end of the window (crashKills times; 10 with the
// soak build tag).
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	t.Parallel()
	var worst int64
	var dir string
	for i := range crashKills {
		at := time.Duration(rand.Int64N(int64(5500*time.Millisecond))) - 500*time.Millisecond
		var sec, miss int64
		dir, sec, miss = crashOnce(t, at)
		t.Logf("kill %d at %+.3f s (second %d): %d second(s) missing", i+1, at.Seconds(), sec, miss)
		worst = max(worst, miss)
	}
	t.Logf("%d kills: at most %d second(s) of samples missing", crashKills, worst)

	// Resumed only after its end: nothing left to run, the outage is recorded up to the end.
	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	run, _ := db.Run()
	last, _ := db.LastSec()
	db.Close()
	time.Sleep(time.Until(run.Started.Add(run.Planned)))
	if _, _, err := runSoak(t, "run", "-resume", dir); err == nil || !strings.Contains(err.Error(), "nothing is left to run") {
		t.Fatalf("resume after the end: %v", err)
	}
	db, err = store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	events, _ := db.Events("")
	var out []store.Event
	for _, e := range events {
		if e.Kind == wire.EventOutage {
			out = append(out, e)
		}
	}
	want := float64((run.Planned - time.Duration(last)*time.Second).Milliseconds())
	if len(out) != 1 || int64(out[0].Sec) != last || out[0].DurMs < want-5 || out[0].DurMs > want+5 {
		t.Errorf("outage events %+v: want one from second %d lasting %.0f ms (to the end)", out, last, want)
	}
}

// TestResumeAfterCrash: a run killed mid-window is resumed into the same
// database; it ends at its original end instant, status done, with an
// outage event from the last recorded second to the resume, shown in the
// table, and totals that continue.
func TestResumeAfterCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	t.Parallel()
	dir, killSec, _ := crashOnce(t, 2500*time.Millisecond)
	db0, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := db0.Run()
	lastBefore, _ := db0.LastSec()
	pre, _ := db0.LastSamples()
	preStreams, _ := db0.LatestStreamSamples()
	db0.Close()
	if before.Status != "running" {
		t.Fatalf("status after the crash %q, want running", before.Status)
	}

	resumeAt := time.Now()
	stdout, stderr, err := runSoak(t, "run", "-resume", dir)
	if err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, stdout, stderr)
	}
	db := openRun(t, filepath.Dir(dir))
	run, err := db.Run()
	if err != nil {
		t.Fatal(err)
	}
	if run.ID != before.ID || run.Status != "done" || !run.Started.Equal(before.Started) {
		t.Errorf("after resume: id %s status %q start %v; before: id %s start %v", run.ID, run.Status, run.Started, before.ID, before.Started)
	}
	end := run.Started.Add(run.Planned)
	if d := run.Ended.Sub(end); d < 0 || d > 15*time.Second {
		t.Errorf("ended %v after the original end instant, want the original window (+ drain)", d)
	}
	events, _ := db.Events("")
	var outages []store.Event
	for _, e := range events {
		if e.Kind == wire.EventOutage {
			outages = append(outages, e)
		}
	}
	if len(outages) != 1 {
		t.Fatalf("%d outage events, want 1", len(outages))
	}
	o := outages[0]
	wantDur := resumeAt.Sub(run.Started.Add(time.Duration(lastBefore) * time.Second))
	if o.Lib != "" || int64(o.Sec) != lastBefore || o.DurMs < float64(wantDur.Milliseconds()) || o.DurMs > float64((wantDur+2*time.Second).Milliseconds()) {
		t.Errorf("outage %+v: want run-wide, from second %d, %v long (+ startup)", o, lastBefore, wantDur)
	}
	if !strings.Contains(stdout, "outage at "+strconv.FormatInt(lastBefore, 10)+" s") {
		t.Errorf("the table does not show the outage:\n%s", stdout)
	}
	samples, _ := db.Samples("")
	for _, p := range pre {
		var after []store.Sample
		for _, s := range samples {
			if s.Lib == p.Lib && s.HasWorker && s.Sec > lastBefore {
				after = append(after, s)
			}
		}
		if len(after) == 0 {
			t.Errorf("%s: no rows after the resume", p.Lib)
			continue
		}
		if l := after[len(after)-1]; l.Sec < int64(run.Planned/time.Second) || l.MsgsTotal <= p.MsgsTotal {
			t.Errorf("%s: last row second %d total %d; before the crash second %d total %d", p.Lib, l.Sec, l.MsgsTotal, p.Sec, p.MsgsTotal)
		}
		if after[0].MsgsTotal < p.MsgsTotal {
			t.Errorf("%s: total fell from %d to %d across the resume", p.Lib, p.MsgsTotal, after[0].MsgsTotal)
		}
	}
	post, _ := db.LatestStreamSamples()
	preBy := map[string]int64{}
	for _, s := range preStreams {
		preBy[s.Lib+"/"+s.Stream] = s.MsgsTotal
	}
	for _, s := range post {
		if s.MsgsTotal <= preBy[s.Lib+"/"+s.Stream] {
			t.Errorf("%s %s: %d messages after resume, %d before", s.Lib, s.Stream, s.MsgsTotal, preBy[s.Lib+"/"+s.Stream])
		}
	}
	var plan struct {
		Slots []json.RawMessage `json:"slots"`
	}
	json.Unmarshal([]byte(run.Settings["plan"]), &plan)
	t.Logf("killed in second %d, last recorded %d, outage %.0f ms; %d slots", killSec, lastBefore, o.DurMs, len(plan.Slots))

	// A finished run cannot be resumed.
	if _, _, err := runSoak(t, "run", "-resume", dir); err == nil || !strings.Contains(err.Error(), `has status "done"`) {
		t.Errorf("resume of a finished run: %v", err)
	}
}

// TestResumeThroughProxy: a run through a proxy with a password stores the proxy masked;
// -resume reads the password again from the profile file, the resumed workers go through
// the proxy, and the password is still nowhere in the run directory or the output.
func TestResumeThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	t.Parallel()
	px, err := proxytest.Start("socks5", "soak", proxyPass, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer px.Close()
	base := t.TempDir()
	out := filepath.Join(base, "out")
	prof := writeProfile(t, base, "crash.yaml", crashProfile+"proxy: "+px.URL()+"\n")
	cmd, outb, dir, start := startRun(t, "run", "-profile", prof, "-out", out)
	time.Sleep(time.Until(start.Add(2 * time.Second)))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	before := px.TunnelsTotal()
	if before < 3 {
		t.Fatalf("%d tunnels before the crash, want one per slot and library", before)
	}
	stdout, stderr := resumeToEnd(t, dir)
	if after := px.TunnelsTotal(); after < 2*before {
		t.Errorf("%d tunnels after the resume, %d before: the resumed workers did not all go through the proxy", after, before)
	}
	if st := px.Stats(); st.Rejected != 0 {
		t.Errorf("the proxy rejected %d handshakes: the resumed run had the wrong password", st.Rejected)
	}
	checkNoSecret(t, out, stdout+outb.String(), stderr)
}

// resumeToEnd resumes the run in dir in-process, checks that it ran to its
// end (status done) and returns what it printed.
func resumeToEnd(t *testing.T, dir string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := runSoak(t, "run", "-resume", dir)
	if err != nil {
		t.Fatalf("resume: %v\n%s\n%s", err, stdout, stderr)
	}
	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := db.Run()
	db.Close()
	if err != nil || run.Status != "done" {
		t.Fatalf("after the resume: status %q, %v; want done", run.Status, err)
	}
	return stdout, stderr
}
