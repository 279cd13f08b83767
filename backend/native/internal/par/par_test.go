package par

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// For visits every index of the range exactly once, whatever the split,
// and runs small ranges on the calling goroutine in one chunk.
func TestForCoversRangeOnce(t *testing.T) {
	for _, tc := range []struct{ n, threads, minChunk int }{
		{0, 4, 1}, {1, 4, 1}, {7, 3, 1}, {100, 4, 10}, {100, 4, 60}, {1000, 0, 1}, {5, 8, 0}, {97, 2, 1},
	} {
		seen := make([]int, tc.n)
		var mu sync.Mutex
		calls := 0
		For(tc.n, tc.threads, tc.minChunk, func(lo, hi int) {
			mu.Lock()
			calls++
			mu.Unlock()
			for i := lo; i < hi; i++ {
				seen[i]++
			}
		})
		for i, c := range seen {
			if c != 1 {
				t.Fatalf("n=%d threads=%d minChunk=%d: index %d visited %d times", tc.n, tc.threads, tc.minChunk, i, c)
			}
		}
		if tc.n == 0 && calls != 0 {
			t.Fatalf("n=0: body called %d times", calls)
		}
		if tc.n > 0 && tc.n/max(tc.minChunk, 1) <= 1 && calls != 1 {
			t.Fatalf("n=%d minChunk=%d: split into %d chunks, want 1", tc.n, tc.minChunk, calls)
		}
	}
}

// Spread calls Work once for every worker index, including when parts
// nest (a part that spreads again must not wait for busy workers), and a
// warm parallel For allocates nothing.
func TestSpreadCoversWorkersAndNests(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 3, 8} {
		var mu sync.Mutex
		seen := map[int]int{}
		inner := 0
		Spread(workers, taskFunc(func(w int) {
			Spread(3, taskFunc(func(int) {
				mu.Lock()
				inner++
				mu.Unlock()
			}))
			mu.Lock()
			seen[w]++
			mu.Unlock()
		}))
		if len(seen) != workers || inner != 3*workers {
			t.Fatalf("workers=%d: saw %v and %d inner parts, want each of %d once and %d inner", workers, seen, inner, workers, 3*workers)
		}
		for w, c := range seen {
			if w < 0 || w >= workers || c != 1 {
				t.Fatalf("workers=%d: worker %d ran %d times", workers, w, c)
			}
		}
	}
}

type taskFunc func(w int)

func (f taskFunc) Work(w int) { f(w) }

func TestParallelForAllocatesNothing(t *testing.T) {
	data := make([]float64, 1<<12)
	body := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			data[i]++
		}
	}
	For(len(data), 2, 1, body) // start the workers
	if a := testing.AllocsPerRun(50, func() { For(len(data), 2, 1, body) }); a != 0 {
		t.Fatalf("parallel For allocates %v times per call, want 0", a)
	}
	for i, v := range data {
		if v != 51+1 {
			t.Fatalf("data[%d] = %v after 52 passes", i, v)
		}
	}
}

// BenchmarkSpread times regions of two parts of about 2 µs of work each
// (sums over 4096 float64 values), against the same parts run one after
// the other: a region that hands its part over cheaply takes little more
// than one part.
func BenchmarkSpread(b *testing.B) {
	data := make([]float64, 2*4096)
	for i := range data {
		data[i] = float64(i)
	}
	var sums [2]float64
	part := func(w int) {
		s := 0.0
		for _, v := range data[w*4096 : (w+1)*4096] {
			s += v * v
		}
		sums[w] = s
	}
	t := taskFunc(part)
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			part(0)
			part(1)
		}
	})
	b.Run("spread", func(b *testing.B) {
		Spread(2, t)
		for b.Loop() {
			Spread(2, t)
		}
	})
}

// After Rest the pool's goroutines go to sleep once free, long before
// spinTime; Warm wakes them to spin again; and a region run while they
// sleep still completes.
func TestRestParksAndWarmWakes(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("the pool never spins on one processor")
	}
	// Spinning outlasts the test unless Rest ends it.
	defer spinTime.Store(spinTime.Swap(int64(time.Hour)))
	Warm(2)
	waitStates := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for _, wk := range pool.snapshot()[:2] {
			for wk.state.Load() != want {
				if time.Now().After(deadline) {
					t.Fatalf("a pool goroutine is in state %d, want %d", wk.state.Load(), want)
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	waitStates(idle)
	Rest()
	waitStates(parked)
	var parts atomic.Int64
	Spread(3, taskFunc(func(int) { parts.Add(1) }))
	if parts.Load() != 3 {
		t.Fatalf("a region over sleeping goroutines ran %d parts, want 3", parts.Load())
	}
	waitStates(parked)
	Warm(2)
	waitStates(idle)
}

// panicTask panics in every part from its first on: with an index out of
// range (a runtime error), as a kernel bug would.
type panicTask struct {
	from int
	done []atomic.Bool
}

func (t *panicTask) Work(w int) {
	t.done[w].Store(true)
	if w >= t.from {
		var s []int
		_ = s[w] // index out of range
	}
}

// A part that panics, on a pool goroutine or the caller, makes Spread
// panic on the caller's goroutine with a PartPanic once every part has
// ended: the process goes on, and the caller's recover sees the runtime
// error.
func TestSpreadPanicReachesTheCaller(t *testing.T) {
	Warm(3)
	defer Rest()
	for _, from := range []int{0, 1, 3} {
		task := &panicTask{from: from, done: make([]atomic.Bool, 4)}
		var got any
		func() {
			defer func() { got = recover() }()
			Spread(4, task)
		}()
		p, ok := got.(*PartPanic)
		if !ok {
			t.Fatalf("from part %d: Spread panicked with %v (%T), want a *PartPanic", from, got, got)
		}
		var re runtime.Error
		if p.Part < from || !errors.As(p, &re) || !strings.Contains(p.Error(), "index out of range") || len(p.Stack) == 0 {
			t.Errorf("from part %d: %v (part %d), want a runtime error of part %d or later with its stack", from, p, p.Part, from)
		}
		for w := range task.done {
			if !task.done[w].Load() {
				t.Errorf("from part %d: part %d did not run", from, w)
			}
		}
	}
	// The pool still works.
	var n atomic.Int64
	For(1000, 4, 1, func(lo, hi int) { n.Add(int64(hi - lo)) })
	if n.Load() != 1000 {
		t.Errorf("For after the panics covered %d of 1000", n.Load())
	}
}

// Between BeginSerial and EndSerial a region runs its parts one after
// another on the caller, in order, and For still covers its range.
func TestSerialRunsPartsOnTheCaller(t *testing.T) {
	BeginSerial()
	defer EndSerial()
	var active, most atomic.Int32
	var order []int
	Spread(5, taskFunc(func(w int) {
		n := active.Add(1)
		if n > most.Load() {
			most.Store(n)
		}
		order = append(order, w) // no lock: the parts must not overlap
		active.Add(-1)
	}))
	if most.Load() != 1 || len(order) != 5 {
		t.Fatalf("parts overlapped (at most %d at once) or ran %d times", most.Load(), len(order))
	}
	for i, w := range order {
		if w != i {
			t.Fatalf("parts ran in order %v, want 0..4", order)
		}
	}
	data := make([]int, 1000)
	For(len(data), 4, 1, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			data[i]++
		}
	})
	for i, v := range data {
		if v != 1 {
			t.Fatalf("data[%d] = %d after one serial For", i, v)
		}
	}
}
