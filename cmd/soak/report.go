package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/rundir"
	"github.com/wssoak/wssoak/internal/runner/outcome"
	"github.com/wssoak/wssoak/internal/store"
)

// reportHelp is what soak report -h prints.
var reportHelp = help{
	synopsis: "soak report [-o FILE] [-out DIR] [-baseline COLUMN] [RUN_DIR|DB] | [-o FILE] [-strict] RUN_A RUN_B ...",
	about: `Write report.html beside a run's database (default RUN: the latest soak run under
-out; a bench directory when given, for its bench page). A finished soak is checked against
its profile's thresholds: exit code 3 when a library broke one, 4 when the run was interrupted.`,
	examples: []example{
		{"soak report", "the report of the latest soak run under out/"},
		{"soak report -o /tmp/report.html out/20261201-233000-local", "that run's report, written to /tmp/report.html"},
		{"soak report -baseline gorilla", "the latest run's report, every column marked better, worse or = against gorilla"},
		{"soak report -o hosts.html fra/run sgp/run nyc/run", "one page over three hosts' runs of one profile: end tables side by side, latency from the merged minute histograms"},
	},
	args:  maxCompared,
	flags: func(fs *flagSet) any { return reportFlags(fs) },
}

// reportArgs are the flags of soak report.
type reportArgs struct {
	o, out, baseline *string
	strict           *bool
}

func reportFlags(fs *flagSet) *reportArgs {
	return &reportArgs{
		o:        fs.String("o", "", "write the report to `FILE` (default: report.html beside the database)"),
		out:      fs.String("out", "out", "look for the latest soak run in `DIR` when no RUN is given"),
		baseline: fs.String("baseline", "", "mark every column better, worse or = against `COLUMN` (a library of the run) instead of the leader's ★"),
		strict:   fs.Bool("strict", false, "with several runs: refuse a run of another profile than the first's (default: mark it and warn)"),
	}
}

// reportCmd renders report.html beside a run's database and, for a finished
// run, exits with outcome.ExitThreshold when a library broke a threshold of its
// profile (the report shows the verdicts).
func reportCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("report", stdout, stderr)
	a := reportFlags(fs)
	args, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(args) > 1 {
		return reportRuns(args, a, stdout, stderr)
	}
	if *a.strict {
		return usageError{errors.New("flag -strict: it is for a report over several runs (soak report RUN_A RUN_B ...)")}
	}
	arg, err := oneArg("report", args)
	if err != nil {
		return err
	}
	dbPath, err := runDB(arg, *a.out)
	if err != nil {
		return err
	}
	// The run's database is only read: a run on a read-only volume, or
	// another user's, is reported like any other, into -o when its
	// directory cannot take report.html.
	htmlPath := *a.o
	if htmlPath == "" {
		dir := filepath.Dir(dbPath)
		if err := rundir.Writable(dir); err != nil {
			return fmt.Errorf("report: cannot write report.html into the run directory %s (%v): give -o FILE to write the report elsewhere",
				dir, errors.Unwrap(err))
		}
		htmlPath = filepath.Join(dir, "report.html")
	}
	run, stored, err := outcome.State(dbPath)
	if err != nil {
		return err
	}
	if isBench(dbPath) { // the bench page: no thresholds to judge
		return writeReport(ctx, stdout, dbPath, htmlPath, report.Options{})
	}
	running := run.Status == store.StatusRunning || run.Status == store.StatusNoEnd // no verdict on a run not ended
	// A finished run is judged against its profile's thresholds: by the
	// verdicts soak run stored, else checked now (and stored when the
	// database may be written, else shown in the page only). A run still
	// going (or crashed) has no verdict yet.
	var verdicts error
	opts := report.Options{Baseline: *a.baseline}
	switch {
	case len(stored) > 0:
		verdicts = outcome.PrintVerdicts(stdout, stored)
	case !running:
		var vs []store.Verdict
		vs, verdicts = outcome.CheckRun(stdout, dbPath)
		if _, broken := verdicts.(outcome.ThresholdError); verdicts != nil && !broken {
			return verdicts
		}
		if len(vs) > 0 && rundir.Writable(dbPath) == nil && rundir.Writable(filepath.Dir(dbPath)) == nil {
			if err := outcome.SaveVerdicts(dbPath, vs); err != nil {
				return err
			}
		} else {
			opts.Verdicts = vs
		}
	}
	if err := writeReport(ctx, stdout, dbPath, htmlPath, opts); err != nil {
		return err
	}
	if verdicts == nil && run.Status == "interrupted" {
		return interruptedError{run.ID} // as soak run exited
	}
	if run.Status == store.StatusNoEnd {
		// The report is written and right; the run is not: say so, once.
		fmt.Fprintf(stderr, "soak: note: run %s ended without recording its end (its controller died, or the disk was full): the report shows what was recorded, the seconds not written counted as missing; soak run -resume %s goes on with it while its window lasts\n",
			run.ID, filepath.Dir(dbPath))
	}
	return verdicts
}

// writeReport renders the database at dbPath into htmlPath and says where.
func writeReport(ctx context.Context, stdout io.Writer, dbPath, htmlPath string, opts report.Options) error {
	t0 := time.Now()
	if err := report.WriteFile(ctx, dbPath, htmlPath, opts); err != nil {
		return err
	}
	st, err := os.Stat(htmlPath)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "report: %s (%.1f MB, %s)\n", htmlPath, float64(st.Size())/1e6, time.Since(t0).Round(time.Millisecond))
	return nil
}
