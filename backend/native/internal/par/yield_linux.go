package par

import "syscall"

// yieldCPU gives the calling thread's core to any other thread the
// operating system has waiting for it (sched_yield), and returns at once
// when there is none. A goroutine that spins for work calls it so that,
// on a machine with more busy threads than cores, it does not take the
// core from the thread it waits for.
func yieldCPU() { syscall.Syscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
