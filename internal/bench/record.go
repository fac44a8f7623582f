package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/wssoak/wssoak/internal/sampler"
	"github.com/wssoak/wssoak/internal/store"
)

// The prefixes of a bench directory's name (NewDir): soak bench, soak bench
// -side server.
const (
	ClientPrefix = "bench-"
	ChatPrefix   = "bench-chat-"
)

// Recording is where a bench is recorded and what its header adds.
type Recording struct {
	ID    string   // the bench's id, the name of its directory (NewDir)
	Dir   string   // the bench directory
	Notes []string // lines the header ends with (where the processes are pinned, or why not)
	// Sweep is the -sweep argument of a message-size sweep, Sizes its
	// payload sizes (the config's scenarios are SweepScenarios(Sizes)); ""
	// for a table of scenarios.
	Sweep string
	Sizes []int
}

// Recorded is a bench as its directory records it.
type Recorded struct {
	Table   []byte // table.txt: the header lines and the table (or the sweep), every cell in full
	Fitted  []byte // the same within 120 columns, for a terminal
	Gobench []byte // bench.txt of a client bench: Go benchmark lines, for benchstat
	// RunErr is why the bench stopped before its end (an interrupt, a
	// process that failed): what it measured until then is recorded all the
	// same.
	RunErr error
}

// NewDir makes the directory of a bench that starts at now,
// out/<prefix><time>, and checks that it takes a file, so that a bench
// that could not be recorded is refused before it runs. id is its name.
func NewDir(out, prefix string, now time.Time) (id, dir string, err error) {
	id = prefix + now.UTC().Format("20060102-150405")
	dir = filepath.Join(out, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	if err := writeProbe(dir); err != nil {
		return "", "", err
	}
	return id, dir, nil
}

// writeProbe checks that dir takes a file.
func writeProbe(dir string) error {
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	name := f.Name()
	_ = f.Close()
	return os.Remove(name)
}

// executable is the soak binary the bench starts its processes from: exe
// when set, else this process's own.
func executable(exe string) (string, error) {
	if exe != "" {
		return exe, nil
	}
	return os.Executable()
}

// timeRun runs f and returns when it started and how long it took; it adds
// to host the share of all CPUs the hypervisor stole meanwhile
// (steal_during) and, with busy, the share that was busy (cpu_busy_during),
// from the CPU counters before and after.
func timeRun(host map[string]string, busy bool, f func()) (start time.Time, elapsed time.Duration) {
	start = time.Now()
	hs := sampler.NewHost()
	_, err0 := hs.Sample() // the CPU counters at the start
	f()
	elapsed = time.Since(start)
	if s, err := hs.Sample(); err == nil && err0 == nil {
		host["steal_during"] = fmt.Sprintf("%.1f %%", s.StealPct)
		if busy {
			host["cpu_busy_during"] = fmt.Sprintf("%.1f %%", s.CPUPct)
		}
	}
	return start, elapsed
}

// writeFiles writes the bench's files (name → contents) into dir.
func writeFiles(dir string, files map[string][]byte) error {
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeRun writes a bench's soak.db: the run (its status from runErr, the
// Go version, cfg as JSON in the settings), kind bench, and its results
// (writeRows), so that report, export and compare read it as they read a
// soak.
func writeRun(path string, run store.Run, cfg any, runErr error, writeRows func(*store.DB) error) error {
	db, err := store.Open(path)
	if err != nil {
		return err
	}
	cj, _ := json.Marshal(cfg)
	run.Settings["config"] = string(cj)
	run.GoVersion = runtime.Version()
	run.Status = "done"
	if runErr != nil {
		run.Status = "failed: " + runErr.Error()
	}
	err = errors.Join(db.CreateRun(run), db.SetKind(store.KindBench), writeRows(db))
	return errors.Join(err, db.Close())
}

// orDash is s, or "-" when it is empty (a host value that could not be read).
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
