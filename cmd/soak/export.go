package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/wssoak/wssoak/internal/export"
	"github.com/wssoak/wssoak/internal/store"
)

// exportHelp is what soak export -h prints.
var exportHelp = help{
	synopsis: "soak export [-format csv|ndjson] [-dir DIR] [-out DIR] [RUN_DIR|DB]\n" +
		"       soak export [-format csv|ndjson] [-dir DIR] RUN_A RUN_B ...",
	about: `Write a run's tables (samples, stream_samples, events, host_samples, clock_samples,
summary) as CSV or NDJSON files, one per table (default RUN: the latest soak run under -out);
a bench directory when given: its bench_results.`,
	examples: []example{
		{"soak export", "the latest soak run's tables as CSV files in its run directory"},
		{"soak export -format ndjson -dir /tmp/ndjson out/20261201-233000-local", "that run's tables as NDJSON files in /tmp/ndjson"},
		{"soak export -dir /tmp/hosts fra/run sgp/run", "two hosts' runs: one CSV file per table, each row beginning with its run and host"},
	},
	args:  maxCompared,
	flags: func(fs *flagSet) any { return exportFlags(fs) },
}

// exportArgs are the flags of soak export.
type exportArgs struct {
	format, dir, out *string
}

func exportFlags(fs *flagSet) *exportArgs {
	a := &exportArgs{
		format: fs.String("format", "csv", "file `FORMAT`: csv, or ndjson (one JSON object per line, *.ndjson; json is its older name)"),
		dir:    fs.String("dir", "", "write the files into `DIR` (default: the run directory)"),
		out:    fs.String("out", "out", "look for the latest soak run in `DIR` when no RUN is given"),
	}
	fs.renamed("o", "dir")
	return a
}

// exportCmd writes a run's tables as CSV or NDJSON files.
func exportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("export", stdout, stderr)
	a := exportFlags(fs)
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(export.Formats, *a.format) {
		return usageError{fmt.Errorf("flag -format: unknown format %q: want csv or ndjson", *a.format)}
	}
	if len(args) > 1 {
		return exportRuns(args, *a.dir, *a.format, stdout)
	}
	arg, err := oneArg("export", args)
	if err != nil {
		return err
	}
	path, err := runDB(arg, *a.out)
	if err != nil {
		return err
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	dir := *a.dir
	if dir == "" {
		dir = filepath.Dir(path)
	}
	counts, err := export.Write(db, dir, *a.format)
	if err != nil {
		return err
	}
	for _, t := range slices.Concat(export.Tables, export.BenchTables) {
		if _, ok := counts[t]; !ok {
			continue
		}
		rows := "rows"
		if counts[t] == 1 {
			rows = "row"
		}
		fmt.Fprintf(stdout, "%s\t%d %s\n", filepath.Join(dir, export.File(t, *a.format)), counts[t], rows)
	}
	return nil
}

// exportRuns writes several soak runs' tables, one file per table with the
// runs' rows one after the other, each beginning with its run and host
// (export.WriteRuns), into dir (default: the current directory).
func exportRuns(args []string, dir, format string, stdout io.Writer) error {
	dbs, err := openRuns("export", args)
	if err != nil {
		return err
	}
	defer closeAll(dbs)
	runs := make([]export.Run, len(dbs))
	for i, db := range dbs {
		run, err := db.Run()
		if err != nil {
			return fmt.Errorf("%s: %w", args[i], err)
		}
		var labels map[string]string
		if s := run.Settings["labels"]; s != "" {
			if err := json.Unmarshal([]byte(s), &labels); err != nil {
				return fmt.Errorf("%s: labels: %w", args[i], err)
			}
		}
		runs[i] = export.Run{DB: db, ID: run.ID, Host: export.RunHost(run, labels)}
	}
	if dir == "" {
		dir = "."
	}
	counts, err := export.WriteRuns(runs, dir, format)
	if err != nil {
		return err
	}
	for _, t := range export.Tables {
		fmt.Fprintf(stdout, "%s\t%d rows\n", filepath.Join(dir, export.File(t, format)), counts[t])
	}
	return nil
}
