package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// The peak loops run n iterations of independent FMAs: enough
// accumulators that the FMA latency never stalls the pipes, so that the
// loop measures the machine's FMA throughput, the ceiling of any GEMM.

// peakAccumulators512 and peakAccumulators256 are the FMA chains of the
// loops: more than latency × pipes (4 × 2 on Zen 4/5, 4 × 2 on recent
// Intel cores) with room to spare.
const (
	peakAccumulators512 = 24
	peakAccumulators256 = 12
)

func generatePeakLoops() {
	TEXT("fmaPeakAVX512", NOSPLIT, "func(n int)")
	Doc("fmaPeakAVX512 runs n iterations of 24 independent 512-bit float32 FMAs",
		"(768 floating-point operations each).")
	for i := range peakAccumulators512 {
		VPXORD(zmm(i), zmm(i), zmm(i))
	}
	VPXORD(reg.Z30, reg.Z30, reg.Z30)
	VPXORD(reg.Z31, reg.Z31, reg.Z31)
	n := Load(Param("n"), GP64())
	TESTQ(n, n)
	JE(LabelRef("peak512_done"))
	Label("peak512_loop")
	for i := range peakAccumulators512 {
		VFMADD231PS(reg.Z30, reg.Z31, zmm(i))
	}
	DECQ(n)
	JNE(LabelRef("peak512_loop"))
	Label("peak512_done")
	VZEROUPPER()
	RET()

	TEXT("fmaPeakAVX2", NOSPLIT, "func(n int)")
	Doc("fmaPeakAVX2 runs n iterations of 12 independent 256-bit float32 FMAs",
		"(192 floating-point operations each).")
	ymms := []reg.VecPhysical{reg.Y0, reg.Y1, reg.Y2, reg.Y3, reg.Y4, reg.Y5, reg.Y6, reg.Y7, reg.Y8, reg.Y9, reg.Y10, reg.Y11}
	for _, y := range ymms[:peakAccumulators256] {
		VXORPS(y, y, y)
	}
	VXORPS(reg.Y14, reg.Y14, reg.Y14)
	VXORPS(reg.Y15, reg.Y15, reg.Y15)
	n = Load(Param("n"), GP64())
	TESTQ(n, n)
	JE(LabelRef("peak256_done"))
	Label("peak256_loop")
	for _, y := range ymms[:peakAccumulators256] {
		VFMADD231PS(reg.Y14, reg.Y15, y)
	}
	DECQ(n)
	JNE(LabelRef("peak256_loop"))
	Label("peak256_done")
	VZEROUPPER()
	RET()
}
