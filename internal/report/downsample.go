package report

import "math"

// maxBuckets bounds the rows of a chart of a long run: its seconds are cut
// into at most this many equal buckets, each drawn as its minimum and its
// maximum at the bucket's middle, so at most 2×maxBuckets rows and no spike
// is lost.
const maxBuckets = 1000

// compact drops the rows of c that draw nothing: a row equal to the one
// before at the same instant (a bucket whose minimum is its maximum in every
// series), then the rows inside a run of equal rows, whose two ends draw the
// same lines (and the same gaps: a run of NaN stays broken).
func (c *chart) compact() {
	same := func(i, j int) bool {
		for _, col := range c.Cols {
			if !same(col[i], col[j]) {
				return false
			}
		}
		return true
	}
	keep := make([]int, 0, len(c.X))
	for i := range c.X {
		if i > 0 && c.X[i] == c.X[i-1] && same(i, i-1) {
			continue
		}
		keep = append(keep, i)
	}
	out := make([]int, 0, len(keep))
	for k, i := range keep {
		if k > 0 && k < len(keep)-1 && same(i, keep[k-1]) && same(i, keep[k+1]) {
			continue
		}
		out = append(out, i)
	}
	x := make([]float64, len(out))
	for r, i := range out {
		x[r] = c.X[i]
	}
	c.X = x
	for k, col := range c.Cols {
		v := make([]float64, len(out))
		for r, i := range out {
			v[r] = col[i]
		}
		c.Cols[k] = v
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
