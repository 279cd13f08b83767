//go:build !linux

package par

import "runtime"

// yieldCPU lets other goroutines run; without sched_yield, the operating
// system's other threads get the core only when the scheduler preempts.
func yieldCPU() { runtime.Gosched() }
