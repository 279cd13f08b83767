//go:build amd64 && !purego

package gemm

import (
	"golang.org/x/sys/cpu"

	"github.com/deep500/deep500-go/backend/native/internal/vec"
)

// archImpls lists the assembly implementations this processor (and the
// operating system's saved state) runs, best first.
func archImpls() []Impl {
	var list []Impl
	// The AVX-512 entry also runs the AVX2 row kernels.
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		list = append(list, avx512)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		list = append(list, avx2)
	}
	return list
}

// avx2 runs the AVX2/FMA micro-kernels of gemm_amd64.s, the vector
// package's row kernels (chosen from the same features) for products of
// few rows, and the register transpose of transpose_amd64.s.
var avx2 = Impl{
	Name:            "avx2",
	Float32:         MicroKernel[float32]{Mr: 6, Nr: 16, Run: sgemm6x16},
	Float64:         MicroKernel[float64]{Mr: 6, Nr: 8, Run: dgemm6x8},
	FewRows32:       RowKernels[float32]{Axpy: vec.Axpy, Dot: vec.Dot},
	TransposePanel8: transposePanel8,
}

// sgemmKernel6x16 and dgemmKernel6x8 store the 6×16 (float32) or 6×8
// (float64) block of products of a packed A panel and a packed B panel
// over kc steps to acc, row-major. They read exactly kc×6 values of pa
// and kc×16 (kc×8) of pb.
//
//go:noescape
func sgemmKernel6x16(kc int, pa, pb, acc *float32)

//go:noescape
func dgemmKernel6x8(kc int, pa, pb, acc *float64)

func sgemm6x16(kc int, alpha float32, pa, pb, c []float32, ldc, rows, cols int, overwrite bool) {
	var acc [6 * 16]float32
	// The kernel reads these ranges: check them once, here.
	_, _ = pa[6*kc-1], pb[16*kc-1]
	sgemmKernel6x16(kc, &pa[0], &pb[0], &acc[0])
	addBlock(acc[:], 16, alpha, c, ldc, rows, cols, overwrite)
}

func dgemm6x8(kc int, alpha float64, pa, pb, c []float64, ldc, rows, cols int, overwrite bool) {
	var acc [6 * 8]float64
	_, _ = pa[6*kc-1], pb[8*kc-1]
	dgemmKernel6x8(kc, &pa[0], &pb[0], &acc[0])
	addBlock(acc[:], 8, alpha, c, ldc, rows, cols, overwrite)
}

// stransposePanel8 is transpose_amd64.s's kernel: blocks 8×8 blocks of 8
// columns (ld floats apart, contiguous along their length) stored as
// rows of a panel width floats wide.
//
//go:noescape
func stransposePanel8(blocks int, src *float32, ld int, dst *float32, width int)

// transposePanel8 fills lanes [0, 8) of the rows [0, kc) of a float32
// panel width floats wide from 8 contiguous columns of src (ld apart), in
// 8×8 blocks; it returns how many rows it filled (a multiple of 8).
func transposePanel8(panel, src []float32, ld, kc, width int) int {
	blocks := kc / 8
	if blocks == 0 || width < 8 {
		return 0
	}
	// The kernel reads and writes these ranges: check them once, here.
	_, _ = src[7*ld+blocks*8-1], panel[(blocks*8-1)*width+7]
	stransposePanel8(blocks, &src[0], ld, &panel[0], width)
	return blocks * 8
}
