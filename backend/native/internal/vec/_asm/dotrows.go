package main

import (
	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// columns is how many columns of C (rows of B) one pass of the kernel
// computes: one accumulator each.
const columns = 8

// dotRows8 generates dotRows8+suffix (rows 1) or dotRows8Pair+suffix
// (rows 2): for i < rows·m and j < 8·groups, c[i·ldc+j] += Σ_{p<k}
// a[i·lda+p]·b[j·ldb+p]. Each pass keeps the dot products of rows rows of
// A with eight rows of B in 8·rows vector accumulators over k (the last k
// mod lanes elements under a mask, zeros elsewhere, so that nothing past
// a row is read); a pair of rows of A shares each load of B. The eight
// accumulators of a row of A are reduced together, by shuffles, into one
// vector of eight sums, added to C.
func (s isa) dotRows8(rows int) {
	name := "dotRows8" + s.suffix
	what := "row i"
	if rows == 2 {
		name = "dotRows8Pair" + s.suffix
		what = "row i, for i < 2·m,"
	}
	TEXT(name, NOSPLIT, "func(m, groups, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)")
	Pragma("noescape")
	if rows == 2 {
		Doc(name+" adds to c[i·ldc+j] the dot product of "+what+" of a (lda apart) and row j of b (ldb apart),",
			"both k long, for j < 8·groups: rows two at a time, m pairs.")
	} else {
		Doc(name+" adds to c[i·ldc+j] the dot product of "+what+" of a (lda apart) and row j of b (ldb apart),",
			"both k long, for i < m and j < 8·groups.")
	}

	aRow := GP64()
	Load(Param("a"), aRow)
	cRow := GP64()
	Load(Param("c"), cRow)
	ldb4, ldb3, lda4 := GP64(), GP64(), GP64()
	Load(Param("ldb"), ldb4)
	SHLQ(Imm(2), ldb4)
	LEAQ(Mem{Base: ldb4, Index: ldb4, Scale: 2}, ldb3)
	Load(Param("lda"), lda4)
	SHLQ(Imm(2), lda4)

	// The permutation that puts the eight sums of the reduction in order.
	idx := s.vec()
	VMOVUPS(s.permutationTable(), idx)
	// The mask of the k mod lanes elements past the last full vector.
	tmp := GP64()
	Load(Param("k"), tmp)
	ANDQ(Imm(uint64(s.lanes-1)), tmp)
	t := s.tailMask(tmp)

	bp, cp, g := GP64(), GP64(), GP64()
	ap, bq, bq4, kk := GP64(), GP64(), GP64(), GP64()
	// The row counter stays in its argument's slot: registers are short.
	m := NewParamAddr("m", 0)

	Label("row")
	CMPQ(m, Imm(0))
	JE(LabelRef("done"))
	Load(Param("b"), bp)
	MOVQ(cRow, cp)
	Load(Param("groups"), g)

	Label("group")
	TESTQ(g, g)
	JZ(LabelRef("nextrow"))
	acc := make([][]reg.VecVirtual, rows)
	for i := range acc {
		acc[i] = make([]reg.VecVirtual, columns)
		for j := range acc[i] {
			acc[i][j] = s.vec()
			if s.wide() {
				VPXORD(acc[i][j], acc[i][j], acc[i][j])
			} else {
				VXORPS(acc[i][j], acc[i][j], acc[i][j])
			}
		}
	}
	MOVQ(aRow, ap)
	MOVQ(bp, bq)
	LEAQ(Mem{Base: bp, Index: ldb4, Scale: 4}, bq4)
	Load(Param("k"), kk)
	SHRQ(Imm(uint64(log2(s.lanes))), kk)
	// bRow is the address of row j of the group at the current offset.
	bRow := func(j int) Mem {
		base := bq
		if j >= 4 {
			base = bq4
		}
		switch j % 4 {
		case 0:
			return Mem{Base: base}
		case 1:
			return Mem{Base: base, Index: ldb4, Scale: 1}
		case 2:
			return Mem{Base: base, Index: ldb4, Scale: 2}
		default:
			return Mem{Base: base, Index: ldb3, Scale: 1}
		}
	}
	aAt := func(i int) Mem {
		if i == 0 {
			return Mem{Base: ap}
		}
		return Mem{Base: ap, Index: lda4, Scale: 1}
	}

	Label("kloop")
	TESTQ(kk, kk)
	JZ(LabelRef("ktail"))
	x := make([]reg.VecVirtual, rows)
	for i := range x {
		x[i] = s.vec()
		VMOVUPS(aAt(i), x[i])
	}
	for j := range columns {
		if rows == 1 {
			VFMADD231PS(bRow(j), x[0], acc[0][j])
			continue
		}
		bv := s.vec()
		VMOVUPS(bRow(j), bv)
		for i := range rows {
			VFMADD231PS(bv, x[i], acc[i][j])
		}
	}
	step := uint64(4 * s.lanes)
	ADDQ(Imm(step), ap)
	ADDQ(Imm(step), bq)
	ADDQ(Imm(step), bq4)
	DECQ(kk)
	JMP(LabelRef("kloop"))

	Label("ktail")
	Load(Param("k"), tmp)
	ANDQ(Imm(uint64(s.lanes-1)), tmp)
	JZ(LabelRef("reduce"))
	xt := make([]reg.VecVirtual, rows)
	for i := range xt {
		xt[i] = s.load(aAt(i), &t)
	}
	for j := range columns {
		bv := s.load(bRow(j), &t)
		for i := range rows {
			VFMADD231PS(bv, xt[i], acc[i][j])
		}
	}

	Label("reduce")
	for i := range rows {
		sum := s.reduce(acc[i], idx)
		at := Mem{Base: cp}
		if i == 1 {
			Load(Param("ldc"), tmp)
			at = Mem{Base: cp, Index: tmp, Scale: 4}
		}
		VADDPS(at, sum, sum)
		VMOVUPS(sum, at)
	}
	ADDQ(Imm(4*columns), cp)
	LEAQ(Mem{Base: bp, Index: ldb4, Scale: 8}, bp)
	DECQ(g)
	JMP(LabelRef("group"))

	Label("nextrow")
	for range rows {
		ADDQ(lda4, aRow)
	}
	Load(Param("ldc"), tmp)
	SHLQ(Imm(uint64(2+log2(rows))), tmp)
	ADDQ(tmp, cRow)
	DECQ(m)
	JMP(LabelRef("row"))

	Label("done")
	VZEROUPPER()
	RET()
}

func log2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// reduce sums each of the eight accumulators' lanes and returns a YMM
// register holding the eight sums in order. Every step adds two vectors
// whose lanes pair up halves of the accumulators, so that the work of
// the reduction is shared by all eight.
func (s isa) reduce(acc []reg.VecVirtual, idx reg.VecVirtual) reg.VecVirtual {
	add := func(a, b reg.VecVirtual) reg.VecVirtual {
		r := s.vec()
		VADDPS(b, a, r)
		return r
	}
	pairs := acc
	if s.wide() {
		// [a.q0 a.q1 b.q0 b.q1] + [a.q2 a.q3 b.q2 b.q3]: a's 8 partial
		// sums in the low half, b's in the high half.
		var next []reg.VecVirtual
		for i := 0; i < len(pairs); i += 2 {
			lo, hi := s.vec(), s.vec()
			VSHUFF32X4(Imm(0x44), pairs[i+1], pairs[i], lo)
			VSHUFF32X4(Imm(0xee), pairs[i+1], pairs[i], hi)
			next = append(next, add(lo, hi))
		}
		// [ab.q0 ab.q2 cd.q0 cd.q2] + [ab.q1 ab.q3 cd.q1 cd.q3]: 4
		// partial sums of a, b, c and d in the four 128-bit lanes.
		var four []reg.VecVirtual
		for i := 0; i < len(next); i += 2 {
			lo, hi := s.vec(), s.vec()
			VSHUFF32X4(Imm(0x88), next[i+1], next[i], lo)
			VSHUFF32X4(Imm(0xdd), next[i+1], next[i], hi)
			four = append(four, add(lo, hi))
		}
		pairs = four // lanes: (a, e), (b, f), (c, g), (d, h) after the steps below
	} else {
		// [a.lo b.lo] + [a.hi b.hi]: 4 partial sums of a in the low
		// 128-bit lane, of b in the high one.
		var next []reg.VecVirtual
		for i := 0; i < len(pairs); i += 2 {
			lo, hi := s.vec(), s.vec()
			VPERM2F128(Imm(0x20), pairs[i+1], pairs[i], lo)
			VPERM2F128(Imm(0x31), pairs[i+1], pairs[i], hi)
			next = append(next, add(lo, hi))
		}
		// Per 128-bit lane [x0 x2 y0 y2] + [x1 x3 y1 y3] of ab and cd:
		// lanes (a01 a23 c01 c23), (b01 b23 d01 d23).
		first := []reg.VecVirtual{}
		for i := 0; i < len(next); i += 2 {
			lo, hi := s.vec(), s.vec()
			VSHUFPS(Imm(0x88), next[i+1], next[i], lo)
			VSHUFPS(Imm(0xdd), next[i+1], next[i], hi)
			first = append(first, add(lo, hi))
		}
		pairs = first
	}
	// Two vectors x, y, each 128-bit lane holding partial sums of one
	// accumulator of x and one of y: [x0 x2 y0 y2] + [x1 x3 y1 y3].
	lo, hi := s.vec(), s.vec()
	VSHUFPS(Imm(0x88), pairs[1], pairs[0], lo)
	VSHUFPS(Imm(0xdd), pairs[1], pairs[0], hi)
	r := add(lo, hi)
	if s.wide() {
		// Per lane [x01 x23 y01 y23]: once more with itself, [x y x y].
		lo2, hi2 := s.vec(), s.vec()
		VSHUFPS(Imm(0x88), r, r, lo2)
		VSHUFPS(Imm(0xdd), r, r, hi2)
		r = add(lo2, hi2)
	}
	out := s.vec()
	VPERMPS(r, idx, out)
	if s.wide() {
		return out.AsY().(reg.VecVirtual)
	}
	return out
}

// permutationTable is the index vector VPERMPS takes the reduction's
// lanes in order with. AVX2 ends with lanes (a c e g), (b d f h); AVX-512
// with (a e a e), (b f b f), (c g c g), (d h d h).
func (s isa) permutationTable() Mem {
	order := []uint32{0, 4, 1, 5, 2, 6, 3, 7}
	if s.wide() {
		order = []uint32{0, 4, 8, 12, 1, 5, 9, 13, 0, 0, 0, 0, 0, 0, 0, 0}
	}
	if m, ok := permutationTables[s.suffix]; ok {
		return m
	}
	m := GLOBL("dotrowsperm"+s.suffix, RODATA|NOPTR)
	for i, v := range order {
		DATA(4*i, U32(v))
	}
	permutationTables[s.suffix] = m
	return m
}

var permutationTables = map[string]Mem{}
