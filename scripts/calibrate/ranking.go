package main

import (
	"database/sql"
	"fmt"
	"math"
	"slices"

	_ "github.com/mattn/go-sqlite3" // the driver store uses; the ranking is read by plain SQL

	"github.com/wssoak/wssoak/internal/measure"
)

// rankRow is one row of a run's ranking table: the paired difference a − b
// of a ranked measure, with its 95 % interval; note says why it cannot be
// called, "" when it can.
type rankRow struct {
	stat, a, b  string
	est, lo, hi float64
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
	rows, err := db.Query(`SELECT stat, a, b, est, lo, hi, note FROM ranking WHERE b <> ''`)
	if err != nil {
		return nil, fmt.Errorf("read ranking: %w", err)
	}
	defer rows.Close()
	var out []rankRow
	for rows.Next() {
		var r rankRow
		var est, lo, hi sql.NullFloat64
		if err := rows.Scan(&r.stat, &r.a, &r.b, &est, &lo, &hi, &r.note); err != nil {
			return nil, fmt.Errorf("read ranking: %w", err)
		}
		r.est, r.lo, r.hi = nullNaN(est), nullNaN(lo), nullNaN(hi)
		out = append(out, r)
	}
	return out, rows.Err()
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
	if m == nil || r.note != "" || math.IsNaN(r.est) || math.IsNaN(r.lo) || math.IsNaN(r.hi) || math.Abs(r.est) < floor(m) {
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

// pair returns the call of a − b for stat, and whether the ranking holds
// that pair (in either order).
func pair(rows []rankRow, stat, a, b string) (int, bool) {
	for _, r := range rows {
		switch {
		case r.stat == stat && r.a == a && r.b == b:
			return called(r), true
		case r.stat == stat && r.a == b && r.b == a:
			return -called(r), true
		}
	}
	return 0, false
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
				c, ok := pair(rows, stat, a, b)
				if !ok {
					continue
				}
				r.aaPairs++
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
		if c, ok := pair(rows, cols.cpu, cols.cost, a); ok && c == -better(cols.cpu) {
			r.costOver++
		}
	}
	for _, m := range cols.memory {
		if c, ok := pair(rows, m, cols.gc[0], cols.gc[1]); ok && c != 0 {
			r.gcCalledOn = append(r.gcCalledOn, m)
		}
	}
}
