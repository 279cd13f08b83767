package metrics

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

func coreRoundTrip(rounds int) (time.Duration, bool) {
	if rounds < 1 || runtime.GOMAXPROCS(0) < 2 {
		return 0, false
	}
	var allowed unix.CPUSet
	if unix.SchedGetaffinity(0, &allowed) != nil {
		return 0, false
	}
	var cpus []int
	for c := 0; c < 8*int(unsafe.Sizeof(allowed)) && len(cpus) < 2; c++ {
		if allowed.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	if len(cpus) < 2 {
		return 0, false
	}
	// The word on a cache line of its own; the turn number i is odd when
	// it is the partner's move.
	var line struct {
		_    [64]byte
		word atomic.Int64
		_    [64]byte
	}
	var failed atomic.Bool
	done := make(chan struct{})
	// onCPU runs f on a thread pinned to cpu, then gives the thread its
	// old affinity back before the Go scheduler may use it for anything
	// else.
	onCPU := func(cpu int, f func()) {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var set unix.CPUSet
		set.Set(cpu)
		if unix.SchedSetaffinity(0, &set) != nil {
			failed.Store(true)
			line.word.Store(-1)
			return
		}
		defer unix.SchedSetaffinity(0, &allowed)
		f()
	}
	// await spins until the word is want (or -1: the other side gave up),
	// giving up itself after roundTripTimeout.
	await := func(want int64) bool {
		deadline := time.Now().Add(roundTripTimeout)
		for i := 0; ; i++ {
			switch line.word.Load() {
			case want:
				return true
			case -1:
				return false
			}
			if i%4096 == 4095 && time.Now().After(deadline) {
				failed.Store(true)
				line.word.Store(-1)
				return false
			}
		}
	}
	go func() {
		defer close(done)
		onCPU(cpus[1], func() {
			for i := int64(1); i <= int64(rounds); i++ {
				if !await(2*i - 1) {
					return
				}
				line.word.Store(2 * i)
			}
		})
	}()
	// Timed in batches, the median batch's mean returned: a thread
	// descheduled for a moment (the other engine's threads still
	// spinning, a collection) spoils one batch, not the figure.
	batches := make([]time.Duration, 0, (rounds+roundTripBatch-1)/roundTripBatch)
	onCPU(cpus[0], func() {
		for first := int64(1); first <= int64(rounds); first += roundTripBatch {
			last := min(first+roundTripBatch-1, int64(rounds))
			start := time.Now()
			for i := first; i <= last; i++ {
				line.word.Store(2*i - 1)
				if !await(2 * i) {
					return
				}
			}
			batches = append(batches, time.Since(start)/time.Duration(last-first+1))
		}
	})
	<-done
	if failed.Load() || len(batches) == 0 {
		return 0, false
	}
	slices.Sort(batches)
	return batches[len(batches)/2], true
}

// roundTripBatch is the number of round trips timed together.
const roundTripBatch = 100
