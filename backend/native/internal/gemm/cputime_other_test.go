//go:build !linux

package gemm

import "time"

// threadCPUTime is not measured on this system.
func threadCPUTime() (time.Duration, bool) { return 0, false }
