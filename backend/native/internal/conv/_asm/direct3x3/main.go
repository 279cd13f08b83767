// Command direct3x3 generates direct3x3_amd64.s and
// direct3x3_stubs_amd64.go, the AVX-512 kernels of package conv's direct
// 3×3 convolution of stride 1 and 2 (direct3x3.go), with avo. Run it
// through go generate in package conv.
//
// One call computes the Direct3x3Block (8) output channels of a whole
// flat run of outputs, three (or two) vectors of 16 outputs at a time: the 24
// accumulators stay in registers over every input channel and tap; per
// tap the three input vectors are loaded once (unaligned, from the padded
// rows) and each of the 8 weights is broadcast once and multiplied into
// them. The two strides differ only in where each tap's input is: stride
// 1 reads the padded rows at a row's pitch and a column from the output's
// position; stride 2 reads the quarter of the taps' row and column
// parity, at most one quarter row and one column further. The flat
// kernels (d3x3S<stride>FlatBlockAVX512) read the flat layout, whose
// pitch is the output's width: a channel's input is a variant per column
// tap, and they walk the variants one after the other, each tap a whole
// number of rows (or, stride 2, a quarter) from the output's position.
package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

func main() {
	ConstraintExpr("amd64,!purego")
	blockKernel(1, false)
	blockKernel(2, false)
	blockKernel(1, true)
	blockKernel(2, true)
	Generate()
}

const (
	block = 8  // output channels per call (conv.Direct3x3Block)
	lanes = 16 // outputs per vector
	wide  = 3  // vectors per step of the main loop
)

var zmm = []VecPhysical{Z0, Z1, Z2, Z3, Z4, Z5, Z6, Z7, Z8, Z9, Z10, Z11, Z12, Z13, Z14, Z15,
	Z16, Z17, Z18, Z19, Z20, Z21, Z22, Z23, Z24, Z25, Z26, Z27, Z28, Z29, Z30, Z31}

// Register roles.
var (
	srcBase   = RSI // channel 0's input at the current step's first output
	outRow0   = RDI // output row 0 at the current step
	outRow4   = R12 // output row 4 at the current step
	outStride = R8  // bytes from one output row to the next
	stride3   = R13 // 3·outStride
	weights   = RBX
	left      = RCX // vectors of the run left
	src       = RAX // the current channel's input in the channel loop
	wptr      = RDX // the current channel's weights
	count     = R14 // channels left in the channel loop

	// Stride 1: the padded row pitch and the channel plane.
	pitch = R9
	plane = R10
	// Stride 2: the quarter planes' size (the input's rows and columns
	// split by parity, conv.Direct3x3Layout), 3 quarters, the quarters'
	// row pitch, and a quarter plus a row.
	quarter      = R9
	quarter3     = R10
	qpitch       = R11
	quarterPitch = R15
)

// tapAddress returns the operand of tap t's input for vector v of the
// step, relative to the current channel's input.
func tapAddress(stride, t, v int) Mem {
	ky, kx := t/3, t%3
	if stride == 1 {
		m := Mem{Base: src, Disp: 4*kx + 64*v}
		if ky > 0 {
			m.Index, m.Scale = pitch, uint8(ky)
		}
		return m
	}
	// Row 2·oy+ky is row oy+ky/2 of the quarters of row parity ky%2,
	// column 2·ox+kx column ox+kx/2 of those of column parity kx%2.
	m := Mem{Base: src, Disp: 4*(kx/2) + 64*v}
	switch q, down := 2*(ky%2)+kx%2, ky/2; {
	case q == 0 && down == 1:
		m.Index, m.Scale = qpitch, 1
	case q == 1 && down == 1:
		m.Index, m.Scale = quarterPitch, 1
	case q == 1:
		m.Index, m.Scale = quarter, 1
	case q == 2:
		m.Index, m.Scale = quarter, 2
	case q == 3:
		m.Index, m.Scale = quarter3, 1
	}
	return m
}

// outRow returns the operand of output row j at vector v of the step.
func outRow(j, v int) Mem {
	base := outRow0
	if j >= 4 {
		base, j = outRow4, j-4
	}
	m := Mem{Base: base, Disp: 64 * v}
	switch j {
	case 1:
		m.Index, m.Scale = outStride, 1
	case 2:
		m.Index, m.Scale = outStride, 2
	case 3:
		m.Index, m.Scale = stride3, 1
	}
	return m
}

// flatTapAddress returns the operand of tap (ky, kx)'s input for vector v
// of the step in the flat layout (pitch = the output's width), relative to
// the current column variant's plane: the kernel walks the variants kx =
// 0, 1, 2 one after the other (advancing src past each), and within one
// the rows ky. Stride 1: row ky of the variant (variant is unused here);
// stride 2: the variant's planes of row parity 0 and 1 follow each other
// (variant bytes apart), and ky = 2 is parity 0 one row down.
func flatTapAddress(stride, ky, v int) Mem {
	m := Mem{Base: src, Disp: 64 * v}
	switch {
	case stride == 1 && ky > 0:
		m.Index, m.Scale = pitch, uint8(ky)
	case stride == 2 && ky == 1:
		m.Index, m.Scale = plane, 1
	case stride == 2 && ky == 2:
		m.Index, m.Scale = pitch, 1
	}
	return m
}

// blockKernel generates d3x3S<stride>BlockAVX512, or with flat
// d3x3S<stride>FlatBlockAVX512 for the flat layout (conv.Direct3x3Layout's
// Flat: each channel's input as column-shifted variants with the output's
// width as pitch, so that no lane of the run is junk).
func blockKernel(stride int, flat bool) {
	name := fmt.Sprintf("d3x3S%dBlockAVX512", stride)
	if flat {
		name = fmt.Sprintf("d3x3S%dFlatBlockAVX512", stride)
		sep, what := "variant", "from one column tap's variant to the next"
		if stride == 2 {
			sep, what = "quarter", "from a variant's quarter of even rows to its odd rows' (half a variant)"
		}
		TEXT(name, NOSPLIT, "func(src *float32, "+sep+", pitch, channels int, w, out *float32, vectors, outStride int)")
		Doc(name+fmt.Sprintf(" computes 8 output channels of a direct 3×3 convolution of stride %d in the flat layout over vectors·16 outputs;", stride),
			sep+" is the bytes "+what+"; pitch and outStride in bytes.")
		Load(Param(sep), plane)
		Load(Param("pitch"), pitch)
	} else if stride == 1 {
		TEXT(name, NOSPLIT, "func(src *float32, plane, pitch, channels int, w, out *float32, vectors, outStride int)")
		Doc(name + " computes 8 output channels of a direct 3×3 convolution of stride 1 over vectors·16 flat outputs; plane, pitch and outStride in bytes.")
		Load(Param("plane"), plane)
		Load(Param("pitch"), pitch)
	} else {
		TEXT(name, NOSPLIT, "func(src *float32, quarter, pitch, channels int, w, out *float32, vectors, outStride int)")
		Doc(name + " computes 8 output channels of a direct 3×3 convolution of stride 2 over vectors·16 flat outputs; quarter, pitch and outStride in bytes.")
		Load(Param("quarter"), quarter)
		Load(Param("pitch"), qpitch)
		LEAQ(Mem{Base: quarter, Index: quarter, Scale: 2}, quarter3)
		LEAQ(Mem{Base: quarter, Index: qpitch, Scale: 1}, quarterPitch)
	}
	Load(Param("src"), srcBase)
	Load(Param("w"), weights)
	Load(Param("out"), outRow0)
	Load(Param("vectors"), left)
	Load(Param("outStride"), outStride)
	LEAQ(Mem{Base: outStride, Index: outStride, Scale: 2}, stride3)
	LEAQ(Mem{Base: outRow0, Index: outStride, Scale: 4}, outRow4)

	// Three vectors a step, but a run of four left goes as two steps of
	// two: a lone vector's step is one FMA per load, the weights' and the
	// input's, and does not keep the FMA units busy.
	Label("wide")
	CMPQ(left, U8(4))
	JE(LabelRef("narrow"))
	CMPQ(left, U8(wide))
	JL(LabelRef("narrow"))
	step(stride, flat, wide, "w")
	ADDQ(U32(wide*64), srcBase)
	ADDQ(U32(wide*64), outRow0)
	ADDQ(U32(wide*64), outRow4)
	SUBQ(U8(wide), left)
	JMP(LabelRef("wide"))

	Label("narrow")
	CMPQ(left, U8(2))
	JL(LabelRef("one"))
	step(stride, flat, 2, "n2")
	ADDQ(U32(2*64), srcBase)
	ADDQ(U32(2*64), outRow0)
	ADDQ(U32(2*64), outRow4)
	SUBQ(U8(2), left)
	JMP(LabelRef("narrow"))

	Label("one")
	TESTQ(left, left)
	JZ(LabelRef("done"))
	step(stride, flat, 1, "n1")

	Label("done")
	VZEROUPPER()
	RET()
}

// step emits the computation of nv vectors of outputs of all 8 channels
// at the current position, stored to the output rows; label names its
// channel loop.
func step(stride int, flat bool, nv int, label string) {
	acc := func(j, v int) VecPhysical { return zmm[j*nv+v] }
	x := func(v int) VecPhysical { return zmm[block*nv+v] }
	wv := func(j int) VecPhysical { return zmm[block*nv+nv+j%2] }
	for j := range block {
		for v := range nv {
			VXORPS(acc(j, v), acc(j, v), acc(j, v))
		}
	}
	MOVQ(srcBase, src)
	MOVQ(weights, wptr)
	Load(Param("channels"), count)
	Label("chan_" + label)
	tap := func(t int, at func(v int) Mem) {
		for v := range nv {
			VMOVUPS(at(v), x(v))
		}
		for j := range block {
			VBROADCASTSS(Mem{Base: wptr, Disp: 4 * (t*block + j)}, wv(j))
			for v := range nv {
				VFMADD231PS(x(v), wv(j), acc(j, v))
			}
		}
	}
	switch {
	case flat:
		// Variant by variant; past the last, src is at the next
		// channel's first.
		for kx := range 3 {
			for ky := range 3 {
				tap(3*ky+kx, func(v int) Mem { return flatTapAddress(stride, ky, v) })
			}
			if stride == 1 {
				ADDQ(plane, src)
			} else {
				LEAQ(Mem{Base: src, Index: plane, Scale: 2}, src)
			}
		}
	case stride == 1:
		for t := range 9 {
			tap(t, func(v int) Mem { return tapAddress(stride, t, v) })
		}
		ADDQ(plane, src)
	default:
		for t := range 9 {
			tap(t, func(v int) Mem { return tapAddress(stride, t, v) })
		}
		LEAQ(Mem{Base: src, Index: quarter, Scale: 4}, src)
	}
	ADDQ(U32(9*block*4), wptr)
	DECQ(count)
	JNZ(LabelRef("chan_" + label))
	for j := range block {
		for v := range nv {
			VMOVUPS(acc(j, v), outRow(j, v))
		}
	}
}
