package main

import (
	"fmt"
	"math"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// isa is the instruction set a kernel is generated for. The arithmetic
// (VADDPS, VFMADD213PS, VPSRAD ...) has the same mnemonic for YMM and ZMM
// registers; what differs is how lanes are selected (a vector mask and
// VBLENDVPS for AVX2, a k register and VBLENDMPS for AVX-512), the
// bitwise instructions (VANDPS on YMM, VPANDD on ZMM, which needs only
// AVX-512F) and how the tail past the last full vector is loaded and
// stored (VMASKMOVPS with a mask vector, or a k-masked VMOVUPS).
type isa struct {
	suffix string // appended to every kernel's name: "AVX2", "AVX512"
	lanes  int    // float32 lanes per register
}

var (
	avx2   = isa{suffix: "AVX2", lanes: 8}
	avx512 = isa{suffix: "AVX512", lanes: 16}
)

func (s isa) wide() bool { return s.lanes == 16 }

// vec allocates a virtual vector register of the ISA's width.
func (s isa) vec() reg.VecVirtual {
	if s.wide() {
		return ZMM()
	}
	return YMM()
}

// constants holds one read-only 4-byte global per constant, shared by
// every kernel of the file.
var constants = map[uint32]Mem{}

func constMem(bits uint32) Mem {
	if m, ok := constants[bits]; ok {
		return m
	}
	m := ConstData(fmt.Sprintf("vecconst%08x", bits), U32(bits))
	constants[bits] = m
	return m
}

// f broadcasts the float32 nearest to v into a new register.
func (s isa) f(v float64) reg.VecVirtual { return s.bits(math.Float32bits(float32(v))) }

// bits broadcasts a 32-bit pattern into a new register.
func (s isa) bits(b uint32) reg.VecVirtual {
	r := s.vec()
	VBROADCASTSS(constMem(b), r)
	return r
}

func (s isa) and(a, b, dst reg.VecVirtual) {
	if s.wide() {
		VPANDD(a, b, dst)
	} else {
		VANDPS(a, b, dst)
	}
}

func (s isa) or(a, b, dst reg.VecVirtual) {
	if s.wide() {
		VPORD(a, b, dst)
	} else {
		VORPS(a, b, dst)
	}
}

// lane is a per-lane condition: a mask vector (AVX2) or a k register.
type lane struct {
	y reg.VecVirtual
	k reg.OpmaskVirtual
}

// less is the lanes where a < b (ordered: false when either is NaN).
func (s isa) less(a, b reg.VecVirtual) lane {
	if s.wide() {
		k := K()
		VCMPPS(Imm(1), b, a, k)
		return lane{k: k}
	}
	m := YMM()
	VCMPPS(Imm(1), b, a, m)
	return lane{y: m}
}

// negative is the lanes whose sign bit is set (-0 and negative NaNs
// included).
func (s isa) negative(a reg.VecVirtual) lane {
	if s.wide() {
		k := K()
		VPMOVD2M(a, k)
		return lane{k: k}
	}
	return lane{y: a} // VBLENDVPS reads the sign bits of its mask
}

// pick writes c ? t : f to dst, lane by lane.
func (s isa) pick(c lane, t, f, dst reg.VecVirtual) {
	if s.wide() {
		VBLENDMPS(t, f, c.k, dst)
	} else {
		VBLENDVPS(c.y, t, f, dst)
	}
}

// horner evaluates p at t (mapped to s = t·mul + add first when the fit
// needs it) into a new register.
func (s isa) horner(p poly, t reg.VecVirtual) reg.VecVirtual {
	x := t
	if p.mul != 1 || p.add != 0 {
		x = s.f(p.mul)
		VFMADD213PS(s.f(p.add), t, x) // x = mul·t + add
	}
	d := len(p.coef) - 1
	acc := s.f(p.coef[d])
	for k := d - 1; k >= 0; k-- {
		VFMADD213PS(s.f(p.coef[k]), x, acc) // acc = acc·x + c_k
	}
	return acc
}

// Bit patterns used by several kernels.
const (
	signBit = 0x80000000
	absMask = 0x7fffffff
)

// gp loads a pointer or length argument into a new general register.
func gp(c gotypes.Component) reg.GPVirtual {
	r := GP64()
	Load(c, r)
	return r
}
