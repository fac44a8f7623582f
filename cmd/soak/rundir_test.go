package main

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wssoak/wssoak/internal/export"
	"github.com/wssoak/wssoak/internal/runner/outcome"
	"github.com/wssoak/wssoak/internal/store"
)

const lockProfile = `name: lock
duration: 4s
warmup: 1s
libraries: [gorilla, gws]
symbols: [btcusdt]
replay:
  speed: 5
`

// dbCounts is what a run's database holds, table by table, with the sizes
// of its files: equal counts before and after mean nothing was written.
func dbCounts(t *testing.T, dir string) map[string]int64 {
	t.Helper()
	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string]int64{}
	for _, table := range []string{"samples", "stream_samples", "events", "host_samples", "workers"} {
		n, err := db.Count(table)
		if err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	for _, f := range []string{"soak.db", "soak.db-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
			out[f+" bytes"] = fi.Size()
		}
	}
	return out
}

// TestResumeOfARunningRun: a run directory has one owner. A -resume of a run
// whose controller is alive (stopped with SIGSTOP here, so that it writes
// nothing meanwhile) fails at once, naming the directory and the owner's
// pid, and writes nothing to the database; once the owner is killed, the
// lock died with it and the resume goes on to the end. The run directory is
// private: 0700, its files 0600.
func TestResumeOfARunningRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	base := t.TempDir()
	prof := writeProfile(t, base, "lock.yaml", lockProfile)
	cmd, outb, dir, _ := startRun(t, "run", "-profile", prof, "-out", filepath.Join(base, "out"))
	owner := cmd.Process.Pid
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	// Wait for recorded seconds of both libraries, then freeze the owner.
	deadline := time.Now().Add(30 * time.Second)
	for dbCounts(t, dir)["samples"] < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no samples after 30 s:\n%s", outb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(owner, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for _, st := procStat(owner); st != "T"; _, st = procStat(owner) {
		if time.Now().After(deadline) {
			t.Fatalf("controller %d not stopped (state %q)", owner, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
	before := dbCounts(t, dir)

	t0 := time.Now()
	_, stderr, err := runSoak(t, "run", "-resume", dir)
	took := time.Since(t0)
	if err == nil {
		t.Fatalf("a resume of a run whose controller is alive went ahead (%v):\n%s", took, stderr)
	}
	if code := exitCode(err, io.Discard); code != 1 || !strings.Contains(err.Error(), dir) ||
		!strings.Contains(err.Error(), "pid "+strconv.Itoa(owner)) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("resume of a running run: exit %d, %v; want exit 1 and an error naming %s as in use by pid %d", code, err, dir, owner)
	}
	if took > 3*time.Second {
		t.Errorf("the refused resume took %v, want it to fail at once", took)
	}
	if after := dbCounts(t, dir); !equalCounts(before, after) {
		t.Errorf("the refused resume wrote to the database: before %v, after %v", before, after)
	}

	// The owner dies: its lock goes with it.
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	resumeToEnd(t, dir)

	// Permissions: the directory 0700, every file in it 0600.
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("run directory %s: mode %v, want 0700", dir, fi.Mode().Perm())
	}
	files := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if fi, err := d.Info(); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", path, fi.Mode().Perm())
		}
		return nil
	})
	if files < 5 { // soak.db, lock, server.log, two worker logs, report.html
		t.Errorf("%d files in the run directory", files)
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestExportReplacesSymlinks: a symlink planted at an output name (export's
// samples.csv, report.html) is replaced by the file; its target, outside the
// directory, is left as it was.
func TestExportReplacesSymlinks(t *testing.T) {
	base := t.TempDir()
	run := filepath.Join(base, "run")
	if _, _, err := runSoak(t, "synth", run, "-duration", "2m", "-symbols", "1"); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(base, "victim")
	const orig = "not soak's to overwrite\n"
	if err := os.WriteFile(victim, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"samples.csv", "events.ndjson", "report.html"} {
		if err := os.Symlink(victim, filepath.Join(run, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"export", run}, {"export", "-format", "json", run}, {"report", run}} {
		if _, stderr, err := runSoak(t, args...); err != nil {
			var te outcome.ThresholdError
			if !errors.As(err, &te) {
				t.Fatalf("%v: %v\n%s", args, err, stderr)
			}
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != orig {
		t.Errorf("the symlink's target was written through: now %d bytes (%v)", len(b), err)
	}
	for _, name := range []string{"samples.csv", "events.ndjson", "report.html"} {
		path := filepath.Join(run, name)
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() < 100 {
			t.Errorf("%s: %v %v; want the regular file soak wrote", path, fi, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(run, ".*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	db, err := store.OpenReadOnly(filepath.Join(run, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	n, _ := db.Count("samples")
	if recs := readCSVFile(t, filepath.Join(run, export.File("samples", "csv"))); int64(len(recs)-1) != n {
		t.Errorf("samples.csv: %d rows, database %d", len(recs)-1, n)
	}
}

// readOnlyEnv names the directory that the soak child of soakReadOnly sees
// as a read-only mount (see TestMain).
const readOnlyEnv = "SOAK_TEST_READONLY"

// mountReadOnly bind-mounts dir over itself read-only, in this process's
// own mount namespace (soakReadOnly starts it in a new one).
func mountReadOnly(dir string) error {
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	return unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, "")
}

// soakReadOnly runs soak as a child process that sees ro as a read-only
// mount: what a read-only volume (or, for writes, another user's run) is.
// Root ignores permission bits, so a mount is the honest way to deny it
// writes. It skips the test when this machine cannot make one.
func soakReadOnly(t *testing.T, ro string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1", readOnlyEnv+"="+ro)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &ee) && ee.ExitCode() == readOnlyFailed:
		t.Skipf("cannot make a read-only mount here: %s", stderr.String())
	case !errors.As(err, &ee):
		t.Skipf("cannot start a child in its own mount namespace (needs CAP_SYS_ADMIN): %v", err)
	}
	return stdout.String(), stderr.String(), ee.ExitCode()
}

// readOnlyFailed is the exit code of a child that could not mount its
// directory read-only.
const readOnlyFailed = 97

// TestReadOnlyRun: report, export and compare read a finished run on a
// read-only mount without writing to it. report checks the thresholds
// (nothing stored yet) without storing them, writes the page to -o, and
// without -o says which directory is read-only and to give -o. A run copied
// with its -wal and -shm is read with what the WAL holds; with a -wal but no
// -shm the error says why it cannot be read.
func TestReadOnlyRun(t *testing.T) {
	base := t.TempDir()
	ro, w := filepath.Join(base, "ro"), filepath.Join(base, "w")
	run := filepath.Join(ro, "run")
	if _, _, err := runSoak(t, "synth", run, "-duration", "2m", "-symbols", "1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(w, 0o700); err != nil {
		t.Fatal(err)
	}
	orig, err := os.ReadFile(filepath.Join(run, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}

	_, stderr, code := soakReadOnly(t, ro, "report", run)
	if code != 1 || !strings.Contains(stderr, run) || !strings.Contains(stderr, "read-only file system") || !strings.Contains(stderr, "-o FILE") {
		t.Errorf("report into a read-only run directory: exit %d, stderr %q; want exit 1 naming %s as read-only and suggesting -o FILE", code, stderr, run)
	}
	html := filepath.Join(w, "r.html")
	stdout, stderr, code := soakReadOnly(t, ro, "report", "-o", html, run)
	if code != outcome.ExitThreshold || !strings.Contains(stdout, "threshold broken: gws max_reconnects") {
		t.Errorf("report -o of a read-only run: exit %d, stdout %q, stderr %q; want exit %d and the broken threshold", code, stdout, stderr, outcome.ExitThreshold)
	}
	if b, err := os.ReadFile(html); err != nil || !bytes.Contains(b, []byte(`<tr class="broken"><td>gws</td><td><code>max_reconnects</code>`)) {
		t.Errorf("report -o: %v; want the page, with the verdicts checked now", err)
	}
	if _, stderr, code = soakReadOnly(t, ro, "export", "-dir", filepath.Join(w, "csv"), run); code != 0 {
		t.Errorf("export of a read-only run: exit %d\n%s", code, stderr)
	}
	if _, stderr, code = soakReadOnly(t, ro, "compare", run, run); code != 0 {
		t.Errorf("compare of a read-only run: exit %d\n%s", code, stderr)
	}
	if now, err := os.ReadFile(filepath.Join(run, "soak.db")); err != nil || !bytes.Equal(now, orig) {
		t.Errorf("the read-only run's database changed (%v)", err)
	}
	if ents, _ := os.ReadDir(run); len(ents) != 1 {
		t.Errorf("files appeared beside the database: %v", ents)
	}

	// A copy of a database whose writer is open: the run is only in the WAL.
	live := filepath.Join(base, "live.db")
	wdb, err := store.Open(live)
	if err != nil {
		t.Fatal(err)
	}
	defer wdb.Close()
	if err := wdb.CreateRun(store.Run{ID: "walonly", Name: "walonly", Status: "running", Started: time.Now()}); err != nil {
		t.Fatal(err)
	}
	withShm, noShm := filepath.Join(ro, "withshm"), filepath.Join(ro, "noshm")
	for dir, exts := range map[string][]string{withShm: {"", "-wal", "-shm"}, noShm: {"", "-wal"}} {
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, ext := range exts {
			b, err := os.ReadFile(live + ext)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "soak.db"+ext), b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	html = filepath.Join(w, "wal.html")
	if _, stderr, code = soakReadOnly(t, ro, "report", "-o", html, withShm); code != 0 {
		t.Errorf("report of a read-only copy with its -wal and -shm: exit %d\n%s", code, stderr)
	} else if b, _ := os.ReadFile(html); !bytes.Contains(b, []byte("walonly")) {
		t.Errorf("the report of the copy lacks the run that only its WAL holds")
	}
	_, stderr, code = soakReadOnly(t, ro, "report", "-o", html, noShm)
	if code != 1 || !strings.Contains(stderr, "-wal") || !strings.Contains(stderr, "read-only") || strings.Contains(stderr, "no such file") {
		t.Errorf("report of a read-only copy with a -wal and no -shm: exit %d, %q; want exit 1 saying that the WAL cannot be read in a read-only directory", code, stderr)
	}
}

// writeKindDB writes a database of one run of the given kind in out/name.
func writeKindDB(t *testing.T, out, name, kind string) string {
	t.Helper()
	dir := filepath.Join(out, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.CreateRun(store.Run{ID: name, Name: name, Status: "done"}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetKind(kind); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLatestRunIsASoak: under one -out, a soak and newer benches (one named
// bench-<time>, one renamed but of kind bench): the latest run is the soak;
// a bench is read when given; with only benches, no latest run, and the
// error says how to read one.
func TestLatestRunIsASoak(t *testing.T) {
	out := t.TempDir()
	soak := writeKindDB(t, out, "20261202-010000", store.KindSoak)
	b1 := writeKindDB(t, out, "bench-20261202-020000", store.KindBench)
	writeKindDB(t, out, "zz-renamed-bench", store.KindBench)
	if got, err := runDB("", out); err != nil || got != filepath.Join(soak, "soak.db") {
		t.Errorf("latest run %q, %v; want the soak %s", got, err, soak)
	}
	if got, err := runDB(b1, out); err != nil || got != filepath.Join(b1, "soak.db") {
		t.Errorf("bench given: %q, %v; want its soak.db", got, err)
	}
	only := t.TempDir()
	writeKindDB(t, only, "bench-20261202-020000", store.KindBench)
	var ue usageError
	if got, err := runDB("", only); !errors.As(err, &ue) || !strings.Contains(err.Error(), "only benches") {
		t.Errorf("only benches: %q, %v; want a usage error saying so", got, err)
	}
}
