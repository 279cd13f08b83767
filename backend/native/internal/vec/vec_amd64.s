//go:build amd64 && !purego

#include "textflag.h"

// The AVX2/FMA kernels of vec_amd64.go, over n float32 elements, n a
// multiple of 8.

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

// func sbiasClipKernel(n int, b, lo, hi float32, x, y *float32)
// y[i] = min(max(x[i]+b, lo), hi): sscaleShiftKernel with a = 1 (x·1+b
// is x+b, one rounding either way) then sclipKernel, in one pass; the
// operands of MAXPS and MINPS as there, so a NaN passes through.
TEXT ·sbiasClipKernel(SB), NOSPLIT, $0-40
	MOVQ         n+0(FP), CX
	VBROADCASTSS b+8(FP), Y5
	VBROADCASTSS lo+12(FP), Y0
	VBROADCASTSS hi+16(FP), Y1
	MOVQ         x+24(FP), SI
	MOVQ         y+32(FP), DI

biasclip8:
	CMPQ    CX, $8
	JL      biasclipdone
	VMOVUPS (SI), Y2
	VADDPS  Y5, Y2, Y2
	VMAXPS  Y2, Y0, Y3
	VMINPS  Y3, Y1, Y4
	VMOVUPS Y4, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     biasclip8

biasclipdone:
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

// func saxpyKernel(n int, a float32, x, y *float32)
// y[i] += a*x[i] for i < n; n is a multiple of 8.
TEXT ·saxpyKernel(SB), NOSPLIT, $0-32
	MOVQ         n+0(FP), CX
	VBROADCASTSS a+8(FP), Y0
	MOVQ         x+16(FP), SI
	MOVQ         y+24(FP), DI

axpy32:
	CMPQ        CX, $32
	JL          axpy8
	VMOVUPS     (SI), Y1
	VMOVUPS     32(SI), Y2
	VMOVUPS     64(SI), Y3
	VMOVUPS     96(SI), Y4
	VMOVUPS     (DI), Y5
	VMOVUPS     32(DI), Y6
	VMOVUPS     64(DI), Y7
	VMOVUPS     96(DI), Y8
	VFMADD231PS Y1, Y0, Y5
	VFMADD231PS Y2, Y0, Y6
	VFMADD231PS Y3, Y0, Y7
	VFMADD231PS Y4, Y0, Y8
	VMOVUPS     Y5, (DI)
	VMOVUPS     Y6, 32(DI)
	VMOVUPS     Y7, 64(DI)
	VMOVUPS     Y8, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         axpy32

axpy8:
	CMPQ        CX, $8
	JL          axpydone
	VMOVUPS     (SI), Y1
	VMOVUPS     (DI), Y5
	VFMADD231PS Y1, Y0, Y5
	VMOVUPS     Y5, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         axpy8

axpydone:
	VZEROUPPER
	RET

// func sdotKernel(n int, x, y *float32) float32
// The sum of x[i]*y[i] for i < n; n is a multiple of 8.
TEXT ·sdotKernel(SB), NOSPLIT, $0-28
	MOVQ   n+0(FP), CX
	MOVQ   x+8(FP), SI
	MOVQ   y+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

dot32:
	CMPQ        CX, $32
	JL          dot8
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	JMP         dot32

dot8:
	CMPQ        CX, $8
	JL          dotsum
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dot8

dotsum:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y3, Y2, Y2
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS        X0, ret+24(FP)
	RET
