package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/store"
)

// State is a check's outcome.
type State string

// The outcomes of a check.
const (
	Pass State = "✓"
	Fail State = "✗"
	Skip State = "-" // not checked: nothing to check it against (a live target, no faults …)
)

// Item is one check of a run over every column, a line of the Checks
// block: an integrity check of the
// measurement (a catalogue measure of rank kind Check: its number must be
// 0) or one of the profile's thresholds. A failed integrity check says the
// figures are in doubt, not that a library lost: it is shown first and
// does not change the exit code; a broken threshold exits 3
// (outcome.ExitThreshold), as it always has.
type Item struct {
	Name      string
	State     State
	Threshold bool     // one of the profile's thresholds
	Failed    []string // per failing column: "gws: 1 (outage at 6 s: 1.4 s)"
	// Note says what passed or why nothing was checked: "every column",
	// "gws not checked: …", "not measured".
	Note string
}

// cpuTolerance is how far the CPU seconds sampled from /proc may be from the
// kernel's rusage: /proc counts 10 ms ticks for user and for system time,
// and the last sample comes a moment before the process exits.
func cpuTolerance(rusage float64) float64 { return math.Max(0.05*rusage, 0.02) }

// Checks checks the run whose end table is t, whose workers are ws and
// whose thresholds were judged into vs: the integrity checks in table
// order, then the thresholds in profile order.
func Checks(t *measure.EndTable, ws []store.Worker, vs []store.Verdict) []Item {
	var out []Item
	faults := rowOf(t, "faults")
	for i := range t.Rows {
		r := &t.Rows[i]
		m := measure.ByID(r.ID)
		if m == nil || m.Rank.Kind != measure.Check {
			continue
		}
		c := Item{Name: r.Name}
		var unchecked []string
		for j, lib := range t.Libs {
			ok, why := true, ""
			switch r.ID {
			case "cpu_seconds":
				ok, why = cpuAgrees(ws, lib)
			case "lost_connected":
				if faults != nil && faults.Nums[j] > 0 {
					ok, why = true, "faults injected"
					break
				}
				ok, why = zero(r, j)
			default:
				ok, why = zero(r, j)
			}
			switch {
			case !ok:
				c.Failed = append(c.Failed, lib+": "+why)
			case why != "":
				unchecked = append(unchecked, lib+" "+why)
			}
		}
		switch {
		case len(c.Failed) > 0:
			c.State = Fail
		case len(unchecked) == len(t.Libs):
			c.State, c.Note = Skip, "not checked: "+strings.Join(unchecked, "; ")
		default:
			c.State, c.Note = Pass, "every column"
			if len(unchecked) > 0 {
				c.Note = "not checked: " + strings.Join(unchecked, "; ")
			}
		}
		out = append(out, c)
	}
	return append(out, thresholds(vs)...)
}

// zero is a check measure's verdict for column j: its number 0 passes, a
// number above fails (with the cell as the reason), no number is not
// checked (the cell says why).
func zero(r *measure.EndRow, j int) (ok bool, why string) {
	switch n := r.Nums[j]; {
	case math.IsNaN(n):
		if r.Cells[j] == measure.NotMeasured {
			return true, "not measured"
		}
		return true, r.Cells[j]
	case n == 0:
		return true, ""
	}
	return false, r.Cells[j]
}

// cpuAgrees compares lib's sampled CPU seconds with its rusage.
func cpuAgrees(ws []store.Worker, lib string) (ok bool, why string) {
	i := slices.IndexFunc(ws, func(w store.Worker) bool { return w.Lib == lib })
	if i < 0 {
		return true, "not measured"
	}
	w := ws[i]
	ru := w.RusageUser + w.RusageSys
	switch {
	case !measure.CPUSampled(w):
		return true, "never sampled"
	case ru == 0:
		return true, "no rusage (not reaped)"
	}
	if d := w.SampledCPU - ru; math.Abs(d) > cpuTolerance(ru) {
		return false, fmt.Sprintf("sampled %.2f s, rusage %.2f s (%+.1f %%, over the %.2f s allowed)", w.SampledCPU, ru, 100*d/ru, cpuTolerance(ru))
	}
	return true, ""
}

// rowOf is t's row of measure id, nil when t has none.
func rowOf(t *measure.EndTable, id string) *measure.EndRow {
	for i := range t.Rows {
		if t.Rows[i].ID == id {
			return &t.Rows[i]
		}
	}
	return nil
}

// thresholds are the verdicts as checks, one per threshold, in profile
// order.
func thresholds(vs []store.Verdict) []Item {
	var out []Item
	index := map[string]int{}
	for _, v := range vs {
		i, ok := index[v.Threshold]
		if !ok {
			i = len(out)
			index[v.Threshold] = i
			out = append(out, Item{Name: "threshold " + v.Threshold, Threshold: true, State: Pass,
				Note: "every column ≤ " + amount(v.Limit, v.Unit)})
		}
		c := &out[i]
		switch {
		case v.Broken:
			c.State = Fail
			c.Failed = append(c.Failed, fmt.Sprintf("%s: %s > limit %s", v.Lib, amount(v.Value, v.Unit), amount(v.Limit, v.Unit)))
		case v.Skipped() && c.State == Pass:
			c.Note = "skipped for " + v.Lib + " (not measured); the others ≤ " + amount(v.Limit, v.Unit)
		}
	}
	for i := range out {
		c := &out[i]
		if c.State == Pass && allSkipped(vs, strings.TrimPrefix(c.Name, "threshold ")) {
			c.State, c.Note = Skip, "not measured for any column"
		}
	}
	return out
}

func allSkipped(vs []store.Verdict, key string) bool {
	for _, v := range vs {
		if v.Threshold == key && !v.Skipped() {
			return false
		}
	}
	return true
}

// Failed returns the checks that failed.
func Failed(cs []Item) []Item {
	return slices.DeleteFunc(slices.Clone(cs), func(c Item) bool { return c.State != Fail })
}

// Headline is the line naming every failed check, above the table and at
// the top of the report: "✗ 2 checks failed: Seconds missing (gws),
// threshold max_lost (gws, coder)"; "" when none failed.
func Headline(cs []Item) string {
	failed := Failed(cs)
	if len(failed) == 0 {
		return ""
	}
	parts := make([]string, len(failed))
	for i, c := range failed {
		libs := make([]string, len(c.Failed))
		for k, f := range c.Failed {
			libs[k], _, _ = strings.Cut(f, ":")
		}
		parts[i] = c.Name + " (" + strings.Join(libs, ", ") + ")"
	}
	noun := "checks"
	if len(failed) == 1 {
		noun = "check"
	}
	return fmt.Sprintf("✗ %d %s failed: %s", len(failed), noun, strings.Join(parts, ", "))
}

// Correctness is the summary's correctness line: the checks in a few
// words.
func Correctness(cs []Item) string {
	var failed, passed, skipped []string
	for _, c := range cs {
		switch c.State {
		case Fail:
			failed = append(failed, c.Name)
		case Pass:
			passed = append(passed, c.Name)
		default:
			skipped = append(skipped, c.Name)
		}
	}
	switch {
	case len(cs) == 0:
		return "nothing checked"
	case len(failed) > 0:
		return fmt.Sprintf("✗ %d of %d checks failed: %s (see Checks)", len(failed), len(cs), strings.Join(failed, ", "))
	case len(skipped) > 0:
		return fmt.Sprintf("every check made passed (%d); %d not checked (see Checks)", len(passed), len(skipped))
	}
	return fmt.Sprintf("every check passed (%d)", len(passed))
}
