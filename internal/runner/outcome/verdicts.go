package outcome

import (
	"fmt"
	"io"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
	"github.com/wssoak/wssoak/internal/terminal"
	"github.com/wssoak/wssoak/internal/verdict"
)

// ExitThreshold is the exit code of soak run and soak report when a library
// broke a threshold of the profile.
const ExitThreshold = 3

// ThresholdError reports broken thresholds (already printed one per line).
type ThresholdError struct{ Broken int }

func (e ThresholdError) Error() string {
	return fmt.Sprintf("%d threshold(s) broken (exit code %d)", e.Broken, ExitThreshold)
}

// CheckThresholds checks the thresholds of the run in db (it only reads) and
// prints the broken ones. It returns the verdicts, and a ThresholdError when
// one broke. The thresholds are p's, the profile the run was started with;
// without it (soak report), those of the profile stored with the run, parsed
// again.
func CheckThresholds(w io.Writer, db *store.DB, p *profile.Profile) ([]store.Verdict, error) {
	return judge(w, db, nil, p)
}

// judge is CheckThresholds against the run's measures r when they are
// computed already (the end computes them once, for the table and the
// verdicts); r nil: computed here from db when there are thresholds.
func judge(w io.Writer, db *store.DB, r *measure.Results, p *profile.Profile) ([]store.Verdict, error) {
	vs, err := judged(db, r, p)
	if err != nil {
		return nil, err
	}
	return vs, PrintVerdicts(w, vs)
}

// judged is judge without the printing: the verdicts, and an error only
// when they could not be made.
func judged(db *store.DB, r *measure.Results, p *profile.Profile) ([]store.Verdict, error) {
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
	return vs, nil
}

// PrintVerdicts prints the broken verdicts (or that all passed) and returns
// a ThresholdError when one broke.
func PrintVerdicts(w io.Writer, vs []store.Verdict) error {
	if len(vs) == 0 {
		return nil
	}
	broken, skipped := verdict.Broken(vs), verdict.Skipped(vs)
	for _, v := range skipped {
		terminal.Println(w, "threshold skipped: "+verdict.Format(v))
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
		terminal.Println(w, "threshold broken: "+verdict.Format(v))
	}
	return ThresholdError{len(broken)}
}

// State returns the record of the run in the database at dbPath, its
// status as a reader should see it (store.ShownStatus: "running" while a
// process writes it, store.StatusNoEnd once none does and it never recorded
// its end), and its stored verdicts.
func State(dbPath string) (store.Run, []store.Verdict, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return store.Run{}, nil, err
	}
	defer db.Close()
	r, err := db.Run()
	if err != nil {
		return store.Run{}, nil, err
	}
	r.Status = db.ShownStatus(r)
	vs, err := db.Verdicts()
	return r, vs, err
}

// CheckRun checks the thresholds of the run in the database at dbPath,
// read-only, against the profile stored with it.
func CheckRun(w io.Writer, dbPath string) ([]store.Verdict, error) {
	db, err := store.OpenReadOnly(dbPath)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return CheckThresholds(w, db, nil)
}

// SaveVerdicts stores verdicts in the database at dbPath.
func SaveVerdicts(dbPath string, vs []store.Verdict) error {
	db, err := store.Open(dbPath)
	if err != nil {
		return err
	}
	if err := db.SaveVerdicts(vs); err != nil {
		db.Close()
		return err
	}
	return db.Close()
}
