// Package gemm is the native backend's matrix product: C = alpha*op(A)*
// op(B) + beta*C for float32 and float64, blocked and packed in the
// Goto/BLIS way, spread over goroutines by output tile, with micro-kernels
// in AVX2/FMA assembly where the processor has them and a portable one
// everywhere; products of a few rows skip packing for row kernels; and
// MultiplySimple is the unblocked loop of the integer types.
//
// It knows nothing of ONNX or of operators (as ONNX Runtime's MLAS knows
// nothing of its graph): MatMul, Gemm, the convolutions and the recurrent
// operators of package native call it. The micro-kernel is chosen once,
// at init, from the CPU's features (dispatch.go); Implementations lists
// every implementation this machine runs, so that the tests check each
// against the portable one. Building with the purego tag leaves only the
// portable one.
package gemm
