package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestSummarizeTimings(t *testing.T) {
	// 1..20: median 10.5, CV √35/10.5 (sample variance 35).
	var x []float64
	for i := 20; i >= 1; i-- {
		x = append(x, float64(i))
	}
	st, err := SummarizeTimings(x)
	if err != nil {
		t.Fatal(err)
	}
	if st.N != 20 || st.Median != 10.5 || math.Abs(st.CV-math.Sqrt(35)/10.5) > 1e-12 {
		t.Fatalf("SummarizeTimings(1..20) = %+v", st)
	}
	// The interval lies inside the sample, around the median, and for a
	// median of 20 evenly spread values spans a few values either side.
	lo, hi := st.MedianCI95[0], st.MedianCI95[1]
	if !(1 <= lo && lo < 10.5 && 10.5 < hi && hi <= 20) || hi-lo < 2 || hi-lo > 10 {
		t.Fatalf("interval %v for the median of 1..20", st.MedianCI95)
	}
	// The same sample gives the same interval: the seed is fixed.
	again, _ := SummarizeTimings(x)
	if again != st {
		t.Fatalf("second summary %+v differs from %+v", again, st)
	}
	// The input is left as it was.
	if x[0] != 20 || x[19] != 1 {
		t.Fatalf("input reordered: %v", x)
	}
	for _, bad := range [][]float64{nil, {1, math.NaN()}, {1, -2}, {math.Inf(1)}} {
		if _, err := SummarizeTimings(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
	// A single value: known exactly, no spread.
	if st, err := SummarizeTimings([]float64{4}); err != nil || st.MedianCI95 != [2]float64{4, 4} || st.CV != 0 || st.Median != 4 {
		t.Fatalf("one value: %+v, %v", st, err)
	}
}

// resampledMedian's counting must find the median a sort of the same
// resample finds.
func TestResampledMedianMatchesSorting(t *testing.T) {
	for _, n := range []int{1, 2, 3, 10, 11, 64} {
		sorted := make([]float64, n)
		for i := range sorted {
			sorted[i] = float64(i*i) + 0.5 // distinct, unevenly spaced
		}
		counting, direct := rand.New(rand.NewPCG(7, 9)), rand.New(rand.NewPCG(7, 9))
		counts := make([]int, n)
		for range 200 {
			got := resampledMedian(sorted, counts, counting)
			re := make([]float64, n)
			for i := range re {
				re[i] = sorted[direct.IntN(n)]
			}
			slices.Sort(re)
			if want := sortedMedian(re); got != want {
				t.Fatalf("n=%d: counted median %v, sorted resample's %v", n, got, want)
			}
		}
	}
}

// The 95% interval of the median covers the true median in about 95% of
// samples: exponential latencies (median ln 2), 300 samples of 60.
func TestMedianCICoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	covered := 0
	const trials = 300
	for range trials {
		x := make([]float64, 60)
		for i := range x {
			x[i] = rng.ExpFloat64()
		}
		st, err := SummarizeTimings(x)
		if err != nil {
			t.Fatal(err)
		}
		if st.MedianCI95[0] <= math.Ln2 && math.Ln2 <= st.MedianCI95[1] {
			covered++
		}
	}
	if f := float64(covered) / trials; f < 0.90 || f > 0.99 {
		t.Fatalf("the interval covered the true median in %.1f%% of samples, want about 95%%", 100*f)
	}
}

func TestMannWhitneyExact(t *testing.T) {
	// Three against three, all of A below B: U = 0, and one ordering in
	// C(6,3) = 20 is as extreme on each side: p = 2/20.
	u, p := MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if u != 0 || math.Abs(p-0.1) > 1e-15 {
		t.Fatalf("U %v p %v, want 0 and 0.1", u, p)
	}
	// The other way round: U = 9, the same p.
	if u, p := MannWhitney([]float64{4, 5, 6}, []float64{1, 2, 3}); u != 9 || math.Abs(p-0.1) > 1e-15 {
		t.Fatalf("reversed: U %v p %v, want 9 and 0.1", u, p)
	}
	// Ten against ten: the tables' two-sided critical value at 5% is 23
	// (U ≤ 23 rejects, 24 does not).
	if p := exactMannWhitneyP(10, 10, 23); p >= 0.05 {
		t.Errorf("U=23 of 10 and 10: p %v, want below 0.05", p)
	}
	if p := exactMannWhitneyP(10, 10, 24); p < 0.05 {
		t.Errorf("U=24 of 10 and 10: p %v, want 0.05 or more", p)
	}
	// The exact distribution against every ordering of 5 a's among 11
	// values: the share of orderings with U at most u, for each u.
	const n1, n2 = 5, 6
	counts := make([]float64, n1*n2+1)
	var orderings float64
	for mask := 0; mask < 1<<(n1+n2); mask++ {
		if popcount(mask) != n1 {
			continue
		}
		// Bit i set: the i-th smallest value is an a; U counts the b's
		// below each a.
		u, bs := 0, 0
		for i := range n1 + n2 {
			if mask&(1<<i) != 0 {
				u += bs
			} else {
				bs++
			}
		}
		counts[u]++
		orderings++
	}
	var cum float64
	for u := range counts {
		cum += counts[u]
		want := min(1, 2*min(cum, orderings-cum+counts[u])/orderings)
		if got := exactMannWhitneyP(n1, n2, float64(u)); math.Abs(got-want) > 1e-12 {
			t.Errorf("U=%d of %d and %d: p %v, enumeration %v", u, n1, n2, got, want)
		}
	}
}

func popcount(x int) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}

func TestMannWhitneyNormalWithTies(t *testing.T) {
	// Ties force the normal approximation: U 57.5, the tie term Σt³-t 132,
	// p = erfc(z/√2) with z = (|57.5 - 84| - 0.5) / √(168/12 · (27 - 132/702)),
	// computed apart: 0.17948143845325656.
	a := []float64{1, 2, 2, 3, 5, 7, 7, 8, 9, 9, 10, 12}
	b := []float64{2, 3, 3, 4, 6, 7, 8, 9, 11, 12, 12, 13, 15, 15}
	u, p := MannWhitney(a, b)
	if u != 57.5 || math.Abs(p-0.17948143845325656) > 1e-12 {
		t.Fatalf("U %v p %v, want 57.5 and 0.1795", u, p)
	}
	// Everything tied: no evidence either way.
	if _, p := MannWhitney([]float64{2, 2}, []float64{2, 2, 2}); p != 1 {
		t.Fatalf("all tied: p %v", p)
	}
	// Large samples without ties take the approximation too; a clear
	// shift is found.
	x, y := make([]float64, 80), make([]float64, 80)
	for i := range x {
		x[i], y[i] = float64(i), float64(i)+40.5
	}
	if _, p := MannWhitney(x, y); p > 1e-6 {
		t.Fatalf("shifted by half the range: p %v", p)
	}
}

// latencies draws n latencies around a median of ms: a floor with a
// log-normal spread and a few slow outliers, the shape timed runs have.
func latencies(rng *rand.Rand, n int, ms float64) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = ms * math.Exp(0.05*rng.NormFloat64())
		if rng.IntN(20) == 0 {
			x[i] *= 1.5
		}
	}
	return x
}

func TestCompareTimings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := latencies(rng, 50, 10), latencies(rng, 50, 10)
	same, err := CompareTimings(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if same.Significant || !(same.RatioCI95[0] <= 1 && 1 <= same.RatioCI95[1]) || same.P < 0.05 {
		t.Fatalf("same distribution: %+v", same)
	}
	if v := same.Verdict("A", "B"); !strings.HasPrefix(v, "no significant difference (B/A ") || !strings.Contains(v, "95% CI") {
		t.Fatalf("verdict %q", v)
	}

	slow := make([]float64, len(a))
	for i, v := range b {
		slow[i] = 1.5 * v
	}
	c, err := CompareTimings(a, slow, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Significant || c.P >= 0.001 || !(c.RatioCI95[0] < 1.5 && 1.5 < c.RatioCI95[1]) || c.RatioCI95[0] <= 1 || math.Abs(c.Ratio-1.5) > 0.1 {
		t.Fatalf("B 1.5x slower: %+v", c)
	}
	if v := c.Verdict("A", "B"); !strings.HasPrefix(v, "B is slower than A: 1.") || !strings.Contains(v, "p<0.001") {
		t.Fatalf("verdict %q", v)
	}
	// The other way round: A/B is the factor, and its interval holds 1.5.
	r, err := CompareTimings(slow, a, 0)
	if err != nil {
		t.Fatal(err)
	}
	v := r.Verdict("A", "B")
	var factor, lo, hi float64
	if !r.Significant || !strings.HasPrefix(v, "B is faster than A: ") {
		t.Fatalf("B 1.5x faster: %+v, %q", r, v)
	}
	if _, err := fmt.Sscanf(v, "B is faster than A: %fx (A/B, 95%% CI %f-%f", &factor, &lo, &hi); err != nil || !(lo < 1.5 && 1.5 < hi) || math.Abs(factor-1.5) > 0.1 {
		t.Fatalf("verdict %q: factor %v interval %v-%v (%v)", v, factor, lo, hi, err)
	}

	if _, err := CompareTimings(nil, a, 0); err == nil || !strings.Contains(err.Error(), "sample A") {
		t.Fatalf("empty A: %v", err)
	}
	if _, err := CompareTimings(a, []float64{-1}, 0); err == nil || !strings.Contains(err.Error(), "sample B") {
		t.Fatalf("negative B: %v", err)
	}
	if _, err := CompareTimings([]float64{0, 0, 1}, a, 0); err == nil {
		t.Fatal("a zero median accepted")
	}
	for _, bad := range []float64{-0.1, 1, math.NaN()} {
		if _, err := CompareTimings(a, b, bad); err == nil {
			t.Errorf("threshold %v accepted", bad)
		}
	}
}

// A difference the samples show clearly but smaller than the threshold is
// reported as none, saying so; without a threshold it is a difference.
func TestCompareTimingsThreshold(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	a := make([]float64, 200)
	b := make([]float64, 200)
	for i := range a {
		a[i] = 10 * math.Exp(0.003*rng.NormFloat64())
		b[i] = 10.1 * math.Exp(0.003*rng.NormFloat64()) // 1% slower, tightly
	}
	exact, err := CompareTimings(a, b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !exact.Significant || exact.BelowThreshold || !strings.HasPrefix(exact.Verdict("A", "B"), "B is slower than A: 1.010x (B/A, 95% CI 1.0") {
		t.Fatalf("no threshold: %+v, %q", exact, exact.Verdict("A", "B"))
	}
	within, err := CompareTimings(a, b, 0.03)
	if err != nil {
		t.Fatal(err)
	}
	if within.Significant || !within.BelowThreshold || within.P != exact.P || within.RatioCI95 != exact.RatioCI95 {
		t.Fatalf("3%% threshold: %+v", within)
	}
	if v := within.Verdict("A", "B"); !strings.HasPrefix(v, "no significant difference above the 3% threshold (B/A 1.010, 95% CI 1.0") || !strings.HasSuffix(v, "p<0.001)") {
		t.Fatalf("verdict %q", v)
	}
	// Past the threshold it is a difference again: 10% slower.
	for i := range b {
		b[i] *= 1.1 / 1.01
	}
	if past, err := CompareTimings(a, b, 0.03); err != nil || !past.Significant {
		t.Fatalf("10%% slower with a 3%% threshold: %+v, %v", past, err)
	}
}

// Of many pairs of samples from one distribution, about 5% are called
// different, and no more: the verdict's false alarms are at its level.
func TestCompareTimingsFalseAlarms(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	alarms := 0
	const trials = 200
	for range trials {
		c, err := CompareTimings(latencies(rng, 30, 2), latencies(rng, 30, 2), 0)
		if err != nil {
			t.Fatal(err)
		}
		if c.Significant {
			alarms++
		}
	}
	if alarms > trials/10 {
		t.Fatalf("%d of %d comparisons of one distribution called significant", alarms, trials)
	}
}
