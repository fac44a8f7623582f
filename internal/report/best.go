package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/verdict"
)

// Findings are what a run comes to, as its end shows them and the report
// puts first: the end table, the ranking (nil for a run recorded without
// one) and the checks, and the baseline column the marks are against (""
// for the leader's ★).
type Findings struct {
	Table    *measure.EndTable
	Ranking  *ranking.Ranking
	Checks   []verdict.Item
	Baseline string
}

// bestRow is a row of the table as the report marks it.
type bestRow struct {
	Name   string
	Better string // "higher" or "lower" for a ranked row, "" for the others
	// Call is the row's verdict: "★ lib", "=" (ranked, no call), "vs lib"
	// (against a baseline), ✓ ✗ - (a check), "" (never ranked).
	Call  string
	Why   string // why the row has no ★, or what the check found
	Check bool   // the row is a check
	Cells []bestCell
}

type bestCell struct {
	Text string
	Star bool // the leader's earned ★
	Ref  bool // the cell the others' differences are against
	// Mark is the cell against the baseline: better, worse, =, baseline.
	Mark  string
	Delta string // against the leader (or the baseline, or the best of an unranked row)
}

// bestRows marks the table's rows from the findings: a ranked row's
// leader gets its ★ only when the ranking earned it, and every other cell
// its paired difference from the leader with the interval (or, against a
// baseline, better, worse or =); a check row its ✓ or ✗; a row never
// ranked no mark, only each cell's difference from the best one (for
// counts every column must share: who is short).
func bestRows(f Findings) []bestRow {
	var out []bestRow
	base := -1
	if f.Ranking != nil && f.Baseline != "" {
		base = f.Ranking.Col(f.Baseline)
	}
	checks := map[string]verdict.Item{}
	for _, c := range f.Checks {
		checks[c.Name] = c
	}
	for _, r := range f.Table.Rows {
		br := bestRow{Name: r.Name, Cells: make([]bestCell, len(r.Cells))}
		for i, text := range r.Cells {
			br.Cells[i].Text = text
		}
		m := measure.ByID(r.ID)
		switch {
		case m != nil && m.Rank.Kind == measure.Check:
			br.Check = true
			if c, ok := checks[r.Name]; ok {
				br.Call, br.Why = string(c.State), c.Note
				if c.State == verdict.Fail {
					br.Why = strings.Join(c.Failed, "; ")
				}
			}
		case m != nil && m.Rank.Kind == measure.Ranked && len(r.Cells) < 2:
			// one column: nothing to rank, nothing to mark
		case m != nil && m.Rank.Kind == measure.Ranked && f.Ranking != nil && f.Ranking.Stat(m.ID) != nil:
			br.Better = string(m.Better)
			markRanked(&br, f.Ranking, f.Ranking.Stat(m.ID), base)
		default:
			deltas(&br, r)
		}
		out = append(out, br)
	}
	return out
}

// markRanked marks a ranked row from its statistic; the table's columns
// are the ranking's.
func markRanked(br *bestRow, rk *ranking.Ranking, s *ranking.Stat, base int) {
	u := s.Measure.Unit
	if base >= 0 {
		br.Call = "vs " + rk.Cols[base]
		for j, mk := range s.Versus(base) {
			if j >= len(br.Cells) || br.Cells[j].Text == notMeasured {
				continue // nothing to mark
			}
			br.Cells[j].Mark = string(mk.Kind)
			if mk.Kind != ranking.Base && !math.IsNaN(mk.Pair.Diff) {
				br.Cells[j].Delta = ranking.Signed(mk.Pair.Diff, u) + " " + ranking.Interval(mk.Pair.Lo, mk.Pair.Hi, u)
			}
		}
		return
	}
	c := s.Lead()
	if c.Leader < 0 || c.Leader >= len(br.Cells) {
		br.Call, br.Why = "=", c.Why
		return
	}
	br.Cells[c.Leader].Ref = true
	if c.Star {
		br.Call = "★ " + rk.Cols[c.Leader]
		br.Cells[c.Leader].Star = true
	} else {
		br.Call, br.Why = "=", c.Why
	}
	for j := range br.Cells {
		if j == c.Leader {
			continue
		}
		if p := s.Pair(j, c.Leader); !math.IsNaN(p.Diff) {
			br.Cells[j].Delta = ranking.Signed(p.Diff, u) + " " + ranking.Interval(p.Lo, p.Hi, u)
		}
	}
}

// deltas marks an unranked row: each cell's difference from the best
// number of the row in its direction, when the numbers differ.
func deltas(br *bestRow, r measure.EndRow) {
	if r.Better != measure.Higher && r.Better != measure.Lower || len(r.Nums) < 2 || allEqual(r.Nums) {
		return
	}
	best := math.NaN()
	for _, n := range r.Nums {
		if !math.IsNaN(n) && (math.IsNaN(best) || r.Better == measure.Higher && n > best || r.Better == measure.Lower && n < best) {
			best = n
		}
	}
	if math.IsNaN(best) {
		return
	}
	for i, n := range r.Nums {
		if i >= len(br.Cells) || math.IsNaN(n) {
			continue
		}
		if n == best {
			br.Cells[i].Ref = true
		} else {
			br.Cells[i].Delta = delta(n, best, r.Unit)
		}
	}
}

// allEqual says a row ranks nothing: every library has the same number.
func allEqual(ns []float64) bool {
	for _, n := range ns {
		if n != ns[0] {
			return false
		}
	}
	return true
}

// delta is v against the best b, in the row's unit and, when b
// is not zero, relative to it.
func delta(v, b float64, unit string) string {
	d := v - b
	var abs string
	switch unit {
	case "bytes":
		abs = fmt.Sprintf("%+.1f MB", d/1e6)
	case "%":
		abs = fmt.Sprintf("%+.2f points", d)
	case "ms":
		abs = fmt.Sprintf("%+.0f ms", d)
	case "s":
		abs = fmt.Sprintf("%+.1f s", d)
	case "msgs/s":
		abs = fmt.Sprintf("%+.1f msgs/s", d)
	case "":
		abs = fmt.Sprintf("%+g", d)
	default:
		abs = fmt.Sprintf("%+.0f %s", d, unit)
	}
	if b == 0 {
		return abs
	}
	rel := 100 * d / math.Abs(b)
	if math.Abs(rel) < 1 {
		return fmt.Sprintf("%s (%+.2g %%)", abs, rel)
	}
	return fmt.Sprintf("%s (%+.1f %%)", abs, rel)
}
