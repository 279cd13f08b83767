package metrics

import (
	"fmt"
	"time"
)

// LatencyMS summarises the wall time of repeated runs, in milliseconds.
type LatencyMS struct {
	Min    float64 `json:"min"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

// BenchResult is the outcome of timing a run repeatedly.
type BenchResult struct {
	Iterations     int       `json:"iterations"`
	Latency        LatencyMS `json:"latency_ms"`
	ThroughputPerS float64   `json:"throughput_per_s"` // runs per second over the timed runs
}

// Bench calls run warmup times untimed (to fill caches and buffers), then
// n times timed one by one. The first error stops it and is returned with
// the iteration it happened in.
func Bench(run func() error, warmup, n int) (BenchResult, error) {
	if n <= 0 {
		return BenchResult{}, fmt.Errorf("bench needs at least one iteration, got %d", n)
	}
	for i := range warmup {
		if err := run(); err != nil {
			return BenchResult{}, fmt.Errorf("warm-up run %d: %w", i+1, err)
		}
	}
	times := make([]time.Duration, n)
	var total time.Duration
	for i := range times {
		start := time.Now()
		if err := run(); err != nil {
			return BenchResult{}, fmt.Errorf("timed run %d: %w", i+1, err)
		}
		times[i] = time.Since(start)
		total += times[i]
	}
	return BenchResult{
		Iterations:     n,
		Latency:        summarize(times),
		ThroughputPerS: float64(n) / total.Seconds(),
	}, nil
}

// summarize computes min, median, 90th percentile (nearest rank) and max,
// as quantiles does.
func summarize(times []time.Duration) LatencyMS {
	q := quantiles(times)
	return LatencyMS{Min: q.Min, Median: q.Median, P90: q.P90, Max: q.Max}
}
