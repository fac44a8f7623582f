package report

import "math"

// point is one value of a chart series at X seconds since the run started.
// A NaN Y breaks the line (a missing second, or a bucket without data).
type point struct{ X, Y float64 }

// maxBuckets bounds a chart series of a long run: its seconds are cut into
// at most this many equal buckets, each drawn as its minimum and maximum,
// so at most 2×maxBuckets points and no spike is lost.
const maxBuckets = 1000

// envelope appends the bucket of seconds [from, to] (inside a bucket of
// width seconds) as its minimum and maximum at the bucket's middle, after a
// NaN point if buckets are missing before it (no data: the line breaks).
func envelope(ps []point, from, to, width int64, lo, hi float64) []point {
	k := from / width
	if n := len(ps); n > 0 {
		prevK := int64(ps[n-1].X) / width
		if k > prevK+1 {
			ps = append(ps, point{float64((prevK + 1) * width), math.NaN()})
		}
	}
	x := float64(from+to) / 2
	if same(lo, hi) {
		return append(ps, point{x, lo})
	}
	return append(ps, point{x, lo}, point{x, hi})
}

// dedupRuns keeps the first and last point of every run of equal values
// and turns gaps wider than 1.5 steps into NaN points.
func dedupRuns(ps []point, step float64) []point {
	out := make([]point, 0, min(len(ps), 4*maxBuckets))
	for i, p := range ps {
		if i > 0 && p.X-ps[i-1].X > 1.5*step {
			out = append(out, point{ps[i-1].X + step, math.NaN()})
		}
		if i > 0 && i < len(ps)-1 && same(p.Y, ps[i-1].Y) && same(p.Y, ps[i+1].Y) &&
			p.X-ps[i-1].X <= 1.5*step && ps[i+1].X-p.X <= 1.5*step {
			continue // inside a run: the line passes through it anyway
		}
		out = append(out, p)
	}
	return out
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
