//go:build !unix

package native

import "time"

// processCPUTime is not measured off Unix.
func processCPUTime() (time.Duration, bool) { return 0, false }
