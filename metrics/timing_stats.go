package metrics

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// The statistics of timing samples: how precisely their median is known
// (a bootstrap confidence interval), how much they vary (the coefficient
// of variation), and whether two sets of them differ (a rank test and an
// interval of the ratio of their medians).

// BootstrapResamples is the number of resamples behind every bootstrap
// interval: enough that the interval's ends moved by at most about a
// tenth of its width from one seed to another (20 seeds, samples of 20 to
// 200 latencies; the median's ends jump between neighbouring runs), and
// the fixed seed removes even that.
const BootstrapResamples = 2000

// bootstrapSeed seeds every bootstrap, so that the same samples always
// give the same interval: a report read again, or written again from the
// same JSON, says the same thing.
const bootstrapSeed = 500

// TimingStats summarises a sample of latencies beyond its quantiles.
type TimingStats struct {
	N      int     // the number of samples
	Median float64 // the middle value, or the mean of the middle two
	// MedianCI95 is a 95% percentile-bootstrap confidence interval of the
	// median (BootstrapResamples resamples, fixed seed).
	MedianCI95 [2]float64
	// CV is the coefficient of variation, the sample standard deviation
	// over the mean; 0 for fewer than two samples or a zero mean.
	CV float64
}

// SummarizeTimings computes TimingStats of samples (any unit; they are
// not changed). An empty sample, or one with a NaN, an infinity or a
// negative value, is an error: none is a duration.
func SummarizeTimings(samples []float64) (TimingStats, error) {
	if err := checkTimings(samples); err != nil {
		return TimingStats{}, err
	}
	sorted := slices.Sorted(slices.Values(samples))
	lo, hi := bootstrapMedianCI(sorted, 0.95, BootstrapResamples, newBootstrapRNG())
	return TimingStats{N: len(sorted), Median: sortedMedian(sorted), MedianCI95: [2]float64{lo, hi}, CV: cv(samples)}, nil
}

// checkTimings says why samples are not a sample of durations, if so.
func checkTimings(samples []float64) error {
	if len(samples) == 0 {
		return fmt.Errorf("no timing samples")
	}
	for i, v := range samples {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("timing sample %d is %v, not a duration", i+1, v)
		}
	}
	return nil
}

func newBootstrapRNG() *rand.Rand {
	return rand.New(rand.NewPCG(bootstrapSeed, bootstrapSeed))
}

// sortedMedian is the median of sorted (not empty), the mean of the
// middle two for an even count: the median the reports have always
// given. gonum's stat.Quantile at 0.5 gives the lower middle value
// (Empirical) or an interpolation that is not the middle for an odd count
// (LinInterp), so the median is not taken from it.
func sortedMedian(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// cv is the coefficient of variation of samples: gonum's sample standard
// deviation over its mean.
func cv(samples []float64) float64 {
	if len(samples) < 2 {
		return 0
	}
	mean, sd := stat.MeanStdDev(samples, nil)
	if mean == 0 {
		return 0
	}
	return sd / mean
}

// resampledMedian is the median of a resample with replacement of sorted
// (not empty), drawn with rng. counts is scratch space of len(sorted).
// Since sorted is in order, the resample's k-th smallest value is the
// value at the k-th smallest index drawn, so counting how often each
// index is drawn finds the median in linear time, without sorting the
// resample.
func resampledMedian(sorted []float64, counts []int, rng *rand.Rand) float64 {
	n := len(sorted)
	clear(counts)
	for range n {
		counts[rng.IntN(n)]++
	}
	// The 0-based ranks of the middle values: one for an odd count, two
	// for an even one.
	lowRank, highRank := (n-1)/2, n/2
	var low float64
	seen := 0
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if seen <= lowRank && lowRank < seen+c {
			low = sorted[i]
		}
		if seen <= highRank && highRank < seen+c {
			return (low + sorted[i]) / 2
		}
		seen += c
	}
	panic("unreachable: the counts sum to the sample size")
}

// bootstrapMedianCI is the percentile-bootstrap interval of the median of
// sorted at the given level: the median of each of resamples resamples,
// and their (1-level)/2 and (1+level)/2 quantiles.
func bootstrapMedianCI(sorted []float64, level float64, resamples int, rng *rand.Rand) (lo, hi float64) {
	counts := make([]int, len(sorted))
	meds := make([]float64, resamples)
	for i := range meds {
		meds[i] = resampledMedian(sorted, counts, rng)
	}
	return percentileInterval(meds, level)
}

// percentileInterval is the central interval of values at level: their
// empirical (1-level)/2 and (1+level)/2 quantiles (gonum's stat.Quantile).
// values is sorted in place.
func percentileInterval(values []float64, level float64) (lo, hi float64) {
	slices.Sort(values)
	tail := (1 - level) / 2
	return stat.Quantile(tail, stat.Empirical, values, nil), stat.Quantile(1-tail, stat.Empirical, values, nil)
}

// TimingComparison says whether two samples of latencies, A and B,
// differ, and by how much.
type TimingComparison struct {
	A, B TimingStats
	// Ratio is B's median over A's (above 1: B is slower), RatioCI95 its
	// 95% percentile-bootstrap interval, A and B resampled independently.
	Ratio     float64
	RatioCI95 [2]float64
	// U is the Mann-Whitney U statistic of A (the number of pairs in
	// which A's value is the larger, ties counting one half) and P its
	// two-sided p-value: exact for small samples without ties, else the
	// normal approximation with the correction for ties.
	U float64
	P float64
	// Threshold is the smallest relative difference of the medians
	// reported as one (0.05: 5%), whatever the test says.
	Threshold float64
	// Significant is set when the difference is significant at 5% and
	// beyond the threshold: the rank test rejects, and the ratio is above
	// 1+Threshold or below 1/(1+Threshold).
	Significant bool
	// BelowThreshold is set when the test rejects but the ratio is
	// within the threshold: a difference the samples show, too small to
	// be told from that of two processes of one build.
	BelowThreshold bool
}

// SignificanceLevel is the level at which CompareTimings calls a
// difference significant.
const SignificanceLevel = 0.05

// CompareTimings compares samples a and b of latencies, calling
// differences of the medians smaller than threshold (a fraction, 0.05 for
// 5%; 0 for none) no difference.
//
// Whether they differ is the Mann-Whitney U test's answer, rather than a
// bootstrap of the ratio of medians: latencies have a long right tail (a
// collection, a preempted thread, a page fault) and often two modes (a
// worker thread that was or was not still spinning), and the median of
// such runs jumps between the modes from one resample to the next, so
// that its interval can be wide for runs every one of which is 1.5 times
// slower than the other's; a rank test asks whether one sample's values
// tend to be larger than the other's, uses every run, and assumes no
// distribution. By how much is the ratio of the medians with its
// bootstrap interval — a ratio is what a speed-up is read as, and the
// median is what the reports give — so a significant verdict beside a
// wide interval says that the runs clearly differ while their medians are
// not known precisely.
//
// The threshold is there because the samples are the runs of one process
// each: the test sees how the runs of a process vary, not how processes
// do, and two processes of the same build differ by a few percent (the
// heap's and the threads' placement, the clock's frequency, the other
// jobs on the machine), which a test on many runs calls significant. A
// difference is reported only when the ratio lies beyond the threshold.
func CompareTimings(a, b []float64, threshold float64) (TimingComparison, error) {
	if !(threshold >= 0 && threshold < 1) {
		return TimingComparison{}, fmt.Errorf("threshold %v: need a fraction in [0, 1)", threshold)
	}
	if err := checkTimings(a); err != nil {
		return TimingComparison{}, fmt.Errorf("sample A: %w", err)
	}
	if err := checkTimings(b); err != nil {
		return TimingComparison{}, fmt.Errorf("sample B: %w", err)
	}
	var c TimingComparison
	var err error
	if c.A, err = SummarizeTimings(a); err != nil {
		return c, err
	}
	if c.B, err = SummarizeTimings(b); err != nil {
		return c, err
	}
	if c.A.Median == 0 {
		return c, fmt.Errorf("sample A has a median of 0: no ratio to it")
	}
	c.Ratio = c.B.Median / c.A.Median
	c.RatioCI95[0], c.RatioCI95[1] = bootstrapRatioCI(a, b, 0.95, BootstrapResamples, newBootstrapRNG())
	c.U, c.P = MannWhitney(a, b)
	c.Threshold = threshold
	rejected := c.P < SignificanceLevel
	beyond := c.Ratio > 1+threshold || c.Ratio < 1/(1+threshold)
	c.Significant = rejected && beyond
	c.BelowThreshold = rejected && !beyond
	return c, nil
}

// bootstrapRatioCI is the percentile-bootstrap interval of median(b) /
// median(a), each resampled independently: the two were measured apart,
// so a run of one has no partner run in the other. A resample of a with
// a median of 0 (possible only when half of a is 0) gives an infinite
// ratio, which sorts last.
func bootstrapRatioCI(a, b []float64, level float64, resamples int, rng *rand.Rand) (lo, hi float64) {
	sa, sb := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	ca, cb := make([]int, len(sa)), make([]int, len(sb))
	ratios := make([]float64, resamples)
	for i := range ratios {
		ma := resampledMedian(sa, ca, rng)
		mb := resampledMedian(sb, cb, rng)
		ratios[i] = mb / ma
		if ma == 0 {
			ratios[i] = math.Inf(1)
		}
	}
	return percentileInterval(ratios, level)
}

// exactMannWhitneyLimit bounds len(a)·len(b) for the exact distribution
// of U: its table takes about (len(a)·len(b))² / 4 additions, a few
// million at the limit, and there the normal approximation is close: at
// 50 values each its p is within 0.001 of the exact one wherever that is
// between 0.01 and 0.2 (within 0.004 at 10 values each).
const exactMannWhitneyLimit = 2500

// MannWhitney returns the Mann-Whitney U statistic of a against b (the
// number of pairs (x in a, y in b) with x > y, a tie counting one half)
// and its two-sided p-value under the hypothesis that both come from the
// same distribution. Without ties and with len(a)·len(b) up to
// exactMannWhitneyLimit the p-value is exact; otherwise it is the normal
// approximation with the variance corrected for ties and a continuity
// correction. gonum has no rank-sum test, hence this one; the normal
// tail is gonum's (distuv.UnitNormal). Both samples must be non-empty.
func MannWhitney(a, b []float64) (u, p float64) {
	n1, n2 := len(a), len(b)
	type obs struct {
		v     float64
		fromA bool
	}
	all := make([]obs, 0, n1+n2)
	for _, v := range a {
		all = append(all, obs{v, true})
	}
	for _, v := range b {
		all = append(all, obs{v, false})
	}
	slices.SortFunc(all, func(x, y obs) int {
		switch {
		case x.v < y.v:
			return -1
		case x.v > y.v:
			return 1
		}
		return 0
	})
	// Ranks from 1, the mean rank for a run of ties; tieTerm sums t³-t
	// over the runs of t tied values.
	var rankSumA, tieTerm float64
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && all[j].v == all[i].v {
			j++
		}
		mean := float64(i+1+j) / 2 // the mean of ranks i+1 … j
		for k := i; k < j; k++ {
			if all[k].fromA {
				rankSumA += mean
			}
		}
		t := float64(j - i)
		tieTerm += t*t*t - t
		i = j
	}
	u = rankSumA - float64(n1*(n1+1))/2
	if tieTerm == 0 && n1*n2 <= exactMannWhitneyLimit {
		return u, exactMannWhitneyP(n1, n2, u)
	}
	n := float64(n1 + n2)
	mean := float64(n1*n2) / 2
	variance := float64(n1*n2) / 12 * ((n + 1) - tieTerm/(n*(n-1)))
	if variance <= 0 { // every value tied: no evidence of a difference
		return u, 1
	}
	z := (math.Abs(u-mean) - 0.5) / math.Sqrt(variance)
	if z <= 0 {
		return u, 1
	}
	return u, min(1, 2*distuv.UnitNormal.Survival(z))
}

// exactMannWhitneyP is the two-sided p-value of U = u for samples of n1
// and n2 values without ties: twice the smaller tail of U's null
// distribution, at most 1. The distribution counts, for every u, the
// orderings of n1 a's and n2 b's in which a's stand above b's in u pairs:
// N(i, j, u) = N(i-1, j, u-j) + N(i, j-1, u) (the largest value is an a,
// above all j b's, or a b, above none), every ordering equally likely.
func exactMannWhitneyP(n1, n2 int, u float64) float64 {
	// prev[j] and cur[j] hold N(i-1, j, ·) and N(i, j, ·), the counts of
	// u = 0 … i·j; float64 holds them exactly enough (C(100, 50) ≈ 1e29
	// at the limit, with no cancellation: every step adds).
	prev := make([][]float64, n2+1)
	for j := range prev {
		prev[j] = []float64{1} // N(0, j, 0) = 1
	}
	for i := 1; i <= n1; i++ {
		cur := make([][]float64, n2+1)
		cur[0] = []float64{1} // N(i, 0, 0) = 1
		for j := 1; j <= n2; j++ {
			c := make([]float64, i*j+1)
			copy(c, cur[j-1]) // a b on top: N(i, j-1, u)
			for k, v := range prev[j] {
				c[k+j] += v // an a on top: N(i-1, j, u-j)
			}
			cur[j] = c
		}
		prev = cur
	}
	counts := prev[n2]
	var total, below, above float64
	for k, c := range counts {
		total += c
		if float64(k) <= u {
			below += c
		}
		if float64(k) >= u {
			above += c
		}
	}
	return min(1, 2*min(below, above)/total)
}

// Verdict says in words what the comparison found, naming the samples a
// and b: "no significant difference (B/A 1.01, 95% CI 0.97-1.05,
// p=0.41)", "no significant difference above the 5% threshold (B/A 1.006,
// 95% CI 1.003-1.009, p<0.001)", "B is slower than A: 1.83x (B/A, 95% CI
// 1.75-1.91, p<0.001)", or, when B is faster, the ratio A/B and its
// interval the same way, so that the factor is always at least 1.
func (c TimingComparison) Verdict(a, b string) string {
	p := fmt.Sprintf("p=%.2g", c.P)
	if c.P < 0.001 {
		p = "p<0.001"
	}
	// Ratios near 1 get a third decimal, or 1.004 would read 1.00.
	digits := 2
	if c.RatioCI95[0] > 0.95 && c.RatioCI95[1] < 1.05 {
		digits = 3
	}
	r := func(v float64) string { return strconv.FormatFloat(v, 'f', digits, 64) }
	lo, hi := r(c.RatioCI95[0]), r(c.RatioCI95[1])
	switch {
	case c.Significant && c.Ratio > 1:
		return fmt.Sprintf("%s is slower than %s: %sx (%s/%s, 95%% CI %s-%s, %s)", b, a, r(c.Ratio), b, a, lo, hi, p)
	case c.Significant:
		return fmt.Sprintf("%s is faster than %s: %sx (%s/%s, 95%% CI %s-%s, %s)", b, a, r(1/c.Ratio), a, b, r(1/c.RatioCI95[1]), r(1/c.RatioCI95[0]), p)
	case c.BelowThreshold:
		return fmt.Sprintf("no significant difference above the %g%% threshold (%s/%s %s, 95%% CI %s-%s, %s)", 100*c.Threshold, b, a, r(c.Ratio), lo, hi, p)
	default:
		return fmt.Sprintf("no significant difference (%s/%s %s, 95%% CI %s-%s, %s)", b, a, r(c.Ratio), lo, hi, p)
	}
}
