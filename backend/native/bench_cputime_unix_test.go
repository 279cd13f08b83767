//go:build unix

package native

import (
	"syscall"
	"time"
)

// processCPUTime is the user and system time the process has used: on a
// machine shared with other jobs it counts only this process's work, where
// the wall clock also counts the time it waited for a core.
func processCPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
