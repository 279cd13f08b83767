package par

import "sync/atomic"

// serial counts the callers between BeginSerial and EndSerial.
var serial atomic.Int32

// BeginSerial makes every parallel region (Spread, For) run all its parts
// on the calling goroutine, one after another, until the matching
// EndSerial: the same parts a parallel run would, so the same results,
// with no data handed to another core and no pool goroutine woken (Warm
// does nothing meanwhile). The native executor uses it for the runs of a
// network that it measured to be faster on one core. It holds for every
// region of the process while in force, which is why it counts: regions
// run serially while any caller is between the two.
func BeginSerial() { serial.Add(1) }

// EndSerial ends a BeginSerial.
func EndSerial() { serial.Add(-1) }
