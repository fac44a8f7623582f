package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

const diskProfile = `name: disk
duration: 8s
warmup: 1s
libraries: [gorilla, gws]
symbols: [btcusdt, ethusdt]
replay:
  speed: 5
`

// failWrites makes every write of pid past the current end of its WAL file
// fail with EFBIG (RLIMIT_FSIZE, set from outside with prlimit; Go ignores
// SIGXFSZ, so the write returns the error) for d, then lifts the limit.
func failWrites(t *testing.T, pid int, wal string, d time.Duration) {
	t.Helper()
	fi, err := os.Stat(wal)
	if err != nil {
		t.Fatalf("no WAL file: %v", err)
	}
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(fi.Size()), Max: unix.RLIM_INFINITY}, &old); err != nil {
		t.Skipf("cannot set RLIMIT_FSIZE on the controller (prlimit): %v", err)
	}
	time.Sleep(d)
	if err := unix.Prlimit(pid, unix.RLIMIT_FSIZE, &old, nil); err != nil {
		t.Fatalf("lift RLIMIT_FSIZE: %v", err)
	}
}

// TestDiskWritesFail: the controller's database writes fail for real (EFBIG
// from RLIMIT_FSIZE) in the middle of a run. With the default backlog the
// batches are kept and retried, so nothing is lost; with a backlog of 2 the
// oldest are dropped and recorded as missing. Either way the run goes on to
// the end and the table says what happened.
func TestDiskWritesFail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real runs")
	}
	t.Parallel()
	for _, tc := range []struct {
		name    string
		backlog string
		fail    time.Duration
		lose    bool
	}{
		{"retried, nothing lost", "600", 2500 * time.Millisecond, false},
		{"backlog exceeded, seconds lost", "2", 4 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			prof := writeProfile(t, base, "disk.yaml", diskProfile)
			cmd, outb, dir, start := startRun(t, "run", "-profile", prof, "-write-backlog", tc.backlog, "-out", filepath.Join(base, "out"))
			time.Sleep(time.Until(start.Add(2 * time.Second)))
			failAt := time.Now()
			failWrites(t, cmd.Process.Pid, filepath.Join(dir, "soak.db-wal"), tc.fail)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("run: %v\n%s", err, outb.String())
			}
			out := outb.String()
			if !strings.Contains(out, "write failed; keeping the batch and retrying") || !strings.Contains(out, "file too large") {
				t.Errorf("no log line about the failed writes (EFBIG):\n%s", out)
			}
			db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			run, _ := db.Run()
			if run.Status != "done" {
				t.Errorf("status %q, want done", run.Status)
			}
			events, _ := db.Events("")
			var failed, missing []store.Event
			for _, e := range events {
				switch e.Kind {
				case wire.EventWriteFailed:
					failed = append(failed, e)
				case wire.EventMissing:
					missing = append(missing, e)
				}
			}
			// The writer commits once a second (later on a busy machine), so the first
			// failing write comes some d after the limit is set, and the failure lasts
			// until the first retry after it is lifted: at least tc.fail - d.
			if len(failed) != 1 || failed[0].Code < 2 {
				t.Errorf("write_failed events %+v: want one, with several attempts", failed)
			}
			if len(failed) == 1 {
				d := failed[0].TS.Sub(failAt)
				if d < 0 || d >= tc.fail {
					t.Errorf("failure recorded at %v, the limit was set at %v for %v", failed[0].TS, failAt, tc.fail)
				}
				if min := (tc.fail - d).Milliseconds() - 50; failed[0].DurMs < float64(min) {
					t.Errorf("write_failed %+v lasted %.0f ms, want at least %d ms (the limit's %v less the %v before the first failing write)",
						failed[0], failed[0].DurMs, min, tc.fail, d)
				}
			}
			samples, _ := db.Samples("")
			rows := map[string]map[int64]bool{}
			// A row the writer lost has neither half; a worker's frame that came
			// more than a second late (a loaded machine) leaves the process half
			// alone, a gap the table reports as seconds missing, not a lost row.
			for _, s := range samples {
				if s.HasWorker || s.HasProc {
					if rows[s.Lib] == nil {
						rows[s.Lib] = map[int64]bool{}
					}
					rows[s.Lib][s.Sec] = true
				}
			}
			// Second 1 is left out: on a loaded machine a worker can start after
			// it, and then no row for it ever exists (seen: both libraries' first
			// row was second 2, and the missing event rightly named 2–7). The
			// writes fail from second 2 on.
			var lost int
			for _, lib := range []string{"gorilla", "gws"} {
				for sec := int64(2); sec <= 8; sec++ {
					if !rows[lib][sec] {
						lost++
					}
				}
				if !rows[lib][8] {
					t.Errorf("%s: no row for the last second: the run did not go on", lib)
				}
			}
			switch {
			case !tc.lose && (lost != 0 || len(missing) != 0):
				t.Errorf("%d rows lost, missing events %+v: want nothing lost", lost, missing)
			case tc.lose && (lost == 0 || len(missing) != 1 || missing[0].Code < lost):
				t.Errorf("%d window rows lost; missing events %+v: want one naming at least those rows", lost, missing)
			}
			if !strings.Contains(out, "(writes failed at ") {
				t.Errorf("the table does not say that writes failed:\n%s", out)
			}
			if tc.lose && !strings.Contains(out, "rows lost from") {
				t.Errorf("the table does not say what was lost:\n%s", out)
			}
			t.Logf("writes failed %.0f ms, %d attempts; %d window rows lost; %+v", failed[0].DurMs, failed[0].Code, lost, missing)
		})
	}
}

// TestDiskFullAtEnd: the disk fills (EFBIG from RLIMIT_FSIZE, set so that
// neither soak.db nor its WAL can grow) as the window ends
// and the workers stop, and stays full. What was written stays in soak.db
// and its -wal; the end's writes are retried and then given up; the table is
// still printed and the report still attempted; the exit code is 1 and the
// error says where the data is.
func TestDiskFullAtEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	base := t.TempDir()
	prof := writeProfile(t, base, "disk.yaml", strings.Replace(diskProfile, "duration: 8s", "duration: 3s", 1))
	out := filepath.Join(base, "out")
	cmd := exec.Command(os.Args[0], "run", "-profile", prof, "-out", out)
	cmd.Env = append(os.Environ(), "SOAK_TEST_AS_MAIN=1")
	var stdout, stderr lockedBuffer
	cmd.Stdout = &stdout
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopping := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			stderr.Write([]byte(sc.Text() + "\n"))
			if !seen && strings.Contains(sc.Text(), `msg="stopping workers" why="window ended"`) {
				seen = true
				close(stopping)
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case <-stopping:
	case err := <-done:
		t.Fatalf("the run ended (%v) before its window did:\n%s", err, stderr.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the window did not end within 60 s:\n%s", stderr.String())
	}
	dir := filepath.Dir(dbPath(t, out))
	path := filepath.Join(dir, "soak.db")
	// The limit is the -shm's size: a database opened again truncates its
	// -shm and regrows it (on a full disk, into the blocks it just freed);
	// the WAL is larger, and the checkpoint grows soak.db past it.
	size := map[string]int64{}
	for _, ext := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(path + ext); err == nil {
			size[ext] = fi.Size()
		}
	}
	limit := size["-shm"]
	if limit == 0 || size["-wal"] <= limit {
		cmd.Process.Kill()
		t.Fatalf("database files %v: want a -shm and a larger -wal", size)
	}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(limit), Max: unix.RLIM_INFINITY}, nil); err != nil {
		cmd.Process.Kill()
		t.Skipf("cannot set RLIMIT_FSIZE on the controller (prlimit): %v", err)
	}
	// What the database holds once the disk is full (the controller cannot add to it).
	rows := func() map[string]int64 {
		db, err := store.OpenReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
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
		return last
	}
	before := rows()
	var runErr error
	select {
	case runErr = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the run did not end within 60 s of the disk filling:\n%s", stderr.String())
	}
	outText, errText := stdout.String(), stderr.String()
	var ee *exec.ExitError
	if !errors.As(runErr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want exit code 1", runErr)
	}
	for _, want := range []string{"Messages / data", "gorilla", "gws", "run directory: " + dir} {
		if !strings.Contains(outText, want) {
			t.Errorf("stdout lacks %q: the table was not printed:\n%s", want, outText)
		}
	}
	for _, want := range []string{"retrying", "write report", "file too large", "soak.db-wal", "keep the two files together"} {
		if !strings.Contains(errText, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errText)
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Errorf("the -wal file is gone: %v", err)
	}
	after := rows()
	for _, lib := range []string{"gorilla", "gws"} {
		if before[lib] < 2 || after[lib] < before[lib] {
			t.Errorf("%s: last second recorded %d when the disk filled, %d after the run: want nothing lost", lib, before[lib], after[lib])
		}
	}
	t.Logf("limit %d bytes (files %v); last seconds %v when the disk filled, %v after", limit, size, before, after)
}

// TestDiskFullToTheEnd: the disk fills in the middle of the window (EFBIG
// from RLIMIT_FSIZE on the controller, never lifted), so the last seconds
// never reach soak.db: the end's writes are retried, then given up. The
// table counts every second of the window without a row as missing and
// says the run did not record its end (not "Seconds missing 0" over what
// reached the disk); the error says how many batches, which seconds, and
// that their rows are lost, and claims nowhere that nothing was lost. Once
// the disk has room again (the run is over: the limit died with it), the
// report shows the run as ended without its status, not running, with the
// same missing seconds.
func TestDiskFullToTheEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real run")
	}
	t.Parallel()
	base := t.TempDir()
	prof := writeProfile(t, base, "disk.yaml", diskProfile)
	cmd, outb, dir, start := startRun(t, "run", "-profile", prof, "-out", filepath.Join(base, "out"), "-wide") // the full cells
	time.Sleep(time.Until(start.Add(5 * time.Second)))
	fi, err := os.Stat(filepath.Join(dir, "soak.db-wal"))
	if err != nil {
		t.Fatalf("no WAL file: %v", err)
	}
	if err := unix.Prlimit(cmd.Process.Pid, unix.RLIMIT_FSIZE, &unix.Rlimit{Cur: uint64(fi.Size()), Max: unix.RLIM_INFINITY}, nil); err != nil {
		cmd.Process.Kill()
		t.Skipf("cannot set RLIMIT_FSIZE on the controller (prlimit): %v", err)
	}
	runErr := cmd.Wait()
	out := outb.String()
	var ee *exec.ExitError
	if !errors.As(runErr, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit: %v, want exit code 1\n%s", runErr, out)
	}
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "soak: ") {
			line = l
		}
	}
	for _, want := range []string{"batches not written (seconds ", "), their rows lost: ", "file too large"} {
		if !strings.Contains(line, want) {
			t.Errorf("the error line lacks %q: %q", want, line)
		}
	}
	if strings.Contains(out, "nothing written is lost") {
		t.Errorf("the output claims nothing was lost:\n%s", out)
	}

	db, err := store.OpenReadOnly(filepath.Join(dir, "soak.db"))
	if err != nil {
		t.Fatal(err)
	}
	run, _ := db.Run()
	samples, _ := db.Samples("")
	db.Close()
	window := int64(run.Planned / time.Second)
	rows := map[string]int64{}
	for _, s := range samples {
		if s.HasWorker && s.Sec >= 1 && s.Sec <= window {
			rows[s.Lib]++
		}
	}
	if rows["gorilla"] >= window-1 {
		t.Fatalf("%d of %d seconds reached the disk: the disk did not fill in the window", rows["gorilla"], window)
	}
	// The table soak run printed, and the report's, count what is not on
	// the disk as missing.
	want := map[string]string{}
	for _, lib := range []string{"gorilla", "gws"} {
		want[lib] = fmt.Sprintf("%d (the run did not record its end)", window-rows[lib])
	}
	cells := func(text string) []string {
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "Seconds missing") {
				return strings.Split(strings.TrimSpace(strings.TrimPrefix(l, "Seconds missing")), "  ")
			}
		}
		return nil
	}
	// The row's cells: gorilla's, gws's, then the ranking's call column
	// (a check's ✗ here).
	if got := slices.DeleteFunc(cells(out), func(c string) bool { return strings.TrimSpace(c) == "" }); len(got) < 2 || got[0] != want["gorilla"] || strings.TrimSpace(got[1]) != want["gws"] {
		t.Errorf("soak run's table: seconds missing %q, want gorilla %q, gws %q\n%s", got, want["gorilla"], want["gws"], out)
	}
	if run.Status != "running" {
		t.Logf("the status was recorded after all: %q", run.Status)
	}
	html := filepath.Join(t.TempDir(), "report.html")
	_, stderr, err := runSoak(t, "report", "-o", html, dir)
	if err != nil {
		t.Fatalf("soak report: %v\n%s", err, stderr)
	}
	if run.Status == "running" && !strings.Contains(stderr, "ended without recording its end") {
		t.Errorf("soak report of a run that did not record its end says nothing of it: %q", stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if run.Status == "running" && !strings.Contains(string(page), `class="status">`+store.StatusNoEnd+"<") {
		t.Errorf("the report does not show the run as %q", store.StatusNoEnd)
	}
	if !strings.Contains(string(page), want["gorilla"]) {
		t.Errorf("the report's table lacks gorilla's seconds missing %q", want["gorilla"])
	}
	t.Logf("%d of %d seconds on the disk; error: %s", rows["gorilla"], window, line)
}
