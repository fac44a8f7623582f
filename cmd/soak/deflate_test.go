package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

const deflateProfile = `name: deflate
duration: 5s
warmup: 1s
symbols: [btcusdt, ethusdt]
compression: on
keepalive:
  interval: 0s
  timeout: 30s
replay:
  seed: 7
  speed: 10
  ping_interval: 1m
`

// TestRunCompressionWireTruth runs a soak with compression: on and checks,
// per library and slot, that the frame bytes the worker read equal what the
// replay server wrote that the client could read: the bytes before the
// client's close frame came, or all of them for a library that reads the
// server's echo (coder); that every connection negotiated deflate; and that
// the end table has the Wire bytes and Negotiated rows. The controller's own
// comparison is checked too: a ✓ in the end table's and the report's "Wire
// bytes: client = server" row and a wire_truth event for every library, and
// what the server wrote after a client's close frame is exactly its close
// echo (13 bytes: code 1000 and "soak stop") on each connection the client
// closed, nothing else.
func TestRunCompressionWireTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "deflate.yaml", deflateProfile)
	out := filepath.Join(dir, "out")
	// -wide: the table with its full cells, the wire row's ✓ and what follows each.
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out, "-wide")
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, row := range []string{"Wire bytes / ratio", "Negotiated", "deflate ×", "deflate no-takeover ×", "Wire bytes: client = server"} {
		if !strings.Contains(stdout, row) {
			t.Errorf("the table lacks %q:\n%s", row, stdout)
		}
	}
	libs := wire.Libraries // the profile names none: every library runs
	checkWireRow(t, stdout, libs)
	db := openRun(t, out)
	page, err := os.ReadFile(filepath.Join(filepath.Dir(dbPath(t, out)), "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Wire bytes: client = server", "Negotiated", "deflate ×", "✓"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
	truth := map[string]string{}
	err = db.EachEvent(func(e *store.Event) error {
		if e.Kind == wire.EventWireTruth {
			truth[e.Lib] = e.Detail
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, lib := range libs {
		if d := truth[lib]; !strings.HasPrefix(d, "✓ ") {
			t.Errorf("%s: wire_truth event %q, want a ✓", lib, d)
		}
	}
	checkServerCounts(t, db, libs)
	server, err := db.ServerWire()
	if err != nil {
		t.Fatal(err)
	}
	type sw struct{ all, readable int64 }
	const echo = int64(2 + 2 + len("soak stop")) // the close echo: frame header, code, reason
	bySlot := map[string]sw{}                    // lib/slot, summed over attempts
	for _, w := range server {
		parts := strings.Split(w.Tag, "/")
		if len(parts) != 3 {
			continue
		}
		if !strings.Contains(w.Extensions, "permessage-deflate") {
			t.Errorf("%s: negotiated %q", w.Tag, w.Extensions)
		}
		if after := w.WireBytes - w.Readable; after != 0 && after != echo {
			t.Errorf("%s: the server wrote %d bytes after the client's close frame, want 0 or its %d-byte echo", w.Tag, after, echo)
		}
		k := parts[0] + "/" + parts[1]
		s := bySlot[k]
		s.all += w.WireBytes
		s.readable += w.Readable
		bySlot[k] = s
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		t.Fatal(err)
	}
	if len(dials) == 0 {
		t.Fatal("no slot accounts")
	}
	for _, d := range dials {
		s := bySlot[fmt.Sprintf("%s/%d", d.Lib, d.Slot)]
		t.Logf("%s slot %d: read %d; server wrote %d, %d before the client's close", d.Lib, d.Slot, d.WireBytes, s.all, s.readable)
		if d.WireBytes == 0 || (d.WireBytes != s.readable && d.WireBytes != s.all) {
			t.Errorf("%s slot %d: read %d frame bytes; the server wrote %d, %d of them before the client's close", d.Lib, d.Slot, d.WireBytes, s.all, s.readable)
		}
	}
}

// checkWireRow checks that the end table's "Wire bytes: client = server" row
// has a ✓ for each library (the columns are the libraries in table order).
func checkWireRow(t *testing.T, table string, libs []string) {
	t.Helper()
	for _, line := range strings.Split(table, "\n") {
		rest, ok := strings.CutPrefix(line, "Wire bytes: client = server")
		if !ok {
			continue
		}
		if n := strings.Count(rest, "✓ "); n != len(libs) || strings.Contains(rest, "✗") {
			t.Errorf("the wire row has %d ✓ for %d libraries: %q", n, len(libs), line)
		}
		return
	}
	t.Errorf("no wire row in the table:\n%s", table)
}

// TestRunWireTruthWorkerRestart kills one worker during a run: the
// controller restarts it, and since the new process counts its wire bytes
// anew, that library's "Wire bytes: client = server" cell says it was not
// compared (never a ✓ over half the bytes), while the other library's is
// still exact.
func TestRunWireTruthWorkerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "restart.yaml", strings.Replace(deflateProfile, "duration: 5s", "duration: 8s\nlibraries: [gorilla, gws]", 1))
	out := filepath.Join(dir, "out")
	type result struct {
		stdout, stderr string
		err            error
	}
	done := make(chan result, 1)
	go func() {
		o, e, err := runSoak(t, "run", "-profile", prof, "-out", out, "-wide") // the full cells
		done <- result{o, e, err}
	}()
	// Wait for gws's worker to say hello (its row with a pid), then kill it.
	var pid int
	deadline := time.Now().Add(time.Minute)
	for pid == 0 {
		select {
		case r := <-done:
			t.Fatalf("the run ended before its worker started: %v\n%s%s", r.err, r.stdout, r.stderr)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("no worker row for gws within a minute")
		}
		dbs, _ := filepath.Glob(filepath.Join(out, "*", "soak.db"))
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
			if w.Lib == "gws" && w.Pid > 0 {
				pid = w.Pid
			}
		}
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err == nil {
		t.Logf("run: no error")
	}
	var row string
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(line, "Wire bytes: client = server") {
			row = line
		}
	}
	if !strings.Contains(row, "not compared: the worker restarted ×1") || strings.Count(row, "✓ ") != 1 || strings.Contains(row, "✗") {
		t.Errorf("want gorilla ✓ and gws not compared: %q\nstdout:\n%s\nstderr:\n%s", row, r.stdout, r.stderr)
	}
	db := openRun(t, out)
	var detail string
	err := db.EachEvent(func(e *store.Event) error {
		if e.Kind == wire.EventWireTruth && e.Lib == "gws" {
			detail = e.Detail
		}
		return nil
	})
	if err != nil || !strings.HasPrefix(detail, "not compared") {
		t.Errorf("gws wire_truth event %q (%v)", detail, err)
	}
	// What the counts would have said, for the log.
	server, err := db.ServerWire()
	if err != nil {
		t.Fatal(err)
	}
	dials, err := db.SlotDialAccounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range measure.CheckWire(server, dials) {
		t.Logf("%s: %s", w.Lib, w)
	}
}
