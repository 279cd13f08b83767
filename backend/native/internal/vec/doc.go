// Package vec holds the float32 vector kernels of the native backend:
// clip, scale-and-shift, Relu's gradient, axpy and dot; the activations
// Exp, Sigmoid, Tanh, Erf, both forms of Gelu, HardSwish and HardSigmoid
// (activation.go); the rows of Softmax, LogSoftmax and
// LayerNormalization (rows.go); and two small products that pack nothing,
// C += A·Bᵀ (MulAddTransB, dot products of rows: a recurrent step's H·Rᵀ)
// and C += A·B (MulAdd, register blocks over a row-major B: attention
// heads, layers whose weights fit in L2). Each has a portable Go version
// and, where the processor has them, AVX2/FMA and AVX-512 assembly. The
// assembly of the activations and rows (mathkernels_amd64.s, -file math)
// and that of the products (dotrows_amd64.s, -file dotrows) are generated
// from Go by the avo program in _asm; each kernel's error against
// the float64 math package is measured by the tests and stated in its doc
// comment.
//
// It knows nothing of ONNX or of operators (as gonum's internal/asm knows
// nothing of mat): package native's operators, the GEMM's few-rows path
// and the thin convolutions call it. The implementation is chosen once, at
// init, from the CPU's features (dispatch.go); Implementations lists every
// implementation this machine runs, so that tests compare each with the
// portable one. Building with the purego tag leaves only the portable one.
package vec
