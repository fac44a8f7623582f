// Package stats is the arithmetic of the ranking: paired batch means of two
// columns' per-second series, the t-interval of a mean (go-moremath's
// Student t, inverted here by bisection), the lag-1 autocorrelation that
// decides whether batches are long enough to be independent, Holm's
// correction, the Theil–Sen slope with Sen's interval, and the run length
// an effect would need. It knows nothing of runs or libraries: its callers
// hand it numbers and read numbers back.
package stats

import (
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// Confidence is the level of every interval the ranking shows.
const Confidence = 0.95

// Interval is the mean of a sample with its two-sided t-interval and the
// p-value of "the mean is 0".
type Interval struct {
	N      int
	Mean   float64
	Lo, Hi float64
	SD     float64 // the sample's standard deviation (n − 1)
	P      float64 // two-sided; 1 when N < 2
}

// Excludes0 says whether the interval lies wholly on one side of 0.
func (iv Interval) Excludes0() bool { return iv.Lo > 0 || iv.Hi < 0 }

// TInterval is the mean of xs (NaN left out) with its t-interval at
// confidence conf. With fewer than two values the interval is NaN and P 1.
// A sample without spread has an interval of its mean alone and P 0 (or 1
// when that mean is 0): nothing varies, so nothing is uncertain.
func TInterval(xs []float64, conf float64) Interval {
	xs = finite(xs)
	iv := Interval{N: len(xs), Mean: Mean(xs), Lo: math.NaN(), Hi: math.NaN(), SD: math.NaN(), P: 1}
	if iv.N < 2 {
		return iv
	}
	iv.SD = SD(xs)
	se := iv.SD / math.Sqrt(float64(iv.N))
	if se == 0 {
		iv.Lo, iv.Hi = iv.Mean, iv.Mean
		if iv.Mean != 0 {
			iv.P = 0
		}
		return iv
	}
	df := float64(iv.N - 1)
	h := TQuantile(1-(1-conf)/2, df) * se
	iv.Lo, iv.Hi = iv.Mean-h, iv.Mean+h
	iv.P = 2 * (1 - moremath.TDist{V: df}.CDF(math.Abs(iv.Mean)/se))
	return iv
}

// TIntervalAbout is the mean of ys with the t-interval of the least-squares
// line of ys on xs at the mean of xs: the part of ys's spread that follows
// xs is not counted as noise. The line's value at x̄ is ȳ, its variance
// σ²/n, σ² the residuals' variance on n − 2 degrees of freedom (one more
// is spent on the slope). SD is the residuals'. With no spread in xs it is
// TInterval; under three values the interval is NaN and P 1.
func TIntervalAbout(ys, xs []float64, conf float64) Interval {
	if len(xs) != len(ys) || SD(xs) == 0 || math.IsNaN(SD(xs)) {
		return TInterval(ys, conf)
	}
	n := len(ys)
	iv := Interval{N: n, Mean: Mean(ys), Lo: math.NaN(), Hi: math.NaN(), SD: math.NaN(), P: 1}
	if n < 3 {
		return iv
	}
	var ss float64
	for _, e := range ResidualsOLS(xs, ys) {
		ss += e * e
	}
	df := float64(n - 2)
	iv.SD = math.Sqrt(ss / df)
	se := iv.SD / math.Sqrt(float64(n))
	if se == 0 {
		iv.Lo, iv.Hi = iv.Mean, iv.Mean
		if iv.Mean != 0 {
			iv.P = 0
		}
		return iv
	}
	h := TQuantile(1-(1-conf)/2, df) * se
	iv.Lo, iv.Hi = iv.Mean-h, iv.Mean+h
	iv.P = 2 * (1 - moremath.TDist{V: df}.CDF(math.Abs(iv.Mean)/se))
	return iv
}

// ResidualsOLS are ys about their least-squares line on xs (about their
// mean when xs has no spread).
func ResidualsOLS(xs, ys []float64) []float64 {
	mx, my := Mean(xs), Mean(ys)
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	slope := 0.0
	if sxx > 0 {
		slope = sxy / sxx
	}
	out := make([]float64, len(ys))
	for i := range ys {
		out[i] = ys[i] - my - slope*(xs[i]-mx)
	}
	return out
}

// TQuantile is the p-quantile of Student's t with df degrees of freedom:
// the x at which go-moremath's CDF reaches p, found by bisection (the CDF
// is monotonic; the halvings go on until the bracket cannot shrink, so the
// quantile is as exact as the CDF: about 1e-8 near the centre, far better
// than the three decimals an interval is shown with).
func TQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) {
		return math.NaN()
	}
	cdf := moremath.TDist{V: df}.CDF
	lo, hi := -1.0, 1.0
	for cdf(lo) > p {
		lo *= 2
	}
	for cdf(hi) < p {
		hi *= 2
	}
	for range 200 {
		mid := (lo + hi) / 2
		if mid == lo || mid == hi {
			break
		}
		if cdf(mid) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// Mean is the mean of xs, NaN when empty.
func Mean(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// SD is the sample standard deviation (n − 1) of xs, NaN under two values.
func SD(xs []float64) float64 {
	if len(xs) < 2 {
		return math.NaN()
	}
	m := Mean(xs)
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return math.Sqrt(ss / float64(len(xs)-1))
}

// Median is the median of xs (NaN left out), NaN when none.
func Median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(finite(xs)))
	switch n := len(s); {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return s[n/2]
	default:
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// Lag1 is the lag-1 autocorrelation of xs: how much each value tells of
// the next. 0 for fewer than three values or values without spread.
func Lag1(xs []float64) float64 {
	if len(xs) < 3 {
		return 0
	}
	m := Mean(xs)
	var num, den float64
	for i, x := range xs {
		den += (x - m) * (x - m)
		if i+1 < len(xs) {
			num += (x - m) * (xs[i+1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// Holm says which of the hypotheses with p-values ps are rejected at
// family-wise level alpha by Holm's step-down: the smallest p against
// alpha/m, the next against alpha/(m−1), and so on until one is not
// rejected (it and all larger ones stand).
func Holm(ps []float64, alpha float64) []bool {
	order := make([]int, len(ps))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := ps[a], ps[b]
		switch {
		case math.IsNaN(pa) && math.IsNaN(pb):
			return 0
		case math.IsNaN(pa):
			return 1
		case math.IsNaN(pb):
			return -1
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	out := make([]bool, len(ps))
	m := len(ps)
	for rank, i := range order {
		if !(ps[i] <= alpha/float64(m-rank)) { // NaN is never rejected
			break
		}
		out[i] = true
	}
	return out
}

// finite returns xs without its NaN values (xs itself when it has none).
func finite(xs []float64) []float64 {
	if !slices.ContainsFunc(xs, math.IsNaN) {
		return xs
	}
	return slices.DeleteFunc(slices.Clone(xs), math.IsNaN)
}
