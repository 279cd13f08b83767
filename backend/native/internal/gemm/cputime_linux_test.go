//go:build linux

package gemm

import (
	"time"

	"golang.org/x/sys/unix"
)

// threadCPUTime is the processor time the calling OS thread has run (the
// caller locks its goroutine to the thread). Speeds measured with it do
// not count the time other processes of a shared machine hold the core.
func threadCPUTime() (time.Duration, bool) {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
