package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
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
// the end table has the Wire bytes and Negotiated rows.
func TestRunCompressionWireTruth(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "deflate.yaml", deflateProfile)
	out := filepath.Join(dir, "out")
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out)
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	for _, row := range []string{"Wire bytes / ratio", "Negotiated", "deflate ×", "deflate no-takeover ×"} {
		if !strings.Contains(stdout, row) {
			t.Errorf("the table lacks %q:\n%s", row, stdout)
		}
	}
	db := openRun(t, out)
	checkServerCounts(t, db, []string{"gorilla", "gobwas", "coder", "gws", "fasthttp"})
	server, err := db.ServerWire()
	if err != nil {
		t.Fatal(err)
	}
	type sw struct{ all, readable int64 }
	bySlot := map[string]sw{} // lib/slot, summed over attempts
	for _, w := range server {
		parts := strings.Split(w.Tag, "/")
		if len(parts) != 3 {
			continue
		}
		if !strings.Contains(w.Extensions, "permessage-deflate") {
			t.Errorf("%s: negotiated %q", w.Tag, w.Extensions)
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
