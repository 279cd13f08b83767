// Package gemm is the native backend's matrix product: C = alpha*op(A)*
// op(B) + beta*C for float32 and float64, blocked and packed in the
// Goto/BLIS way, spread over goroutines by output tile, with micro-kernels
// in AVX2/FMA assembly where the processor has them and a portable one
// everywhere; products of a few rows skip packing for row kernels; and
// MultiplySimple is the unblocked loop of the integer types.
// MultiplyFused and MultiplyImplicitBFused end each finished tile of C
// with an Epilogue (bias per row or column, a residual, a clamp or another
// activation) while the tile is in cache, so that a layer's bias and
// activation cost no pass of their own over its output.
//
// It knows nothing of ONNX or of operators (as ONNX Runtime's MLAS knows
// nothing of its graph): MatMul, Gemm, the convolutions and the recurrent
// operators of package native call it. The micro-kernel is chosen once,
// at init, from the CPU's features (dispatch.go); Implementations lists
// every implementation this machine runs, so that the tests check each
// against the portable one. Building with the purego tag leaves only the
// portable one.
package gemm
