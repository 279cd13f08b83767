// Package vec holds the float32 vector kernels of the native backend:
// clip, scale-and-shift, Relu's gradient, axpy and dot, each in a portable
// loop and, where the processor has them, in AVX2/FMA assembly.
//
// It knows nothing of ONNX or of operators (as gonum's internal/asm knows
// nothing of mat): package native's operators, the GEMM's few-rows path
// and the thin convolutions call it. The implementation is chosen once, at
// init, from the CPU's features (dispatch.go); Implementations lists every
// implementation this machine runs, so that tests compare each with the
// portable one. Building with the purego tag leaves only the portable one.
package vec
