package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wssoak/wssoak/internal/cert"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/runner/outcome"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/wire"
)

// After a run, its thresholds are checked from the profile it was started
// with, not from the stored text parsed again: that parse would check the
// profile's files anew (here its tls.ca, gone since the start) and redo the
// validation of every symbol of a long list.
func TestThresholdsFromRunProfile(t *testing.T) {
	dir := t.TempDir()
	ca, err := cert.New(time.Hour, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	prof := writeProfile(t, dir, "thr.yaml", "name: thr\nduration: 2s\nlibraries: [gws]\ntls: {ca: ca.pem}\nthresholds:\n  max_errors: 0\n  max_stalls: 3\n")
	p, err := profile.Load(prof)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "soak.db")
	db, err := store.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Unix(1_800_000_000, 0)
	err = db.CreateRun(store.Run{ID: "thr", Name: "thr", Target: "local", ProfileText: p.Text, Started: start,
		Planned: 2 * time.Second, Settings: map[string]string{"profile_path": p.Path}})
	if err == nil {
		err = db.UpsertWorker(store.Worker{Lib: "gws", Module: "m", Version: "v", Pid: 1})
	}
	if err == nil {
		err = db.Write(&store.Batch{Events: []store.Event{
			{TS: start, Sec: 0.5, Lib: "gws", Kind: wire.EventStall, Slot: 0, Stream: "btcusdt@trade"},
			{TS: start, Sec: 1.5, Lib: "gws", Kind: wire.EventStall, Slot: 0, Stream: "btcusdt@trade"},
		}})
	}
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(caFile); err != nil {
		t.Fatal(err)
	}

	rdb, err := store.OpenReadOnly(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	var out bytes.Buffer
	vs, err := outcome.CheckThresholds(&out, rdb, p)
	if err != nil {
		t.Fatalf("check thresholds: %v", err)
	}
	if !strings.Contains(out.String(), "thresholds: all 2 checks passed") {
		t.Errorf("stdout %q, want all 2 checks passed", out.String())
	}
	if err != nil || len(vs) != 2 || vs[0].Threshold != "max_stalls" || vs[0].Value != 2 || vs[1].Threshold != "max_errors" || vs[1].Value != 0 {
		t.Fatalf("verdicts %+v, %v; want max_stalls 2 and max_errors 0", vs, err)
	}
}
