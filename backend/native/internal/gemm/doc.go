// Package gemm is the native backend's matrix product: C = alpha*op(A)*
// op(B) + beta*C for float32 and float64, blocked and packed in the
// Goto/BLIS way, spread over goroutines by output tile, with micro-kernels
// in AVX-512 or AVX2/FMA assembly where the processor has them and a
// portable one everywhere; products of a few rows or a few columns skip
// packing for row kernels (axpy, dot); and MultiplySimple is the unblocked loop of the integer types.
// MultiplyFused and MultiplyImplicitBFused end each finished tile of C
// with an Epilogue (bias per row or column, a residual, a clamp or another
// activation) while the tile is in cache, so that a layer's bias and
// activation cost no pass of their own over its output. An operand that
// many products share (a layer's weights) can be packed once (Packed,
// packed.go) and passed in that form, which the blocked path reads
// instead of packing it again.
//
// It knows nothing of ONNX or of operators (as ONNX Runtime's MLAS knows
// nothing of its graph): MatMul, Gemm, the convolutions and the recurrent
// operators of package native call it. The micro-kernel is chosen once,
// at init, from the CPU's features (dispatch.go); Implementations lists
// every implementation this machine runs, so that the tests check each
// against the portable one. Building with the purego tag leaves only the
// portable one.
//
// # Generated assembly
//
// The AVX-512 kernels (gemm_avx512_amd64.s) and the FMA-peak loops the
// benchmarks measure the machine with (fma_peak_amd64.s) are generated,
// with their Go declarations, by the avo program in _asm (go generate).
// _asm is a module of its own, so that this module does not depend on avo;
// it needs no replace directive back to this one, as it imports nothing
// of it (avo writes the declarations itself). The AVX2 kernels of
// gemm_amd64.s and transpose_amd64.s are still written by hand.
//
// # Kernel shapes and speed
//
// The AVX-512 kernels hold a 6×64 float32 (6×32 float64) block of C in
// 24 zmm registers: four vectors of B and one broadcast of A per row per
// step. Measured on the AMD EPYC these were written on (family 25, Zen 4:
// 512-bit FMAs issue once per cycle, as two 256-bit halves, so the FMA
// peak in flops is that of AVX2; L1d 32 KB, L2 1 MB), every shape tried
// (14×32, 12×32, 10×32, 8×32, 8×48, 6×64) runs at 97-99% of the peak on
// operands in L1; in whole products 6×64 was as fast or faster than the
// others, and its 6 rows fit the 96-row tiles. What AVX-512 gains there
// is in the rest: half the instructions, 32 registers, and column masks
// that let the kernels add their block to C themselves, edge tiles too.
//
// BenchmarkMultiply1024 (one thread; speeds over the thread's processor
// time, as the machine was shared with other work that left it a third
// of the wall-clock time) against BenchmarkFMAPeak's 112-116 GFLOP/s,
// float32 ran at 77-84 GFLOP/s (0.65-0.72 of the peak), float64 at 37-38
// (0.63-0.64 of its half peak); the AVX2 kernels at 53-65 (0.45-0.55) and
// 32-34. The rest of the time is packing, in Go. The float32 AVX-512
// kernel has a twin reading B in place, rows ldb apart
// (MicroKernel.RunInPlace), which saves packing a row-major B: the
// im2col matrix of a convolution, the input of a pointwise one.
package gemm

//go:generate go run -C _asm . -file gemm -out ../gemm_avx512_amd64.s -stubs ../gemm_avx512_stubs_amd64.go -pkg gemm
//go:generate go run -C _asm . -file peak -out ../fma_peak_amd64.s -stubs ../fma_peak_stubs_amd64.go -pkg gemm
