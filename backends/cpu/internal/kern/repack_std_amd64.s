//go:build amd64 && !purego

#include "textflag.h"

// On-the-fly repacking of 16 standard Q4_0, Q4_1 or Q8_0 rows into repacked superblocks (see
// repack.go), AVX2. Per block and half (rows 8h..8h+7), four registers each take 16 quant bytes
// of rows q (low lane) and q+4 (high lane), q < 4; a 4x4 dword transpose per lane (unpacks)
// turns them into the four chunks' 32 bytes of the half (4-byte slice c of rows 8h..8h+7), stored
// at chunk c's offset plus 32h (Q8_0: XOR 0x80 per byte, and once more for quants 16..31). The
// f16 scales (Q4_1: and minimums) are copied as words.
//
// func repackStdQ40AVX2(nb int, dst, src *byte, lda int)
// func repackStdQ41AVX2(nb int, dst, src *byte, lda int)
// func repackStdQ80AVX2(nb int, dst, src *byte, lda int)
//	nb blocks of 16 rows lda bytes apart from src; superblock b at dst + b*super.
//
// Registers: SI, R10, R11, R12 rows 0, 4, 8, 12 of the current block; R8 lda, R9 3*lda.

#define LD4(off, h0, h4) \
	VMOVDQU off(h0), X0 \
	VINSERTI128 $1, off(h4), Y0, Y0 \
	VMOVDQU off(h0)(R8*1), X1 \
	VINSERTI128 $1, off(h4)(R8*1), Y1, Y1 \
	VMOVDQU off(h0)(R8*2), X2 \
	VINSERTI128 $1, off(h4)(R8*2), Y2, Y2 \
	VMOVDQU off(h0)(R9*1), X3 \
	VINSERTI128 $1, off(h4)(R9*1), Y3, Y3

#define TR4 \
	VPUNPCKLDQ Y1, Y0, Y4 \
	VPUNPCKHDQ Y1, Y0, Y5 \
	VPUNPCKLDQ Y3, Y2, Y6 \
	VPUNPCKHDQ Y3, Y2, Y7 \
	VPUNPCKLQDQ Y6, Y4, Y0 \
	VPUNPCKHQDQ Y6, Y4, Y1 \
	VPUNPCKLQDQ Y7, Y5, Y2 \
	VPUNPCKHQDQ Y7, Y5, Y3

#define ST4(doff) \
	VMOVDQU Y0, doff(DI) \
	VMOVDQU Y1, doff+64(DI) \
	VMOVDQU Y2, doff+128(DI) \
	VMOVDQU Y3, doff+192(DI)

#define XOR4 \
	VPXOR Y11, Y0, Y0 \
	VPXOR Y11, Y1, Y1 \
	VPXOR Y11, Y2, Y2 \
	VPXOR Y11, Y3, Y3

#define SCW(src, doff) \
	MOVWLZX src, AX \
	MOVW AX, doff(DI)

#define SCALES4(h, doff) \
	SCW((h), doff) \
	SCW((h)(R8*1), doff+2) \
	SCW((h)(R8*2), doff+4) \
	SCW((h)(R9*1), doff+6)

#define SCM(src, doff) \
	MOVL src, AX \
	MOVW AX, doff(DI) \
	SHRL $16, AX \
	MOVW AX, doff+32(DI)

#define SCALESM4(h, doff) \
	SCM((h), doff) \
	SCM((h)(R8*1), doff+2) \
	SCM((h)(R8*2), doff+4) \
	SCM((h)(R9*1), doff+6)

#define PROLOGUE \
	MOVQ nb+0(FP), CX \
	MOVQ dst+8(FP), DI \
	MOVQ src+16(FP), SI \
	MOVQ lda+24(FP), R8 \
	LEAQ (R8)(R8*2), R9 \
	LEAQ (SI)(R8*4), R10 \
	LEAQ (R10)(R8*4), R11 \
	LEAQ (R11)(R8*4), R12

#define ADVANCE(bs) \
	ADDQ $bs, SI \
	ADDQ $bs, R10 \
	ADDQ $bs, R11 \
	ADDQ $bs, R12

TEXT ·repackStdQ40AVX2(SB), NOSPLIT, $0-32
	PROLOGUE
	TESTQ CX, CX
	JZ q40done
q40loop:
	SCALES4(SI, 0)
	SCALES4(R10, 8)
	SCALES4(R11, 16)
	SCALES4(R12, 24)
	LD4(2, SI, R10)
	TR4
	ST4(32)
	LD4(2, R11, R12)
	TR4
	ST4(64)
	ADVANCE(18)
	ADDQ $288, DI
	DECQ CX
	JNZ q40loop
q40done:
	VZEROUPPER
	RET

TEXT ·repackStdQ41AVX2(SB), NOSPLIT, $0-32
	PROLOGUE
	TESTQ CX, CX
	JZ q41done
q41loop:
	SCALESM4(SI, 0)
	SCALESM4(R10, 8)
	SCALESM4(R11, 16)
	SCALESM4(R12, 24)
	LD4(4, SI, R10)
	TR4
	ST4(64)
	LD4(4, R11, R12)
	TR4
	ST4(96)
	ADVANCE(20)
	ADDQ $320, DI
	DECQ CX
	JNZ q41loop
q41done:
	VZEROUPPER
	RET

TEXT ·repackStdQ80AVX2(SB), NOSPLIT, $0-32
	PROLOGUE
	MOVL $0x80808080, AX
	VMOVQ AX, X11
	VPBROADCASTD X11, Y11
	TESTQ CX, CX
	JZ q80done
q80loop:
	SCALES4(SI, 0)
	SCALES4(R10, 8)
	SCALES4(R11, 16)
	SCALES4(R12, 24)
	LD4(2, SI, R10)
	TR4
	XOR4
	ST4(32)
	LD4(2, R11, R12)
	TR4
	XOR4
	ST4(64)
	LD4(18, SI, R10)
	TR4
	XOR4
	ST4(288)
	LD4(18, R11, R12)
	TR4
	XOR4
	ST4(320)
	ADVANCE(34)
	ADDQ $544, DI
	DECQ CX
	JNZ q80loop
q80done:
	VZEROUPPER
	RET
