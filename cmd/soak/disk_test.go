package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wssoak/wssoak/internal/store"
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
				case "write_failed":
					failed = append(failed, e)
				case "missing":
					missing = append(missing, e)
				}
			}
			// The writer commits once a second, so the first failing write may come up to a
			// second after the limit is set (more on a busy machine): allow 1.5 s of it.
			if len(failed) != 1 || failed[0].Code < 2 || failed[0].DurMs < float64(tc.fail.Milliseconds())-1500 {
				t.Errorf("write_failed events %+v: want one, several attempts, about %v long", failed, tc.fail)
			}
			if len(failed) == 1 {
				if d := failed[0].TS.Sub(failAt); d < 0 || d > 2*time.Second {
					t.Errorf("failure recorded at %v, the limit was set at %v", failed[0].TS, failAt)
				}
			}
			samples, _ := db.Samples("")
			rows := map[string]map[int64]bool{}
			for _, s := range samples {
				if s.HasWorker {
					if rows[s.Lib] == nil {
						rows[s.Lib] = map[int64]bool{}
					}
					rows[s.Lib][s.Sec] = true
				}
			}
			var lost int
			for _, lib := range []string{"gorilla", "gws"} {
				for sec := int64(1); sec <= 8; sec++ {
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
