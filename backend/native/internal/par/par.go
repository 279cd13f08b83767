package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Grain is the least number of elements of an elementwise loop worth a
// goroutine: below it, starting one (and waking an idle processor) costs
// more than the loop it would run. With the vector kernels a loop over
// 2^15 elements takes a few microseconds; splitting such loops made
// batch-1 resnet8 twice as slow on two threads as on one.
const Grain = 1 << 17

// Chunks is the number of chunks For splits n items into: at most threads
// (0 or less: GOMAXPROCS), each of at least minChunk items. A caller that
// finds 1 can run its loop directly and build no closure for For, which
// would move the closure to the heap.
func Chunks(n, threads, minChunk int) int {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	return max(1, min(threads, n/max(minChunk, 1)))
}

// For runs body over [0, n) in contiguous chunks of at least minChunk, on
// up to threads goroutines (0 or less: GOMAXPROCS). Work too small to
// split runs on the calling goroutine. The chunks cover [0, n) exactly
// once and For returns when all of them are done.
//
// The calling goroutine runs the first chunk; the others go to the
// package's workers (Spread). A body that is a closure over local
// variables is allocated by its caller, because For hands it to other
// goroutines: hot callers check Chunks first and call their loop directly
// when it is 1.
func For(n, threads, minChunk int, body func(lo, hi int)) {
	chunks := Chunks(n, threads, minChunk)
	if chunks <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	t := forTasks.Get().(*forTask)
	t.n, t.chunks, t.body = n, chunks, body
	Spread(chunks, t)
	t.body = nil
	forTasks.Put(t)
}

// forTask is For's work handed to Spread: chunk w of n items in chunks.
type forTask struct {
	n, chunks int
	body      func(lo, hi int)
}

func (t *forTask) Work(w int) { t.body(w*t.n/t.chunks, (w+1)*t.n/t.chunks) }

// forTasks reuses For's tasks, so that a parallel For allocates nothing
// of its own.
var forTasks = sync.Pool{New: func() any { return new(forTask) }}

// Task is work that Spread shares among workers: Work(w) is called once
// for each worker index w, possibly at the same time on different
// goroutines, possibly one after another on the same goroutine (when no
// waiting goroutine was free). A task divides its work by w, or lets
// workers take items from a shared counter; it must not make one part
// wait for another.
type Task interface {
	Work(w int)
}

// Spread runs t.Work(w) for every w in [0, workers) and returns when all
// have returned. Worker 0 is the calling goroutine; the others are
// handed to goroutines that wait for work between calls, so a parallel
// region neither starts goroutines nor allocates.
//
// A part is handed only to a goroutine waiting at that instant; it never
// queues, so nested regions can never wait on each other. A part that
// finds no waiting goroutine is set aside: the caller runs t.Work(0)
// first, then offers the set-aside parts again (a worker that was just
// finishing its previous part is likely waiting by then) and runs only
// those still refused itself. Running them at once instead would put
// them before Work(0) on the caller, making the whole region serial
// whenever a worker was a moment late.
func Spread(workers int, t Task) {
	if workers <= 1 {
		if workers == 1 {
			t.Work(0)
		}
		return
	}
	pool.ensure(workers - 1)
	done := waitGroups.Get().(*sync.WaitGroup)
	// refused lists parts no goroutine took on the first offer; it lives
	// on the stack, and past its size a refused part runs at once.
	var refused [maxRefused]int32
	nRefused := 0
	for w := 1; w < workers; w++ {
		done.Add(1)
		if pool.offer(t, w, done) {
			continue
		}
		if nRefused < len(refused) {
			refused[nRefused] = int32(w)
			nRefused++
			continue
		}
		t.Work(w)
		done.Done()
	}
	t.Work(0)
	for _, w := range refused[:nRefused] {
		if !pool.offer(t, int(w), done) {
			t.Work(int(w))
			done.Done()
		}
	}
	done.Wait()
	waitGroups.Put(done)
}

// maxRefused is how many refused parts Spread sets aside to offer again
// after its own; more workers than this is far beyond any machine's
// cores, so the limit only keeps the list on the stack.
const maxRefused = 64

// request is one part of a Spread for a waiting goroutine.
type request struct {
	t    Task
	w    int
	done *sync.WaitGroup
}

// workerPool is the set of goroutines that wait for Spread's parts.
type workerPool struct {
	mu       sync.Mutex
	started  atomic.Int64
	requests chan request // unbuffered: a send succeeds only when a worker waits
}

var pool = workerPool{requests: make(chan request)}

// offer hands part w of t to a goroutine waiting at this instant and
// reports whether one took it; it never blocks.
func (p *workerPool) offer(t Task, w int, done *sync.WaitGroup) bool {
	select {
	case p.requests <- request{t, w, done}:
		return true
	default:
		return false
	}
}

var waitGroups = sync.Pool{New: func() any { return new(sync.WaitGroup) }}

// ensure starts waiting goroutines until there are at least n.
func (p *workerPool) ensure(n int) {
	if p.started.Load() >= int64(n) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.started.Load() < int64(n) {
		go p.serve()
		p.started.Add(1)
	}
}

// serve runs parts as they come, for the life of the process.
func (p *workerPool) serve() {
	for r := range p.requests {
		r.t.Work(r.w)
		r.done.Done()
	}
}
