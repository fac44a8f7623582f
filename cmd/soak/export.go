package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/export"
	"github.com/wssoak/wssoak/internal/store"
)

// exportCmd writes a run's tables as CSV or NDJSON files.
func exportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "csv", "csv, or json (one JSON object per line, *.ndjson)")
	outDir := fs.String("o", "", "directory that receives the files (default: the run directory)")
	runs := fs.String("out", "out", "where runs are looked for when no RUN is given")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: soak export [-format csv|json] [-o DIR] [RUN_DIR|DB]   (default RUN: the latest under -out)")
		fs.PrintDefaults()
	}
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(export.Formats, *format) {
		return usageError{fmt.Errorf("flag -format: unknown format %q: want %s", *format, strings.Join(export.Formats, " or "))}
	}
	arg, err := oneArg("export", args)
	if err != nil {
		return err
	}
	path, err := runDB(arg, *runs)
	if err != nil {
		return err
	}
	db, err := store.OpenReadOnly(path)
	if err != nil {
		return err
	}
	defer db.Close()
	dir := *outDir
	if dir == "" {
		dir = filepath.Dir(path)
	}
	counts, err := export.Write(db, dir, *format)
	if err != nil {
		return err
	}
	for _, t := range export.Tables {
		fmt.Fprintf(stdout, "%s\t%d rows\n", filepath.Join(dir, export.File(t, *format)), counts[t])
	}
	return nil
}

// parseInterspersed parses flags placed before or after the positional
// arguments (soak export RUN -format json) and returns the positionals.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usageError{err}
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
