//go:build amd64 && !purego

#include "textflag.h"

// The K-quant micro-kernels of GemmQ4_KStd and GemmQ6_KStd (kstd.go, kstd_q6k.go) for the
// AVX-512 VNNI sets: all 16 weight rows of a repacked group against four Q8_K activation rows.
// A 64-byte slice of either layout holds 4 quants of each of the 16 rows, so it is one vector of
// 16 dwords (Q4_K: two, its low and high nibbles), and VPDPBUSD adds to each row's int32 sum its
// products with the 4 activations broadcast from the row's block. Every sub-block (Q6_K: group)
// sum is exact in int32 and multiplied by its scale with VPMULLD; the float arithmetic per
// super-block is the AVX2 kernels'. The results stay in Z20-Z23 (C's four rows) until the end.
//
// Both take: func(nb int, w *byte, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)
// and keep activation row j's block at BX, R8, R11, R12 and (Q4_K) its prepared pairs at DX, R13,
// R14, SI.

// KSTD16PROLOGUE loads the arguments (the Q6_K kernel has no pairs: their registers are loaded
// and not read) and C's rows into Z20-Z23, or zeroes them.
#define KSTD16PROLOGUE(zero, start) \
	MOVQ nb+0(FP), CX \
	MOVQ w+8(FP), AX \
	MOVQ y+16(FP), BX \
	MOVQ ldy+24(FP), R9 \
	LEAQ (BX)(R9*1), R8 \
	LEAQ (BX)(R9*2), R11 \
	LEAQ (R8)(R9*2), R12 \
	MOVQ p+32(FP), DX \
	MOVQ ldp+40(FP), R9 \
	LEAQ (DX)(R9*1), R13 \
	LEAQ (DX)(R9*2), R14 \
	LEAQ (R13)(R9*2), SI \
	MOVQ c+48(FP), DI \
	MOVQ ldc+56(FP), R9 \
	SHLQ $2, R9 \
	LEAQ (DI)(R9*2), R10 \
	CMPQ accum+64(FP), $0 \
	JEQ zero \
	VMOVUPS (DI), Z20 \
	VMOVUPS (DI)(R9*1), Z21 \
	VMOVUPS (R10), Z22 \
	VMOVUPS (R10)(R9*1), Z23 \
	JMP start \
zero: \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
start:

// KSTD16EPILOGUE stores Z20-Z23 into C's rows.
#define KSTD16EPILOGUE \
	VMOVUPS Z20, (DI) \
	VMOVUPS Z21, (DI)(R9*1) \
	VMOVUPS Z22, (R10) \
	VMOVUPS Z23, (R10)(R9*1) \
	VZEROUPPER \
	RET

// DOT4 adds to A0-A3 the products of W with the 4 activations at yo of each row's block.
#define DOT4(yo, W, A0, A1, A2, A3) \
	VPDPBUSD.BCST yo(BX), W, A0 \
	VPDPBUSD.BCST yo(R8), W, A1 \
	VPDPBUSD.BCST yo(R11), W, A2 \
	VPDPBUSD.BCST yo(R12), W, A3

// Q4SLICE: slice wo of the group (low nibbles: sub-block 2p, activations at yo; high nibbles:
// sub-block 2p+1, at yo+32) into Z4-Z7 and Z8-Z11.
#define Q4SLICE(wo, yo, W, LO, HI) \
	VMOVDQU32 wo(AX), W \
	VPSRLD $4, W, HI \
	VPANDD Z31, W, LO \
	VPANDD Z31, HI, HI \
	DOT4(yo, LO, Z4, Z5, Z6, Z7) \
	DOT4(yo+32, HI, Z8, Z9, Z10, Z11)

// Q4SCALE multiplies the sub-block sum A by the scales S and adds it to the super-block sum I.
#define Q4SCALE(S, A, I) \
	VPMULLD S, A, A \
	VPADDD A, I, I

// Q4PAIR: sub-blocks 2p and 2p+1 into the super-block sums Z0-Z3.
#define Q4PAIR(p) \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	Q4SLICE(320+512*p, 4+64*p, Z12, Z13, Z14) \
	Q4SLICE(384+512*p, 8+64*p, Z15, Z16, Z17) \
	Q4SLICE(448+512*p, 12+64*p, Z12, Z13, Z14) \
	Q4SLICE(512+512*p, 16+64*p, Z15, Z16, Z17) \
	Q4SLICE(576+512*p, 20+64*p, Z12, Z13, Z14) \
	Q4SLICE(640+512*p, 24+64*p, Z15, Z16, Z17) \
	Q4SLICE(704+512*p, 28+64*p, Z12, Z13, Z14) \
	Q4SLICE(768+512*p, 32+64*p, Z15, Z16, Z17) \
	VPMOVZXBD (64+32*p)(AX), Z18 \
	VPMOVZXBD (80+32*p)(AX), Z19 \
	Q4SCALE(Z18, Z4, Z0) \
	Q4SCALE(Z19, Z8, Z0) \
	Q4SCALE(Z18, Z5, Z1) \
	Q4SCALE(Z19, Z9, Z1) \
	Q4SCALE(Z18, Z6, Z2) \
	Q4SCALE(Z19, Z10, Z2) \
	Q4SCALE(Z18, Z7, Z3) \
	Q4SCALE(Z19, Z11, Z3)

// Q4SCALES loads what Q4ROW reads of the super-block at AX: the mins' pairs as words (Z12-Z15),
// d and dmin as floats (Z16, Z17).
#define Q4SCALES \
	VPMOVZXBW 192(AX), Z12 \
	VPMOVZXBW 224(AX), Z13 \
	VPMOVZXBW 256(AX), Z14 \
	VPMOVZXBW 288(AX), Z15 \
	VCVTPH2PS (AX), Z16 \
	VCVTPH2PS 32(AX), Z17

// Q4MIN adds the pair of sub-block mins MN times the row's prepared pair at po(P) to Z19.
#define Q4MIN(po, P, MN) \
	VPBROADCASTD po(P), Z18 \
	VPMADDWD Z18, MN, Z18 \
	VPADDD Z18, Z19, Z19

// Q4ROW finishes a super-block for one activation row (block Y, pairs P, integer sum I, result
// ACC): the mins Z12-Z15 meet the pairs, then ACC += (I·d − Σmin·dmin)·dy, d and dmin in
// Z16/Z17.
#define Q4ROW(Y, P, I, ACC) \
	VPBROADCASTD (P), Z18 \
	VPMADDWD Z18, Z12, Z19 \
	Q4MIN(4, P, Z13) \
	Q4MIN(8, P, Z14) \
	Q4MIN(12, P, Z15) \
	VCVTDQ2PS Z19, Z19 \
	VCVTDQ2PS I, I \
	VMULPS Z17, Z19, Z19 \
	VFMSUB231PS Z16, I, Z19 \
	VFMADD231PS.BCST (Y), Z19, ACC

// Registers: Z0-Z3 the int32 super-block sums of activation rows 0-3, Z4-Z7 and Z8-Z11 the sums
// of the pair's low and high sub-blocks, Z12-Z17 two slices in flight (then the mins and the
// f16 scales), Z18-Z19 sub-block scales, Z31 the nibble mask.
TEXT ·q4kStdR4x16VNNI(SB), NOSPLIT, $0-72
	MOVL $0x0f0f0f0f, CX
	VPBROADCASTD CX, Z31
	KSTD16PROLOGUE(q4k16_zero, q4k16_sb)
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	Q4PAIR(0)
	Q4PAIR(1)
	Q4PAIR(2)
	Q4PAIR(3)
	Q4SCALES
	Q4ROW(BX, DX, Z0, Z20)
	Q4ROW(R8, R13, Z1, Z21)
	Q4ROW(R11, R14, Z2, Z22)
	Q4ROW(R12, SI, Z3, Z23)
	ADDQ $2368, AX
	ADDQ $292, BX
	ADDQ $292, R8
	ADDQ $292, R11
	ADDQ $292, R12
	ADDQ $16, DX
	ADDQ $16, R13
	ADDQ $16, R14
	ADDQ $16, SI
	DECQ CX
	JNZ q4k16_sb
	KSTD16EPILOGUE

// Q6GROUP: the 16-element group g into the super-block sums Z0-Z3 through the accumulators
// A0-A3, the slices W0-W3 and the scales S.
#define Q6GROUP(g, A0, A1, A2, A3, W0, W1, W2, W3, S) \
	VPXORD A0, A0, A0 \
	VPXORD A1, A1, A1 \
	VPXORD A2, A2, A2 \
	VPXORD A3, A3, A3 \
	VMOVDQU32 (800+256*g)(AX), W0 \
	VMOVDQU32 (864+256*g)(AX), W1 \
	VMOVDQU32 (928+256*g)(AX), W2 \
	VMOVDQU32 (992+256*g)(AX), W3 \
	DOT4(4+16*g, W0, A0, A1, A2, A3) \
	DOT4(8+16*g, W1, A0, A1, A2, A3) \
	DOT4(12+16*g, W2, A0, A1, A2, A3) \
	DOT4(16+16*g, W3, A0, A1, A2, A3) \
	VPMOVSXBD (32+16*g)(AX), S \
	Q4SCALE(S, A0, Z0) \
	Q4SCALE(S, A1, Z1) \
	Q4SCALE(S, A2, Z2) \
	Q4SCALE(S, A3, Z3)

// Q6EVEN and Q6ODD alternate two register sets so that one group's scaling overlaps the next
// one's dots.
#define Q6EVEN(g) Q6GROUP(g, Z4, Z5, Z6, Z7, Z12, Z13, Z14, Z15, Z24)
#define Q6ODD(g) Q6GROUP(g, Z8, Z9, Z10, Z11, Z16, Z17, Z18, Z19, Z25)

// Q6ROW finishes a super-block for one activation row (block Y, integer sum I, result ACC):
// ACC += float(I − 32·Σ sc·bsum)·d·dy, d in Z26.
// Q6OFF adds pair q's Σ sc·bsum of the row at Y to Z8.
#define Q6OFF(q, Y) \
	VPBROADCASTD (260+4*q)(Y), Z9 \
	VPMADDWD (288+64*q)(AX), Z9, Z9 \
	VPADDD Z9, Z8, Z8

#define Q6ROW(Y, I, ACC) \
	VPBROADCASTD 260(Y), Z8 \
	VPMADDWD 288(AX), Z8, Z8 \
	Q6OFF(1, Y) \
	Q6OFF(2, Y) \
	Q6OFF(3, Y) \
	Q6OFF(4, Y) \
	Q6OFF(5, Y) \
	Q6OFF(6, Y) \
	Q6OFF(7, Y) \
	VPSLLD $5, Z8, Z8 \
	VPSUBD Z8, I, Z8 \
	VCVTDQ2PS Z8, Z8 \
	VMULPS Z26, Z8, Z8 \
	VFMADD231PS.BCST (Y), Z8, ACC

// Registers: Z0-Z3 the int32 super-block sums of activation rows 0-3, Z4-Z7 and Z8-Z11 the sums
// of the even and odd groups in flight, Z12-Z19 their slices, Z24-Z25 their scales, Z26 the f16
// super-block scales.
TEXT ·q6kStdR4x16VNNI(SB), NOSPLIT, $0-72
	KSTD16PROLOGUE(q6k16_zero, q6k16_sb)
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	Q6EVEN(0)
	Q6ODD(1)
	Q6EVEN(2)
	Q6ODD(3)
	Q6EVEN(4)
	Q6ODD(5)
	Q6EVEN(6)
	Q6ODD(7)
	Q6EVEN(8)
	Q6ODD(9)
	Q6EVEN(10)
	Q6ODD(11)
	Q6EVEN(12)
	Q6ODD(13)
	Q6EVEN(14)
	Q6ODD(15)
	VCVTPH2PS (AX), Z26
	Q6ROW(BX, Z0, Z20)
	Q6ROW(R8, Z1, Z21)
	Q6ROW(R11, Z2, Z22)
	Q6ROW(R12, Z3, Z23)
	ADDQ $4896, AX
	ADDQ $292, BX
	ADDQ $292, R8
	ADDQ $292, R11
	ADDQ $292, R12
	DECQ CX
	JNZ q6k16_sb
	KSTD16EPILOGUE

// R1PFD is how far ahead (bytes, two super-blocks) the one-row kernel prefetches the weights,
// which a generated token reads once from DRAM.
#define R1PFD 4736

// R1SLICE: slice wo of the group against one activation row (low nibbles into ALO, high into
// AHI), prefetching the slice R1PFD bytes ahead. Both nibble masks read the slice from memory (no
// separate load), and the high nibbles stay in place (0xF0 mask, no shift): AHI sums 16 times
// the high products, exactly (|240·127·4·8| < 2^31), and R1PAIR shifts the sum back once. A
// generated token's mat-vec is bound by how far ahead one core's loads reach, so every
// instruction a byte counts: 7 a slice became 5.
#define R1SLICE(wo, yo, LO, HI, ALO, AHI) \
	PREFETCHT0 (wo+R1PFD)(AX) \
	VPANDD wo(AX), Z31, LO \
	VPANDD wo(AX), Z30, HI \
	VPDPBUSD.BCST yo(BX), LO, ALO \
	VPDPBUSD.BCST (yo+32)(BX), HI, AHI

// R1PAIR: sub-blocks 2p and 2p+1 into the super-block sum Z0, the even and odd slices in two
// chains each (Z4/Z5 low, Z6/Z7 high, the high ones 16 times the sums until the shift).
#define R1PAIR(p) \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	R1SLICE(320+512*p, 4+64*p, Z12, Z13, Z4, Z6) \
	R1SLICE(384+512*p, 8+64*p, Z15, Z16, Z5, Z7) \
	R1SLICE(448+512*p, 12+64*p, Z12, Z13, Z4, Z6) \
	R1SLICE(512+512*p, 16+64*p, Z15, Z16, Z5, Z7) \
	R1SLICE(576+512*p, 20+64*p, Z12, Z13, Z4, Z6) \
	R1SLICE(640+512*p, 24+64*p, Z15, Z16, Z5, Z7) \
	R1SLICE(704+512*p, 28+64*p, Z12, Z13, Z4, Z6) \
	R1SLICE(768+512*p, 32+64*p, Z15, Z16, Z5, Z7) \
	VPADDD Z5, Z4, Z4 \
	VPADDD Z7, Z6, Z6 \
	VPSRAD $4, Z6, Z6 \
	VPMOVZXBD (64+32*p)(AX), Z18 \
	VPMOVZXBD (80+32*p)(AX), Z19 \
	Q4SCALE(Z18, Z4, Z0) \
	Q4SCALE(Z19, Z6, Z0)

// q4kRepR1VNNI is q4kRepR1x2AVX2 (repack_q4k_amd64.s) for the AVX-512 VNNI sets: the 16 rows of
// one repacked Q4_K group against one Q8_K activation row, bit for bit that kernel's results.
// Registers: Z0 the int32 super-block sums, Z4-Z7 the pair's sub-block sums, Z12-Z17 two slices
// in flight (Z12/Z13, Z15/Z16; then the mins and the f16 scales), Z18-Z19 sub-block scales, Z20 the float results,
// Z30 and Z31 the high and low nibble masks.

// func q4kRepR1VNNI(nb int, w, y *byte, ys int, p *byte, ps int, c *float32, accum int)
TEXT ·q4kRepR1VNNI(SB), NOSPLIT, $0-64
	MOVQ nb+0(FP), CX
	MOVQ w+8(FP), AX
	MOVQ y+16(FP), BX
	MOVQ ys+24(FP), R8
	MOVQ p+32(FP), DX
	MOVQ ps+40(FP), R9
	MOVQ c+48(FP), DI
	MOVL $0x0f0f0f0f, SI
	VPBROADCASTD SI, Z31
	MOVL $0xf0f0f0f0, SI
	VPBROADCASTD SI, Z30
	VPXORD Z20, Z20, Z20
	CMPQ accum+56(FP), $0
	JEQ q4kr1v_sb
	VMOVUPS (DI), Z20
q4kr1v_sb:
	PREFETCHT0 R1PFD(AX)
	PREFETCHT0 (R1PFD+64)(AX)
	PREFETCHT0 (R1PFD+128)(AX)
	PREFETCHT0 (R1PFD+192)(AX)
	PREFETCHT0 (R1PFD+256)(AX)
	VPXORD Z0, Z0, Z0
	R1PAIR(0)
	R1PAIR(1)
	R1PAIR(2)
	R1PAIR(3)
	Q4SCALES
	Q4ROW(BX, DX, Z0, Z20)
	ADDQ $2368, AX
	ADDQ R8, BX
	ADDQ R9, DX
	DECQ CX
	JNZ q4kr1v_sb
	VMOVUPS Z20, (DI)
	VZEROUPPER
	RET
