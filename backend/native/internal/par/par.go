package par

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Grain is the least number of elements of an elementwise loop worth a
// goroutine. Handing a chunk to a spinning worker costs about half a
// microsecond, what the vector kernels take over 2^12 elements; but most
// loops hand For a closure, which is allocated once they go parallel, so
// the grain stays where splitting clearly pays. Loops whose elements cost
// more (a window of a pooling) scale it down by that cost; loops that
// hand Spread a Task kept between runs allocate nothing and may use
// TaskGrain.
const Grain = 1 << 17

// TaskGrain is Grain for loops that allocate nothing to go parallel (a
// Task kept by the caller, not a closure): a chunk of it keeps the
// hand-off a small part of its time.
const TaskGrain = 1 << 14

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
// pool goroutine was free, or came late). A task divides its work by w, or lets
// workers take items from a shared counter; it must not make one part
// wait for another.
type Task interface {
	Work(w int)
}

// Spread runs t.Work(w) for every w in [0, workers) and returns when all
// have returned. Worker 0 is the calling goroutine; the pool's goroutines
// that are free are told of the region and take parts 1, 2, … from a
// shared counter, and so does the caller once Work(0) is done, so a
// parallel region neither starts goroutines nor allocates.
//
// Telling a goroutine of a region does not commit a part to it: a
// goroutine that the operating system has not run yet (the machine busy
// with other work) finds the parts taken when it wakes, and the caller,
// which took them, never waits for it. The caller waits only for parts
// that have started. A region's parts never queue behind another's, so
// nested regions cannot wait on each other.
func Spread(workers int, t Task) {
	if workers <= 1 || serial.Load() > 0 {
		for w := range max(workers, 0) {
			t.Work(w)
		}
		return
	}
	pool.ensure(workers - 1)
	r := regions.get()
	r.task, r.parts = t, int64(workers)
	r.next.Store(1)
	r.unfinished.Store(int64(workers - 1))
	r.refs.Store(1)
	r.panicked.Store(nil)
	pool.tell(r, workers-1)
	r.run(0)
	r.runParts()
	r.wait()
	p := r.panicked.Load()
	r.release()
	if p != nil {
		panic(p)
	}
}

// PartPanic is what Spread panics with, on the caller's goroutine, when a
// part of its region panicked (the first, if several did): a panic on a
// pool goroutine would otherwise end the process, out of reach of the
// caller's recover — which for a network's kernels turns it into an error
// naming the node. Spread waits for the region's other parts first, so
// that none still runs when the caller recovers.
type PartPanic struct {
	Part  int    // the part that panicked
	Value any    // what it panicked with
	Stack []byte // its goroutine's stack at the panic
}

func (p *PartPanic) Error() string { return fmt.Sprintf("parallel part %d: %v", p.Part, p.Value) }

// Unwrap returns the panic value when it is an error (a runtime error: an
// index out of range, a nil dereference), for errors.As.
func (p *PartPanic) Unwrap() error {
	err, _ := p.Value.(error)
	return err
}

// region is one Spread: its parts, the counter they are taken from, and
// how many are not finished.
type region struct {
	task       Task
	parts      int64
	next       atomic.Int64 // the next part to take
	unfinished atomic.Int64 // parts 1… not yet finished
	// refs counts the goroutines that may still read the region: the
	// caller and every pool goroutine told of it. The last to let go
	// puts it back in the pool, so that a late goroutine never reads a
	// region already reused.
	refs atomic.Int64
	// panicked is the first part's panic, if one panicked.
	panicked atomic.Pointer[PartPanic]
}

// runParts takes parts from the counter and runs them until none is left.
func (r *region) runParts() {
	for {
		w := r.next.Add(1) - 1
		if w >= r.parts {
			return
		}
		r.run(int(w))
		r.unfinished.Add(-1)
	}
}

// run runs part w, recording a panic in it instead of letting it end the
// goroutine (see PartPanic).
func (r *region) run(w int) {
	defer func() {
		if v := recover(); v != nil {
			r.panicked.CompareAndSwap(nil, &PartPanic{Part: w, Value: v, Stack: debug.Stack()})
		}
	}()
	r.task.Work(w)
}

// wait returns when every part has finished. The parts still running
// were started by goroutines that are running them, and they are short
// (a kernel's slice of one operator), so the caller polls, giving its
// core away now and then once past spinHot polls.
func (r *region) wait() {
	for i := 1; r.unfinished.Load() != 0; i++ {
		if i%spinYield == 0 && i > spinHot {
			yieldCPU()
		}
	}
}

// release drops one reference to the region, the last returning it to the
// pool of regions.
func (r *region) release() {
	if r.refs.Add(-1) == 0 {
		r.task = nil // keep nothing alive between regions
		regions.put(r)
	}
}

// regionList is a free list of regions. Not a sync.Pool: a region is
// often let go by a pool goroutine, and what a sync.Pool holds for one
// processor the caller's processor cannot always take back, so Spread
// would allocate now and then.
type regionList struct {
	mu   sync.Mutex
	free []*region
}

var regions regionList

func (l *regionList) get() *region {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.free); n > 0 {
		r := l.free[n-1]
		l.free = l.free[:n-1]
		return r
	}
	return new(region)
}

func (l *regionList) put(r *region) {
	l.mu.Lock()
	l.free = append(l.free, r)
	l.mu.Unlock()
}

// Warm wakes up to n of the pool's goroutines that are asleep, so that
// they are already spinning when the parallel regions of a burst of work
// (a network's inference) begin, instead of each region paying for a
// wake-up. It starts the goroutines if there are fewer than n, and ends
// a Rest. Between BeginSerial and EndSerial it wakes none.
func Warm(n int) {
	resting.Store(false)
	if n <= 0 || serial.Load() > 0 || runtime.GOMAXPROCS(0) < 2 {
		return
	}
	pool.ensure(n)
	woke := false
	for _, wk := range pool.snapshot()[:n] {
		if wk.state.CompareAndSwap(parked, idle) {
			wk.wake <- struct{}{}
			woke = true
		}
	}
	if woke {
		nudge()
	}
}

// nudge readies the pool's nudger goroutine right after parked pool
// goroutines were woken, so that they start within microseconds.
//
// Why: a goroutine readied by a channel send goes into the waking
// processor's "next" slot, and another processor takes a goroutine from
// that slot only after a sleep of 3 µs meant to let the waker run it
// itself — a sleep the kernel's timer slack stretches to about 50 µs.
// The waker here runs on (the region the wake is for), so a woken pool
// goroutine began 90–130 µs after the wake on a 2-core virtual machine.
// The nudger, readied last, takes the slot and pushes the pool goroutines
// into the processor's ordinary run queue, from which an idle processor
// takes them at once: 7–30 µs (median 25). Sleeping on a futex instead
// was as quick to wake but held the processor in a system call while
// asleep, and the scheduler then started threads to look for work while
// ONNX Runtime, timed next, ran: both engines were slower.
func nudge() {
	select {
	case nudger <- struct{}{}:
	default: // a nudge is pending already
	}
}

// nudger is the channel of the goroutine nudge readies, which does
// nothing else; started with the pool.
var nudger = make(chan struct{}, 1)

// Rest ends a burst of work: the pool's goroutines sleep as soon as they
// are free, within microseconds, instead of spinning for spinTime, so
// that they take no core from whatever runs next in the process (another
// engine timed against this one, say). Regions still run after it; the
// goroutines they wake sleep again when done, until Warm.
func Rest() { resting.Store(true) }

// resting is set by Rest and cleared by Warm.
var resting atomic.Bool

// The states of a pool goroutine.
const (
	idle     int32 = iota // spinning, free for a region
	claimed               // tell has reserved it and is writing the region
	assigned              // the region is written: it runs its parts next
	parked                // asleep on its wake channel, free for a region
)

// spinTime is how long a pool goroutine spins for its next region before
// it parks. A network's operators follow one another within microseconds,
// and waking a parked goroutine costs tens of microseconds on a virtual
// machine (a futex wake-up, then the Go scheduler): spinning through an
// inference is what makes splitting small operators pay. Past this long
// without work, the goroutine gives its core back.
//
// A variable (nanoseconds), so that tests can make the spin outlast them.
var spinTime atomic.Int64

func init() { spinTime.Store(int64(200 * time.Microsecond)) }

// spinYield is how many polls a spinning goroutine makes between yields
// of its core (yieldCPU), which let the operating system run the threads
// it waits for when there are more busy threads than cores.
const spinYield = 64

// spinHot is how many polls a spinning goroutine makes before it starts
// to yield: the gaps between the regions of one inference. A yield is a
// system call of about a microsecond here, and a goroutine inside one
// when its region comes starts late: with a yield every spinYield polls
// from the start, handing a region to a spinning goroutine and back cost
// 1.1 µs (BenchmarkSpread: 4.48 µs for two parts of 3.35), against 0.2
// µs (3.55) without yields and 0.45 µs (3.80) with this many polls first
// (at about 0.3 ns a poll, some 20 µs; 4096 polls, a microsecond, saved
// little). Past them the wait is long enough for another thread to need
// the core. A goroutine that Rest told to sleep yields at once.
const spinHot = 1 << 16

// spinClock is how many yields a spinning goroutine makes between
// readings of the clock.
const spinClock = 16

// worker is one goroutine of the pool, with its own mailbox: the region it
// was told of, written by tell while the state is claimed.
type worker struct {
	state  atomic.Int32
	region *region
	wake   chan struct{} // a token when tell or Warm ends its sleep
	_      [64]byte      // keep each worker's state on its own cache line
}

// run is the goroutine's life: wait to be told of a region (spinning,
// then asleep), run its parts that are left, become free again.
func (wk *worker) run() {
	for {
		wk.await()
		r := wk.region
		wk.region = nil
		r.runParts()
		wk.state.Store(idle)
		r.release()
	}
}

// await returns once the worker's state is assigned. It polls while
// spinTime has not passed without work, then sleeps until woken.
func (wk *worker) await() {
	spin := runtime.GOMAXPROCS(0) > 1
	var deadline time.Time
	for i := 1; ; i++ {
		switch wk.state.Load() {
		case assigned:
			return
		case claimed:
			continue // the region is being written
		}
		if i%spinYield != 0 || i <= spinHot && !resting.Load() {
			continue
		}
		yieldCPU()
		if i%(spinYield*spinClock) != 0 {
			continue
		}
		// The clock is read only now and then: on some virtual
		// machines it costs as much as the yield.
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(time.Duration(spinTime.Load()))
		}
		if spin && !resting.Load() && now.Before(deadline) {
			continue
		}
		if wk.state.CompareAndSwap(idle, parked) {
			<-wk.wake
			// Woken by tell (assigned) or by Warm (idle): spin
			// afresh either way.
			deadline, i = time.Time{}, 0
		}
	}
}

// workerPool is the set of goroutines that run Spread's parts.
type workerPool struct {
	mu      sync.Mutex
	workers atomic.Pointer[[]*worker] // grows only; replaced, never changed
}

var pool workerPool

func (p *workerPool) snapshot() []*worker {
	if ws := p.workers.Load(); ws != nil {
		return *ws
	}
	return nil
}

// tell tells up to n free goroutines of the pool of region r; it never
// blocks.
func (p *workerPool) tell(r *region, n int) {
	woke := false
	for _, wk := range p.snapshot() {
		if n == 0 {
			break
		}
		s := wk.state.Load()
		if (s != idle && s != parked) || !wk.state.CompareAndSwap(s, claimed) {
			continue
		}
		r.refs.Add(1)
		wk.region = r
		wk.state.Store(assigned)
		if s == parked {
			wk.wake <- struct{}{}
			woke = true
		}
		n--
	}
	if woke {
		nudge()
	}
}

// ensure starts goroutines until there are at least n.
func (p *workerPool) ensure(n int) {
	if len(p.snapshot()) >= n {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ws := p.snapshot()
	if len(ws) >= n {
		return
	}
	grown := append(append(make([]*worker, 0, n), ws...), make([]*worker, n-len(ws))...)
	for i := len(ws); i < n; i++ {
		wk := &worker{wake: make(chan struct{}, 1)}
		grown[i] = wk
		go wk.run()
		// A region lives on while a goroutine told of it has not run
		// yet (the machine busy), so a region can be in use per
		// goroutine besides the caller's own and a nested one: made
		// now, they are never allocated in a warm run.
		regions.put(new(region))
	}
	if len(ws) == 0 {
		regions.put(new(region))
		regions.put(new(region))
		go func() {
			for range nudger {
			}
		}()
	}
	p.workers.Store(&grown)
}
