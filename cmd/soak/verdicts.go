package main

import (
	"fmt"
	"io"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/verdict"
)

// exitThreshold is the exit code of soak run and soak report when a library
// broke a threshold of the profile.
const exitThreshold = 3

// thresholdError reports broken thresholds (already printed one per line).
type thresholdError struct{ broken int }

func (e thresholdError) Error() string {
	return fmt.Sprintf("%d threshold(s) broken (exit code %d)", e.broken, exitThreshold)
}

// checkThresholds checks the thresholds of the run in db (it only reads) and
// prints the broken ones. It returns the verdicts, and a thresholdError when
// one broke. The thresholds are p's, the profile the run was started with;
// without it (soak report), those of the profile stored with the run, parsed
// again.
func checkThresholds(w io.Writer, db *store.DB, p *profile.Profile) ([]store.Verdict, error) {
	return judgeThresholds(w, db, nil, p)
}

// judgeThresholds is checkThresholds against the run's measures r when they
// are computed already (soak run's finish computes them once, for the table
// and the verdicts); r nil: computed here from db when there are thresholds.
func judgeThresholds(w io.Writer, db *store.DB, r *measure.Results, p *profile.Profile) ([]store.Verdict, error) {
	var ts []profile.Threshold
	if p != nil {
		ts = p.Thresholds
	} else {
		var err error
		if ts, err = verdict.Stored(db); err != nil {
			return nil, fmt.Errorf("check thresholds: %w", err)
		}
	}
	var vs []store.Verdict
	if r != nil {
		vs = verdict.Judge(r, ts)
	} else {
		var err error
		if vs, err = verdict.Check(db, ts); err != nil {
			return nil, fmt.Errorf("check thresholds: %w", err)
		}
	}
	return vs, printVerdicts(w, vs)
}

// printVerdicts prints the broken verdicts (or that all passed) and returns
// a thresholdError when one broke.
func printVerdicts(w io.Writer, vs []store.Verdict) error {
	if len(vs) == 0 {
		return nil
	}
	broken, skipped := verdict.Broken(vs), verdict.Skipped(vs)
	for _, v := range skipped {
		fmt.Fprintf(w, "threshold skipped: %s\n", verdict.Format(v))
	}
	if len(broken) == 0 {
		if len(skipped) == 0 {
			fmt.Fprintf(w, "thresholds: all %d checks passed\n", len(vs))
		} else {
			fmt.Fprintf(w, "thresholds: %d checks passed, %d skipped (not measured)\n", len(vs)-len(skipped), len(skipped))
		}
		return nil
	}
	for _, v := range broken {
		fmt.Fprintf(w, "threshold broken: %s\n", verdict.Format(v))
	}
	return thresholdError{len(broken)}
}
