package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// normGradKernels generates the two passes of a normalisation's backward
// over one run of elements: the sums it needs (Σdy and Σdy·(x-m)) and the
// map that writes the input gradient (dx = p·dy + q·x + r).
func (s isa) normGradKernels() {
	s.dotCenteredKernel()
	s.affine2Kernel()
}

// dotCenteredKernel: Σdy[i] and Σdy[i]·(x[i]-m), in lanes. The masked
// tail loads zeros into dy, so the lanes past the end add nothing to
// either sum whatever x-m is there.
func (s isa) dotCenteredKernel() {
	TEXT("dotCentered"+s.suffix, NOSPLIT, "func(dy, x []float32, m float32) (sum, dot float32)")
	Pragma("noescape")
	Doc("dotCentered"+s.suffix+" returns Σdy[i] and Σdy[i]·(x[i]-m) over i < len(x).", "")
	dp := gp(Param("dy").Base())
	xp := gp(Param("x").Base())
	n := gp(Param("x").Len())
	m := s.param("m")
	sum, dot := s.bits(0), s.bits(0)
	s.loop(n, []reg.GPVirtual{xp, dp}, func(t *lane) {
		d := s.load(Mem{Base: dp}, t)
		c := s.load(Mem{Base: xp}, t)
		VSUBPS(m, c, c)
		VADDPS(d, sum, sum)
		VFMADD231PS(d, c, dot)
	})
	Store(s.hreduce(sum, add), ReturnIndex(0))
	Store(s.hreduce(dot, add), ReturnIndex(1))
	VZEROUPPER()
	RET()
}

// affine2Kernel: y[i] = p·a[i] + q·b[i] + r.
func (s isa) affine2Kernel() {
	TEXT("affine2"+s.suffix, NOSPLIT, "func(y, a, b []float32, p, q, r float32)")
	Pragma("noescape")
	Doc("affine2"+s.suffix+" writes y[i] = p·a[i] + q·b[i] + r, for i < len(a).", "")
	yp := gp(Param("y").Base())
	ap := gp(Param("a").Base())
	bp := gp(Param("b").Base())
	n := gp(Param("a").Len())
	p, q, r := s.param("p"), s.param("q"), s.param("r")
	s.loop(n, []reg.GPVirtual{ap, bp, yp}, func(t *lane) {
		v := s.load(Mem{Base: bp}, t)
		VFMADD213PS(r, q, v) // v = q·b + r
		VFMADD231PS(s.load(Mem{Base: ap}, t), p, v)
		s.store(v, Mem{Base: yp}, t)
	})
	VZEROUPPER()
	RET()
}
