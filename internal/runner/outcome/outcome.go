// Package outcome is what a run comes to at its end: its measures computed
// once from its database, the end table printed and stored, the profile's
// thresholds judged and the verdicts stored, report.html written; and the
// verdicts of a finished run again when soak report reads it. The end's
// writes go through a store.Retry (a full disk), and its errors are joined
// into the one error the command returns.
package outcome

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/report"
	"github.com/wssoak/wssoak/internal/runner/controller"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/terminal"
	"github.com/wssoak/wssoak/internal/verdict"
)

// End finishes a run that returned res and runErr (controller.Run or
// serverside.Run): whatever failed, the table is printed on w and the
// report attempted, once the run has a database. It returns runErr joined
// with what failed at the end; the thresholds are judged only when the run
// itself succeeded. baseline, when it names a column, marks the ranked
// rows against it instead of the leader's ★; text says how the table is
// printed.
func End(w io.Writer, res *controller.Result, retry *store.Retry, runErr error, baseline string, text report.TextOptions) error {
	if res == nil || res.DBPath == "" {
		return runErr
	}
	err := runErr
	closed, baseline, ferr := finish(w, res, retry, runErr == nil, baseline, text)
	if closed {
		err = dropCheckpoint(err) // finish closed the database again: its checkpoint is the one that counts
	}
	err = errors.Join(err, ferr)
	html := filepath.Join(res.Dir, "report.html")
	if rerr := report.WriteFile(context.Background(), res.DBPath, html, report.Options{Baseline: baseline}); rerr != nil {
		return errors.Join(err, rerr)
	}
	fmt.Fprintf(w, "report: %s\n", html)
	return err
}

// finish summarises the run from its database — the table, the ranking
// and, when the run succeeded (thresholds), the verdicts of the profile's
// thresholds — prints them with the checks and the summary, and stores
// what the report shows. What is printed does not wait for the database: a
// write that fails (a full disk) is retried with retry and then reported,
// and the final checkpoint too (a *store.CheckpointError: nothing is
// lost). closed tells that it opened and closed the database,
// checkpointing it once more; baseline is the one the marks were made
// against ("" when it named no column).
func finish(w io.Writer, res *controller.Result, retry *store.Retry, thresholds bool, baseline string, text report.TextOptions) (closed bool, _ string, err error) {
	db, err := store.Open(res.DBPath)
	if err != nil {
		return false, "", err
	}
	// The measures are computed once, for the table, the ranking and the
	// verdicts.
	results, err := measure.Compute(db)
	if err != nil {
		return true, "", errors.Join(fmt.Errorf("summarize: %w", err), db.CloseWith(retry))
	}
	t := results.EndTable()
	rk := ranking.Compute(results)
	var (
		vs   []store.Verdict
		verr error
	)
	if len(t.Libs) > 0 && thresholds {
		vs, verr = judged(db, results, res.Profile)
	}
	ws, werr := db.Workers()
	if baseline != "" && rk.Col(baseline) < 0 {
		terminal.Println(w, fmt.Sprintf("note: -baseline %s is not a column of this run (%s): the leader's ★ instead", baseline, strings.Join(t.Libs, ", ")))
		baseline = ""
	}
	printFindings(w, res, report.Findings{Table: t, Ranking: rk, Checks: verdict.Checks(t, ws, vs), Baseline: baseline}, text)
	errs := []error{werr, retry.Do("store the table", func() error { return db.SaveSummary(t.SummaryRows()) }),
		retry.Do("store the ranking", func() error { return db.SaveRanking(rk.Rows()) })}
	if len(t.Libs) == 0 {
		errs = append(errs, errors.New("no worker recorded anything"))
	} else if thresholds {
		if verr == nil {
			verr = PrintVerdicts(w, vs)
		}
		if _, broken := verr.(ThresholdError); verr == nil || broken {
			errs = append(errs, retry.Do("store the verdicts", func() error { return db.SaveVerdicts(vs) }))
		}
		errs = append(errs, verr)
	}
	return true, baseline, errors.Join(append(errs, db.CloseWith(retry))...)
}

// dropCheckpoint removes the *store.CheckpointError from the errors joined in err.
func dropCheckpoint(err error) error {
	var keep []error
	for _, e := range flatten(err) {
		if _, ok := e.(*store.CheckpointError); !ok {
			keep = append(keep, e)
		}
	}
	return errors.Join(keep...)
}

// flatten lists the errors joined in err (errors.Join), recursively.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, flatten(e)...)
	}
	return out
}

// printFindings prints the findings (the failed checks first, the table,
// the checks, the summary), the workers' notes and the run directory.
func printFindings(w io.Writer, res *controller.Result, f report.Findings, text report.TextOptions) {
	fmt.Fprintln(w)
	report.WriteFindings(w, f, text)
	for _, wr := range res.Workers {
		if wr.Err != nil {
			terminal.Println(w, fmt.Sprintf("note: %v", wr.Err))
		}
	}
	fmt.Fprintf(w, "\nrun directory: %s\n", res.Dir)
}
