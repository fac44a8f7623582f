// Package verdict checks a run against the thresholds of its profile
// ("thresholds:"): one verdict per library and threshold, each checked
// against the measure of the catalogue (internal/measure) that names the
// threshold's key, the end table's definitions.
package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/profile"
	"github.com/wssoak/wssoak/internal/store"
)

// FromRun checks the thresholds of the profile stored with the run.
func FromRun(db *store.DB) ([]store.Verdict, error) {
	ts, err := Stored(db)
	if err != nil {
		return nil, err
	}
	return Check(db, ts)
}

// Stored returns the thresholds of the profile stored with the run (none
// for a run stored without one, such as a synthetic run).
func Stored(db *store.DB) ([]profile.Threshold, error) {
	run, err := db.Run()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(run.ProfileText) == "" {
		return nil, nil // no profile stored (a synthetic run): nothing to check
	}
	p, err := profile.ParseStored(run.Settings["profile_path"]+" (stored with the run)", []byte(run.ProfileText))
	if err != nil {
		return nil, fmt.Errorf("stored profile: %w", err)
	}
	return p.Thresholds, nil
}

// Check measures every library of the run and returns one verdict per
// library and threshold (see Judge). No thresholds: no verdicts, and
// nothing is read.
func Check(db *store.DB, ts []profile.Threshold) ([]store.Verdict, error) {
	if len(ts) == 0 {
		return nil, nil
	}
	r, err := measure.Compute(db)
	if err != nil {
		return nil, err
	}
	return Judge(r, ts), nil
}

// Judge checks each threshold against the measure of the catalogue that
// names its key, for every library of the results: one verdict per library
// and threshold, in threshold order, then library name order. A measure
// that was not measured (NaN: no subscription totals, no process sample in
// the window, no latency recorded, or latency measured across an
// unsynchronised clock) is skipped, neither passed nor broken.
func Judge(r *measure.Results, ts []profile.Threshold) []store.Verdict {
	libs := slices.Sorted(slices.Values(r.Libs()))
	var out []store.Verdict
	for i, t := range ts {
		m := measure.ByThreshold(t.Key) // one per key (tested)
		for _, lib := range libs {
			v := store.Verdict{Lib: lib, Threshold: t.Key, Value: math.NaN(), Limit: t.Limit, Ord: i}
			if m != nil {
				c, _ := r.Get(m.ID, measure.Dims{Lib: lib})
				v.Value, v.Unit = c.Num, m.Unit
			}
			v.Broken = v.Value > t.Limit // NaN > limit is false: a skipped check is not broken
			out = append(out, v)
		}
	}
	return out
}

// Skipped returns the verdicts whose measure was not measured.
func Skipped(vs []store.Verdict) []store.Verdict {
	var out []store.Verdict
	for _, v := range vs {
		if v.Skipped() {
			out = append(out, v)
		}
	}
	return out
}

// Broken returns the verdicts that broke their threshold.
func Broken(vs []store.Verdict) []store.Verdict {
	var out []store.Verdict
	for _, v := range vs {
		if v.Broken {
			out = append(out, v)
		}
	}
	return out
}

// Format is a verdict as one line: "gws max_lost: 12 messages > limit 0 messages".
func Format(v store.Verdict) string {
	if v.Skipped() {
		return fmt.Sprintf("%s %s: not measured, skipped (limit %s)", v.Lib, v.Threshold, amount(v.Limit, v.Unit))
	}
	op := "≤"
	if v.Broken {
		op = ">"
	}
	return fmt.Sprintf("%s %s: %s %s limit %s", v.Lib, v.Threshold, amount(v.Value, v.Unit), op, amount(v.Limit, v.Unit))
}

func amount(x float64, unit string) string {
	switch unit {
	case "s":
		return time.Duration(math.Round(x * 1e9)).String()
	case "bytes":
		if math.Abs(x) < 1e6 {
			return fmt.Sprintf("%.0f B", x)
		}
		return fmt.Sprintf("%.1f MB", x/1e6)
	case "%":
		return fmt.Sprintf("%.2f %%", x)
	}
	return fmt.Sprintf("%.0f %s", x, unit)
}
