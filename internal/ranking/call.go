package ranking

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/stats"
)

// Alpha is the family-wise error rate of the baseline's marks (Holm).
const Alpha = 1 - stats.Confidence

// Call is what the ranking says of one ranked measure without a baseline.
type Call struct {
	Leader int  // the column with the best level; -1 when fewer than two are measured
	Star   bool // the leader's ★: called against every other column, each by at least the floor
	// Closest is the measured column the leader is nearest to, and Pair the
	// leader's difference from it: the call's weakest link, which the
	// summary shows (-1 without a leader).
	Closest int
	Pair    Pair
	// Why says why there is no ★ ("" with one), and Failed is the column
	// whose pair with the leader said it (-1 when none did).
	Why    string
	Failed int
}

// better says whether a is better than b in direction dir.
func better(dir measure.Better, a, b float64) bool {
	if dir == measure.Higher {
		return a > b
	}
	return a < b
}

// favours says whether the pair (leader − other) is called in the
// leader's favour: its interval excludes 0 on the side of dir.
func favours(dir measure.Better, p Pair) bool {
	if dir == measure.Higher {
		return p.Callable() && p.Lo > 0
	}
	return p.Callable() && p.Hi < 0
}

// Lead calls the leader of s: the column with the best level gets a ★ only
// when its interval against every other measured column excludes 0 in its
// favour and each difference clears the measure's floor (intersection–
// union: each test at 5 %, no correction needed, since the ★ needs all).
func (s *Stat) Lead() Call {
	m := s.Measure
	c := Call{Leader: -1, Closest: -1, Failed: -1}
	measured := 0
	for i, lv := range s.Levels {
		if math.IsNaN(lv.Value) {
			continue
		}
		measured++
		if c.Leader < 0 || better(m.Better, lv.Value, s.Levels[c.Leader].Value) {
			c.Leader = i
		}
	}
	if measured < 2 {
		c.Leader = -1
		c.Why = "fewer than two columns measured"
		if len(s.Levels) < 2 {
			c.Why = "the run has one column"
		}
		return c
	}
	c.Star = true
	for j, lv := range s.Levels {
		if j == c.Leader || math.IsNaN(lv.Value) {
			continue
		}
		p := s.Pair(c.Leader, j)
		if c.Closest < 0 || math.Abs(p.Diff) < math.Abs(c.Pair.Diff) || math.IsNaN(c.Pair.Diff) {
			c.Closest, c.Pair = j, p
		}
		why := ""
		switch {
		case !p.Callable():
			why = p.Note
		case !favours(m.Better, p):
			why = "the interval against " + s.colName(j) + " includes 0"
		case math.Abs(p.Diff) < Floor(m, p):
			why = "the difference from " + s.colName(j) + " is under the floor of " + Amount(Floor(m, p), m.Unit)
		}
		if why != "" && c.Star {
			c.Star, c.Why, c.Failed = false, why, j
		}
	}
	return c
}

// Floor is the least difference of m worth a call for the pair p: the
// catalogue's practical floor or, for a growth rate, what adds up to the
// measure's SpanFloor over the span p's slope was taken over, whichever
// is larger (2 MB over the minute a 2-minute run's RSS slope rests on is
// 120 MB/h; over a day, 5 MB/h binds).
func Floor(m *measure.Measure, p Pair) float64 {
	f := m.Rank.Floor
	if m.Rank.Stat == measure.Growth && m.Rank.SpanFloor > 0 && p.N > 0 && p.Span > 0 {
		f = max(f, m.Rank.SpanFloor/(float64(p.N)*p.Span/3600))
	}
	return f
}

// Mark is a column's standing against the baseline on one measure.
type Mark struct {
	Kind MarkKind
	Pair Pair   // the column's difference from the baseline (column − baseline)
	Why  string // why it is = ("" for better or worse, and for the baseline)
}

// MarkKind is better, worse, = or the baseline itself.
type MarkKind string

// The marks against a baseline.
const (
	Base   MarkKind = "baseline"
	Better MarkKind = "better"
	Worse  MarkKind = "worse"
	Same   MarkKind = "="
)

// Versus marks every column against column base: each column's paired
// difference from the baseline is tested, the p-values corrected together
// by Holm's step-down (family-wise 5 %), and a column is better or worse
// only when its test is rejected and the difference clears the floor;
// else it is =.
func (s *Stat) Versus(base int) []Mark {
	m := s.Measure
	out := make([]Mark, len(s.Levels))
	var idx []int
	var ps []float64
	for j := range s.Levels {
		if j == base {
			out[j] = Mark{Kind: Base}
			continue
		}
		p := s.Pair(j, base)
		out[j] = Mark{Kind: Same, Pair: p}
		if !p.Callable() {
			out[j].Why = p.Note
			continue
		}
		idx = append(idx, j)
		ps = append(ps, p.P)
	}
	rejected := stats.Holm(ps, Alpha)
	for k, j := range idx {
		p := out[j].Pair
		switch {
		case !rejected[k]:
			out[j].Why = "not significant after Holm's correction"
		case math.Abs(p.Diff) < Floor(m, p):
			out[j].Why = "under the floor of " + Amount(Floor(m, p), m.Unit)
		case better(m.Better, p.Diff, 0):
			out[j].Kind = Better
		default:
			out[j].Kind = Worse
		}
	}
	return out
}

// colName is filled by the ranking that owns s (Ranking.Stats).
func (s *Stat) colName(i int) string {
	if s.cols == nil || i < 0 || i >= len(s.cols) {
		return "column " + strconv.Itoa(i)
	}
	return s.cols[i]
}

// Amount formats a figure of a measure in its unit, for the summary and
// the marks: MB for bytes, points of one core for CPU %.
func Amount(v float64, unit string) string {
	if math.IsNaN(v) {
		return measure.NotMeasured
	}
	switch unit {
	case "bytes":
		return format(v/1e6, 1) + " MB"
	case "%":
		return format(v, 2) + " points of one core"
	case "ms":
		if math.Abs(v) >= 10 {
			return format(v, 0) + " ms"
		}
		return format(v, 2) + " ms"
	case "MB/h":
		return format(v, 1) + " MB/h"
	}
	return format(v, 1) + " " + unit
}

// Interval formats an interval in a measure's unit: "[0.41, 0.77]".
func Interval(lo, hi float64, unit string) string {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return "[no interval]"
	}
	d := 2
	switch unit {
	case "bytes":
		lo, hi, d = lo/1e6, hi/1e6, 1
	case "MB/h", "ids":
		d = 1
	}
	return fmt.Sprintf("[%s, %s]", format(lo, d), format(hi, d))
}

// format is v with digits decimals and a true minus sign.
func format(v float64, digits int) string {
	s := strconv.FormatFloat(v, 'f', digits, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-") // no "−0.00"
	}
	return strings.Replace(s, "-", "−", 1)
}
