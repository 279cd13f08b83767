//go:build amd64 && !purego

package gemm

import "github.com/deep500/deep500-go/backend/native/internal/vec"

// avx512 runs the AVX-512 micro-kernels of gemm_avx512_amd64.s (generated
// by _asm): 6×64 float32 and 6×32 float64 blocks, 24 zmm registers of
// sums. They add their block to C themselves, under column masks, so
// edge tiles need no copy. Products of few rows use the AVX2 row
// kernels, which are limited by memory there, not by the vector width,
// and packing a transposed B the AVX2 register transpose.
var avx512 = Impl{
	Name:            "avx512",
	Float32:         MicroKernel[float32]{Mr: 6, Nr: 64, Run: sgemmAVX512, RunInPlace: sgemmAVX512InPlace},
	Float64:         MicroKernel[float64]{Mr: 6, Nr: 32, Run: dgemmAVX512},
	FewRows32:       RowKernels[float32]{Axpy: vec.Axpy, Dot: vec.Dot},
	TransposePanel8: transposePanel8,
}

// columnMask selects the first cols columns of a block.
func columnMask(cols int) uint64 { return 1<<cols - 1 }

// sgemmKernels are the packed float32 kernels by the vectors of 16
// columns a row of their block holds, less one: the 6×64 one, and for
// the last columns of a product the narrow ones, which read the first
// vectors of the same 64-wide panel of B (a block of 4 columns costs a
// quarter of a full one, not all of it). sgemmKernelsInPlace are their
// twins reading B in place.
var (
	sgemmKernels = [4]func(kc int, pa, pb, c *float32, ldc, rows int, colMask uint64, alpha float32, overwrite bool){
		sgemmKernelAVX512x6x16, sgemmKernelAVX512x6x32, sgemmKernelAVX512x6x48, sgemmKernelAVX512x6x64,
	}
	sgemmKernelsInPlace = [4]func(kc int, pa, b *float32, ldb int, c *float32, ldc, rows int, colMask uint64, alpha float32, overwrite bool){
		sgemmKernelAVX512x6x16Strided, sgemmKernelAVX512x6x32Strided, sgemmKernelAVX512x6x48Strided, sgemmKernelAVX512x6x64Strided,
	}
)

// kernelWidth is the index into sgemmKernels of the narrowest kernel
// holding cols (1 to 64) columns.
func kernelWidth(cols int) int { return (cols+15)/16 - 1 }

// sgemmAVX512 runs the kernel as wide as the block's columns
// (sgemmKernels).
func sgemmAVX512(kc int, alpha float32, pa, pb, c []float32, ldc, rows, cols int, overwrite bool) {
	const mr, nr = 6, 64
	// The kernel reads and writes these ranges: check them once, here.
	_, _, _ = pa[mr*kc-1], pb[nr*kc-1], c[(rows-1)*ldc+cols-1]
	cols = min(cols, nr)
	sgemmKernels[kernelWidth(cols)](kc, &pa[0], &pb[0], &c[0], ldc, min(rows, mr), columnMask(cols), alpha, overwrite)
}

// sgemmAVX512InPlace is sgemmAVX512 with B's first cols (at most 64)
// columns read in place, rows ldb apart, under the same column masks as
// C: the others are not read, even past B's end.
func sgemmAVX512InPlace(kc int, alpha float32, pa, b []float32, ldb int, c []float32, ldc, rows, cols int, overwrite bool) {
	const mr, nr = 6, 64
	cols = min(cols, nr)
	_, _, _ = pa[mr*kc-1], b[(kc-1)*ldb+cols-1], c[(rows-1)*ldc+cols-1]
	sgemmKernelsInPlace[kernelWidth(cols)](kc, &pa[0], &b[0], ldb, &c[0], ldc, min(rows, mr), columnMask(cols), alpha, overwrite)
}

func dgemmAVX512(kc int, alpha float64, pa, pb, c []float64, ldc, rows, cols int, overwrite bool) {
	const mr, nr = 6, 32
	_, _, _ = pa[mr*kc-1], pb[nr*kc-1], c[(rows-1)*ldc+cols-1]
	dgemmKernelAVX512x6x32(kc, &pa[0], &pb[0], &c[0], ldc, min(rows, mr), columnMask(min(cols, nr)), alpha, overwrite)
}
