//go:build amd64 && !purego

#include "textflag.h"

// func stransposePanel8(blocks int, src *float32, ld int, dst *float32, width int)
// For each of blocks blocks b: reads 8 floats at src + j·ld + 8b from each
// of the 8 columns j (ld floats apart) and stores them transposed: the 8
// values at row q of the block, one per column, at dst + (8b+q)·width, so
// that dst fills 8 lanes of a GEMM panel width floats wide.
TEXT ·stransposePanel8(SB), NOSPLIT, $0-40
	MOVQ blocks+0(FP), CX
	MOVQ src+8(FP), SI
	MOVQ ld+16(FP), BX
	MOVQ dst+24(FP), DI
	MOVQ width+32(FP), DX
	SHLQ $2, BX            // ld in bytes
	LEAQ (BX)(BX*2), R9    // 3·ld
	LEAQ (SI)(BX*4), R8    // column 4
	SHLQ $2, DX            // width in bytes: a row of the panel
	LEAQ (DX)(DX*2), R10   // 3 rows
	MOVQ DX, R12
	SHLQ $3, R12           // 8 rows

block:
	CMPQ CX, $0
	JE   done

	// r0..r7: 8 values of each column.
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(R9*1), Y3
	VMOVUPS (R8), Y4
	VMOVUPS (R8)(BX*1), Y5
	VMOVUPS (R8)(BX*2), Y6
	VMOVUPS (R8)(R9*1), Y7

	// Interleave pairs of columns within each 128-bit lane.
	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	// Quads of columns 0-3 and 4-7 for rows q and q+4 (low, high lane).
	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	// Whole rows: columns 0-3 from the first quad, 4-7 from the second.
	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	LEAQ    (DI)(DX*4), R11 // row 4 of the block
	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(DX*1)
	VMOVUPS Y10, (DI)(DX*2)
	VMOVUPS Y11, (DI)(R10*1)
	VMOVUPS Y12, (R11)
	VMOVUPS Y13, (R11)(DX*1)
	VMOVUPS Y14, (R11)(DX*2)
	VMOVUPS Y15, (R11)(R10*1)

	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ R12, DI
	DECQ CX
	JMP  block

done:
	VZEROUPPER
	RET
