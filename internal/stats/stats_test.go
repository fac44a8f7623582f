package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol || math.IsNaN(a) && math.IsNaN(b)
}

// TestTQuantile: the bisection against closed forms (1 degree of freedom
// is Cauchy: tan(π(p − ½)); 2 degrees: (2p − 1)/√(2p(1 − p))) and against
// the printed t-table.
func TestTQuantile(t *testing.T) {
	tests := []struct {
		p, df, want, tol float64
	}{
		{0.975, 1, math.Tan(math.Pi * 0.475), 1e-9},
		{0.9, 1, math.Tan(math.Pi * 0.4), 1e-9},
		{0.975, 2, 0.95 / math.Sqrt(2*0.975*0.025), 1e-9},
		{0.2, 2, -0.6 / math.Sqrt(2*0.2*0.8), 1e-9},
		{0.5, 7, 0, 1e-6}, // the CDF itself is good to about 1e-8 near 0
		// the t-table, 4 decimals
		{0.975, 4, 2.7764, 1e-4},
		{0.975, 9, 2.2622, 1e-4},
		{0.975, 19, 2.0930, 1e-4},
		{0.025, 9, -2.2622, 1e-4},
		{0.80, 19, 0.8610, 1e-4},
		{0.95, 10, 1.8125, 1e-4},
	}
	for _, tc := range tests {
		if got := TQuantile(tc.p, tc.df); !near(got, tc.want, tc.tol) {
			t.Errorf("TQuantile(%v, %v) = %.6f, want %.6f", tc.p, tc.df, got, tc.want)
		}
	}
	for _, bad := range [][2]float64{{0, 5}, {1, 5}, {0.5, 0}, {math.NaN(), 3}} {
		if got := TQuantile(bad[0], bad[1]); !math.IsNaN(got) {
			t.Errorf("TQuantile(%v, %v) = %v, want NaN", bad[0], bad[1], got)
		}
	}
}

// TestTInterval against hand computation: 1..5 has mean 3, sd √2.5, SE
// √0.5; t₀.₉₇₅(4) = 2.7764 gives ±1.9632; t = 3/√0.5 = √18, and with 4
// degrees of freedom F(t) = ½ + ⅜·u·(1 − u²/12), u = t/√(1 + t²/4), so
// p = 2(1 − F) = 0.013236.
func TestTInterval(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want Interval
	}{
		{"1..5", []float64{1, 2, 3, 4, 5}, Interval{N: 5, Mean: 3, Lo: 3 - 1.963243, Hi: 3 + 1.963243, SD: math.Sqrt(2.5), P: 0.013236}},
		{"NaN left out", []float64{1, math.NaN(), 2, 3, 4, 5}, Interval{N: 5, Mean: 3, Lo: 3 - 1.963243, Hi: 3 + 1.963243, SD: math.Sqrt(2.5), P: 0.013236}},
		{"symmetric about 0", []float64{-2, -1, 1, 2}, Interval{N: 4, Mean: 0, Lo: -2.905, Hi: 2.905, SD: math.Sqrt(10.0 / 3), P: 1}},
		{"no spread", []float64{2, 2, 2}, Interval{N: 3, Mean: 2, Lo: 2, Hi: 2, SD: 0, P: 0}},
		{"no spread at 0", []float64{0, 0}, Interval{N: 2, Mean: 0, Lo: 0, Hi: 0, SD: 0, P: 1}},
		{"one value", []float64{7}, Interval{N: 1, Mean: 7, Lo: math.NaN(), Hi: math.NaN(), SD: math.NaN(), P: 1}},
	}
	for _, tc := range tests {
		got := TInterval(tc.xs, Confidence)
		w := tc.want
		if got.N != w.N || !near(got.Mean, w.Mean, 1e-9) || !near(got.Lo, w.Lo, 1e-3) || !near(got.Hi, w.Hi, 1e-3) ||
			!near(got.SD, w.SD, 1e-9) || !near(got.P, w.P, 1e-5) {
			t.Errorf("%s: %+v, want %+v", tc.name, got, w)
		}
	}
	if !(Interval{Lo: 0.1, Hi: 2}).Excludes0() || !(Interval{Lo: -2, Hi: -0.1}).Excludes0() || (Interval{Lo: -1, Hi: 1}).Excludes0() ||
		(Interval{Lo: math.NaN(), Hi: math.NaN()}).Excludes0() {
		t.Error("Excludes0: wrong side")
	}
}

func TestLag1(t *testing.T) {
	tests := []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 2, 3, 4, 5}, 0.4},        // deviations −2..2: (2 + 0 + 0 + 2) / 10
		{[]float64{1, -1, 1, -1}, -0.75},       // −3 / 4
		{[]float64{3, 3, 3, 3}, 0},             // no spread
		{[]float64{1, 2}, 0},                   // too few
		{[]float64{0, 0, 1, 1, 0, 0}, 1.0 / 6}, // mean ⅓: (1/9 − 2/9 + 4/9 − 2/9 + 1/9)/(12/9)
	}
	for _, tc := range tests {
		if got := Lag1(tc.xs); !near(got, tc.want, 1e-12) {
			t.Errorf("Lag1(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

func TestHolm(t *testing.T) {
	tests := []struct {
		ps   []float64
		want []bool
	}{
		// sorted 0.005 ≤ 0.05/4, 0.01 ≤ 0.05/3, 0.03 > 0.05/2: stop
		{[]float64{0.01, 0.04, 0.03, 0.005}, []bool{true, false, false, true}},
		{[]float64{0.01, 0.02, 0.04}, []bool{true, true, true}},         // 0.0167, 0.025, 0.05
		{[]float64{0.02, 0.001}, []bool{true, true}},                    // 0.025, 0.05
		{[]float64{0.03, 0.001}, []bool{true, true}},                    // 0.001 ≤ 0.025, 0.03 ≤ 0.05
		{[]float64{0.2, 0.001, math.NaN()}, []bool{false, true, false}}, // NaN never rejected
		{nil, []bool{}},
	}
	for _, tc := range tests {
		if got := Holm(tc.ps, 0.05); !slices.Equal(got, tc.want) {
			t.Errorf("Holm(%v) = %v, want %v", tc.ps, got, tc.want)
		}
	}
}

func TestMedian(t *testing.T) {
	if m := Median([]float64{5, 1, 3}); m != 3 {
		t.Errorf("odd: %v", m)
	}
	if m := Median([]float64{4, 1, math.NaN(), 3, 2}); m != 2.5 {
		t.Errorf("even, NaN left out: %v", m)
	}
	if m := Median(nil); !math.IsNaN(m) {
		t.Errorf("empty: %v", m)
	}
}

func seq(n int, f func(i int) float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

// TestBatch: 1..20 in 4 batches of 5 has means 3, 8, 13, 18 at seconds
// 2.5, 7.5, 12.5, 17.5; a batch without a value is left out, a NaN second
// does not count in its batch's mean.
func TestBatch(t *testing.T) {
	d := seq(20, func(i int) float64 { return float64(i + 1) })
	means, mids := Batch(d, 4)
	if !slices.Equal(means, []float64{3, 8, 13, 18}) || !slices.Equal(mids, []float64{2.5, 7.5, 12.5, 17.5}) {
		t.Errorf("means %v mids %v", means, mids)
	}
	for i := 5; i < 10; i++ {
		d[i] = math.NaN()
	}
	d[0] = math.NaN() // batch 0 is then 2..5: mean 3.5
	means, mids = Batch(d, 4)
	if !slices.Equal(means, []float64{3.5, 13, 18}) || !slices.Equal(mids, []float64{2.5, 12.5, 17.5}) {
		t.Errorf("with gaps: means %v mids %v", means, mids)
	}
	// 7 seconds in 3 batches: [0,2) [2,4) [4,7)
	means, _ = Batch(seq(7, func(i int) float64 { return float64(i) }), 3)
	if !slices.Equal(means, []float64{0.5, 2.5, 5}) {
		t.Errorf("uneven: %v", means)
	}
}

func TestBatchMeans(t *testing.T) {
	alternate := func(i int) float64 { return float64(i%2*2 - 1) } // −1, 1, −1 …: independent-looking
	tests := []struct {
		name  string
		d     []float64
		trend bool
		k     int
		len   float64
		short string
	}{
		{"two minutes: 20 batches of 6 s", seq(120, alternate), false, 20, 6, ""},
		{"an hour: still 20", seq(3600, alternate), false, 20, 180, ""},
		{"a minute: 12 of 5 s", seq(60, alternate), false, 12, 5, ""},
		{"49 s: too short", seq(49, alternate), false, 0, 0, "49 s make 9 batches"},
		{"a trend is dependence", seq(120, func(i int) float64 { return float64(i) }), false, 10, 12, "autocorrelated"},
		{"unless the trend is what is measured", seq(120, func(i int) float64 { return float64(i) }), true, 20, 6, ""},
		{"unpaired seconds", seq(120, func(i int) float64 {
			if i < 70 { // batches 11 (seconds 66–71) to 19 have a value
				return math.NaN()
			}
			return alternate(i)
		}), false, 0, 0, "9 of 20 batches"},
	}
	for _, tc := range tests {
		b := BatchMeans(tc.d, tc.trend)
		if tc.short == "" && (b.Short != "" || len(b.Means) != tc.k || b.Len != tc.len) {
			t.Errorf("%s: %d batches of %v s, short %q; want %d of %v", tc.name, len(b.Means), b.Len, b.Short, tc.k, tc.len)
		}
		if tc.short != "" && !strings.Contains(b.Short, tc.short) {
			t.Errorf("%s: short %q, want it to say %q", tc.name, b.Short, tc.short)
		}
	}
	// Halving: a wave of 48 s is autocorrelated at 20 batches of 6 s (eight
	// a period: lag-1 near cos(2π/8) = 0.71) and no longer at 10 of 12 s
	// (four a period: near cos(π/2) = 0).
	wave := seq(120, func(i int) float64 { return math.Sin(2 * math.Pi * (float64(i) + 0.5) / 48) })
	if b := BatchMeans(wave, false); b.Short != "" || len(b.Means) != 10 || b.Lag1 > MaxLag1 {
		t.Errorf("wave: %d batches, lag-1 %.2f, short %q; want 10 after one halving", len(b.Means), b.Lag1, b.Short)
	}
}

// TestTheilSen: an exact line has every slope 2, so its interval is [2, 2]
// (n = 5: N = 10 slopes, Var S = 5·4·15/18, M1 = round((10 − 1.96·4.08)/2)
// = 1, M2 = 9), and Kendall's S = 10 gives p = 2(1 − Φ(9/4.0825)) = 0.0275.
// Four noisy points: slopes −1, ½, 1, 4/3, 2, 3, median 7/6, and too few
// for an interval.
func TestTheilSen(t *testing.T) {
	xs := []float64{1, 2, 3, 4, 5}
	s := TheilSen(xs, []float64{3, 5, 7, 9, 11}, Confidence)
	if s.Slope != 2 || s.Intercept != 1 || s.Lo != 2 || s.Hi != 2 || !near(s.P, 0.0275, 1e-4) || !s.Excludes0() {
		t.Errorf("line: %+v", s)
	}
	s = TheilSen([]float64{1, 2, 3, 4}, []float64{1, 3, 2, 5}, Confidence)
	if !near(s.Slope, 7.0/6, 1e-12) || !math.IsNaN(s.Lo) || s.Excludes0() {
		t.Errorf("noisy: %+v", s)
	}
	// 10 points on y = x with the 5th raised by 100: the median slope
	// stays 1 (an outlier moves a least-squares slope, not this one).
	ys := seq(10, func(i int) float64 { return float64(i) })
	ys[4] += 100
	s = TheilSen(seq(10, func(i int) float64 { return float64(i) }), ys, Confidence)
	if s.Slope != 1 || !(s.Lo <= 1 && s.Hi >= 1) {
		t.Errorf("outlier: %+v", s)
	}
	if s := TheilSen([]float64{1}, []float64{1}, Confidence); !math.IsNaN(s.Slope) {
		t.Errorf("one point: %+v", s)
	}
}

// TestRunLength: sd 1 per batch of 6 s, effect 1: 6·(2.0930 + 0.8610)²
// = 52.36 s; a quarter of the effect needs 16 times as long. Faults: 10
// with sd 1 for an effect of 1 (t-table: n = 9 gives (2.3060 + 0.8889)/3
// = 1.065, n = 10 gives (2.2622 + 0.8834)/√10 = 0.995).
func TestRunLength(t *testing.T) {
	if got := RunLength(1, 6, 1); !near(got, 52.36, 0.01) {
		t.Errorf("RunLength(1, 6, 1) = %v, want 52.36", got)
	}
	if got := RunLength(1, 6, 0.25); !near(got, 16*52.36, 0.2) {
		t.Errorf("RunLength(1, 6, 0.25) = %v, want 837.7", got)
	}
	if got := RunLength(0, 6, 1); !math.IsNaN(got) {
		t.Errorf("no spread: %v", got)
	}
	if got := SamplesNeeded(1, 1, 6); got != 10 {
		t.Errorf("SamplesNeeded(1, 1, 6) = %d, want 10", got)
	}
	if got := SamplesNeeded(0.1, 1, 6); got != 6 {
		t.Errorf("SamplesNeeded(0.1, 1, 6) = %d, want the minimum 6", got)
	}
	if got := SamplesNeeded(1, 0.001, 6); got != -1 {
		t.Errorf("SamplesNeeded(1, 0.001, 6) = %d, want -1 (about 7.9 million, beyond the search)", got)
	}
}

// TestLagLimit: the rule's limit is the one-sided 95 % point of the lag-1
// estimate of independent batch means, −1/k + 1.6449·(k−2)/(k·√(k−1)):
// 0.2896 at 20 batches, 0.3386 at 10; never under MaxLag1 (at 100 batches
// the spread's point is 0.152).
func TestLagLimit(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want float64
	}{{20, -0.05 + 1.644854*18/(20*math.Sqrt(19))}, {10, -0.1 + 1.644854*8/30}, {100, MaxLag1}, {2, MaxLag1}} {
		if got := LagLimit(tc.k); !near(got, tc.want, 1e-6) {
			t.Errorf("LagLimit(%d) = %.4f, want %.4f", tc.k, got, tc.want)
		}
	}
	if !near(LagLimit(20), 0.2896, 1e-4) || !near(LagLimit(10), 0.3386, 1e-4) {
		t.Errorf("LagLimit(20), (10) = %.4f, %.4f", LagLimit(20), LagLimit(10))
	}
}

// TestLagRuleByChance: 20,000 series of 20 independent normal batch means.
// The lag-1 estimate exceeds 0.2 in about 12 % of them (the rule as first
// written would halve one run in eight with nothing to find); it exceeds
// LagLimit(20) in 5 % (±0.5 %: the binomial spread is 0.15 %). Of 5,000
// two-minute series of independent seconds, BatchMeans refuses about 1 %
// as autocorrelated (halved one time in twenty, and the 10 batches of a
// series halved lean high again), where a fixed 0.2 refuses about 3.5 %.
func TestLagRuleByChance(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 7))
	const n = 20000
	over02, overLimit := 0, 0
	x := make([]float64, MaxBatches)
	for range n {
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		r := Lag1(x)
		if r > 0.2 {
			over02++
		}
		if r > LagLimit(len(x)) {
			overLimit++
		}
	}
	if f := float64(over02) / n; f < 0.10 || f > 0.14 {
		t.Errorf("lag-1 over 0.2 in %.3f of independent series, want about 0.12", f)
	}
	if f := float64(overLimit) / n; f < 0.045 || f > 0.055 {
		t.Errorf("lag-1 over LagLimit in %.3f of independent series, want 0.05", f)
	}
	// the fixed rule: over 0.2 at 20 batches, and again at 10
	fixed := func(d []float64) bool {
		m20, _ := Batch(d, 20)
		m10, _ := Batch(d, 10)
		return Lag1(m20) > MaxLag1 && Lag1(m10) > MaxLag1
	}
	refused, refusedFixed := 0, 0
	const runs = 5000
	d := make([]float64, 120)
	for range runs {
		for i := range d {
			d[i] = rng.NormFloat64()
		}
		if b := BatchMeans(d, false); strings.Contains(b.Short, "autocorrelated") {
			refused++
		}
		if fixed(d) {
			refusedFixed++
		}
	}
	f, ff := float64(refused)/runs, float64(refusedFixed)/runs
	t.Logf("independent: lag-1 over 0.2 %.3f, over LagLimit %.3f; 2-minute series refused %.4f (a fixed 0.2: %.4f)",
		float64(over02)/n, float64(overLimit)/n, f, ff)
	if f > 0.02 || ff < 0.025 || ff > 0.05 {
		t.Errorf("independent seconds refused as autocorrelated in %.3f of 2-minute series (a fixed 0.2: %.3f), want about 0.01 (0.035)", f, ff)
	}
}

// TestTIntervalAbout by hand: ys 3, 3, 6, 9, 9 on xs 1…5. The line has
// slope Σ(x−3)(y−6)/Σ(x−3)² = 18/10 = 1.8; the residuals 0.6, −1.2, 0,
// 1.2, −0.6 sum to 3.6 squared, σ² = 3.6/3 = 1.2, SE = √(1.2/5) = 0.4899,
// t₀.₉₇₅(3) = 3.1824: 6 ± 1.5591. Taken alone the same ys spread by 3
// (6 ± 3.725, t₀.₉₇₅(4) = 2.7764).
func TestTIntervalAbout(t *testing.T) {
	ys, xs := []float64{3, 3, 6, 9, 9}, []float64{1, 2, 3, 4, 5}
	iv := TIntervalAbout(ys, xs, Confidence)
	if iv.N != 5 || iv.Mean != 6 || !near(iv.SD, math.Sqrt(1.2), 1e-12) || !near(iv.Lo, 6-1.5591, 1e-3) || !near(iv.Hi, 6+1.5591, 1e-3) ||
		!(iv.P > 0 && iv.P < 0.01) {
		t.Errorf("about xs: %+v, want 6 ± 1.559", iv)
	}
	if plain := TInterval(ys, Confidence); !near(plain.Hi-plain.Mean, 3.725, 1e-3) {
		t.Errorf("alone: %+v, want 6 ± 3.725", plain)
	}
	if got, want := TIntervalAbout(ys, []float64{2, 2, 2, 2, 2}, Confidence), TInterval(ys, Confidence); got != want {
		t.Errorf("xs without spread: %+v, want TInterval's %+v", got, want)
	}
	if r := ResidualsOLS(xs, ys); !near(r[0], 0.6, 1e-12) || !near(r[1], -1.2, 1e-12) || !near(r[2], 0, 1e-12) {
		t.Errorf("residuals %v", r)
	}
}

// TestBatchMeansAbout: a pair whose CPU difference is 5e-4 points a
// message a second (5 µs a message) under traffic that swings once over
// two minutes (2,000 to 8,000 a second), with noise whose batch means have
// a lag-1 of 0.25. Taken alone the batch means follow the swing and are
// refused as autocorrelated; taken about the traffic the residuals are the
// noise's, 20 batches stand, and the interval holds the mean difference
// 5e-4 · 5,000 = 2.5. A second without traffic counted is left out of both.
func TestBatchMeansAbout(t *testing.T) {
	noise := []float64{-1, -1, 1, 1, 1, 1, 1, -1, -1, -1, -1, 1, 1, -1, 1, 1, -1, -1, -1, 1}
	x := seq(120, func(i int) float64 { return 5000 + 3000*math.Sin(2*math.Pi*(float64(i)+0.5)/120) })
	d := seq(120, func(i int) float64 { return 5e-4*x[i] + 0.2*noise[i/6] })
	if b := BatchMeans(d, false); !strings.Contains(b.Short, "autocorrelated") {
		t.Errorf("alone: %d batches, lag-1 %.2f, short %q; want refused", len(b.Means), b.Lag1, b.Short)
	}
	x[7] = math.NaN()
	b := BatchMeansAbout(d, x)
	iv := b.Interval(Confidence)
	if b.Short != "" || len(b.Means) != 20 || len(b.X) != 20 || b.Lag1 > LagLimit(20) || !(iv.Lo < 2.5 && 2.5 < iv.Hi) || iv.Hi-iv.Lo > 0.3 {
		t.Errorf("about the traffic: %d batches, lag-1 %.2f, short %q, %+v; want 20 and 2.5 within a narrow interval", len(b.Means), b.Lag1, b.Short, iv)
	}
	// batch 1 (seconds 6–11) without second 7: d's mean and x's over 5 seconds
	var sd, sx float64
	for _, i := range []int{6, 8, 9, 10, 11} {
		sd, sx = sd+d[i], sx+x[i]
	}
	if !near(b.Means[1], sd/5, 1e-12) || !near(b.X[1], sx/5, 1e-9) {
		t.Errorf("batch 1: %v, %v; want %v, %v", b.Means[1], b.X[1], sd/5, sx/5)
	}
}

// TestBatchMeansLagBetween: batch means whose lag-1 is 0.25 — over 0.2,
// under what 20 independent means reach one time in twenty — keep their 20
// batches.
func TestBatchMeansLagBetween(t *testing.T) {
	means := []float64{-1, -1, 1, 1, 1, 1, 1, -1, -1, -1, -1, 1, 1, -1, 1, 1, -1, -1, -1, 1}
	d := seq(120, func(i int) float64 { return means[i/6] })
	b := BatchMeans(d, false)
	if !near(b.Lag1, 0.25, 1e-12) || len(b.Means) != 20 || b.Short != "" {
		t.Errorf("lag-1 %.3f: %d batches, short %q; want 20", b.Lag1, len(b.Means), b.Short)
	}
}
