package par

import (
	"runtime"
	"sync"
)

// Grain is the least number of elements of an elementwise loop worth a
// goroutine: below it, starting one (and waking an idle processor) costs
// more than the loop it would run. With the vector kernels a loop over
// 2^15 elements takes a few microseconds; splitting such loops made
// batch-1 resnet8 twice as slow on two threads as on one.
const Grain = 1 << 17

// For runs body over [0, n) in contiguous chunks of at least minChunk, on
// up to threads goroutines (0 or less: GOMAXPROCS). Work too small to
// split runs on the calling goroutine. The chunks cover [0, n) exactly
// once and For returns when all of them are done.
func For(n, threads, minChunk int, body func(lo, hi int)) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	chunks := min(threads, n/max(minChunk, 1))
	if chunks <= 1 {
		if n > 0 {
			body(0, n)
		}
		return
	}
	var wg sync.WaitGroup
	for c := range chunks {
		lo, hi := c*n/chunks, (c+1)*n/chunks
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(lo, hi)
		}()
	}
	wg.Wait()
}
