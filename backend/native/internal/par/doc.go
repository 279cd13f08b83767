// Package par is the parallel-for of the native backend's kernels: it
// splits a range of independent work items into contiguous chunks over
// goroutines, and decides when a range is too small to be worth it.
//
// The goroutines are a pool started once. Between parallel regions they
// spin for a short while (spinTime) before they sleep, so that the
// back-to-back regions of a network's inference hand work over in about
// half a microsecond instead of the tens a wake-up costs; Warm wakes them
// ahead of a burst (the native executor calls it when a run starts), and
// Rest sends them to sleep as soon as they are free (when the run
// returns), so that they take no core from what runs next. A region
// never waits for a goroutine that has not started its part: the caller
// takes the parts left, so a busy machine slows a region down to serial
// speed, not below it. A part that panics does not end the process: the
// region finishes its other parts and the caller panics with a PartPanic,
// where its own recover (the native executor's, which names the node)
// can see it. Between BeginSerial and EndSerial every region runs its
// parts one after another on the caller (the native executor's choice for
// a network it measured to be faster on one core).
//
// It is kept apart from the operators (and knows nothing of ONNX) so that
// every kernel package (gemm, conv, the operators of package native)
// splits work by the same rule.
package par
