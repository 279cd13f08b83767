package metrics

import "fmt"

// LatencyMS summarises the wall time of repeated runs, in milliseconds:
// the quantiles the command-line contract names, then a 95% bootstrap
// confidence interval of the median, the coefficient of variation
// (TimingStats) and the runs themselves in the order they were timed,
// which d500 bench-compare tests against another report's.
type LatencyMS struct {
	Min        float64    `json:"min"`
	Median     float64    `json:"median"`
	P90        float64    `json:"p90"`
	Max        float64    `json:"max"`
	MedianCI95 [2]float64 `json:"median_ci95"`
	CV         float64    `json:"cv"`
	Samples    []float64  `json:"samples_ms,omitempty"`
}

// BenchResult is the outcome of timing a run repeatedly.
type BenchResult struct {
	Iterations     int       `json:"iterations"`
	Latency        LatencyMS `json:"latency_ms"`
	ThroughputPerS float64   `json:"throughput_per_s"` // runs per second over the timed runs
}

// Bench calls run warmup times untimed (to fill caches and buffers), then
// n times timed one by one: BenchPair with run alone, so both time a run
// the same way. The first error stops it and is returned with the
// iteration it happened in (named as BenchPair names it, side A).
func Bench(run func() error, warmup, n int) (BenchResult, error) {
	if n <= 0 {
		return BenchResult{}, fmt.Errorf("bench needs at least one iteration, got %d", n)
	}
	// A negative warm-up has always meant none here; BenchPair rejects it.
	res, err := BenchPair(run, nil, PairConfig{Warmup: max(warmup, 0), Runs: n})
	if err != nil {
		return BenchResult{}, err
	}
	timed, _ := res.BenchResults()
	return timed, nil
}
