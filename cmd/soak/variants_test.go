package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/wire"
)

// variantsProfile runs one library plainly and three variants; -libs leaves
// coder out.
const variantsProfile = `name: variants
duration: 6s
warmup: 2s
symbols: [btcusdt, ethusdt]
replay: {seed: 7, speed: 10}
worker_runtime: {gogc: 50}
libraries: [gws, coder]
variants:
  - name: gws-gc25
    lib: gws
    worker_runtime: {gogc: 25, gomemlimit: 256MiB}
    read_buffer_size: 4KiB
  - name: gorilla-cost
    lib: gorilla
    calibration_cost: 50us
  - name: gobwas-deflate
    lib: gobwas
    compression: no_context_takeover
    encoding: msgpack
`

// TestRunVariants runs variants as columns of their own: a worker each,
// named by the variant everywhere (table, store, tags, logs, export), with
// the settings it asked for and the run's for the rest.
func TestRunVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end run")
	}
	t.Parallel()
	dir := t.TempDir()
	prof := writeProfile(t, dir, "variants.yaml", variantsProfile)
	out := filepath.Join(dir, "out")
	cols := []string{"gws", "gws-gc25", "gorilla-cost", "gobwas-deflate"}
	stdout, stderr, err := runSoak(t, "run", "-profile", prof, "-out", out, "-libs", "gobwas-deflate,gws,gorilla-cost,gws-gc25")
	if err != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
	}
	checkWidth(t, stdout)
	t.Logf("stdout:\n%s", stdout)
	// (the line folded at 120 columns when the profile's path is long)
	if !regexp.MustCompile(`libraries gws, gws-gc25, gorilla-cost, gobwas-deflate(\s|$)`).MatchString(strings.Join(strings.Fields(stdout), " ")) {
		t.Errorf("stdout does not list the columns -libs kept, in the profile's order")
	}
	for _, c := range cols {
		if !strings.Contains(stdout, c) {
			t.Errorf("table lacks a %s column", c)
		}
	}
	db := openRun(t, out)
	// The replay server counted each column's connections by its tag.
	checkServerCounts(t, db, cols)
	checkNoErrorEvents(t, db)

	workers, err := db.Workers()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]int{}
	for i, w := range workers {
		byName[w.Lib] = i
	}
	if len(workers) != len(cols) {
		t.Fatalf("workers %v, want %q (coder left out by -libs)", byName, cols)
	}
	for _, c := range []struct{ name, module, runtime string }{
		{"gws", "github.com/lxzan/gws", "GOGC=50 GOMEMLIMIT=off"},
		{"gws-gc25", "github.com/lxzan/gws", "GOGC=25 GOMEMLIMIT=268435456B"},
		{"gorilla-cost", "github.com/gorilla/websocket", "GOGC=50 GOMEMLIMIT=off"},
		{"gobwas-deflate", "github.com/gobwas/ws", "GOGC=50 GOMEMLIMIT=off"},
	} {
		i, ok := byName[c.name]
		if !ok {
			t.Errorf("no worker %s", c.name)
			continue
		}
		if w := workers[i]; w.Module != c.module || !strings.HasSuffix(w.Runtime, c.runtime) {
			t.Errorf("%s: module %q runtime %q, want %q and … %q", c.name, w.Module, w.Runtime, c.module, c.runtime)
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(dbPath(t, out)), "worker-"+c.name+".log")); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}

	// The calibration cost is CPU the worker really spent: at least the
	// messages it counted times the cost (the cost of everything else comes
	// on top). Without it, a message costs gorilla a few µs.
	samples, err := db.Samples("gorilla-cost")
	if err != nil || len(samples) == 0 {
		t.Fatalf("gorilla-cost samples: %d, %v", len(samples), err)
	}
	var msgs int64
	for _, s := range samples {
		msgs = max(msgs, s.MsgsTotal) // the drain's rows have no worker half
	}
	w := workers[byName["gorilla-cost"]]
	cpu, want := w.RusageUser+w.RusageSys, (time.Duration(msgs) * 50 * time.Microsecond).Seconds()
	t.Logf("gorilla-cost: %d messages, %.3f s CPU, %.3f s of it the cost", msgs, cpu, want)
	if msgs < 1000 || cpu < 0.9*want {
		t.Errorf("gorilla-cost: %d messages took %.3f s of CPU, want at least 0.9 × %.3f s", msgs, cpu, want)
	}

	// What each connection negotiated: the deflate variant alone asked for
	// permessage-deflate and msgpack.
	events, err := db.Events("")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range events {
		if e.Kind != wire.EventConnected {
			continue
		}
		seen[e.Lib] = true
		deflate := strings.Contains(e.Detail, "permessage-deflate") && strings.Contains(e.Detail, "server_no_context_takeover") &&
			strings.Contains(e.Detail, "subprotocol soak.msgpack.v1")
		if deflate != (e.Lib == "gobwas-deflate") {
			t.Errorf("%s connected with %q", e.Lib, e.Detail)
		}
	}
	if len(seen) != len(cols) {
		t.Errorf("connected events of %v, want every column", seen)
	}

	// The export's columns table says what each column is.
	if _, _, err := runSoak(t, "export", "-dir", filepath.Join(dir, "csv"), filepath.Dir(dbPath(t, out))); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range readCSVFile(t, filepath.Join(dir, "csv", "columns.csv"))[1:] {
		rows = append(rows, strings.Join(r[:3], ","))
	}
	want3 := "gws,gws, gws-gc25,gws,read_buffer_size=4096 gogc=25 gomemlimit=268435456 gorilla-cost,gorilla,calibration_cost=50µs gobwas-deflate,gobwas,compression=no_context_takeover encoding=msgpack"
	if got := strings.Join(rows, " "); got != want3 {
		t.Errorf("columns.csv:\n got %s\nwant %s", got, want3)
	}
}
