// Package par is the parallel-for of the native backend's kernels: it
// splits a range of independent work items into contiguous chunks over
// goroutines, and decides when a range is too small to be worth it.
//
// It is kept apart from the operators (and knows nothing of ONNX) so that
// every kernel package (gemm, conv, the operators of package native)
// splits work by the same rule.
package par
