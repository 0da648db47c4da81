//go:build amd64 && !purego

#include "textflag.h"

// func prepRecAVX2(nb int, y, p *byte, mul, doff, coff, stride int)
// One activation row's slots in the prepared records of the repacked Q4_0/Q8_0 kernels
// (prepRepackRow): for each of nb Q8_0 blocks of y (f16 d, 32 int8 quants; 34 bytes) the 32
// quants at p, d as f32 at p+doff and mul·Σquants as int32 at p+coff, p moving stride bytes a
// block. The sum is VPSADBW's over the quants offset by 128 (unsigned), less 32·128.
TEXT ·prepRecAVX2(SB), NOSPLIT, $0-56
	MOVQ nb+0(FP), CX
	MOVQ y+8(FP), SI
	MOVQ p+16(FP), DI
	MOVQ mul+24(FP), R8
	MOVQ doff+32(FP), R9
	MOVQ coff+40(FP), R10
	MOVQ stride+48(FP), R11
	TESTQ CX, CX
	JZ    pr_done
	MOVL         $0x80808080, AX
	VMOVD        AX, X15
	VPBROADCASTD X15, Y15
	VPXOR        Y14, Y14, Y14

pr_loop:
	MOVWLZX      (SI), AX
	VMOVD        AX, X0
	VCVTPH2PS    X0, X0
	VMOVSS       X0, (DI)(R9*1)
	VMOVDQU      2(SI), Y1
	VMOVDQU      Y1, (DI)
	VPXOR        Y15, Y1, Y2
	VPSADBW      Y14, Y2, Y2
	VEXTRACTI128 $1, Y2, X3
	VPADDQ       X3, X2, X2
	VPSHUFD      $0x4E, X2, X3
	VPADDQ       X3, X2, X2
	VMOVQ        X2, AX
	SUBQ         $4096, AX
	IMULQ        R8, AX
	MOVL         AX, (DI)(R10*1)
	ADDQ         $34, SI
	ADDQ         R11, DI
	DECQ         CX
	JNZ          pr_loop
	VZEROUPPER

pr_done:
	RET
