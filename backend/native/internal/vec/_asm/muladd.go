package main

import (
	"fmt"

	. "github.com/mmcloughlin/avo/build"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/reg"
)

// mulAddRows generates mulAddRows<rows><suffix>: for i < rows·m (m
// groups of rows rows), j < n, c[i·ldc+j] += Σ_{p<k} a[i·lda+p]·b[p·ldb+j]
// with B row-major and nothing packed: each block of C (rows rows by two
// vectors of columns, then one vector, then one under a mask for the n
// mod lanes last) stays in registers over the whole of k, each row of B
// loaded once per block and each element of A broadcast. The products of
// a transformer's attention (32 x 16 by 16 x 32 per head) are too small
// for the blocked GEMM's packing to pay off.
func (s isa) mulAddRows(rows int) {
	name := fmt.Sprintf("mulAddRows%d%s", rows, s.suffix)
	TEXT(name, NOSPLIT, "func(m, n, k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)")
	Pragma("noescape")
	Doc(fmt.Sprintf("%s adds to c[i·ldc+j] the sum over p < k of a[i·lda+p]·b[p·ldb+j], for i < %d·m and j < n.", name, rows))

	aRow, cRow := GP64(), GP64()
	Load(Param("a"), aRow)
	Load(Param("c"), cRow)
	lda4, ldc4, ldb4 := GP64(), GP64(), GP64()
	Load(Param("lda"), lda4)
	SHLQ(Imm(2), lda4)
	Load(Param("ldc"), ldc4)
	SHLQ(Imm(2), ldc4)
	Load(Param("ldb"), ldb4)
	SHLQ(Imm(2), ldb4)
	lda3, ldc3 := GP64(), GP64()
	LEAQ(Mem{Base: lda4, Index: lda4, Scale: 2}, lda3)
	LEAQ(Mem{Base: ldc4, Index: ldc4, Scale: 2}, ldc3)
	tmp := GP64()
	Load(Param("n"), tmp)
	ANDQ(Imm(uint64(s.lanes-1)), tmp)
	t := s.tailMask(tmp)

	bCol, cp, ap, bq, kk, nrem := GP64(), GP64(), GP64(), GP64(), GP64(), GP64()
	m := NewParamAddr("m", 0)
	// rowAt is row r (< 4) of a block whose row 0 is at base: ld and ld3
	// are the strides of one and of three rows, in bytes.
	rowAt := func(base, ld, ld3 reg.GPVirtual, r int) Mem {
		switch r {
		case 0:
			return Mem{Base: base}
		case 1:
			return Mem{Base: base, Index: ld, Scale: 1}
		case 2:
			return Mem{Base: base, Index: ld, Scale: 2}
		default:
			return Mem{Base: base, Index: ld3, Scale: 1}
		}
	}

	Label(name + "row")
	CMPQ(m, Imm(0))
	JE(LabelRef(name + "done"))
	Load(Param("b"), bCol)
	MOVQ(cRow, cp)
	Load(Param("n"), nrem)

	// block emits the code of one block of vectors columns (the last
	// under the tail mask when masked), then advances the column pointers.
	block := func(label string, vectors int, masked bool) {
		acc := make([][]reg.VecVirtual, rows)
		for r := range acc {
			acc[r] = make([]reg.VecVirtual, vectors)
			for v := range acc[r] {
				at := rowAt(cp, ldc4, ldc3, r)
				at.Disp = 4 * s.lanes * v
				if masked {
					acc[r][v] = s.load(at, &t)
				} else {
					acc[r][v] = s.vec()
					VMOVUPS(at, acc[r][v])
				}
			}
		}
		MOVQ(aRow, ap)
		MOVQ(bCol, bq)
		Load(Param("k"), kk)
		Label(label + "k")
		TESTQ(kk, kk)
		JZ(LabelRef(label + "store"))
		bv := make([]reg.VecVirtual, vectors)
		for v := range bv {
			at := Mem{Base: bq, Disp: 4 * s.lanes * v}
			if masked {
				bv[v] = s.load(at, &t)
			} else {
				bv[v] = s.vec()
				VMOVUPS(at, bv[v])
			}
		}
		for r := range rows {
			x := s.vec()
			VBROADCASTSS(rowAt(ap, lda4, lda3, r), x)
			for v := range vectors {
				VFMADD231PS(bv[v], x, acc[r][v])
			}
		}
		ADDQ(Imm(4), ap)
		ADDQ(ldb4, bq)
		DECQ(kk)
		JMP(LabelRef(label + "k"))
		Label(label + "store")
		for r := range rows {
			for v := range vectors {
				at := rowAt(cp, ldc4, ldc3, r)
				at.Disp = 4 * s.lanes * v
				if masked {
					s.store(acc[r][v], at, &t)
				} else {
					VMOVUPS(acc[r][v], at)
				}
			}
		}
		ADDQ(Imm(uint64(4*s.lanes*vectors)), bCol)
		ADDQ(Imm(uint64(4*s.lanes*vectors)), cp)
	}

	Label(name + "wide")
	CMPQ(nrem, Imm(uint64(2*s.lanes)))
	JL(LabelRef(name + "one"))
	block(name+"wide", 2, false)
	SUBQ(Imm(uint64(2*s.lanes)), nrem)
	JMP(LabelRef(name + "wide"))

	Label(name + "one")
	CMPQ(nrem, Imm(uint64(s.lanes)))
	JL(LabelRef(name + "tail"))
	block(name+"one", 1, false)
	SUBQ(Imm(uint64(s.lanes)), nrem)

	Label(name + "tail")
	TESTQ(nrem, nrem)
	JZ(LabelRef(name + "nextrow"))
	block(name+"tail", 1, true)

	Label(name + "nextrow")
	for range rows {
		ADDQ(lda4, aRow)
		ADDQ(ldc4, cRow)
	}
	DECQ(m)
	JMP(LabelRef(name + "row"))

	Label(name + "done")
	VZEROUPPER()
	RET()
}
