// Command _asm generates package vec's assembly with avo, each for
// AVX2/FMA and for AVX-512: with -file math, mathkernels_amd64.s and its
// Go declarations mathkernels_amd64.go (the float32 exponential, sigmoid,
// tanh, erf, the two Gelu forms, HardSigmoid, HardSwish and the row
// reductions of Softmax and LayerNormalization); with -file dotrows,
// dotrows_amd64.s and dotrows_amd64.go (the kernels of MulAddTransB and
// MulAdd: dotrows.go, muladd.go). Run it through go generate in package
// vec (vec.go, dotrows.go).
package main

import (
	"flag"
	"fmt"
	"math"
	"os"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

func main() {
	file := flag.String("file", "", "what to generate: math (mathkernels_amd64.s) or dotrows (dotrows_amd64.s)")
	flag.Parse()
	ConstraintExpr("amd64,!purego")
	switch *file {
	case "math":
		for _, s := range []isa{avx2, avx512} {
			s.unaryKernels()
			s.rowKernels()
			s.normGradKernels()
		}
	case "dotrows":
		symbolPrefix = "dotrows"
		for _, s := range []isa{avx2, avx512} {
			s.dotRows8(1)
		}
		// AVX2's sixteen registers do not hold two rows' accumulators.
		avx512.dotRows8(2)
		for _, s := range []isa{avx2, avx512} {
			s.mulAddRows(4)
			s.mulAddRows(1)
		}
	default:
		fmt.Fprintf(os.Stderr, "unknown -file %q\n", *file)
		os.Exit(2)
	}
	Generate()
}

// symbolPrefix names the file's own read-only tables: the two generated
// files are in one package, so a table both use is defined in each under
// its own name.
var symbolPrefix = "vec"

// unaryKernels generates the element-wise kernels func(y, x []float32),
// which write f(x[i]) to y[i] for every i < len(x) (y at least as long).
func (s isa) unaryKernels() {
	s.elementwise("exp", "", "y[i] = exp(x[i])", func(x reg.VecVirtual) reg.VecVirtual { return s.exp(x) })
	s.elementwise("sigmoid", "", "y[i] = 1/(1+exp(-x[i]))", s.sigmoid)
	s.elementwise("tanh", "", "y[i] = tanh(x[i])", s.tanh)
	s.elementwise("erf", "", "y[i] = erf(x[i])", s.erf)
	s.elementwise("geluErf", "", "y[i] = x[i]/2·(1+erf(x[i]/√2))", s.geluErf)
	s.elementwise("geluTanh", "", "y[i] = x[i]/2·(1+tanh(√(2/π)(x[i]+0.044715x[i]³)))", s.geluTanh)
	s.elementwise("hardSwish", "", "y[i] = x[i]·min(max((x[i]+3)/6, 0), 1)", s.hardSwish)

	var alpha, beta reg.VecVirtual
	s.elementwiseSetup("hardSigmoid", ", alpha, beta float32", "y[i] = min(max(alpha·x[i]+beta, 0), 1)", func() {
		alpha, beta = s.param("alpha"), s.param("beta")
	}, func(x reg.VecVirtual) reg.VecVirtual {
		t := s.vec()
		VMOVAPS(alpha, t)
		VFMADD213PS(beta, x, t) // t = alpha·x + beta
		return s.clamp01(t)
	})
}

// param broadcasts a float32 argument into a register.
func (s isa) param(name string) reg.VecVirtual {
	x := Load(Param(name), XMM())
	r := s.vec()
	VBROADCASTSS(x, r)
	return r
}

func (s isa) elementwise(name, params, doc string, body func(x reg.VecVirtual) reg.VecVirtual) {
	s.elementwiseSetup(name, params, doc, func() {}, body)
}

// elementwiseSetup generates name+suffix(y, x []float32 params): setup
// runs once (loading parameters), body once per vector of x; the tail
// past the last full vector is loaded and stored under a mask.
func (s isa) elementwiseSetup(name, params, doc string, setup func(), body func(x reg.VecVirtual) reg.VecVirtual) {
	TEXT(name+s.suffix, NOSPLIT, "func(y, x []float32"+params+")")
	Pragma("noescape")
	Doc(name+s.suffix+" writes "+doc+", for i < len(x).", "")
	yp := gp(Param("y").Base())
	xp := gp(Param("x").Base())
	n := gp(Param("x").Len())
	setup()
	s.loop(n, []reg.GPVirtual{xp, yp}, func(t *lane) {
		x := s.load(Mem{Base: xp}, t)
		s.store(body(x), Mem{Base: yp}, t)
	})
	VZEROUPPER()
	RET()
}

// loop runs body over n elements a vector at a time, advancing ptrs, and
// once more with a tail mask (t non-nil) for the n mod lanes left.
func (s isa) loop(n reg.GPVirtual, ptrs []reg.GPVirtual, body func(t *lane)) {
	Label("full")
	CMPQ(n, Imm(uint64(s.lanes)))
	JL(LabelRef("tail"))
	body(nil)
	for _, p := range ptrs {
		ADDQ(Imm(uint64(4*s.lanes)), p)
	}
	SUBQ(Imm(uint64(s.lanes)), n)
	JMP(LabelRef("full"))

	Label("tail")
	TESTQ(n, n)
	JZ(LabelRef("done"))
	t := s.tailMask(n)
	body(&t)
	Label("done")
}

var tailMaskTable Mem

// tailMask is the first n lanes (0 <= n < lanes): for AVX2 a vector read
// from a table of eight all-ones words followed by eight zero words at
// offset 4·(8-n); for AVX-512 the k register of the low n bits of ones.
func (s isa) tailMask(n reg.GPVirtual) lane {
	if s.wide() {
		ones, bits := GP32(), GP32()
		MOVL(U32(0xffff), ones)
		BZHIL(n.As32(), ones, bits)
		k := K()
		KMOVW(bits, k)
		return lane{k: k}
	}
	if tailMaskTable.Symbol.Name == "" {
		tailMaskTable = GLOBL(symbolPrefix+"tailmask", RODATA|NOPTR)
		for i := 0; i < 16; i++ {
			w := uint32(0)
			if i < 8 {
				w = 0xffffffff
			}
			DATA(4*i, U32(w))
		}
	}
	off, base := GP64(), GP64()
	MOVQ(U64(8), off)
	SUBQ(n, off)
	SHLQ(Imm(2), off)
	LEAQ(tailMaskTable, base)
	m := YMM()
	VMOVDQU(Mem{Base: base, Index: off, Scale: 1}, m)
	return lane{y: m}
}

// load reads a vector, or under a tail mask the lanes of t (zero in the
// others).
func (s isa) load(m Mem, t *lane) reg.VecVirtual {
	v := s.vec()
	switch {
	case t == nil:
		VMOVUPS(m, v)
	case s.wide():
		VMOVUPS_Z(m, t.k, v)
	default:
		VMASKMOVPS(m, t.y, v)
	}
	return v
}

// store writes a vector, or under a tail mask the lanes of t only.
func (s isa) store(v reg.VecVirtual, m Mem, t *lane) {
	switch {
	case t == nil:
		VMOVUPS(v, m)
	case s.wide():
		VMOVUPS(v, t.k, m)
	default:
		VMASKMOVPS(v, t.y, m)
	}
}

// Constants of the exponential: the clamp bounds (past them float32 exp
// is +Inf or rounds to 0, so clamping changes no result and keeps the
// exponent arithmetic in range), the round-to-integer shifter 1.5·2^23,
// and ln2 split into a head with a short mantissa and the rest.
const (
	expHi    = 88.8
	expLo    = -104
	shifter  = 12582912
	ln2Head  = 0x3f317200 // 0.693145751953125
	ln2HeadF = 0.693145751953125
)

// exp returns exp(x). With n = round(x/ln2) and r = x - n·ln2 (|r| <=
// ln2/2, computed with the two-part ln2 so that it is exact to float32),
// exp(x) = 2^n · (1 + r + r²q(r)). 2^n is applied as two factors
// 2^(n>>1)·2^(n-(n>>1)), each a normal float32, so that results in the
// subnormal range and the overflow to +Inf come out of the last multiply
// rounded as float32 rounds them. A NaN passes through the arithmetic.
func (s isa) exp(x reg.VecVirtual) reg.VecVirtual {
	xc := s.vec()
	VMINPS(x, s.f(expHi), xc) // MINPS and MAXPS return their first Go operand on NaN
	VMAXPS(xc, s.f(expLo), xc)
	shift := s.f(shifter)
	t := s.f(math.Log2E)
	VFMADD213PS(shift, xc, t) // t = x·log2e + 1.5·2^23: n in its low mantissa bits
	nf := s.vec()
	VSUBPS(shift, t, nf)
	VFNMADD231PS(s.bits(ln2Head), nf, xc) // r = x - n·ln2Head
	VFNMADD231PS(s.f(math.Ln2-ln2HeadF), nf, xc)
	r := xc
	q := s.horner(expFit, r)
	r2 := s.vec()
	VMULPS(r, r, r2)
	VFMADD213PS(r, r2, q) // r + r²q
	VADDPS(s.f(1), q, q)
	n := s.vec()
	VPSUBD(shift, t, n)
	n1 := s.vec()
	VPSRAD(Imm(1), n, n1)
	VPSUBD(n1, n, n)
	bias := s.bits(127)
	VPADDD(bias, n1, n1)
	VPSLLD(Imm(23), n1, n1)
	VPADDD(bias, n, n)
	VPSLLD(Imm(23), n, n)
	VMULPS(n1, q, q)
	VMULPS(n, q, q)
	return q
}

// sigmoid is 1/(1+e) for x >= 0 and e/(1+e) for x < 0, e = exp(-|x|):
// neither overflows, and the negative side keeps its relative accuracy
// down to the subnormals.
func (s isa) sigmoid(x reg.VecVirtual) reg.VecVirtual {
	nx := s.vec()
	s.or(s.bits(signBit), x, nx)
	e := s.exp(nx)
	one := s.f(1)
	num := s.vec()
	s.pick(s.negative(x), e, one, num)
	den := s.vec()
	VADDPS(one, e, den)
	VDIVPS(den, num, num)
	return num
}

// tanh is sign(x)·(1-e)/(1+e), e = exp(-2|x|), for |x| >= tanhSmall and
// the odd polynomial x + x³q(x²) below, where the difference would cancel.
func (s isa) tanh(x reg.VecVirtual) reg.VecVirtual {
	a := s.vec()
	s.and(s.bits(absMask), x, a)
	m2a := s.vec()
	VMULPS(s.f(-2), a, m2a)
	e := s.exp(m2a)
	one := s.f(1)
	num := s.vec()
	VSUBPS(e, one, num)
	den := s.vec()
	VADDPS(one, e, den)
	VDIVPS(den, num, num)
	t := s.vec()
	VMULPS(a, a, t)
	q := s.horner(tanhFit, t)
	a3 := s.vec()
	VMULPS(a, t, a3)
	VFMADD213PS(a, a3, q) // a + a³q
	r := s.vec()
	s.pick(s.less(a, s.f(tanhSmall)), q, num, r)
	return s.withSignOf(x, r)
}

// withSignOf ORs the sign bit of x into r (r >= 0 or NaN).
func (s isa) withSignOf(x, r reg.VecVirtual) reg.VecVirtual {
	sign := s.vec()
	s.and(s.bits(signBit), x, sign)
	s.or(sign, r, r)
	return r
}

// erfParts returns, for a = |u|, the small-argument factor q with
// erf(a) = a·q(a²) (valid for a < 1) and E = erfc(min(a, erfBig)).
func (s isa) erfParts(a reg.VecVirtual) (q, e reg.VecVirtual) {
	t := s.vec()
	VMULPS(a, a, t)
	q = s.horner(erfSmallFit, t)
	ac := s.vec()
	VMINPS(a, s.f(erfBig), ac)
	e = s.exp(s.horner(erfcLogFit, ac))
	return q, e
}

// erf is a·q(a²) for a = |x| < 1 and 1 - exp(g(a)) above (g fitted to
// log erfc), with the sign of x; past erfBig it is ±1.
func (s isa) erf(x reg.VecVirtual) reg.VecVirtual {
	a := s.vec()
	s.and(s.bits(absMask), x, a)
	q, e := s.erfParts(a)
	VMULPS(a, q, q)
	big := s.f(1)
	VSUBPS(e, big, big)
	r := s.vec()
	s.pick(s.less(a, s.f(1)), q, big, r)
	return s.withSignOf(x, r)
}

// geluErf is x/2·(1+erf(u)), u = x/√2. 1+erf(u) is taken as 1 + u·q(u²)
// for |u| < 1, and from erfc: 2 - erfc(|u|) for u > 0, erfc(|u|) for u <
// 0 (so the negative tail keeps its relative accuracy instead of
// cancelling), with erfc = 0 past erfBig.
func (s isa) geluErf(x reg.VecVirtual) reg.VecVirtual {
	u := s.vec()
	VMULPS(s.f(1/math.Sqrt2), x, u)
	a := s.vec()
	s.and(s.bits(absMask), u, a)
	q, e := s.erfParts(a)
	VFMADD213PS(s.f(1), u, q) // 1 + u·q
	s.pick(s.less(a, s.f(erfBig)), e, s.bits(0), e)
	two := s.f(2)
	VSUBPS(e, two, two)
	big := s.vec()
	s.pick(s.negative(x), e, two, big)
	r := s.vec()
	s.pick(s.less(a, s.f(1)), q, big, r)
	h := s.vec()
	VMULPS(s.f(0.5), x, h)
	VMULPS(r, h, r)
	return r
}

// geluTanh uses 1 + tanh(z) = 2·sigmoid(2z): y = x·sigmoid(x·(k1 + k2·x²))
// with k1 = 2√(2/π), k2 = 0.044715·k1, which keeps the relative accuracy
// of the negative tail.
func (s isa) geluTanh(x reg.VecVirtual) reg.VecVirtual {
	k1 := 2 * math.Sqrt(2/math.Pi)
	x2 := s.vec()
	VMULPS(x, x, x2)
	z := s.f(0.044715 * k1)
	VFMADD213PS(s.f(k1), x2, z)
	VMULPS(x, z, z)
	sg := s.sigmoid(z)
	VMULPS(x, sg, sg)
	return sg
}

// hardSwish computes (x+3)·(1/6) rather than x/6 + 1/2: near x = -3 the
// sum is exact and the result keeps its relative accuracy.
func (s isa) hardSwish(x reg.VecVirtual) reg.VecVirtual {
	t := s.vec()
	VADDPS(s.f(3), x, t)
	VMULPS(s.f(1.0/6), t, t)
	t = s.clamp01(t)
	VMULPS(x, t, t)
	return t
}

// clamp01 limits t to [0, 1] in place, a NaN kept.
func (s isa) clamp01(t reg.VecVirtual) reg.VecVirtual {
	VMINPS(t, s.f(1), t)
	VMAXPS(t, s.bits(0), t)
	return t
}
