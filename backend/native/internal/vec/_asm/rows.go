package main

import (
	"math"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// rowKernels generates the reductions and maps Softmax and
// LayerNormalization are built from.
func (s isa) rowKernels() {
	s.maxKernel()
	s.sumKernel()
	s.sumSquaredDeviationsKernel()
	s.expSumKernel()
	s.normAffineKernel()
}

// hreduce folds the lanes of acc with op and returns an XMM register
// whose lane 0 holds the result.
func (s isa) hreduce(acc reg.VecVirtual, op func(a, b, dst Op)) reg.VecVirtual {
	y := acc
	if s.wide() {
		hi := YMM()
		VEXTRACTF64X4(Imm(1), acc, hi)
		op(hi, acc.AsY(), hi)
		y = hi
	}
	x := XMM()
	VEXTRACTF128(Imm(1), y, x)
	op(x, y.AsX(), x)
	t := XMM()
	VMOVHLPS(x, x, t)
	op(t, x, x)
	VPSHUFD(Imm(1), x, t)
	op(t, x, x)
	return x
}

func add(a, b, dst Op) { VADDPS(a, b, dst) }

// maxKernel: the largest element of x, -Inf when x is empty. A NaN is not
// propagated (MAXPS keeps one operand); Softmax does not need it to be,
// because the NaN reaches the sum of exponentials.
func (s isa) maxKernel() {
	TEXT("max"+s.suffix, NOSPLIT, "func(x []float32) float32")
	Pragma("noescape")
	Doc("max"+s.suffix+" returns the largest element of x (-Inf when empty).", "")
	xp := gp(Param("x").Base())
	n := gp(Param("x").Len())
	acc := s.f(math.Inf(-1))
	s.loop(n, []reg.GPVirtual{xp}, func(t *lane) {
		v := s.load(Mem{Base: xp}, t)
		switch {
		case t == nil:
			VMAXPS(v, acc, acc)
		case s.wide():
			VMAXPS(v, acc, t.k, acc) // merge-masked: the other lanes keep acc
		default:
			s.pick(*t, v, s.f(math.Inf(-1)), v)
			VMAXPS(v, acc, acc)
		}
	})
	Store(s.hreduce(acc, func(a, b, dst Op) { VMAXPS(a, b, dst) }), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// sumKernel: the sum of x, in lanes (the masked tail loads zeros).
func (s isa) sumKernel() {
	TEXT("sum"+s.suffix, NOSPLIT, "func(x []float32) float32")
	Pragma("noescape")
	Doc("sum"+s.suffix+" returns the sum of x, added in vector lanes.", "")
	xp := gp(Param("x").Base())
	n := gp(Param("x").Len())
	acc := s.bits(0)
	s.loop(n, []reg.GPVirtual{xp}, func(t *lane) {
		VADDPS(s.load(Mem{Base: xp}, t), acc, acc)
	})
	Store(s.hreduce(acc, add), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// sumSquaredDeviationsKernel: the sum of (x[i]-m)², fused.
func (s isa) sumSquaredDeviationsKernel() {
	TEXT("sumSquaredDeviations"+s.suffix, NOSPLIT, "func(x []float32, m float32) float32")
	Pragma("noescape")
	Doc("sumSquaredDeviations"+s.suffix+" returns the sum of (x[i]-m)².", "")
	xp := gp(Param("x").Base())
	n := gp(Param("x").Len())
	m := s.param("m")
	acc := s.bits(0)
	s.loop(n, []reg.GPVirtual{xp}, func(t *lane) {
		d := s.load(Mem{Base: xp}, t)
		VSUBPS(m, d, d)
		switch {
		case t == nil:
			VFMADD231PS(d, d, acc)
		case s.wide():
			VFMADD231PS(d, d, t.k, acc)
		default:
			s.and(t.y, d, d) // the zeros loaded past the end are not m
			VFMADD231PS(d, d, acc)
		}
	})
	Store(s.hreduce(acc, add), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// expSumKernel: y[i] = exp(x[i]-m) and their sum.
func (s isa) expSumKernel() {
	TEXT("expSum"+s.suffix, NOSPLIT, "func(y, x []float32, m float32) float32")
	Pragma("noescape")
	Doc("expSum"+s.suffix+" writes y[i] = exp(x[i]-m) and returns their sum.", "")
	yp := gp(Param("y").Base())
	xp := gp(Param("x").Base())
	n := gp(Param("x").Len())
	m := s.param("m")
	acc := s.bits(0)
	s.loop(n, []reg.GPVirtual{xp, yp}, func(t *lane) {
		v := s.load(Mem{Base: xp}, t)
		VSUBPS(m, v, v)
		e := s.exp(v)
		s.store(e, Mem{Base: yp}, t)
		switch {
		case t == nil:
			VADDPS(e, acc, acc)
		case s.wide():
			VADDPS(e, acc, t.k, acc)
		default:
			s.and(t.y, e, e)
			VADDPS(e, acc, acc)
		}
	})
	Store(s.hreduce(acc, add), ReturnIndex(0))
	VZEROUPPER()
	RET()
}

// normAffineKernel: y[i] = (x[i]-mean)·inv·scale[i] + bias[i].
func (s isa) normAffineKernel() {
	TEXT("normAffine"+s.suffix, NOSPLIT, "func(y, x, scale, bias []float32, mean, inv float32)")
	Pragma("noescape")
	Doc("normAffine"+s.suffix+" writes y[i] = (x[i]-mean)·inv·scale[i] + bias[i], for i < len(x).", "")
	yp := gp(Param("y").Base())
	xp := gp(Param("x").Base())
	sp := gp(Param("scale").Base())
	bp := gp(Param("bias").Base())
	n := gp(Param("x").Len())
	mean, inv := s.param("mean"), s.param("inv")
	s.loop(n, []reg.GPVirtual{xp, yp, sp, bp}, func(t *lane) {
		d := s.load(Mem{Base: xp}, t)
		VSUBPS(mean, d, d)
		VMULPS(inv, d, d)
		VFMADD213PS(s.load(Mem{Base: bp}, t), s.load(Mem{Base: sp}, t), d) // d·scale + bias
		s.store(d, Mem{Base: yp}, t)
	})
	VZEROUPPER()
	RET()
}
