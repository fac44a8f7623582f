package report

import "math"

// point is one value of a chart series at X seconds since the run started.
// A NaN Y breaks the line (a missing second, or a bucket without data).
type point struct{ X, Y float64 }

// maxBuckets bounds a chart series: a longer series is cut into this many
// equal time buckets and keeps each bucket's minimum and maximum (in time
// order), so at most 2×maxBuckets points and no spike is lost.
const maxBuckets = 1000

// downsample returns ps (ordered by X, spaced step seconds apart when
// complete) shortened for drawing, and the bucket width in seconds it used
// (0 = every point kept).
//
//  1. Runs of equal values keep only their first and last point: the line
//     drawn through what is left is the same line (exact, e.g. for
//     cumulative counters and flat gauges).
//  2. If that still leaves more than 2×maxBuckets points, the original
//     series is cut into maxBuckets buckets, each keeping its minimum and
//     maximum point.
//
// A gap of more than 1.5 steps between two points (or an empty bucket)
// becomes a NaN point, so the line breaks instead of bridging missing data.
func downsample(ps []point, step float64) ([]point, float64) {
	if len(ps) == 0 {
		return nil, 0
	}
	if out := dedupRuns(ps, step); len(out) <= 2*maxBuckets {
		return out, 0
	}
	span := ps[len(ps)-1].X - ps[0].X
	w := math.Ceil(span / maxBuckets)
	if w < step {
		w = step
	}
	out := make([]point, 0, 2*maxBuckets+16)
	x0 := ps[0].X
	prevB := -1.0
	for i := 0; i < len(ps); {
		b := math.Floor((ps[i].X - x0) / w)
		j := i
		lo, hi := -1, -1
		for ; j < len(ps) && math.Floor((ps[j].X-x0)/w) == b; j++ {
			if math.IsNaN(ps[j].Y) {
				continue
			}
			if lo < 0 || ps[j].Y < ps[lo].Y {
				lo = j
			}
			if hi < 0 || ps[j].Y > ps[hi].Y {
				hi = j
			}
		}
		if prevB >= 0 && b > prevB+1 {
			out = append(out, point{x0 + (prevB+1)*w, math.NaN()})
		}
		switch {
		case lo < 0:
			out = append(out, point{ps[i].X, math.NaN()})
		case lo == hi:
			out = append(out, ps[lo])
		case lo < hi:
			out = append(out, ps[lo], ps[hi])
		default:
			out = append(out, ps[hi], ps[lo])
		}
		prevB = b
		i = j
	}
	return out, w
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
