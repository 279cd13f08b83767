package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// kernel describes one AVX-512 micro-kernel: an mr x (vecs*lanes) block
// of C held in mr*vecs zmm registers for the whole K loop.
type kernel struct {
	name   string
	double bool // float64 (8 lanes) rather than float32 (16 lanes)
	mr     int  // rows of the block
	vecs   int  // zmm vectors per row of the block
	unroll int  // K steps per iteration of the main loop
	// strided kernels read B in place, from a row-major matrix whose rows
	// are ldb elements apart, instead of from a packed panel.
	strided bool
	// panel is the row length of the packed panel of B the kernel reads
	// (0: its own width, nr): a narrow kernel for the last columns of a
	// product reads the first vectors of the wide kernel's panel.
	panel int
}

// kernels are the micro-kernels the package uses. Their shapes were chosen
// by measurement (see the package's doc.go).
//
// The narrow float32 kernels (1 to 3 vectors a row) compute the last
// columns of a product whose width is not a multiple of 64, which the
// wide kernel would compute in full under masks: a 14×14 map (196
// columns) is three blocks of 64 and one of 4, which takes one vector a
// row instead of four.
var kernels = []kernel{
	{name: "sgemmKernelAVX512x6x64", mr: 6, vecs: 4, unroll: 4},
	{name: "dgemmKernelAVX512x6x32", double: true, mr: 6, vecs: 4, unroll: 4},
	{name: "sgemmKernelAVX512x6x64Strided", mr: 6, vecs: 4, unroll: 4, strided: true},
	{name: "sgemmKernelAVX512x6x16", mr: 6, vecs: 1, unroll: 4, panel: 64},
	{name: "sgemmKernelAVX512x6x32", mr: 6, vecs: 2, unroll: 4, panel: 64},
	{name: "sgemmKernelAVX512x6x48", mr: 6, vecs: 3, unroll: 4, panel: 64},
	{name: "sgemmKernelAVX512x6x16Strided", mr: 6, vecs: 1, unroll: 4, strided: true},
	{name: "sgemmKernelAVX512x6x32Strided", mr: 6, vecs: 2, unroll: 4, strided: true},
	{name: "sgemmKernelAVX512x6x48Strided", mr: 6, vecs: 3, unroll: 4, strided: true},
}

// panelWidth is the row length of the packed panel of B the kernel reads.
func (k kernel) panelWidth() int {
	if k.panel > 0 {
		return k.panel
	}
	return k.nr()
}

// size is the bytes of an element.
func (k kernel) size() int {
	if k.double {
		return 8
	}
	return 4
}

// sizeShift is log2 of size: the shift from elements to bytes.
func (k kernel) sizeShift() int {
	if k.double {
		return 3
	}
	return 2
}

// lanes is the elements of a zmm register.
func (k kernel) lanes() int { return 64 / k.size() }

// nr is the columns of the block.
func (k kernel) nr() int { return k.vecs * k.lanes() }

// accumulator is the register of the sums of row r, vector j.
func (k kernel) accumulator(r, j int) reg.VecPhysical { return zmm(r*k.vecs + j) }

// bRegister is the register holding vector j of the current row of B.
func (k kernel) bRegister(j int) reg.VecPhysical { return zmm(k.mr*k.vecs + j) }

// broadcast is the register an element of A is broadcast into.
func (k kernel) broadcast() reg.VecPhysical { return reg.Z31 }

// zmms are the vector registers by number.
var zmms = []reg.VecPhysical{
	reg.Z0, reg.Z1, reg.Z2, reg.Z3, reg.Z4, reg.Z5, reg.Z6, reg.Z7,
	reg.Z8, reg.Z9, reg.Z10, reg.Z11, reg.Z12, reg.Z13, reg.Z14, reg.Z15,
	reg.Z16, reg.Z17, reg.Z18, reg.Z19, reg.Z20, reg.Z21, reg.Z22, reg.Z23,
	reg.Z24, reg.Z25, reg.Z26, reg.Z27, reg.Z28, reg.Z29, reg.Z30, reg.Z31,
}

func zmm(i int) reg.VecPhysical { return zmms[i] }

// masks are the opmask registers of the block's vectors (K0 means no
// mask in an instruction's mask slot).
var masks = []reg.OpmaskPhysical{reg.K1, reg.K2, reg.K3, reg.K4, reg.K5, reg.K6, reg.K7}

// generate emits the kernel's function and its Go declaration.
func (k kernel) generate() {
	if k.mr*k.vecs+k.vecs+1 > 32 {
		panic(fmt.Sprintf("%s: %d accumulators, %d B vectors and a broadcast do not fit 32 registers", k.name, k.mr*k.vecs, k.vecs))
	}
	typ := "float32"
	if k.double {
		typ = "float64"
	}
	if k.strided {
		TEXT(k.name, NOSPLIT, fmt.Sprintf("func(kc int, pa, pb *%s, ldb int, c *%s, ldc, rows int, colMask uint64, alpha %s, overwrite bool)", typ, typ, typ))
		Pragma("noescape")
		Doc(
			fmt.Sprintf("%s adds alpha times the %dx%d block of products of a packed", k.name, k.mr, k.nr()),
			fmt.Sprintf("panel of A (%d values per step) and %d contiguous columns of a", k.mr, k.nr()),
			"row-major B read in place (rows ldb elements apart) over kc steps to",
			"the first rows rows of C (ldc elements apart), or stores it there",
			"when overwrite is set. Bit j of colMask selects column j of B and C:",
			"the others are neither read nor written.",
		)
	} else {
		TEXT(k.name, NOSPLIT, fmt.Sprintf("func(kc int, pa, pb, c *%s, ldc, rows int, colMask uint64, alpha %s, overwrite bool)", typ, typ))
		Pragma("noescape")
		Doc(
			fmt.Sprintf("%s adds alpha times the %dx%d block of products of a packed", k.name, k.mr, k.nr()),
			fmt.Sprintf("panel of A (%d values per step) and the first %d columns of one of B", k.mr, k.nr()),
			fmt.Sprintf("(%d per step) over kc steps to the first rows rows of C (ldc elements", k.panelWidth()),
			"apart), or stores it there when overwrite is set. Bit j of colMask",
			"selects column j: the others are neither read nor written.",
		)
	}
	k.loop()
	k.epilogue()
}

// loop zeroes the accumulators and runs the K loop.
func (k kernel) loop() {
	Comment("The block of sums stays in registers for the whole K loop.")
	for r := range k.mr {
		for j := range k.vecs {
			acc := k.accumulator(r, j)
			VPXORD(acc, acc, acc)
		}
	}
	kc := Load(Param("kc"), GP64())
	pa := Load(Param("pa"), GP64())
	pb := Load(Param("pb"), GP64())
	// rows addresses the rows of B the unrolled steps read; advance moves
	// pb on by a number of steps.
	rows, advance := k.rowsOfB(pb)

	if k.unroll > 1 {
		CMPQ(kc, U32(k.unroll))
		JB(LabelRef(k.name + "_tail"))
		Label(k.name + "_loop")
		for u := range k.unroll {
			k.step(pa, rows[u], u)
		}
		ADDQ(U32(k.unroll*k.mr*k.size()), pa)
		advance(k.unroll)
		SUBQ(U32(k.unroll), kc)
		CMPQ(kc, U32(k.unroll))
		JAE(LabelRef(k.name + "_loop"))
		Label(k.name + "_tail")
	}
	TESTQ(kc, kc)
	JE(LabelRef(k.name + "_store"))
	Label(k.name + "_tailloop")
	k.step(pa, rows[0], 0)
	ADDQ(U32(k.mr*k.size()), pa)
	advance(1)
	DECQ(kc)
	JNE(LabelRef(k.name + "_tailloop"))
}

// rowsOfB returns the addresses of the rows of B that the unrolled steps
// read (step u's row at element 0), and the code moving pb on by a number
// of steps. A packed panel holds the rows nr apart, a displacement from
// pb; in place they are ldb apart, which takes the row stride in bytes in
// a register (and three times it for the fourth row: the scale of an
// index goes up to 8 but not through 3).
func (k kernel) rowsOfB(pb reg.Register) ([]Mem, func(steps int)) {
	rows := make([]Mem, max(k.unroll, 1))
	if !k.strided {
		for u := range rows {
			rows[u] = Mem{Base: pb, Disp: u * k.panelWidth() * k.size()}
		}
		return rows, func(steps int) { ADDQ(U32(steps*k.panelWidth()*k.size()), pb) }
	}
	if len(rows) > 4 {
		panic(fmt.Sprintf("%s: a strided kernel addresses at most 4 rows of B per iteration", k.name))
	}
	// B's columns past colMask may lie past its end: every load of B is
	// masked, as the stores to C are.
	k.setMasks()
	ldb := Load(Param("ldb"), GP64())
	SHLQ(U8(k.sizeShift()), ldb)
	ldb3 := GP64()
	LEAQ(Mem{Base: ldb, Index: ldb, Scale: 2}, ldb3)
	rows[0] = Mem{Base: pb}
	for u := 1; u < len(rows); u++ {
		rows[u] = Mem{Base: pb, Index: ldb, Scale: uint8(u)}
	}
	if len(rows) > 3 {
		rows[3] = Mem{Base: pb, Index: ldb3, Scale: 1}
	}
	return rows, func(steps int) {
		switch steps {
		case 1:
			ADDQ(ldb, pb)
		case 2, 4:
			LEAQ(Mem{Base: pb, Index: ldb, Scale: uint8(steps)}, pb)
		default:
			panic(fmt.Sprintf("%s: cannot advance B by %d rows", k.name, steps))
		}
	}
}

// step is one K step (the u-th of an iteration, its row of B at row): the
// row of B in registers, then, row by row, an element of A broadcast and
// multiplied into the row's accumulators.
func (k kernel) step(pa reg.Register, row Mem, u int) {
	for j := range k.vecs {
		m := row
		m.Disp += j * k.lanes() * k.size()
		if k.strided {
			k.loadMasked(m, masks[j], k.bRegister(j))
		} else {
			k.load(m, k.bRegister(j))
		}
	}
	for r := range k.mr {
		a := Mem{Base: pa, Disp: (u*k.mr + r) * k.size()}
		if k.double {
			VBROADCASTSD(a, k.broadcast())
		} else {
			VBROADCASTSS(a, k.broadcast())
		}
		for j := range k.vecs {
			k.fma(k.bRegister(j), k.broadcast(), k.accumulator(r, j))
		}
	}
}

// epilogue scales the sums by alpha and adds them to C (or stores them),
// row by row up to rows, each vector under its column mask.
func (k kernel) epilogue() {
	Label(k.name + "_store")
	c := Load(Param("c"), GP64())
	ldc := Load(Param("ldc"), GP64())
	SHLQ(U8(k.sizeShift()), ldc)
	rows := Load(Param("rows"), GP64())
	if !k.strided {
		k.setMasks()
	}
	alpha := k.bRegister(0)
	alphaAddr, err := Param("alpha").Resolve()
	if err != nil {
		panic(err)
	}
	if k.double {
		VBROADCASTSD(alphaAddr.Addr, alpha)
	} else {
		VBROADCASTSS(alphaAddr.Addr, alpha)
	}
	overwrite := Load(Param("overwrite"), GP8())
	TESTB(overwrite, overwrite)
	JNE(LabelRef(k.name + "_overwrite"))

	Comment("C += alpha*sums.")
	old := k.broadcast()
	k.rowLoop(c, ldc, rows, "_add", func(r, j int, dst Mem) {
		acc := k.accumulator(r, j)
		k.loadMasked(dst, masks[j], old)
		if k.double {
			VFMADD213PD(old, alpha, acc)
		} else {
			VFMADD213PS(old, alpha, acc)
		}
		k.storeMasked(acc, masks[j], dst)
	})
	JMP(LabelRef(k.name + "_done"))

	Label(k.name + "_overwrite")
	Comment("C = alpha*sums.")
	k.rowLoop(c, ldc, rows, "_set", func(r, j int, dst Mem) {
		acc := k.accumulator(r, j)
		if k.double {
			VMULPD(alpha, acc, acc)
		} else {
			VMULPS(alpha, acc, acc)
		}
		k.storeMasked(acc, masks[j], dst)
	})

	Label(k.name + "_done")
	VZEROUPPER()
	RET()
}

// setMasks sets the opmask of each vector of a row of the block from
// colMask.
func (k kernel) setMasks() {
	colMask := GP64()
	Load(Param("colMask"), colMask)
	for j := range k.vecs {
		KMOVW(colMask.As32(), masks[j])
		if j+1 < k.vecs {
			SHRQ(U8(k.lanes()), colMask)
		}
	}
}

// rowLoop emits body for every vector of rows 0 ... rows-1 of C (at most
// mr), with dst the vector's place in C.
func (k kernel) rowLoop(c, ldc, rows reg.Register, suffix string, body func(r, j int, dst Mem)) {
	row := GP64()
	MOVQ(c, row)
	for r := range k.mr {
		for j := range k.vecs {
			body(r, j, Mem{Base: row, Disp: j * 64})
		}
		if r+1 < k.mr {
			CMPQ(rows, U32(r+1))
			JE(LabelRef(k.name + "_done"))
			ADDQ(ldc, row)
		}
	}
}

// load, loadMasked, storeMasked and fma are the instructions of the
// element type.
func (k kernel) load(m Mem, dst reg.VecPhysical) {
	if k.double {
		VMOVUPD(m, dst)
	} else {
		VMOVUPS(m, dst)
	}
}

func (k kernel) loadMasked(m Mem, mask reg.OpmaskPhysical, dst reg.VecPhysical) {
	if k.double {
		VMOVUPD_Z(m, mask, dst)
	} else {
		VMOVUPS_Z(m, mask, dst)
	}
}

func (k kernel) storeMasked(src reg.VecPhysical, mask reg.OpmaskPhysical, m Mem) {
	if k.double {
		VMOVUPD(src, mask, m)
	} else {
		VMOVUPS(src, mask, m)
	}
}

func (k kernel) fma(b, a, acc reg.VecPhysical) {
	if k.double {
		VFMADD231PD(b, a, acc)
	} else {
		VFMADD231PS(b, a, acc)
	}
}
