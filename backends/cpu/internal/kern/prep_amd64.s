//go:build amd64 && !purego

#include "textflag.h"

// func prepRec1AVX2(nb int, y, p *byte, mul int)
// The one-row prepared activation records of the repacked Q4_0/Q8_0 mat-vec (prepRepackRow with
// nr = 1): for each of nb Q8_0 blocks of y (f16 d, 32 int8 quants; 34 bytes) the 40-byte record
// [32 quants][d as f32][mul·Σquants as int32]. The sum is VPSADBW's over the quants offset by 128
// (unsigned), less 32·128.
TEXT ·prepRec1AVX2(SB), NOSPLIT, $0-32
	MOVQ nb+0(FP), CX
	MOVQ y+8(FP), SI
	MOVQ p+16(FP), DI
	MOVQ mul+24(FP), R8
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
	VMOVSS       X0, 32(DI)
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
	MOVL         AX, 36(DI)
	ADDQ         $34, SI
	ADDQ         $40, DI
	DECQ         CX
	JNZ          pr_loop
	VZEROUPPER

pr_done:
	RET
