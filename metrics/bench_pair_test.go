package metrics

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock that only moves when a fake run advances it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// fakeRun returns a run that appends name to order and takes the next of
// durations (in ms) on the clock, cycling.
func fakeRun(c *fakeClock, order *[]string, name string, durations ...int) func() error {
	i := 0
	return func() error {
		*order = append(*order, name)
		c.t = c.t.Add(time.Duration(durations[i%len(durations)]) * time.Millisecond)
		i++
		return nil
	}
}

func TestBenchPairAlternatesAndSummarises(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	var order []string
	// A's warm-up takes 100 ms, then 10 timed runs of 1..10 ms; B's warm-up
	// 50 ms, then 2, 4, …, 20 ms.
	a := fakeRun(c, &order, "a", 100, 100, 7, 3, 10, 1, 5, 9, 2, 8, 4, 6)
	b := fakeRun(c, &order, "b", 50, 50, 14, 6, 20, 2, 10, 18, 4, 16, 8, 12)
	res, err := benchPair(a, b, PairConfig{Warmup: 2, Runs: 10}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(order, ""); got != strings.Repeat("ab", 12) {
		t.Fatalf("run order %s, want a and b alternating 12 times each", got)
	}
	wantA := [5]float64{1, 1, 5.5, 9, 10}
	wantB := [5]float64{2, 2, 11, 18, 20}
	if res.Runs != 10 || five(res.A) != wantA || five(res.B) != wantB || res.Ratio != 0.5 {
		t.Fatalf("BenchPair = %+v, want 10 runs, A %v, B %v, ratio 0.5", res, wantA, wantB)
	}
	// The samples are the timed runs in the order they ran.
	if !slices.Equal(res.A.Samples, []float64{7, 3, 10, 1, 5, 9, 2, 8, 4, 6}) || !slices.Equal(res.B.Samples, []float64{14, 6, 20, 2, 10, 18, 4, 16, 8, 12}) {
		t.Fatalf("samples A %v, B %v", res.A.Samples, res.B.Samples)
	}
	// As BenchResults: 10 runs in 55 ms and in 110 ms, with the same
	// interval, CV and samples.
	ba, bb := res.BenchResults()
	for _, tc := range []struct {
		got        BenchResult
		q          Quantiles
		throughput float64
	}{{ba, res.A, 10 / 0.055}, {bb, res.B, 10 / 0.110}} {
		l := tc.got.Latency
		if tc.got.Iterations != 10 || tc.got.ThroughputPerS != tc.throughput || [4]float64{l.Min, l.Median, l.P90, l.Max} != [4]float64{tc.q.Min, tc.q.Median, tc.q.P90, tc.q.Max} ||
			l.MedianCI95 != tc.q.MedianCI95 || l.CV != tc.q.CV || !slices.Equal(l.Samples, tc.q.Samples) {
			t.Fatalf("BenchResults = %+v from %+v", tc.got, tc.q)
		}
	}
}

// Without b, a alone is timed, with a's durations only.
func TestBenchPairAlone(t *testing.T) {
	c := &fakeClock{}
	var order []string
	res, err := benchPair(fakeRun(c, &order, "a", 9, 4, 2, 6), nil, PairConfig{Warmup: 1, Runs: 3}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	if len(order) != 4 || res.Runs != 3 || five(res.A) != [5]float64{2, 2, 4, 6, 6} || five(res.B) != [5]float64{} || res.B.Samples != nil || res.Ratio != 0 {
		t.Fatalf("a alone: %+v after %d calls", res, len(order))
	}
}

func TestQuantiles(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	for _, tc := range []struct {
		in   []time.Duration
		want [5]float64
	}{
		{ms(3), [5]float64{3, 3, 3, 3, 3}},
		{ms(5, 1, 3), [5]float64{1, 1, 3, 5, 5}},
		{ms(4, 2), [5]float64{2, 2, 3, 4, 4}},
		// 20 values 1..20: p10 is the 2nd, p90 the 18th.
		{ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1), [5]float64{1, 2, 10.5, 18, 20}},
	} {
		if got := quantiles(tc.in); five(got) != tc.want {
			t.Errorf("quantiles(%v) = %+v, want %v", tc.in, got, tc.want)
		}
	}
	// One run: its median is known to be that run, and it does not vary.
	if q := quantiles(ms(3)); q.MedianCI95 != [2]float64{3, 3} || q.CV != 0 {
		t.Errorf("one run: interval %v, CV %v", q.MedianCI95, q.CV)
	}
	// 1..20 ms: the CV is the sample standard deviation over the mean,
	// √35 / 10.5, and the interval holds the median.
	q := quantiles(ms(20, 19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1))
	if math.Abs(q.CV-math.Sqrt(35)/10.5) > 1e-12 || !(q.MedianCI95[0] < 10.5 && 10.5 < q.MedianCI95[1]) {
		t.Errorf("1..20: CV %v, interval %v", q.CV, q.MedianCI95)
	}
}

// five is the quantiles proper of q: min, p10, median, p90, max.
func five(q Quantiles) [5]float64 { return [5]float64{q.Min, q.P10, q.Median, q.P90, q.Max} }

// The budget cuts the runs to what fits at the warm-up's pace, but never
// below MinRuns, and never raises them above Runs.
func TestBenchPairBudget(t *testing.T) {
	for _, tc := range []struct {
		budget        time.Duration
		min, wantRuns int
	}{
		{0, 0, 20},                       // no budget: all runs
		{time.Second, 0, 10},             // 100 ms a pair: 10 fit
		{time.Second, 15, 15},            // the minimum wins
		{50 * time.Millisecond, 0, 1},    // not even one fits: one anyway
		{time.Hour, 0, 20},               // room for more: still Runs
		{450 * time.Millisecond, 3, 4},   // rounds down
		{450 * time.Millisecond, 30, 20}, // a minimum above Runs
	} {
		c := &fakeClock{}
		var order []string
		a := fakeRun(c, &order, "a", 60)
		b := fakeRun(c, &order, "b", 40)
		res, err := benchPair(a, b, PairConfig{Warmup: 1, Runs: 20, MinRuns: tc.min, Budget: tc.budget}, c.now)
		if err != nil {
			t.Fatal(err)
		}
		if res.Runs != tc.wantRuns || len(order) != 2*(tc.wantRuns+1) {
			t.Errorf("budget %v, min %d: %d runs (%d calls), want %d", tc.budget, tc.min, res.Runs, len(order), tc.wantRuns)
		}
	}
}

func TestBenchPairErrorsAndStop(t *testing.T) {
	boom := errors.New("boom")
	calls := 0
	ok := func() error { calls++; return nil }
	failThird := func() error {
		calls++
		if calls == 6 { // b's third call: a, b, a, b, a, b
			return boom
		}
		return nil
	}
	_, err := BenchPair(ok, failThird, PairConfig{Warmup: 1, Runs: 5})
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "B: timed run 2") {
		t.Fatalf("error %v, want boom at B's timed run 2", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	stopAfterTwo := func() error {
		calls++
		if calls == 4 {
			cancel()
		}
		return nil
	}
	_, err = BenchPair(stopAfterTwo, stopAfterTwo, PairConfig{Runs: 10, Stop: ctx})
	if !errors.Is(err, context.Canceled) || calls != 4 {
		t.Fatalf("stop: %v after %d calls, want context.Canceled after 4", err, calls)
	}
	for _, cfg := range []PairConfig{{Runs: 0}, {Runs: 1, Warmup: -1}, {Runs: 1, Budget: -1}} {
		if _, err := BenchPair(ok, ok, cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

var allocSink [][]byte

func TestMeasureAllocations(t *testing.T) {
	got, err := MeasureAllocations(func() error {
		allocSink = append(allocSink[:0], make([]byte, 4096), make([]byte, 4096))
		return nil
	}, 50)
	if err != nil {
		t.Fatal(err)
	}
	// Two 4 KiB slices a run; allocSink's backing array is reused after
	// the first run, whose one growth adds a fraction.
	if got.Runs != 50 || got.AllocsPerRun < 2 || got.AllocsPerRun > 2.1 || got.BytesPerRun < 8192 || got.BytesPerRun > 8192*1.01 {
		t.Fatalf("MeasureAllocations = %+v, want 2 allocations and 8192 bytes a run", got)
	}
	none, err := MeasureAllocations(func() error { return nil }, 10)
	if err != nil || none.AllocsPerRun != 0 || none.BytesPerRun != 0 {
		t.Fatalf("a run that allocates nothing: %+v, %v", none, err)
	}
	boom := errors.New("boom")
	if _, err := MeasureAllocations(func() error { return boom }, 3); !errors.Is(err, boom) {
		t.Fatalf("error not returned: %v", err)
	}
	if _, err := MeasureAllocations(func() error { return nil }, 0); err == nil {
		t.Fatal("zero runs accepted")
	}
}

func TestCurrentEnvironment(t *testing.T) {
	env := CurrentEnvironment()
	if _, err := time.Parse(time.RFC3339, env.Time); err != nil {
		t.Errorf("time %q: %v", env.Time, err)
	}
	if env.Cores != runtime.NumCPU() || env.GoVersion != runtime.Version() || env.GOARCH != runtime.GOARCH || env.CPU == "" {
		t.Errorf("environment %+v", env)
	}
}

// Pooled passes give the quantiles and ratio of all their runs, not an
// average of each pass's: a pass in a slow stretch is one part of the
// whole.
func TestPoolPairs(t *testing.T) {
	c := &fakeClock{t: time.Unix(0, 0)}
	var order []string
	// Pass 1: A 1, 2, 3 ms, B 2, 4, 6 ms; pass 2 (a slow stretch for A):
	// A 10, 11 ms, B 3, 5 ms.
	p1, err := benchPair(fakeRun(c, &order, "a", 1, 2, 3), fakeRun(c, &order, "b", 2, 4, 6), PairConfig{Runs: 3}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := benchPair(fakeRun(c, &order, "a", 10, 11), fakeRun(c, &order, "b", 3, 5), PairConfig{Runs: 2}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	pooled := PoolPairs(p1, p2)
	// A: 1 2 3 10 11, B: 2 3 4 5 6.
	wantA := [5]float64{1, 1, 3, 11, 11}
	wantB := [5]float64{2, 2, 4, 6, 6}
	if pooled.Runs != 5 || five(pooled.A) != wantA || five(pooled.B) != wantB || pooled.Ratio != 0.75 {
		t.Fatalf("PoolPairs = runs %d, A %+v, B %+v, ratio %v; want 5, %v, %v, 0.75", pooled.Runs, pooled.A, pooled.B, pooled.Ratio, wantA, wantB)
	}
	// The pooled samples are those of the passes, one after the other.
	if !slices.Equal(pooled.A.Samples, []float64{1, 2, 3, 10, 11}) || !slices.Equal(pooled.B.Samples, []float64{2, 4, 6, 3, 5}) {
		t.Fatalf("pooled samples A %v, B %v", pooled.A.Samples, pooled.B.Samples)
	}
	ba, bb := pooled.BenchResults()
	if ba.ThroughputPerS != 5/0.027 || bb.ThroughputPerS != 5/0.020 {
		t.Fatalf("pooled throughputs %v, %v; want %v, %v", ba.ThroughputPerS, bb.ThroughputPerS, 5/0.027, 5/0.020)
	}
	if p := PoolPairs(p1); five(p.A) != five(p1.A) || five(p.B) != five(p1.B) || p.A.MedianCI95 != p1.A.MedianCI95 || p.Ratio != p1.Ratio {
		t.Fatalf("one pass pooled = %+v, want it unchanged %+v", p, p1)
	}
	if p := PoolPairs(); p.Runs != 0 || p.Ratio != 0 {
		t.Fatalf("no passes pooled = %+v, want the zero result", p)
	}
	// A alone stays alone.
	alone, err := benchPair(fakeRun(c, &order, "a", 4), nil, PairConfig{Runs: 2}, c.now)
	if err != nil {
		t.Fatal(err)
	}
	if p := PoolPairs(alone, alone); p.Runs != 4 || p.A.Median != 4 || p.Ratio != 0 || five(p.B) != [5]float64{} || p.B.Samples != nil {
		t.Fatalf("A alone pooled = %+v", p)
	}
}
