package main

import (
	"context"
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
	fs := newFlagSet("export", stdout, stderr)
	a := exportFlags(fs)
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if !slices.Contains(export.Formats, *a.format) {
		return usageError{fmt.Errorf("flag -format: unknown format %q: want %s", *a.format, strings.Join(export.Formats, " or "))}
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
		fmt.Fprintf(stdout, "%s\t%d rows\n", filepath.Join(dir, export.File(t, *a.format)), counts[t])
	}
	return nil
}
