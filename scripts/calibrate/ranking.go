package main

import (
	"database/sql"
	"fmt"
	"math"
	"slices"

	_ "github.com/mattn/go-sqlite3" // the driver store uses; the ranking is read by plain SQL

	"github.com/wssoak/wssoak/internal/measure"
	"github.com/wssoak/wssoak/internal/ranking"
	"github.com/wssoak/wssoak/internal/store"
)

// rankRow is one row of a run's ranking table: the paired difference a − b
// of a ranked measure, with its 95 % interval; note says why it cannot be
// called, "" when it can.
type rankRow struct {
	stat, a, b  string
	n           int // batches or faults
	est, lo, hi float64
	span        float64 // seconds per batch
	note        string
}

// readRanking reads the ranking table of the database at path; none when
// the database has no such table (a run of a soak that did not rank).
func readRanking(path string) ([]rankRow, error) {
	db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'ranking'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("read ranking: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	rows, err := db.Query(`SELECT stat, a, b, n, est, lo, hi, span, note FROM ranking WHERE b <> ''`)
	if err != nil {
		return nil, fmt.Errorf("read ranking: %w", err)
	}
	defer rows.Close()
	var out []rankRow
	for rows.Next() {
		var r rankRow
		var est, lo, hi, span sql.NullFloat64
		if err := rows.Scan(&r.stat, &r.a, &r.b, &r.n, &est, &lo, &hi, &span, &r.note); err != nil {
			return nil, fmt.Errorf("read ranking: %w", err)
		}
		r.est, r.lo, r.hi, r.span = nullNaN(est), nullNaN(lo), nullNaN(hi), nullNaN(span)
		out = append(out, r)
	}
	return out, rows.Err()
}

// rerank ranks a run's samples with this build's ranking: its pairs, as
// the run would have stored them.
func rerank(db *store.DB) ([]rankRow, error) {
	res, err := measure.Compute(db)
	if err != nil {
		return nil, fmt.Errorf("rank again: %w", err)
	}
	var out []rankRow
	for _, x := range ranking.Compute(res).Rows() {
		if x.B != "" {
			out = append(out, rankRow{stat: x.Stat, a: x.A, b: x.B, n: x.N, est: x.Est, lo: x.Lo, hi: x.Hi, span: x.Span, note: x.Note})
		}
	}
	return out, nil
}

func nullNaN(x sql.NullFloat64) float64 {
	if !x.Valid {
		return math.NaN()
	}
	return x.Float64
}

// called is the sign of a called difference a − b: +1 or −1 when its
// interval excludes 0 and it clears the measure's practical floor, 0 when it
// is not called.
func called(r rankRow) int {
	m := measure.ByID(r.stat)
	if m == nil || r.note != "" || math.IsNaN(r.est) || math.IsNaN(r.lo) || math.IsNaN(r.hi) || math.Abs(r.est) < floor(m, r) {
		return 0
	}
	switch {
	case r.lo > 0:
		return 1
	case r.hi < 0:
		return -1
	}
	return 0
}

// callable says whether the ranking could have called a − b: it has an
// interval (no note saying why not).
func callable(r rankRow) bool { return r.note == "" && !math.IsNaN(r.lo) && !math.IsNaN(r.hi) }

// find returns the row of a − b for stat (flipped when stored as b − a).
func find(rows []rankRow, stat, a, b string) (rankRow, bool) {
	for _, r := range rows {
		switch {
		case r.stat == stat && r.a == a && r.b == b:
			return r, true
		case r.stat == stat && r.a == b && r.b == a:
			r.a, r.b, r.est, r.lo, r.hi = a, b, -r.est, -r.hi, -r.lo
			return r, true
		}
	}
	return rankRow{}, false
}

// why says why a − b is not called: the ranking's note, an interval that
// includes 0, or a difference under the floor.
func why(r rankRow) string {
	m := measure.ByID(r.stat)
	switch {
	case r.note != "":
		return r.note
	case math.IsNaN(r.lo) || math.IsNaN(r.hi):
		return "no interval"
	case r.lo <= 0 && r.hi >= 0:
		return fmt.Sprintf("interval [%.3g, %.3g] includes 0", r.lo, r.hi)
	case m != nil && math.Abs(r.est) < floor(m, r):
		return fmt.Sprintf("%.3g under the floor %.3g", r.est, floor(m, r))
	}
	return fmt.Sprintf("called the other way (%.3g)", r.est)
}

// better is the sign of a − b that makes a better on stat.
func better(stat string) int {
	if m := measure.ByID(stat); m != nil && m.Better == measure.Higher {
		return 1
	}
	return -1
}

// judge fills r's calls from the ranking's rows.
func (r *runResult) judge(rows []rankRow, cols columns) {
	r.aa = len(cols.aa)
	r.aaBy = map[string]aaCount{}
	var stats []string
	for _, x := range rows {
		if !slices.Contains(stats, x.stat) {
			stats = append(stats, x.stat)
		}
	}
	for _, stat := range stats {
		wins := map[string]int{} // A/A column → A/A columns it was called better than
		for i, a := range cols.aa {
			for _, b := range cols.aa[i+1:] {
				x, ok := find(rows, stat, a, b)
				if !ok {
					continue
				}
				r.aaPairs++
				by := r.aaBy[stat]
				by.pairs++
				if callable(x) {
					r.aaCallable++
					by.callable++
					if x.lo > 0 || x.hi < 0 {
						r.aaExcl++
						by.excl++
					}
				}
				c := called(x)
				if c != 0 {
					by.called++
				}
				r.aaBy[stat] = by
				if c == 0 {
					continue
				}
				r.aaCalled = append(r.aaCalled, stat+" "+a+" "+b)
				if c == better(stat) {
					wins[a]++
				} else {
					wins[b]++
				}
			}
		}
		for _, a := range cols.aa {
			if wins[a] == len(cols.aa)-1 {
				r.aaStars = append(r.aaStars, stat+" "+a)
			}
		}
	}
	for _, a := range cols.aa {
		x, ok := find(rows, cols.cpu, cols.cost, a)
		switch {
		case ok && called(x) == -better(cols.cpu):
			r.costOver++
		case ok:
			r.costMissed = append(r.costMissed, a+": "+why(x))
		}
	}
	for _, m := range cols.memory {
		x, ok := find(rows, m, cols.gc[0], cols.gc[1])
		switch {
		case ok && called(x) != 0:
			r.gcCalledOn = append(r.gcCalledOn, m)
		case ok:
			r.gcMissed = append(r.gcMissed, m+": "+why(x))
		}
	}
}
