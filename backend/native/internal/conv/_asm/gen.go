// Command _asm generates depthwise_amd64.s and depthwise_stubs_amd64.go,
// the AVX-512 and AVX2/FMA kernels of package conv's depthwise
// convolution, with avo. Run it through go generate in package conv.
//
// Every plane kernel is specialised to one kernel size K (3 or 5) and
// stride S (1 or 2), so that the K·K taps and their addresses are
// constants of the code: the weights sit in vector registers (AVX-512;
// AVX2 has too few for 5×5 and broadcasts them from memory), and each tap
// reads the padded input (the layout of depthwise.go) at a base register
// plus a multiple of the row pitch plus a constant.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	masks := maskTable()
	copyRowsAVX512()
	copyRowsAVX2(masks)
	deinterleaveAVX512()
	deinterleaveAVX2(masks)
	for _, k := range []int{3, 5} {
		for _, s := range []int{1, 2} {
			planeKernel(avx512, k, s, masks)
			planeKernel(avx2, k, s, masks)
		}
	}
	Generate()
}

// isa describes one vector instruction set: its name (a suffix of the
// generated functions), lanes per vector and vector registers.
type isa struct {
	name  string
	lanes int
	vec   func(i int) VecPhysical
}

var (
	avx512 = isa{"AVX512", 16, func(i int) VecPhysical { return zmm[i] }}
	avx2   = isa{"AVX2", 8, func(i int) VecPhysical { return ymm[i] }}
)

var zmm = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

var ymm = []VecPhysical{Y0, Y1, Y2, Y3, Y4, Y5, Y6, Y7, Y8, Y9, Y10, Y11, Y12, Y13, Y14, Y15}

// maskTable is the int32 lanes 0, 1, ..., 7: comparing a broadcast n
// greater than them gives the AVX2 store mask of the first n lanes.
func maskTable() Mem {
	m := GLOBL("dwLaneIndex", RODATA|NOPTR)
	for i := 0; i < 8; i++ {
		DATA(4*i, U32(uint32(i)))
	}
	return m
}

// Registers of the row loaders: the row loop's pointers to the current
// row of the input and of the destination(s), the rows left, and the
// strides in bytes.
var (
	ldRows      = R8
	ldSrcStride = R9
	ldDstStride = R10
	ldSrcRow    = R11
	ldDstRow    = R12
	ldOddRow    = R13
)

// rowLoop emits the loop over rows of a loader: before each row it
// points RSI, RDI (and RDX with odd) at the row and loads the element
// count into RCX; row is the row's body.
func rowLoop(count string, odd bool, row func()) {
	Load(Param("rows"), ldRows)
	Load(Param("src"), ldSrcRow)
	Load(Param("srcStride"), ldSrcStride)
	Load(Param("dstStride"), ldDstStride)
	if odd {
		Load(Param("even"), ldDstRow)
		Load(Param("odd"), ldOddRow)
	} else {
		Load(Param("dst"), ldDstRow)
	}
	Label("rows")
	TESTQ(ldRows, ldRows)
	JZ(LabelRef("done"))
	MOVQ(ldSrcRow, RSI)
	MOVQ(ldDstRow, RDI)
	if odd {
		MOVQ(ldOddRow, RDX)
	}
	Load(Param(count), RCX)
	row()
	Label("rowend")
	ADDQ(ldSrcStride, ldSrcRow)
	ADDQ(ldDstStride, ldDstRow)
	if odd {
		ADDQ(ldDstStride, ldOddRow)
	}
	DECQ(ldRows)
	JMP(LabelRef("rows"))
	Label("done")
	VZEROUPPER()
	RET()
}

// copyRowsAVX512 generates dwCopyRowsAVX512: rows rows of n elements
// from src to dst, the last partial vector of each row under a mask
// (nothing past n is read or written).
func copyRowsAVX512() {
	TEXT("dwCopyRowsAVX512", NOSPLIT, "func(rows, n int, src *float32, srcStride int, dst *float32, dstStride int)")
	Doc("dwCopyRowsAVX512 copies rows rows of n elements, strides in bytes.")
	rowLoop("n", false, func() {
		Label("vec")
		CMPQ(RCX, U8(16))
		JL(LabelRef("tail"))
		VMOVUPS(Mem{Base: RSI}, Z0)
		VMOVUPS(Z0, Mem{Base: RDI})
		ADDQ(U8(64), RSI)
		ADDQ(U8(64), RDI)
		SUBQ(U8(16), RCX)
		JMP(LabelRef("vec"))
		Label("tail")
		TESTQ(RCX, RCX)
		JZ(LabelRef("rowend"))
		MOVL(U32(1), EAX)
		SHLL(CL, EAX)
		DECL(EAX)
		KMOVW(EAX, K1)
		VMOVUPS_Z(Mem{Base: RSI}, K1, Z0)
		VMOVUPS(Z0, K1, Mem{Base: RDI})
	})
}

// copyRowsAVX2 generates dwCopyRowsAVX2, the same copy 8 elements at a
// time with VMASKMOVPS for the last partial vector.
func copyRowsAVX2(lanes Mem) {
	TEXT("dwCopyRowsAVX2", NOSPLIT, "func(rows, n int, src *float32, srcStride int, dst *float32, dstStride int)")
	Doc("dwCopyRowsAVX2 copies rows rows of n elements, strides in bytes.")
	rowLoop("n", false, func() {
		Label("vec")
		CMPQ(RCX, U8(8))
		JL(LabelRef("tail"))
		VMOVUPS(Mem{Base: RSI}, Y0)
		VMOVUPS(Y0, Mem{Base: RDI})
		ADDQ(U8(32), RSI)
		ADDQ(U8(32), RDI)
		SUBQ(U8(8), RCX)
		JMP(LabelRef("vec"))
		Label("tail")
		TESTQ(RCX, RCX)
		JZ(LabelRef("rowend"))
		MOVQ(RCX, X1)
		VPBROADCASTD(X1, Y1)
		VPCMPGTD(lanes, Y1, Y1)
		VMASKMOVPS(Mem{Base: RSI}, Y1, Y0)
		VMASKMOVPS(Y0, Y1, Mem{Base: RDI})
	})
}

// deinterleaveAVX512 generates dwDeinterleaveRowsAVX512: for each of rows
// rows of m elements, even[i] = src[2i], odd[i] = src[2i+1], 32 elements
// at a time; the last block loads under a mask (masked-off lanes neither
// fault nor read, and come out zero) and stores whole vectors, so up to
// 16 zeros follow the data in even and odd.
func deinterleaveAVX512() {
	idx := GLOBL("dwPermIndex", RODATA|NOPTR)
	for i := 0; i < 32; i++ {
		// Lanes 0-15 pick the even elements of two vectors, 16-31 the odd.
		DATA(4*i, U32(uint32(2*(i%16)+i/16)))
	}
	TEXT("dwDeinterleaveRowsAVX512", NOSPLIT, "func(rows, m int, src *float32, srcStride int, even, odd *float32, dstStride int)")
	Doc("dwDeinterleaveRowsAVX512 splits rows of m elements into their even and odd elements, writing whole vectors of 16; strides in bytes.")
	VMOVDQU32(idx, Z4)
	VMOVDQU32(idx.Offset(64), Z5)
	split := func() {
		VMOVAPS(Z0, Z2)
		VPERMT2PS(Z1, Z4, Z2)
		VPERMT2PS(Z1, Z5, Z0)
		VMOVUPS(Z2, Mem{Base: RDI})
		VMOVUPS(Z0, Mem{Base: RDX})
	}
	rowLoop("m", true, func() {
		Label("loop")
		CMPQ(RCX, U8(32))
		JL(LabelRef("tail"))
		VMOVUPS(Mem{Base: RSI}, Z0)
		VMOVUPS(Mem{Base: RSI}.Offset(64), Z1)
		split()
		ADDQ(U8(128), RSI)
		ADDQ(U8(64), RDI)
		ADDQ(U8(64), RDX)
		SUBQ(U8(32), RCX)
		JMP(LabelRef("loop"))
		Label("tail")
		TESTQ(RCX, RCX)
		JZ(LabelRef("rowend"))
		// K1 = the low min(m, 16) bits, K2 = the low m-16 bits (none
		// when m <= 16): one mask of 32 bits, split.
		MOVQ(U32(1), RAX)
		SHLQ(CL, RAX)
		DECQ(RAX)
		KMOVW(EAX, K1)
		SHRQ(U8(16), RAX)
		KMOVW(EAX, K2)
		VMOVUPS_Z(Mem{Base: RSI}, K1, Z0)
		VMOVUPS_Z(Mem{Base: RSI}.Offset(64), K2, Z1)
		split()
	})
}

// deinterleaveAVX2 generates dwDeinterleaveRowsAVX2, the same split 16
// elements at a time (up to 8 zeros follow the data): SHUFPS gathers
// even (odd) elements within 128-bit lanes, PERMPD puts the two lanes'
// halves in order; the last block loads under VMASKMOVPS masks.
func deinterleaveAVX2(lanes Mem) {
	TEXT("dwDeinterleaveRowsAVX2", NOSPLIT, "func(rows, m int, src *float32, srcStride int, even, odd *float32, dstStride int)")
	Doc("dwDeinterleaveRowsAVX2 splits rows of m elements into their even and odd elements, writing whole vectors of 8; strides in bytes.")
	split := func() {
		VSHUFPS(U8(0x88), Y1, Y0, Y2)
		VSHUFPS(U8(0xdd), Y1, Y0, Y3)
		VPERMPD(U8(0xd8), Y2, Y2)
		VPERMPD(U8(0xd8), Y3, Y3)
		VMOVUPS(Y2, Mem{Base: RDI})
		VMOVUPS(Y3, Mem{Base: RDX})
	}
	rowLoop("m", true, func() {
		Label("loop")
		CMPQ(RCX, U8(16))
		JL(LabelRef("tail"))
		VMOVUPS(Mem{Base: RSI}, Y0)
		VMOVUPS(Mem{Base: RSI}.Offset(32), Y1)
		split()
		ADDQ(U8(64), RSI)
		ADDQ(U8(32), RDI)
		ADDQ(U8(32), RDX)
		SUBQ(U8(16), RCX)
		JMP(LabelRef("loop"))
		Label("tail")
		TESTQ(RCX, RCX)
		JZ(LabelRef("rowend"))
		// Y4 = lanes below m, Y5 = lanes below m-8.
		MOVQ(RCX, X4)
		VPBROADCASTD(X4, Y4)
		SUBQ(U8(8), RCX)
		MOVQ(RCX, X5)
		VPBROADCASTD(X5, Y5)
		VPCMPGTD(lanes, Y4, Y4)
		VPCMPGTD(lanes, Y5, Y5)
		VMASKMOVPS(Mem{Base: RSI}, Y4, Y0)
		VMASKMOVPS(Mem{Base: RSI}.Offset(32), Y5, Y1)
		split()
	})
}

// Register roles of the plane kernels.
var (
	rowBase = RSI // the current output row's first padded input row
	col     = RAX // the current column block within it
	out     = RDI // the next output element
	left    = RCX // output columns left in the row
	rows    = RDX // output rows left
	step    = R8  // bytes from one output row's input to the next
	wptr    = RBX // the weights (AVX2 5×5 only, after the prologue)
	tmp     = R14
)

// pitchRegs hold u times the row pitch for u = 1, 3, 5, 7, 9: with scales
// 1, 2, 4, 8 they reach every multiple up to 10.
var pitchRegs = map[int]GPPhysical{1: R9, 3: R10, 5: R11, 7: R12, 9: R13}

// rowOffset returns the operand of input row m (of the padded layout)
// relative to the column pointer.
func rowOffset(m, disp int) Mem {
	if m == 0 {
		return Mem{Base: col, Disp: disp}
	}
	for _, sc := range []uint8{1, 2, 4, 8} {
		if m%int(sc) == 0 {
			if r, ok := pitchRegs[m/int(sc)]; ok {
				return Mem{Base: col, Index: r, Scale: sc, Disp: disp}
			}
		}
	}
	panic(fmt.Sprintf("row offset %d has no addressing form", m))
}

// planeKernel generates dwPlaneK<k>S<s><isa>: one output plane of a k×k
// depthwise convolution of stride s from the padded input (see
// depthwise.go's layout): out = clamp(bias + Σ taps, lo, hi), the taps
// added in row-major kernel order with fused multiply-adds.
func planeKernel(v isa, k, s int, masks Mem) {
	name := fmt.Sprintf("dwPlaneK%dS%d%s", k, s, v.name)
	TEXT(name, NOSPLIT, "func(src *float32, pitch, rowStep int, w *float32, bias, lo, hi float32, y *float32, oh, ow int)")
	Doc(fmt.Sprintf("%s computes an output plane of a %d×%d depthwise convolution of stride %d.", name, k, k, s))
	Load(Param("src"), rowBase)
	Load(Param("pitch"), R9)
	Load(Param("rowStep"), step)
	Load(Param("w"), wptr)
	Load(Param("y"), out)
	Load(Param("oh"), rows)
	// Multiples of the pitch the taps need.
	maxRow := (k-1)*s + (s - 1)
	if maxRow >= 3 {
		LEAQ(Mem{Base: R9, Index: R9, Scale: 2}, R10)
	}
	if maxRow >= 5 {
		LEAQ(Mem{Base: R9, Index: R9, Scale: 4}, R11)
	}
	if maxRow >= 7 {
		IMUL3Q(U8(7), R9, R12)
	}
	if maxRow >= 9 {
		LEAQ(Mem{Base: R9, Index: R9, Scale: 8}, R13)
	}

	// Vector registers: accumulators first, then lo, hi, bias (AVX-512)
	// or the tail mask (AVX2), then the weights.
	const blocks = 4
	acc := []VecPhysical{v.vec(0), v.vec(1), v.vec(2), v.vec(3)}
	lo, hi := v.vec(4), v.vec(5)
	next := 6
	var bias, mask VecPhysical
	if v.lanes == 16 {
		bias = v.vec(next)
	} else {
		mask = v.vec(next)
	}
	next++
	VBROADCASTSS(paramAddr("lo"), lo)
	VBROADCASTSS(paramAddr("hi"), hi)
	if bias != nil {
		VBROADCASTSS(paramAddr("bias"), bias)
	}
	regs := 32
	if v.lanes == 8 {
		regs = 16
	}
	weightsInRegs := next+k*k <= regs
	weights := make([]VecPhysical, k*k)
	var wtmp VecPhysical
	if weightsInRegs {
		for i := range weights {
			weights[i] = v.vec(next + i)
			VBROADCASTSS(Mem{Base: wptr, Disp: 4 * i}, weights[i])
		}
	} else {
		wtmp = v.vec(next)
	}

	vbytes := 4 * v.lanes
	// body adds the taps of n column vectors into acc[:n], stores them
	// (the last one under the mask when masked) and advances. A single
	// vector, on its own, would be one chain of k·k dependent
	// multiply-adds: its taps are dealt round-robin to the four (3×3:
	// three) accumulators instead, which are summed at the end.
	body := func(n int, masked bool) {
		chains := 1
		if n == 1 {
			chains = min(k, len(acc))
		}
		for j := 0; j < n; j++ {
			if bias != nil {
				VMOVAPS(bias, acc[j])
			} else {
				VBROADCASTSS(paramAddr("bias"), acc[j])
			}
		}
		for ky := 0; ky < k; ky++ {
			for kx := 0; kx < k; kx++ {
				tap := ky*k + kx
				wr := wtmp
				if weightsInRegs {
					wr = weights[tap]
				} else {
					VBROADCASTSS(Mem{Base: wptr, Disp: 4 * tap}, wtmp)
				}
				m := ky*s + kx%s
				if chains > 1 {
					c := tap % chains
					src := rowOffset(m, 4*(kx/s))
					if tap == c && c > 0 {
						VMULPS(src, wr, acc[c])
					} else {
						VFMADD231PS(src, wr, acc[c])
					}
					continue
				}
				for j := 0; j < n; j++ {
					VFMADD231PS(rowOffset(m, 4*(kx/s)+vbytes*j), wr, acc[j])
				}
			}
		}
		if chains == 4 {
			VADDPS(acc[1], acc[0], acc[0])
			VADDPS(acc[3], acc[2], acc[2])
			VADDPS(acc[2], acc[0], acc[0])
		} else if chains == 3 {
			VADDPS(acc[1], acc[0], acc[0])
			VADDPS(acc[2], acc[0], acc[0])
		}
		for j := 0; j < n; j++ {
			// MAXPS and MINPS return their second source when either is
			// NaN: the sum is that source, so NaN passes the clamp.
			VMAXPS(acc[j], lo, acc[j])
			VMINPS(acc[j], hi, acc[j])
			dst := Mem{Base: out, Disp: vbytes * j}
			switch {
			case !masked:
				VMOVUPS(acc[j], dst)
			case v.lanes == 16:
				VMOVUPS(acc[j], K1, dst)
			default:
				VMASKMOVPS(acc[j], mask, dst)
			}
		}
	}

	Label("rowloop")
	TESTQ(rows, rows)
	JZ(LabelRef("done"))
	MOVQ(rowBase, col)
	Load(Param("ow"), left)

	Label("wide")
	CMPQ(left, U32(blocks*v.lanes))
	JL(LabelRef("single"))
	body(blocks, false)
	ADDQ(U32(blocks*vbytes), col)
	ADDQ(U32(blocks*vbytes), out)
	SUBQ(U32(blocks*v.lanes), left)
	JMP(LabelRef("wide"))

	Label("single")
	CMPQ(left, U8(v.lanes))
	JL(LabelRef("tail"))
	body(1, false)
	ADDQ(U8(vbytes), col)
	ADDQ(U8(vbytes), out)
	SUBQ(U8(v.lanes), left)
	JMP(LabelRef("single"))

	Label("tail")
	TESTQ(left, left)
	JZ(LabelRef("rowend"))
	if v.lanes == 16 {
		// K1 = the low `left` bits.
		MOVL(U32(1), tmp.As32())
		SHLL(CL, tmp.As32())
		DECL(tmp.As32())
		KMOVW(tmp.As32(), K1)
	} else {
		// Lanes whose index is below left.
		MOVQ(left, mask.AsX())
		VPBROADCASTD(mask.AsX(), mask)
		VPCMPGTD(masks, mask, mask)
	}
	body(1, true)
	LEAQ(Mem{Base: out, Index: left, Scale: 4}, out)

	Label("rowend")
	ADDQ(step, rowBase)
	DECQ(rows)
	JMP(LabelRef("rowloop"))

	Label("done")
	VZEROUPPER()
	RET()
}

// paramAddr is the stack address of the current function's argument.
func paramAddr(name string) Mem {
	b, err := Param(name).Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}
