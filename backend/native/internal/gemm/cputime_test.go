package gemm

import "time"

// measure times f on the calling thread (which the caller locks): its
// processor time where the system reports it, else wall-clock time.
func measure(f func()) time.Duration {
	wall := time.Now()
	cpu0, ok0 := threadCPUTime()
	f()
	cpu1, ok1 := threadCPUTime()
	if ok0 && ok1 && cpu1 > cpu0 {
		return cpu1 - cpu0
	}
	return time.Since(wall)
}
