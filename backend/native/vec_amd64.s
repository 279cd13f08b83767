#include "textflag.h"

// Vector kernels of vec_amd64.go, over n float32 elements, n a multiple of 8.

// func sclipKernel(n int, lo, hi float32, x, y *float32)
// y[i] = min(max(x[i], lo), hi). MAXPS and MINPS return their second
// source when either is NaN: x is given as that source, so a NaN passes
// through as ONNX's Clip (numpy.clip) lets it.
TEXT ·sclipKernel(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS lo+8(FP), Y0
	VBROADCASTSS hi+12(FP), Y1
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI

clip8:
	CMPQ    CX, $8
	JL      clipdone
	VMOVUPS (SI), Y2
	VMAXPS  Y2, Y0, Y3
	VMINPS  Y3, Y1, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     clip8

clipdone:
	VZEROUPPER
	RET

// func sscaleShiftKernel(n int, a, b float32, x, y *float32)
// y[i] = x[i]*a + b, fused.
TEXT ·sscaleShiftKernel(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS a+8(FP), Y0
	VBROADCASTSS b+12(FP), Y1
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI

ss8:
	CMPQ        CX, $8
	JL          ssdone
	VMOVUPS     (SI), Y2
	VMOVAPS     Y1, Y3
	VFMADD231PS Y2, Y0, Y3
	VMOVUPS     Y3, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         ss8

ssdone:
	VZEROUPPER
	RET

// func sreluGradKernel(n int, x, dy, dx *float32)
// dx[i] = dy[i] where x[i] > 0, else +0: the compare mask (false for NaN
// and both zeros) ANDed with dy.
TEXT ·sreluGradKernel(SB), NOSPLIT, $0-32
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   dy+16(FP), DX
	MOVQ   dx+24(FP), DI
	VXORPS Y0, Y0, Y0

relugrad8:
	CMPQ    CX, $8
	JL      relugraddone
	VMOVUPS (SI), Y1
	VCMPPS  $0x0E, Y0, Y1, Y2 // x > 0 (ordered: NaN gives false)
	VANDPS  (DX), Y2, Y3
	VMOVUPS Y3, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     relugrad8

relugraddone:
	VZEROUPPER
	RET
