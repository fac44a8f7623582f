package ranking

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/stats"
)

// Line is one dimension of the summary.
type Line struct {
	Dim  measure.Dimension
	Text string
}

// Summary is the summary's line for each ranked dimension (CPU, memory,
// latency, resilience; correctness is the checks'): the measures whose
// leader earned a ★, each with the leader's difference from the column
// nearest to it and its interval; else why nothing was called and, when
// the spread allows, an estimate of the run that would call the
// dimension's first measure's floor, and the columns called worse than the
// leader all the same.
func (r *Ranking) Summary() []Line {
	var out []Line
	if len(r.Cols) < 2 {
		return []Line{{Dim: "Ranking", Text: "none: the run has one column, nothing to compare it with"}}
	}
	for _, dim := range measure.Dimensions {
		var of []*Stat
		for _, s := range r.Stats {
			if s.Measure.Rank.Dim == dim {
				of = append(of, s)
			}
		}
		if len(of) == 0 {
			continue
		}
		var called []string
		for _, s := range of {
			if c := s.Lead(); c.Star {
				called = append(called, r.called(s, c))
			}
		}
		text := strings.Join(called, "; ")
		if len(called) == 0 {
			text = r.noCall(of[0])
			if b := r.behind(of); b != "" {
				text += "; " + b
			}
		}
		out = append(out, Line{Dim: dim, Text: text})
	}
	return out
}

// behind names, on a dimension without a ★, the columns called worse than
// its measures' leaders — a tie at the top must not hide a column far
// behind it: the leader taken as the baseline, every other column's pair
// with it tested and the family corrected by Holm's step-down, past the
// floor (Versus) — and those behind it by more than the floor whose batch
// means were too dependent to call. "" when none was.
func (r *Ranking) behind(of []*Stat) string {
	var parts []string
	for _, s := range of {
		c := s.Lead()
		if c.Leader < 0 || c.Star {
			continue
		}
		m := s.Measure
		var cols, uncalled []string
		for j, mk := range s.Versus(c.Leader) {
			p := mk.Pair
			switch {
			case mk.Kind == Worse:
				cols = append(cols, fmt.Sprintf("%s %s %s", r.Cols[j], Signed(p.Diff, m.Unit), Interval(p.Lo, p.Hi, m.Unit)))
			case mk.Kind == Same && strings.Contains(p.Note, "autocorrelated") && !math.IsNaN(p.Diff) && !better(m.Better, p.Diff, 0) &&
				math.Abs(p.Diff) >= Floor(m, p):
				// behind by more than the floor over the whole window, yet
				// without an interval to call it by (its batch means are
				// dependent): said, with why, rather than left out. A pair
				// on too few faults or too short a window is not: its
				// difference is as likely noise.
				why, _, _ := strings.Cut(p.Note, " (")
				uncalled = append(uncalled, fmt.Sprintf("%s %s (%s)", r.Cols[j], Signed(p.Diff, m.Unit), why))
			}
		}
		if len(cols) > 0 {
			parts = append(parts, fmt.Sprintf("called worse than the leader %s on %s: %s", r.Cols[c.Leader], m.Rank.Name, strings.Join(cols, ", ")))
		}
		if len(uncalled) > 0 {
			parts = append(parts, fmt.Sprintf("behind the leader %s on %s but not called: %s", r.Cols[c.Leader], m.Rank.Name, strings.Join(uncalled, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

// SummaryVersus is the summary against column base: for each ranked
// dimension, the columns called better or worse than the baseline (after
// Holm's correction, past the floor), each with its difference and
// interval; that none was, when none was.
func (r *Ranking) SummaryVersus(base int) []Line {
	var out []Line
	for _, dim := range measure.Dimensions {
		var parts []string
		ranked, why := false, ""
		for _, s := range r.Stats {
			m := s.Measure
			if m.Rank.Dim != dim {
				continue
			}
			ranked = true
			for j, mk := range s.Versus(base) {
				if why == "" && strings.HasPrefix(mk.Why, "too ") {
					why = mk.Why // the dimension's first measure that could not be called, and why
				}
				if mk.Kind == Better || mk.Kind == Worse {
					parts = append(parts, fmt.Sprintf("%s %s on %s: %s %s", r.Cols[j], mk.Kind, m.Rank.Name, Signed(mk.Pair.Diff, m.Unit),
						Interval(mk.Pair.Lo, mk.Pair.Hi, m.Unit)))
				}
			}
		}
		if !ranked {
			continue
		}
		text := strings.Join(parts, "; ")
		if len(parts) == 0 {
			text = "no column called better or worse than " + r.Cols[base]
			if why != "" {
				text += " (" + why + ")"
			}
		}
		out = append(out, Line{Dim: dim, Text: text})
	}
	return out
}

// called is a ★ in words: "gobwas ★ mean of per-second CPU %: −0.81
// points of one core against coder, the nearest [−1.02, −0.60]; 20
// batches of 6 s".
func (r *Ranking) called(s *Stat, c Call) string {
	m := s.Measure
	return fmt.Sprintf("%s ★ %s %s: %s against %s, the nearest %s; %s", r.Cols[c.Leader], direction(m.Better), m.Rank.Name,
		Signed(c.Pair.Diff, m.Unit), r.Cols[c.Closest], Interval(c.Pair.Lo, c.Pair.Hi, m.Unit), basis(c.Pair))
}

// noCall says why a dimension has no ★, by its first measure: the
// leader's first pair that failed says whether the run could not call a
// difference (too short, too few faults, an unsynchronised clock), could
// not tell the leader from a column, or found it ahead by less than the
// floor.
func (r *Ranking) noCall(s *Stat) string {
	m := s.Measure
	c := s.Lead()
	if c.Leader < 0 {
		if m.Rank.Stat == measure.PerFault && c.Why == "fewer than two columns measured" {
			return "no difference detectable in this run: fewer than two columns reconnected after a fault"
		}
		return "not ranked: " + c.Why
	}
	if p := c.Pair; p.Diff == 0 && p.SD == 0 {
		return "no difference in this run: the columns' " + m.Rank.Name + " were equal"
	}
	p := s.Pair(c.Leader, c.Failed)
	pair := fmt.Sprintf("%s %s %s", m.Rank.Name, Signed(p.Diff, m.Unit), Interval(p.Lo, p.Hi, m.Unit))
	est, enough := r.estimate(s, c.Pair)
	switch {
	case strings.Contains(c.Why, "under the floor"):
		return fmt.Sprintf("no call: %s leads %s by less than the floor of %s (%s)", r.Cols[c.Leader], r.Cols[c.Failed],
			Amount(Floor(m, p), m.Unit), pair)
	case strings.Contains(c.Why, "includes 0"):
		text := fmt.Sprintf("no difference detectable in this run between the leader %s and %s (%s)", r.Cols[c.Leader], r.Cols[c.Failed], pair)
		if est != "" {
			text += "; " + est
		}
		return text
	}
	text := c.Why // "too short to call: …", "too few faults to call: …"
	if !strings.HasPrefix(text, "too ") {
		text = "no call: " + text
	}
	if est != "" && !enough {
		text += "; " + est
	}
	return text
}

// estimate is the run (or the faults) that would call the measure's floor
// at the spread this run's pair p showed, labelled an estimate; enough
// when this run was long enough already (the text then says so); "" when
// the spread is unknown.
func (r *Ranking) estimate(s *Stat, p Pair) (text string, enough bool) {
	m := s.Measure
	floor := Amount(m.Rank.Floor, m.Unit)
	switch m.Rank.Stat {
	case measure.BatchMeans, measure.SteadyLevel:
		if strings.Contains(p.Note, "autocorrelated") {
			return "", false // the spread of dependent batches says nothing of longer ones
		}
		secs := stats.RunLength(p.SD, p.Span, m.Rank.Floor)
		if math.IsNaN(secs) {
			return "", false
		}
		// No window shorter than the batch rules allow can call anything.
		secs = max(secs, float64(stats.MinBatches*stats.MinBatchSeconds))
		if m.Rank.Stat == measure.SteadyLevel {
			secs *= 2 // the level is the window's second half
		}
		if p.Callable() && secs <= float64(r.Window) {
			return "one of " + floor + " would likely have been called in this window", true
		}
		return fmt.Sprintf("estimate: a window of about %s would detect %s at the spread seen (%s)", duration(secs), floor, m.Rank.Name), false
	case measure.PerFault:
		n := stats.SamplesNeeded(p.SD, m.Rank.Floor, MinFaults)
		switch {
		case n == 0:
			return "", false
		case n < 0:
			return fmt.Sprintf("estimate: more than a million faults would be needed to detect %s at the spread seen", floor), false
		case p.Callable() && n <= p.N:
			return "one of " + floor + " would likely have been called on these faults", true
		}
		return fmt.Sprintf("estimate: about %d paired faults would detect %s at the spread seen (%s)", n, floor, m.Rank.Name), false
	}
	return "", false
}

func direction(b measure.Better) string {
	if b == measure.Higher {
		return "highest"
	}
	return "lowest"
}

// Signed is a difference with its sign, in its unit.
func Signed(v float64, unit string) string {
	a := Amount(v, unit)
	if v > 0 {
		return "+" + a
	}
	return a
}

// basis says what a pair rests on: "20 batches of 6 s" or "9 faults".
func basis(p Pair) string {
	if p.Span > 0 {
		return fmt.Sprintf("%d batches of %s s", p.N, format(p.Span, 0))
	}
	return fmt.Sprintf("%d faults", p.N)
}

// duration is seconds in words, rounded up: "50 s", "14 min", "3.5 h",
// "4 days".
func duration(secs float64) string {
	d := time.Duration(math.Ceil(secs)) * time.Second
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(math.Ceil(d.Minutes())))
	case d < 48*time.Hour:
		return fmt.Sprintf("%s h", format(math.Ceil(d.Hours()*2)/2, 1))
	}
	return fmt.Sprintf("%d days", int(math.Ceil(d.Hours()/24)))
}
