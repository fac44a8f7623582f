package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// startSoak starts this test binary as the soak command (see TestMain) and
// returns once it printed its first progress line.
func startSoak(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer, <-chan error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pr, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	progress := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			out.WriteString(sc.Text() + "\n")
			if !seen && strings.HasPrefix(sc.Text(), "[") {
				seen = true
				close(progress)
			}
		}
		_, _ = io.Copy(io.Discard, pr)
		done <- cmd.Wait()
	}()
	select {
	case <-progress:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no progress line; stderr:\n%s", stderr.String())
	}
	return cmd, &out, done
}

const signalProfile = `name: sig
duration: 10m
warmup: 1s
libraries: [gorilla, gws]
symbols: [btcusdt]
`

// TestInterrupt: the first SIGINT stops the workers, flushes, closes the
// database and prints the table; exit code 4 (interrupted).
func TestInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "sig.yaml", signalProfile)
	cmd, out, done := startSoak(t, "run", "-profile", prof, "-out", dir) // the first progress line comes at 10 s
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
			t.Fatalf("exit after SIGINT: %v (code %d), want code %d\n%s", err, code, exitInterrupted, out)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit 30 s after SIGINT")
	}
	for _, want := range []string{"Messages / data", "gorilla", "gws", "run directory:"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	db := openRun(t, dir)
	run, err := db.Run()
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != "interrupted" {
		t.Errorf("run status %q, want interrupted", run.Status)
	}
	// The clock's sync state: at the start (host info) and at the window's first second.
	if c, err := sampler.ReadClock(); err == nil {
		cs, err := db.ClockSamples()
		if err != nil || len(cs) != 1 || cs[0].Sec != 1 || cs[0].Synced != c.Synced {
			t.Errorf("clock samples %+v, %v: want one at second 1, synchronised %v as the kernel says now", cs, err, c.Synced)
		}
		if run.Host["clock_synced"] != strconv.FormatBool(c.Synced) || run.Host["clock_maxerror_us"] == "" {
			t.Errorf("host info clock %q / %q, want synchronised %v", run.Host["clock_synced"], run.Host["clock_maxerror_us"], c.Synced)
		}
	}
	ws, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.RusageUser+w.RusageSys <= 0 || w.ExitCode != 0 {
			t.Errorf("worker %s: rusage %.3f exit %d: it did not stop cleanly", w.Lib, w.RusageUser+w.RusageSys, w.ExitCode)
		}
	}
	samples, _ := db.Samples("gorilla")
	if len(samples) < 10 {
		t.Errorf("%d seconds recorded before the signal, want at least 10", len(samples))
	}
}

// startChild starts this test binary as the soak command (see TestMain) with
// its stdout and stderr in buffers of their own.
func startChild(t *testing.T, args ...string) (cmd *exec.Cmd, stdout, stderr *bytes.Buffer) {
	t.Helper()
	cmd = exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	stdout, stderr = new(bytes.Buffer), new(bytes.Buffer)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, stdout, stderr
}

// TestInterruptDuringWarmup: SIGTERM before the window starts. Nothing of
// the window was recorded: the table shows "-" for the RSS, the CPU average,
// the rates and the messages, and stores no number for them (NULL, not 0);
// the CPU seconds the controller sampled when the workers stopped are shown.
// The run exits with code 4, and soak report of it exits 4 too.
func TestInterruptDuringWarmup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "warm.yaml", "name: warm\nduration: 30s\nwarmup: 60s\nlibraries: [gorilla, gws]\nsymbols: [btcusdt]\n")
	cmd, out, stderr := startChild(t, "run", "-profile", prof, "-out", dir)
	workerPid(t, dir, "gws", cmd, stderr) // the workers are up, in the warm-up
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit 30 s after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted {
		t.Fatalf("exit code %d after SIGTERM, want %d\n%s\n%s", code, exitInterrupted, out.String(), stderr.String())
	}
	db := openRun(t, dir)
	rows, err := db.Summary()
	if err != nil {
		t.Fatal(err)
	}
	notMeasured := map[string]bool{"Messages / data": true, "Avg / peak msgs/s": true, "RSS start → end (peak)": true,
		"CPU avg (% of one core)": true, "Latency p50 / p99 (ms)": true}
	seen := 0
	for _, r := range rows {
		if notMeasured[r.Metric] {
			seen++
			if r.Value != "-" || !math.IsNaN(r.Num) {
				t.Errorf("%s %s: %q (%v), want - and no number (nothing of the window was measured)", r.Metric, r.Lib, r.Value, r.Num)
			}
		}
		if r.Metric == "CPU s sampled / rusage" && (strings.HasPrefix(r.Value, "-") || math.IsNaN(r.Num)) {
			t.Errorf("%s %s: %q (%v), want the CPU seconds sampled when the worker stopped", r.Metric, r.Lib, r.Value, r.Num)
		}
	}
	// The final sample is taken when the worker has stopped and waits to
	// exit: it is the kernel's CPU time in 10 ms ticks, so it is at most the
	// rusage at exit and short of it by about a tick (plus the exit itself).
	ws, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		ru := w.RusageUser + w.RusageSys
		if !(w.SampledCPU >= 0 && w.SampledCPU <= ru+0.011 && w.SampledCPU >= ru-0.05) {
			t.Errorf("%s: sampled CPU %v s at stop, rusage %.3f s: want the final sample, within a tick of rusage", w.Lib, w.SampledCPU, ru)
		}
	}
	if seen != 2*len(notMeasured) {
		t.Errorf("%d not-measured cells checked, want %d:\n%s", seen, 2*len(notMeasured), out.String())
	}
	var rout, rerr bytes.Buffer
	if err := run(context.Background(), []string{"report", filepath.Dir(dbPath(t, dir))}, nil, &rout, &rerr); exitCode(err, io.Discard) != exitInterrupted {
		t.Errorf("soak report of the interrupted run: %v (code %d), want code %d", err, exitCode(err, io.Discard), exitInterrupted)
	}
}

// TestSecondSignalAborts: a second signal kills the children at once; what
// was recorded stays readable.
func TestSecondSignalAborts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "sig.yaml", signalProfile)
	cmd, out, done := startSoak(t, "run", "-profile", prof, "-out", dir)
	// Two SIGINTs sent back to back coalesce in the kernel (a pending signal is
	// not queued twice); SIGINT then SIGTERM arrive as two signals at once.
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		if err == nil {
			t.Fatalf("exit code 0 after an abort\n%s", out)
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatal("no exit 15 s after the second SIGINT")
	}
	db := openRun(t, dir)
	if s, err := db.Samples(""); err != nil || len(s) == 0 {
		t.Errorf("samples after abort: %d, %v", len(s), err)
	}
}

// TestWorkerCrashIsAFinding: a worker killed mid-run is recorded
// (worker_exit), restarted (worker_restart) and its counters continue; the run
// itself completes and names the crash.
func TestWorkerCrashIsAFinding(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "crash.yaml", "name: crash\nduration: 9s\nwarmup: 1s\nlibraries: [gorilla, gws]\nsymbols: [btcusdt]\n")
	cmd, out, stderr := startChild(t, "run", "-profile", prof, "-out", dir)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := workerPid(t, dir, "gws", cmd, stderr)
	time.Sleep(3 * time.Second)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run failed after a worker crash: %v\n%s\n%s", err, out.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("run did not end")
	}
	if !strings.Contains(out.String(), "note: worker gws died") {
		t.Errorf("output does not name the crash:\n%s", out.String())
	}
	db := openRun(t, dir)
	events, _ := db.Events("")
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Lib+" "+string(e.Kind)]++
	}
	if kinds["gws worker_exit"] != 1 || kinds["gws worker_restart"] != 1 || kinds["gorilla worker_exit"] != 0 {
		t.Errorf("events %v: want one gws worker_exit and worker_restart, none for gorilla", kinds)
	}
	// The restarted worker knows nothing of before it started: its silences
	// count from its own start. Counted from the window's start, every
	// subscription would stall (3 s threshold) and the depth stream (one
	// message every 100 ms) would show a max silence of at least the restart's
	// second.
	if kinds["gws stall"] != 0 {
		t.Errorf("%d gws stall events after its restart, want none", kinds["gws stall"])
	}
	var restartSec float64
	for _, e := range events {
		if e.Lib == "gws" && e.Kind == wire.EventWorkerRestart {
			restartSec = e.Sec
		}
	}
	latest, err := db.LatestStreamSamples()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range latest {
		if s.Lib == "gws" && s.Stream == "btcusdt@depth@100ms" && float64(s.MaxSilenceMs) >= restartSec*1000 {
			t.Errorf("gws %s: max silence %d ms, as long as the window before the restart at %.1f s", s.Stream, s.MaxSilenceMs, restartSec)
		}
	}
	samples, _ := db.Samples("gws")
	var prev int64
	after := 0
	for _, s := range samples {
		if !s.HasWorker {
			continue
		}
		if s.MsgsTotal < prev {
			t.Errorf("gws second %d: total %d went back from %d", s.Sec, s.MsgsTotal, prev)
		}
		prev = s.MsgsTotal
		if s.Sec >= 7 && s.Msgs > 0 {
			after++
		}
	}
	if after == 0 {
		t.Errorf("the restarted gws worker recorded no messages")
	}
}

// workerPid waits until the run under dir recorded lib's worker and returns its pid.
func workerPid(t *testing.T, dir, lib string, cmd *exec.Cmd, stderr *bytes.Buffer) int {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		dbs, _ := filepath.Glob(filepath.Join(dir, "*", "soak.db"))
		if len(dbs) != 1 {
			continue
		}
		db, err := store.OpenReadOnly(dbs[0])
		if err != nil {
			continue
		}
		ws, _ := db.Workers()
		db.Close()
		for _, w := range ws {
			if w.Lib == lib && w.Pid > 0 {
				return w.Pid
			}
		}
	}
	cmd.Process.Kill()
	t.Fatalf("no %s worker pid recorded; stderr:\n%s", lib, stderr.String())
	return 0
}

// TestHungWorkerIsKilledAndRestarted: a worker that stops sending frames (here
// stopped with SIGSTOP) is killed after -worker-timeout, recorded as
// worker_hung, and restarted; the run completes.
func TestHungWorkerIsKilledAndRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "hang.yaml", "name: hang\nduration: 10s\nwarmup: 1s\nlibraries: [gorilla, gws]\nsymbols: [btcusdt]\n")
	cmd, out, stderr := startChild(t, "run", "-profile", prof, "-out", dir, "-worker-timeout", "3s")
	pid := workerPid(t, dir, "gws", cmd, stderr)
	time.Sleep(2 * time.Second)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("run failed: %v\n%s\n%s", err, out.String(), stderr.String())
	}
	db := openRun(t, dir)
	events, _ := db.Events("")
	kinds := map[string]int{}
	for _, e := range events {
		kinds[e.Lib+" "+string(e.Kind)]++
	}
	for _, k := range []string{"gws worker_hung", "gws worker_exit", "gws worker_restart"} {
		if kinds[k] != 1 {
			t.Errorf("%d %q events, want 1 (all: %v)", kinds[k], k, kinds)
		}
	}
	if kinds["gorilla worker_hung"] != 0 {
		t.Errorf("gorilla was taken for hung: %v", kinds)
	}
}
