package stats

import (
	"fmt"
	"math"
	"slices"

	moremath "github.com/aclements/go-moremath/stats"
)

// The batch rules. Seconds of one process's CPU or heap lean on the
// seconds before them (a collection, a burst), so single seconds are not
// independent draws and an interval over them would be far too narrow.
// Means over batches of several seconds are close to independent; the
// lag-1 autocorrelation of the batch means says whether they are, and
// when it does not, batches twice as long are taken.
const (
	MaxBatches      = 20  // a long run is cut into this many batches
	MinBatches      = 10  // fewer are "too short to call": an interval over them says little
	MinBatchSeconds = 5   // the shortest batch
	MaxLag1         = 0.2 // batch means more autocorrelated than this are merged in pairs (see LagLimit)
)

// lagChance is how often batch means that are independent may be taken
// for dependent ones (LagLimit): one time in twenty.
const lagChance = 0.05

// LagLimit is the lag-1 autocorrelation of k batch means above which they
// are taken for dependent: MaxLag1, or, when larger, what k independent
// means reach by chance one time in twenty (lagChance). The estimate of
// the lag-1 autocorrelation of k independent values has mean −1/k and
// variance (k−2)²/(k²(k−1)) (Moran, 1948): at 20 batches it spreads by
// ±0.21, so it exceeds 0.2 one time in eight with nothing to find, and a
// clear difference would be halved to 10 batches and then, one time in
// thirty, refused as too short to call. The one-sided 95 % point of that
// spread is 0.29 at 20 batches and 0.34 at 10 (a simulation of a million
// series gives 0.294 and 0.348); 0.2 itself binds only beyond about 50
// batches.
func LagLimit(k int) float64 {
	if k < 3 {
		return MaxLag1
	}
	n := float64(k)
	z := moremath.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - lagChance)
	return max(MaxLag1, -1/n+z*(n-2)/(n*math.Sqrt(n-1)))
}

// Batches are a series of paired differences cut into equal batches of
// seconds, with the mean of each.
type Batches struct {
	Means []float64 // per batch that has a value
	Mids  []float64 // each such batch's middle, seconds from the series' start
	Len   float64   // seconds per batch
	Lag1  float64   // of Means, or of their residuals about the trend or the covariate
	// X are the covariate's batch means over the same seconds, when the
	// batches were taken about one (BatchMeansAbout); nil otherwise.
	X []float64
	// Short says why the batches are too few to call a difference ("" when
	// they are enough): the window's length, unpaired seconds, or the
	// autocorrelation that halved them.
	Short string
}

// Batch cuts d (one value per second, NaN where a second has none) into k
// equal batches of seconds and returns the mean of each batch that has a
// value, with the batch's middle. Batch i covers seconds [i·n/k, (i+1)·n/k).
func Batch(d []float64, k int) (means, mids []float64) {
	n := len(d)
	if k <= 0 || n == 0 {
		return nil, nil
	}
	for i := range k {
		lo, hi := i*n/k, (i+1)*n/k
		var sum float64
		cnt := 0
		for _, x := range d[lo:hi] {
			if !math.IsNaN(x) {
				sum += x
				cnt++
			}
		}
		if cnt > 0 {
			means = append(means, sum/float64(cnt))
			mids = append(mids, float64(lo+hi)/2)
		}
	}
	return means, mids
}

// BatchMeans cuts d into k = min(MaxBatches, len(d)/MinBatchSeconds)
// batches and, while the lag-1 autocorrelation of their means exceeds
// LagLimit(k), into half as many. With trend the autocorrelation is that
// of the residuals about the Theil–Sen line through the means (a growth
// rate is what is measured then, and a trend is not dependence). Under
// MinBatches batches Short says why.
func BatchMeans(d []float64, trend bool) Batches {
	return batched(len(d), func(k int) (means, mids, xs []float64) {
		means, mids = Batch(d, k)
		return means, mids, nil
	}, trend)
}

// BatchMeansAbout is BatchMeans of d taken about a covariate x, one value
// a second as d: the messages a second both columns of a pair received.
// When one column spends more per message than the other, their
// difference follows the traffic's swings; those swings are not noise
// (both columns saw the same ones), yet they make the batch means
// autocorrelated and their spread wide. So X holds x's batch means over
// the same seconds, Interval fits the batch means on them, and the lag-1
// rule looks at the residuals about that line, as a growth rate's looks at
// the residuals about its trend. Seconds where either has no value are
// left out.
func BatchMeansAbout(d, x []float64) Batches {
	n := min(len(d), len(x))
	dd, xx := make([]float64, n), make([]float64, n)
	for i := range n {
		dd[i], xx[i] = d[i], x[i]
		if math.IsNaN(d[i]) || math.IsNaN(x[i]) {
			dd[i], xx[i] = math.NaN(), math.NaN()
		}
	}
	return batched(n, func(k int) (means, mids, xs []float64) {
		means, mids = Batch(dd, k)
		xs, _ = Batch(xx, k)
		return means, mids, xs
	}, false)
}

// Interval is the mean of the batch means with its t-interval at
// confidence conf: about the covariate's batch means when the batches
// were taken about one (TIntervalAbout), else TInterval.
func (b Batches) Interval(conf float64) Interval {
	if b.X != nil {
		return TIntervalAbout(b.Means, b.X, conf)
	}
	return TInterval(b.Means, conf)
}

// batched is BatchMeans of a window of n seconds that cut cuts into k
// batches, returning each batch's mean and middle and, taken about a
// covariate, the covariate's batch means.
func batched(n int, cut func(k int) (means, mids, xs []float64), trend bool) Batches {
	k := min(MaxBatches, n/MinBatchSeconds)
	if k < MinBatches {
		return Batches{Short: fmt.Sprintf("too short to call: %d s make %s of ≥ %d s, %d needed", n, batches(max(k, 0)), MinBatchSeconds, MinBatches)}
	}
	for {
		b := Batches{Len: float64(n) / float64(k)}
		b.Means, b.Mids, b.X = cut(k)
		if len(b.Means) < MinBatches {
			b.Short = fmt.Sprintf("too short to call: %d of %d batches have a paired second, %d needed", len(b.Means), k, MinBatches)
			return b
		}
		switch {
		case trend:
			b.Lag1 = Lag1(residuals(b.Mids, b.Means))
		case b.X != nil:
			b.Lag1 = Lag1(ResidualsOLS(b.X, b.Means))
		default:
			b.Lag1 = Lag1(b.Means)
		}
		limit := LagLimit(len(b.Means))
		if b.Lag1 <= limit {
			return b
		}
		if k/2 < MinBatches {
			b.Short = fmt.Sprintf("too short to call: batch means autocorrelated (lag-1 %.2f over %d batches of %.0f s, over %.2f allowed)",
				b.Lag1, len(b.Means), b.Len, limit)
			return b
		}
		k /= 2
	}
}

// batches is "1 batch", "8 batches".
func batches(n int) string {
	if n == 1 {
		return "1 batch"
	}
	return fmt.Sprintf("%d batches", n)
}

// residuals are ys about the Theil–Sen line through (xs, ys).
func residuals(xs, ys []float64) []float64 {
	s := TheilSen(xs, ys, Confidence)
	out := make([]float64, len(ys))
	for i := range ys {
		out[i] = ys[i] - s.Intercept - s.Slope*xs[i]
	}
	return out
}

// Slope is a Theil–Sen line: the median of the slopes between every two
// points, with Sen's distribution-free interval and the Mann–Kendall
// p-value of "no trend".
type Slope struct {
	N                int // points
	Slope, Intercept float64
	Lo, Hi           float64 // NaN when too few points for the confidence
	P                float64
}

// Excludes0 says whether the slope's interval lies wholly on one side of 0.
func (s Slope) Excludes0() bool { return s.Lo > 0 || s.Hi < 0 }

// TheilSen fits the Theil–Sen line through (xs, ys). Its interval is
// Sen's (1968): of the N pairwise slopes in order, the M1-th and the
// (M2+1)-th, M1,2 = (N ∓ z·√Var S)/2 with Var S = n(n−1)(2n+5)/18, the
// variance of Kendall's S without ties.
func TheilSen(xs, ys []float64, conf float64) Slope {
	n := len(xs)
	s := Slope{N: n, Slope: math.NaN(), Intercept: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), P: 1}
	if n < 2 {
		return s
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	var kendall float64
	for i := range n {
		for j := i + 1; j < n; j++ {
			if xs[j] == xs[i] {
				continue
			}
			slopes = append(slopes, (ys[j]-ys[i])/(xs[j]-xs[i]))
			kendall += sign((ys[j] - ys[i]) * (xs[j] - xs[i]))
		}
	}
	if len(slopes) == 0 {
		return s
	}
	slices.Sort(slopes)
	s.Slope = Median(slopes)
	icpt := make([]float64, n)
	for i := range n {
		icpt[i] = ys[i] - s.Slope*xs[i]
	}
	s.Intercept = Median(icpt)
	z := moremath.NormalDist{Mu: 0, Sigma: 1}.InvCDF(1 - (1-conf)/2)
	sd := math.Sqrt(float64(n*(n-1)*(2*n+5)) / 18)
	big := float64(len(slopes))
	m1 := int(math.Round((big - z*sd) / 2))
	m2 := int(math.Round((big + z*sd) / 2))
	if m1 >= 1 && m2 < len(slopes) {
		s.Lo, s.Hi = slopes[m1-1], slopes[m2]
	}
	if kendall != 0 {
		zs := (kendall - sign(kendall)) / sd // continuity-corrected
		s.P = 2 * (1 - moremath.NormalDist{Mu: 0, Sigma: 1}.CDF(math.Abs(zs)))
	}
	return s
}

func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// power is the chance the run-length estimates give a difference of the
// stated size of being called (the usual 80 %).
const power = 0.80

// RunLength estimates the seconds of window that would call an effect of
// the given size, at MaxBatches batches, when batch means of batchLen
// seconds spread with standard deviation sd: a batch's spread shrinks with
// the square root of its length, so an interval of (t₀.₉₇₅ + t₀.₈₀)·SE ≤
// effect needs batchLen · ((t₀.₉₇₅ + t₀.₈₀)·sd / effect)² seconds. An
// estimate only: it assumes the spread per second stays what this run
// showed and the seconds of a batch are independent enough. NaN when sd
// or effect is not positive.
func RunLength(sd, batchLen, effect float64) float64 {
	if !(sd > 0) || !(effect > 0) || !(batchLen > 0) {
		return math.NaN()
	}
	df := float64(MaxBatches - 1)
	f := (TQuantile(1-(1-Confidence)/2, df) + TQuantile(power, df)) * sd / effect
	return batchLen * f * f
}

// SamplesNeeded estimates how many paired values (faults) would call an
// effect of the given size when they spread with standard deviation sd:
// the least n ≥ minN with (t₀.₉₇₅ + t₀.₈₀ at n − 1 degrees of freedom)·sd/√n
// ≤ effect (the left side falls as n grows, so it is found by doubling,
// then bisection); 0 when sd or effect is not positive, -1 beyond 1,000,000.
func SamplesNeeded(sd, effect float64, minN int) int {
	if !(sd > 0) || !(effect > 0) {
		return 0
	}
	enough := func(n int) bool {
		df := float64(n - 1)
		return (TQuantile(1-(1-Confidence)/2, df)+TQuantile(power, df))*sd/math.Sqrt(float64(n)) <= effect
	}
	lo := max(minN, 2)
	if enough(lo) {
		return lo
	}
	hi := lo * 2
	for !enough(hi) {
		if hi > 1_000_000 {
			return -1
		}
		lo, hi = hi, hi*2
	}
	for hi-lo > 1 { // enough(hi), not enough(lo)
		mid := (lo + hi) / 2
		if enough(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
