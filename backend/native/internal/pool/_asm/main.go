// Command _asm generates the pool package's AVX2 and AVX-512 kernels
// (pool_amd64.s and their Go declarations, pool_stubs_amd64.go) with avo.
// The package's doc.go runs it through go:generate.
//
// Every kernel computes one output row of a 2-D pooling whose windows lie
// wholly inside the input: n outputs (n at least the vector width), each
// over rows×kw input elements at column stride 1 or 2. Vectors of outputs
// are processed left to right; the last vector is moved back to end at n,
// overlapping its predecessor, so no element past the row is read or
// written. The taps of a window are visited in row-major order, as the
// scalar loop of package native visits them, which is what makes MaxPool's
// ties and AveragePool's float64 sums come out bit for bit the same.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// isa is one vector width: its register constructor and its name suffix.
type isa struct {
	name  string
	lanes int // float32 lanes
	vec   func() reg.VecVirtual
}

var (
	avx2   = isa{name: "AVX2", lanes: 8, vec: YMM}
	avx512 = isa{name: "AVX512", lanes: 16, vec: ZMM}
)

func main() {
	ConstraintExpr("amd64,!purego")
	// The AVX-512 stride-2 gather: lanes 0..7 take the even elements of
	// the 16 loaded at the tap, lanes 8..15 the odd elements of the 16
	// loaded 15 further on (table 2 of VPERMT2PS), so the last element
	// read is the last one used.
	evens := GLOBL("pool_stride2_index", RODATA|NOPTR)
	for i := range 16 {
		v := 2 * i
		if i >= 8 {
			v = 16 + 2*(i-8) + 1
		}
		DATA(4*i, U32(v))
	}
	negInf := GLOBL("pool_neg_inf", RODATA|NOPTR)
	DATA(0, U32(0xff800000))

	for _, k := range []isa{avx2, avx512} {
		for _, stride := range []int{1, 2} {
			maxKernel(k, stride, evens, negInf)
			avgKernel(k, stride, evens)
		}
	}
	Generate()
}

// rowArgs are the registers every kernel loads from its arguments.
type rowArgs struct {
	dst, src, last, strideBytes, rows, kw reg.GPVirtual
}

func loadRowArgs() rowArgs {
	a := rowArgs{dst: GP64(), src: GP64(), last: GP64(), strideBytes: GP64(), rows: GP64(), kw: GP64()}
	Load(Param("dst"), a.dst)
	Load(Param("src"), a.src)
	Load(Param("n"), a.last)
	Load(Param("stride"), a.strideBytes)
	Load(Param("rows"), a.rows)
	Load(Param("kw"), a.kw)
	SHLQ(U8(2), a.strideBytes)
	return a
}

// chunkLoop runs body(o, p) for every vector of outputs: o is the index of
// its first output, p the address of its first window's top-left input.
// The last vector starts at n-lanes (the caller guarantees n >= lanes).
func chunkLoop(name string, k isa, stride int, a rowArgs, body func(o, p reg.GPVirtual)) {
	SUBQ(U32(k.lanes), a.last)
	o := GP64()
	XORQ(o, o)
	Label(name + "_chunk")
	p := GP64()
	LEAQ(Mem{Base: a.src, Index: o, Scale: uint8(4 * stride)}, p)
	body(o, p)
	CMPQ(o, a.last)
	JEQ(LabelRef(name + "_done"))
	ADDQ(U32(k.lanes), o)
	CMPQ(o, a.last)
	JLE(LabelRef(name + "_chunk"))
	MOVQ(a.last, o)
	JMP(LabelRef(name + "_chunk"))
	Label(name + "_done")
}

// windowLoop runs tap(addr) for every tap of the window whose top-left
// input is at p, in row-major order.
func windowLoop(name string, a rowArgs, p reg.GPVirtual, tap func(addr reg.GPVirtual)) {
	rowp, r := GP64(), GP64()
	MOVQ(p, rowp)
	MOVQ(a.rows, r)
	Label(name + "_row")
	tapp, j := GP64(), GP64()
	MOVQ(rowp, tapp)
	MOVQ(a.kw, j)
	Label(name + "_tap")
	tap(tapp)
	ADDQ(U8(4), tapp)
	DECQ(j)
	JNZ(LabelRef(name + "_tap"))
	ADDQ(a.strideBytes, rowp)
	DECQ(r)
	JNZ(LabelRef(name + "_row"))
}

// loadTap loads the inputs of one tap of `lanes` consecutive windows:
// the elements at addr, addr+stride, addr+2·stride, ...
func loadTap(k isa, stride int, addr reg.GPVirtual, idx reg.VecVirtual) reg.VecVirtual {
	v := k.vec()
	switch {
	case stride == 1:
		VMOVUPS(Mem{Base: addr}, v)
	case k.lanes == 16:
		VMOVUPS(Mem{Base: addr}, v)
		VPERMT2PS(Mem{Base: addr, Disp: 4 * 15}, idx, v)
	default:
		// Even elements of the 8 at addr and odd ones of the 8 at addr+7
		// (VSHUFPS works within 128-bit lanes), then the 64-bit pairs
		// put in order.
		a := k.vec()
		VMOVUPS(Mem{Base: addr}, a)
		VSHUFPS(U8(0xD8), Mem{Base: addr, Disp: 4 * 7}, a, v)
		VPERMPD(U8(0xD8), v, v)
	}
	return v
}

func strideIndex(k isa, stride int, evens Mem) reg.VecVirtual {
	if stride != 2 || k.lanes != 16 {
		return nil
	}
	idx := k.vec()
	VMOVUPS(evens, idx)
	return idx
}

func maxKernel(k isa, stride int, evens, negInf Mem) {
	name := fmt.Sprintf("maxS%d%s", stride, k.name)
	TEXT(name, NOSPLIT, "func(dst, src *float32, n, stride, rows, kw int) (nan bool)")
	Doc(fmt.Sprintf("%s writes to dst[0:n] the first maximum of each window of rows×kw inputs at column stride %d (rows stride elements apart); nan reports that a window may hold a NaN (one holding both infinities may be reported too), and then dst is to be recomputed.", name, stride))
	a := loadRowArgs()
	idx := strideIndex(k, stride, evens)
	neg := k.vec()
	VBROADCASTSS(negInf, neg)
	// seen accumulates, lane by lane, whether an input was unordered
	// (a NaN). AVX2 ORs an unordered compare of every tap into a vector.
	// AVX-512 compares only into mask registers, and a compare and a
	// mask OR per tap ran three times slower than AVX2 on the Zen 4 this
	// was written on, so it sums each window's taps (a NaN, or +Inf and
	// -Inf together, make the sum a NaN) and ORs one compare of the sum
	// per vector of windows into a mask.
	var seenK reg.Virtual
	var seenV reg.VecVirtual
	if k.lanes == 16 {
		seenK = K()
		KXORW(seenK, seenK, seenK)
	} else {
		seenV = k.vec()
		VXORPS(seenV, seenV, seenV)
	}
	chunkLoop(name, k, stride, a, func(o, p reg.GPVirtual) {
		acc := k.vec()
		VMOVAPS(neg, acc)
		var sum reg.VecVirtual
		if k.lanes == 16 {
			sum = k.vec()
			VXORPS(sum, sum, sum)
		}
		windowLoop(name, a, p, func(addr reg.GPVirtual) {
			v := loadTap(k, stride, addr, idx)
			// acc = v > acc ? v : acc: an equal later element (+0
			// after -0) does not replace the first.
			VMAXPS(acc, v, acc)
			if k.lanes == 16 {
				VADDPS(v, sum, sum)
			} else {
				u := k.vec()
				VCMPPS(U8(3), v, v, u)
				VORPS(u, seenV, seenV)
			}
		})
		if k.lanes == 16 {
			m := K()
			VCMPPS(U8(3), sum, sum, m) // unordered
			KORW(m, seenK, seenK)
		}
		VMOVUPS(acc, Mem{Base: a.dst, Index: o, Scale: 4})
	})
	nan := GP8()
	if k.lanes == 16 {
		KORTESTW(seenK, seenK)
	} else {
		VTESTPS(seenV, seenV)
	}
	SETNE(nan)
	VZEROUPPER()
	Store(nan, ReturnIndex(0))
	RET()
}

func avgKernel(k isa, stride int, evens Mem) {
	name := fmt.Sprintf("avgS%d%s", stride, k.name)
	TEXT(name, NOSPLIT, "func(dst, src *float32, n, stride, rows, kw int, divisor float64)")
	Doc(fmt.Sprintf("%s writes to dst[0:n] the float64 sum of each window of rows×kw inputs at column stride %d (rows stride elements apart), taken in row-major order, divided by divisor and rounded to float32.", name, stride))
	a := loadRowArgs()
	idx := strideIndex(k, stride, evens)
	div := k.vec()
	d := XMM()
	Load(Param("divisor"), d)
	VBROADCASTSD(d, div)
	chunkLoop(name, k, stride, a, func(o, p reg.GPVirtual) {
		lo, hi := k.vec(), k.vec()
		VXORPD(lo, lo, lo)
		VXORPD(hi, hi, hi)
		windowLoop(name, a, p, func(addr reg.GPVirtual) {
			v := loadTap(k, stride, addr, idx)
			wlo, whi := k.vec(), k.vec()
			if k.lanes == 16 {
				h := YMM()
				VCVTPS2PD(v.AsY(), wlo)
				VEXTRACTF64X4(U8(1), v, h)
				VCVTPS2PD(h, whi)
			} else {
				h := XMM()
				VCVTPS2PD(v.AsX(), wlo)
				VEXTRACTF128(U8(1), v, h)
				VCVTPS2PD(h, whi)
			}
			VADDPD(wlo, lo, lo)
			VADDPD(whi, hi, hi)
		})
		VDIVPD(div, lo, lo)
		VDIVPD(div, hi, hi)
		half := 4 * k.lanes / 2
		if k.lanes == 16 {
			ylo, yhi := YMM(), YMM()
			VCVTPD2PS(lo, ylo)
			VCVTPD2PS(hi, yhi)
			VMOVUPS(ylo, Mem{Base: a.dst, Index: o, Scale: 4})
			VMOVUPS(yhi, Mem{Base: a.dst, Index: o, Scale: 4, Disp: half})
		} else {
			xlo, xhi := XMM(), XMM()
			VCVTPD2PSY(lo, xlo)
			VCVTPD2PSY(hi, xhi)
			VMOVUPS(xlo, Mem{Base: a.dst, Index: o, Scale: 4})
			VMOVUPS(xhi, Mem{Base: a.dst, Index: o, Scale: 4, Disp: half})
		}
	})
	VZEROUPPER()
	RET()
}
