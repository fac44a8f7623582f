package main

import (
	"encoding/json"
	"errors"
	"runtime"
	"time"

	"github.com/wssoak/wssoak/internal/bench"
	"github.com/wssoak/wssoak/internal/store"
)

// writeBenchDB records the bench in its directory's soak.db: a run of kind
// bench (the host, the libraries' versions and the configuration in its
// settings, and the -sweep argument of a sweep) and every client run, so that report, export and compare read
// it as they read a soak.
func writeBenchDB(path, id, sweep string, host, versions map[string]string, cfg bench.Config, start time.Time, elapsed time.Duration,
	runErr error, results []bench.Result) error {
	settings := map[string]string{}
	for lib, v := range versions {
		settings["version "+lib] = v
	}
	if sweep != "" {
		settings["sweep"] = sweep
	}
	rows := make([]store.BenchResult, len(results))
	for i, r := range results {
		rows[i] = r.Row()
	}
	run := store.Run{ID: id, Name: "bench", Target: "firehose", Started: start, Ended: start.Add(elapsed), Host: host, Settings: settings}
	return writeBenchRun(path, run, cfg, runErr, func(db *store.DB) error { return db.WriteBenchResults(rows) })
}

// writeBenchRun writes a bench's soak.db: the run (its status from runErr,
// the Go version, cfg as JSON in the settings), kind bench, and its results
// (writeRows).
func writeBenchRun(path string, run store.Run, cfg any, runErr error, writeRows func(*store.DB) error) error {
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
