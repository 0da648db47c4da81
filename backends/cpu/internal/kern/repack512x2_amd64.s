//go:build amd64 && !purego

#include "textflag.h"

// Two-group repacked micro-kernels, AVX-512 VNNI: 32 weight rows (two consecutive groups of 16,
// gs bytes apart) times 4 activation rows of a prepared 8-row tile (see repack_gemm.go). The
// 16x8 kernels of repack512_amd64.s take each activation dword as the broadcast operand of one
// VPDPBUSD; here a dword broadcast once serves both groups (a block of 64 VPDPBUSD takes ~60
// loads instead of ~85), and a Q4 chunk's nibbles serve 4 activation rows. Each output gets the
// same float operations in the same order as in the 16x8 kernels (the int32 sums are exact in
// any order), so C is bit for bit theirs: the sum from its correction, then
// acc += float(sumi)*(dw*dy). (Q4_1, whose minimums add a third FMA per row and block, ran no
// faster this way on Zen 5 and keeps its 16x8 kernel.)
//
// func rpGemm4x2XXX(nb int, w *byte, gs int, pq, pd *byte, c *float32, ldc, accum int)
//	pq: the first of the 4 activation rows' quants in the tile's first record; pd: the first of
//	their 4 f32 scales, their corrections 32 bytes later. Records are 320 bytes
//	apart. c[j*ldc+r] for j < 4, r < 32, loaded first when accum != 0.
//
// Registers: Z0-Z3 float sums of group A (activation rows 0-3), Z4-Z7 of group B, Z8-Z11 and
// Z12-Z15 their int32 sums, Z16/Z17 group A's two quant vectors of a step, Z18/Z19 group B's,
// Z20-Z23 the rows' dwords for the first vector broadcast, Z28-Z31 for the second, Z24 the nibble
// mask, Z25/Z26 the groups' scales, Z27 a scale product.

// X2BCAST broadcasts the 4 activation rows' dwords at byte offsets lo and hi of their quants.
#define X2BCAST(lo, hi) \
	VPBROADCASTD (lo)(BX), Z20 \
	VPBROADCASTD (32+lo)(BX), Z21 \
	VPBROADCASTD (64+lo)(BX), Z22 \
	VPBROADCASTD (96+lo)(BX), Z23 \
	VPBROADCASTD (hi)(BX), Z28 \
	VPBROADCASTD (32+hi)(BX), Z29 \
	VPBROADCASTD (64+hi)(BX), Z30 \
	VPBROADCASTD (96+hi)(BX), Z31

// X2DOTS adds the 16 products of a step: every int32 sum gets the first vector's dword product,
// then, 7 instructions later, the second's.
#define X2DOTS \
	VPDPBUSD Z20, Z16, Z8 \
	VPDPBUSD Z21, Z16, Z9 \
	VPDPBUSD Z22, Z16, Z10 \
	VPDPBUSD Z23, Z16, Z11 \
	VPDPBUSD Z20, Z18, Z12 \
	VPDPBUSD Z21, Z18, Z13 \
	VPDPBUSD Z22, Z18, Z14 \
	VPDPBUSD Z23, Z18, Z15 \
	VPDPBUSD Z28, Z17, Z8 \
	VPDPBUSD Z29, Z17, Z9 \
	VPDPBUSD Z30, Z17, Z10 \
	VPDPBUSD Z31, Z17, Z11 \
	VPDPBUSD Z28, Z19, Z12 \
	VPDPBUSD Z29, Z19, Z13 \
	VPDPBUSD Z30, Z19, Z14 \
	VPDPBUSD Z31, Z19, Z15

// X2Q4STEP is a Q4 chunk at byte q of the superblocks: both groups' low nibbles (elements 4c..)
// and high nibbles (16+4c..) times the rows' dwords at 4c and 16+4c.
#define X2Q4STEP(q, c) \
	VPANDD (q)(AX), Z24, Z16 \
	VPSRLD $4, (q)(AX), Z17 \
	VPANDD (q)(SI), Z24, Z18 \
	VPSRLD $4, (q)(SI), Z19 \
	VPANDD Z24, Z17, Z17 \
	VPANDD Z24, Z19, Z19 \
	X2BCAST(4*c, 16+4*c) \
	X2DOTS

// X2Q8STEP is Q8_0's chunks c and c+1 (bytes 32+64c and 96+64c): elements 4c.. and 4c+4..
#define X2Q8STEP(c) \
	VMOVDQU32 (32+64*c)(AX), Z16 \
	VMOVDQU32 (96+64*c)(AX), Z17 \
	VMOVDQU32 (32+64*c)(SI), Z18 \
	VMOVDQU32 (96+64*c)(SI), Z19 \
	X2BCAST(4*c, 4+4*c) \
	X2DOTS

// X2CORR starts the int32 sums at the rows' corrections.
#define X2CORR \
	VPBROADCASTD 32(DX), Z8 \
	VPBROADCASTD 36(DX), Z9 \
	VPBROADCASTD 40(DX), Z10 \
	VPBROADCASTD 44(DX), Z11 \
	VMOVDQA32 Z8, Z12 \
	VMOVDQA32 Z9, Z13 \
	VMOVDQA32 Z10, Z14 \
	VMOVDQA32 Z11, Z15

// X2SCALE adds row j's block sums to its float sums: float(sumi) times dw*dy, per group.
#define X2SCALE(j, ia, ib, fa, fb) \
	VCVTDQ2PS ia, ia \
	VMULPS.BCST (4*j)(DX), Z25, Z27 \
	VFMADD231PS Z27, ia, fa \
	VCVTDQ2PS ib, ib \
	VMULPS.BCST (4*j)(DX), Z26, Z27 \
	VFMADD231PS Z27, ib, fb

// X2ARGS loads the arguments: AX and SI the groups, BX and DX the records, DI and R9 C's rows 0
// and 2 (R8 bytes apart), R10 accum.
#define X2ARGS \
	MOVQ nb+0(FP), CX \
	MOVQ w+8(FP), AX \
	MOVQ gs+16(FP), SI \
	ADDQ AX, SI \
	MOVQ pq+24(FP), BX \
	MOVQ pd+32(FP), DX \
	MOVQ c+40(FP), DI \
	MOVQ ldc+48(FP), R8 \
	SHLQ $2, R8 \
	LEAQ (DI)(R8*2), R9 \
	MOVQ accum+56(FP), R10

// X2LOADC loads the float sums from C.
#define X2LOADC \
	VMOVUPS (DI), Z0 \
	VMOVUPS (DI)(R8*1), Z1 \
	VMOVUPS (R9), Z2 \
	VMOVUPS (R9)(R8*1), Z3 \
	VMOVUPS 64(DI), Z4 \
	VMOVUPS 64(DI)(R8*1), Z5 \
	VMOVUPS 64(R9), Z6 \
	VMOVUPS 64(R9)(R8*1), Z7

// X2ZEROC zeroes the float sums.
#define X2ZEROC \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7

// X2STOREC stores the float sums into C.
#define X2STOREC \
	VMOVUPS Z0, (DI) \
	VMOVUPS Z1, (DI)(R8*1) \
	VMOVUPS Z2, (R9) \
	VMOVUPS Z3, (R9)(R8*1) \
	VMOVUPS Z4, 64(DI) \
	VMOVUPS Z5, 64(DI)(R8*1) \
	VMOVUPS Z6, 64(R9) \
	VMOVUPS Z7, 64(R9)(R8*1)

// X2NEXT moves to the next superblocks (n bytes) and records.
#define X2NEXT(n) \
	ADDQ $n, AX \
	ADDQ $n, SI \
	ADDQ $320, BX \
	ADDQ $320, DX

// X2PROLOGUE loads the arguments and C's sums (or zeroes them); zero and start are the kernel's
// labels.
#define X2PROLOGUE(zero, start) \
	X2ARGS \
	TESTQ R10, R10 \
	JZ zero \
	X2LOADC \
	JMP start \
zero: \
	X2ZEROC \
start:

// X2FINISH ends a superblock of n bytes (its scales, the float sums, the next records), loops to
// loop while blocks are left and stores C.
#define X2FINISH(n, loop) \
	VCVTPH2PS (AX), Z25 \
	VCVTPH2PS (SI), Z26 \
	X2SCALE(0, Z8, Z12, Z0, Z4) \
	X2SCALE(1, Z9, Z13, Z1, Z5) \
	X2SCALE(2, Z10, Z14, Z2, Z6) \
	X2SCALE(3, Z11, Z15, Z3, Z7) \
	X2NEXT(n) \
	DECQ CX \
	JNZ loop \
	X2STOREC \
	VZEROUPPER \
	RET

TEXT ·rpGemm4x2Q40VNNI(SB), NOSPLIT, $0-64
	X2PROLOGUE(zeroX2Q40, startX2Q40)
	MOVL $0x0F0F0F0F, R10
	VPBROADCASTD R10, Z24
loopX2Q40:
	X2CORR
	X2Q4STEP(32, 0)
	X2Q4STEP(96, 1)
	X2Q4STEP(160, 2)
	X2Q4STEP(224, 3)
	X2FINISH(288, loopX2Q40)

TEXT ·rpGemm4x2Q80VNNI(SB), NOSPLIT, $0-64
	X2PROLOGUE(zeroX2Q80, startX2Q80)
loopX2Q80:
	X2CORR
	X2Q8STEP(0)
	X2Q8STEP(2)
	X2Q8STEP(4)
	X2Q8STEP(6)
	X2FINISH(544, loopX2Q80)
