//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels of the K-quant dots, AVX-512 VNNI (kquant_tile.go): one weight row at a time
// (the row loop runs here), its super-block unpacked once into four vectors of 64 unsigned
// codes (chunk c = the 64 elements 64c..64c+63), then for each of 1 or 4 activation rows
// VPDPBUSD gives the code·q8 sums of 4 elements per dword (dwords 0-7 of chunk c belong to
// one 32-element sub-block, 8-15 to the next), and VPDPWSSD multiplies each dword (exact, it
// fits int16) by its sub-block scale and sums the chunks: 16 int32 lanes per super-block,
// converted to float and scaled by d·dy. Mins (Q4_K, Q5_K) or offsets (Q6_K) come from
// the Q8_K bsums, also by VPDPWSSD (IQ4: kquant_tile_iq4_amd64.s). At the end of a row each
// accumulator is summed horizontally and stored to c (added to it when accum != 0).
//
// func xxxTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
// func xxxTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
//	m weight rows of nb super-blocks, ldx bytes apart; 1 or 4 activation rows ldy bytes
//	apart; c[j*ldc+i] for row i < m, activation row j.
//
// KTPFD is how far ahead (bytes) the 1-activation-row kernels prefetch the weight rows (read one
// after another, once per generated token, from DRAM): TinyLlama Q4_K_M tg on Zen 5 (2 workers)
// ran its q4_K and q6_K mat-vecs 10-12% faster with 4608 than with no prefetch (2304: 9%).
#define KTPFD 4608

// Registers: Z0 scale table (8 scales, 8 mins, repeated per 128-bit lane), Z2/Z3 d and dmin,
// Z4-Z7 weight codes, Z8-Z11 chunk sums, Z12 scaled sums, Z13 min sums, Z14/Z15 temporaries,
// Z16-Z19 float accumulators (one per activation row), Z20-Z23 scale dwords per chunk, Y24 min
// pairs, Z25-Z29 shuffle indices, Z30 shifts, Z31 nibble mask, K3 accum.

DATA ktScIdx<>+0(SB)/8, $0x8080800080808000
DATA ktScIdx<>+8(SB)/8, $0x8080800080808000
DATA ktScIdx<>+16(SB)/8, $0x8080800080808000
DATA ktScIdx<>+24(SB)/8, $0x8080800080808000
DATA ktScIdx<>+32(SB)/8, $0x8080800180808001
DATA ktScIdx<>+40(SB)/8, $0x8080800180808001
DATA ktScIdx<>+48(SB)/8, $0x8080800180808001
DATA ktScIdx<>+56(SB)/8, $0x8080800180808001
DATA ktScIdx<>+64(SB)/8, $0x8080800280808002
DATA ktScIdx<>+72(SB)/8, $0x8080800280808002
DATA ktScIdx<>+80(SB)/8, $0x8080800280808002
DATA ktScIdx<>+88(SB)/8, $0x8080800280808002
DATA ktScIdx<>+96(SB)/8, $0x8080800380808003
DATA ktScIdx<>+104(SB)/8, $0x8080800380808003
DATA ktScIdx<>+112(SB)/8, $0x8080800380808003
DATA ktScIdx<>+120(SB)/8, $0x8080800380808003
DATA ktScIdx<>+128(SB)/8, $0x8080800480808004
DATA ktScIdx<>+136(SB)/8, $0x8080800480808004
DATA ktScIdx<>+144(SB)/8, $0x8080800480808004
DATA ktScIdx<>+152(SB)/8, $0x8080800480808004
DATA ktScIdx<>+160(SB)/8, $0x8080800580808005
DATA ktScIdx<>+168(SB)/8, $0x8080800580808005
DATA ktScIdx<>+176(SB)/8, $0x8080800580808005
DATA ktScIdx<>+184(SB)/8, $0x8080800580808005
DATA ktScIdx<>+192(SB)/8, $0x8080800680808006
DATA ktScIdx<>+200(SB)/8, $0x8080800680808006
DATA ktScIdx<>+208(SB)/8, $0x8080800680808006
DATA ktScIdx<>+216(SB)/8, $0x8080800680808006
DATA ktScIdx<>+224(SB)/8, $0x8080800780808007
DATA ktScIdx<>+232(SB)/8, $0x8080800780808007
DATA ktScIdx<>+240(SB)/8, $0x8080800780808007
DATA ktScIdx<>+248(SB)/8, $0x8080800780808007
GLOBL ktScIdx<>(SB), RODATA|NOPTR, $256
DATA ktMnIdx<>+0(SB)/8, $0x8009800980088008
DATA ktMnIdx<>+8(SB)/8, $0x800b800b800a800a
DATA ktMnIdx<>+16(SB)/8, $0x800d800d800c800c
DATA ktMnIdx<>+24(SB)/8, $0x800f800f800e800e
DATA ktMnIdx<>+32(SB)/8, $0x8080808080808080
DATA ktMnIdx<>+40(SB)/8, $0x8080808080808080
DATA ktMnIdx<>+48(SB)/8, $0x8080808080808080
DATA ktMnIdx<>+56(SB)/8, $0x8080808080808080
GLOBL ktMnIdx<>(SB), RODATA|NOPTR, $64
DATA ktShift04<>+0(SB)/8, $0x0000000000000000
DATA ktShift04<>+8(SB)/8, $0x0000000000000000
DATA ktShift04<>+16(SB)/8, $0x0000000000000000
DATA ktShift04<>+24(SB)/8, $0x0000000000000000
DATA ktShift04<>+32(SB)/8, $0x0004000400040004
DATA ktShift04<>+40(SB)/8, $0x0004000400040004
DATA ktShift04<>+48(SB)/8, $0x0004000400040004
DATA ktShift04<>+56(SB)/8, $0x0004000400040004
GLOBL ktShift04<>(SB), RODATA|NOPTR, $64

#define TILE_CONSTS \
	VMOVDQU64     ktScIdx<>+0(SB), Z26 \
	VMOVDQU64     ktScIdx<>+64(SB), Z27 \
	VMOVDQU64     ktScIdx<>+128(SB), Z28 \
	VMOVDQU64     ktScIdx<>+192(SB), Z29 \
	VMOVDQU64     ktMnIdx<>(SB), Z25 \
	VMOVDQU64     ktShift04<>(SB), Z30 \
	MOVL          $0x0f0f0f0f, DX \
	VPBROADCASTD  DX, Z31 \
	MOVQ          accum+64(FP), DX \
	KMOVW         DX, K3

// Q4K_SCALES: the 6-bit scales and mins of the super-block at AX into Z20-Z23 (one dword per
// lane, as the chunks need them) and Y24 (min pairs), d and dmin into Z2 and Z3.
#define Q4K_SCALES \
	MOVL         4(AX), DX \
	MOVL         8(AX), R8 \
	MOVL         12(AX), R9 \
	MOVL         DX, R10 \
	ANDL         $0x3f3f3f3f, R10 \
	SHRL         $6, DX \
	ANDL         $0x03030303, DX \
	SHLL         $4, DX \
	MOVL         R9, R13 \
	ANDL         $0x0f0f0f0f, R13 \
	ORL          R13, DX \
	SHLQ         $32, DX \
	ORQ          R10, DX \
	MOVL         R8, R10 \
	ANDL         $0x3f3f3f3f, R10 \
	SHRL         $6, R8 \
	ANDL         $0x03030303, R8 \
	SHLL         $4, R8 \
	SHRL         $4, R9 \
	ANDL         $0x0f0f0f0f, R9 \
	ORL          R9, R8 \
	SHLQ         $32, R8 \
	ORQ          R10, R8 \
	VMOVQ        DX, X0 \
	VPINSRQ      $1, R8, X0, X0 \
	VSHUFI64X2   $0, Z0, Z0, Z0 \
	VPSHUFB      Z26, Z0, Z20 \
	VPSHUFB      Z27, Z0, Z21 \
	VPSHUFB      Z28, Z0, Z22 \
	VPSHUFB      Z29, Z0, Z23 \
	VPSHUFB      Y25, Y0, Y24 \
	MOVL         0(AX), DX \
	VMOVD        DX, X1 \
	VCVTPH2PS    X1, X1 \
	VBROADCASTSS X1, Z2 \
	VMOVSHDUP    X1, X1 \
	VBROADCASTSS X1, Z3

// Q4K_CODES: the 256 4-bit codes of the super-block at AX into Z4-Z7.
#define Q4K_CODES \
	VBROADCASTI64X4 16(AX), Z4 \
	VBROADCASTI64X4 48(AX), Z5 \
	VBROADCASTI64X4 80(AX), Z6 \
	VBROADCASTI64X4 112(AX), Z7 \
	VPSRLVW         Z30, Z4, Z4 \
	VPSRLVW         Z30, Z5, Z5 \
	VPSRLVW         Z30, Z6, Z6 \
	VPSRLVW         Z30, Z7, Z7 \
	VPANDD          Z31, Z4, Z4 \
	VPANDD          Z31, Z5, Z5 \
	VPANDD          Z31, Z6, Z6 \
	VPANDD          Z31, Z7, Z7

// KCOL(yb, acc): one activation row's Q8_K block at yb against the unpacked super-block:
// acc += d·dy·Σ scale·sums − dmin·dy·Σ min·bsums (per lane).
#define KCOL(yb, acc) \
	VPXORD       Z8, Z8, Z8 \
	VPXORD       Z9, Z9, Z9 \
	VPXORD       Z10, Z10, Z10 \
	VPXORD       Z11, Z11, Z11 \
	VPDPBUSD     4 yb, Z4, Z8 \
	VPDPBUSD     68 yb, Z5, Z9 \
	VPDPBUSD     132 yb, Z6, Z10 \
	VPDPBUSD     196 yb, Z7, Z11 \
	VPXORD       Z12, Z12, Z12 \
	VPXORD       Y13, Y13, Y13 \
	VPDPWSSD     Z20, Z8, Z12 \
	VPDPWSSD     Z21, Z9, Z12 \
	VPDPWSSD     Z22, Z10, Z12 \
	VPDPWSSD     Z23, Z11, Z12 \
	VPDPWSSD     260 yb, Y24, Y13 \
	VCVTDQ2PS    Z12, Z12 \
	VCVTDQ2PS    Y13, Y13 \
	VMULPS.BCST  0 yb, Z2, Z14 \
	VMULPS.BCST  0 yb, Z3, Z15 \
	VFMADD231PS  Z14, Z12, acc \
	VFNMADD231PS Z15, Z13, acc

// STORE(acc, yacc, dst): dst = Σ lanes of acc (+ dst when K3 is set).
#define STORE(acc, yacc, dst) \
	VEXTRACTF32X8 $1, acc, Y14 \
	VADDPS        Y14, yacc, Y14 \
	VEXTRACTF128  $1, Y14, X15 \
	VADDPS        X15, X14, X14 \
	VPERMILPS     $0x4e, X14, X15 \
	VADDPS        X15, X14, X14 \
	VPERMILPS     $0xb1, X14, X15 \
	VADDPS        X15, X14, X14 \
	VMOVSS.Z      dst, K3, X15 \
	VADDSS        X15, X14, X14 \
	VMOVSS        X14, dst

// func q4kTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q4kTile1VNNI(SB), NOSPLIT, $0-72
	TILE_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
q4k1_row:
	VPXORD Z16, Z16, Z16
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
q4k1_sb:
	PREFETCHT0 KTPFD(AX)
	PREFETCHT0 KTPFD+64(AX)
	PREFETCHT0 KTPFD+128(AX)
	Q4K_SCALES
	Q4K_CODES
	KCOL((BX), Z16)
	ADDQ   $144, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    q4k1_sb
	STORE(Z16, Y16, (DI))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    q4k1_row
	VZEROUPPER
	RET

// func q4kTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q4kTile4VNNI(SB), NOSPLIT, $0-72
	TILE_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
q4k4_row:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
q4k4_sb:
	Q4K_SCALES
	Q4K_CODES
	KCOL((BX), Z16)
	KCOL((BX)(R11*1), Z17)
	KCOL((BX)(R11*2), Z18)
	KCOL((BX)(R12*1), Z19)
	ADDQ   $144, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    q4k4_sb
	MOVQ   ldc+56(FP), R8
	SHLQ   $2, R8
	LEAQ   (DI)(R8*2), R9
	STORE(Z16, Y16, (DI))
	STORE(Z17, Y17, (DI)(R8*1))
	STORE(Z18, Y18, (R9))
	STORE(Z19, Y19, (R9)(R8*1))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    q4k4_row
	VZEROUPPER
	RET
DATA ktQ6Idx<>+0(SB)/8, $0x0000000000000000
DATA ktQ6Idx<>+8(SB)/8, $0x0000000000000000
DATA ktQ6Idx<>+16(SB)/8, $0x0000000100000001
DATA ktQ6Idx<>+24(SB)/8, $0x0000000100000001
DATA ktQ6Idx<>+32(SB)/8, $0x0000000200000002
DATA ktQ6Idx<>+40(SB)/8, $0x0000000200000002
DATA ktQ6Idx<>+48(SB)/8, $0x0000000300000003
DATA ktQ6Idx<>+56(SB)/8, $0x0000000300000003
DATA ktQ6Idx<>+64(SB)/8, $0x0000000400000004
DATA ktQ6Idx<>+72(SB)/8, $0x0000000400000004
DATA ktQ6Idx<>+80(SB)/8, $0x0000000500000005
DATA ktQ6Idx<>+88(SB)/8, $0x0000000500000005
DATA ktQ6Idx<>+96(SB)/8, $0x0000000600000006
DATA ktQ6Idx<>+104(SB)/8, $0x0000000600000006
DATA ktQ6Idx<>+112(SB)/8, $0x0000000700000007
DATA ktQ6Idx<>+120(SB)/8, $0x0000000700000007
DATA ktQ6Idx<>+128(SB)/8, $0x0000000800000008
DATA ktQ6Idx<>+136(SB)/8, $0x0000000800000008
DATA ktQ6Idx<>+144(SB)/8, $0x0000000900000009
DATA ktQ6Idx<>+152(SB)/8, $0x0000000900000009
DATA ktQ6Idx<>+160(SB)/8, $0x0000000a0000000a
DATA ktQ6Idx<>+168(SB)/8, $0x0000000a0000000a
DATA ktQ6Idx<>+176(SB)/8, $0x0000000b0000000b
DATA ktQ6Idx<>+184(SB)/8, $0x0000000b0000000b
DATA ktQ6Idx<>+192(SB)/8, $0x0000000c0000000c
DATA ktQ6Idx<>+200(SB)/8, $0x0000000c0000000c
DATA ktQ6Idx<>+208(SB)/8, $0x0000000d0000000d
DATA ktQ6Idx<>+216(SB)/8, $0x0000000d0000000d
DATA ktQ6Idx<>+224(SB)/8, $0x0000000e0000000e
DATA ktQ6Idx<>+232(SB)/8, $0x0000000e0000000e
DATA ktQ6Idx<>+240(SB)/8, $0x0000000f0000000f
DATA ktQ6Idx<>+248(SB)/8, $0x0000000f0000000f
GLOBL ktQ6Idx<>(SB), RODATA|NOPTR, $256
DATA ktShl42<>+0(SB)/8, $0x0004000400040004
DATA ktShl42<>+8(SB)/8, $0x0004000400040004
DATA ktShl42<>+16(SB)/8, $0x0004000400040004
DATA ktShl42<>+24(SB)/8, $0x0004000400040004
DATA ktShl42<>+32(SB)/8, $0x0002000200020002
DATA ktShl42<>+40(SB)/8, $0x0002000200020002
DATA ktShl42<>+48(SB)/8, $0x0002000200020002
DATA ktShl42<>+56(SB)/8, $0x0002000200020002
GLOBL ktShl42<>(SB), RODATA|NOPTR, $64
DATA ktShr02<>+0(SB)/8, $0x0000000000000000
DATA ktShr02<>+8(SB)/8, $0x0000000000000000
DATA ktShr02<>+16(SB)/8, $0x0000000000000000
DATA ktShr02<>+24(SB)/8, $0x0000000000000000
DATA ktShr02<>+32(SB)/8, $0x0002000200020002
DATA ktShr02<>+40(SB)/8, $0x0002000200020002
DATA ktShr02<>+48(SB)/8, $0x0002000200020002
DATA ktShr02<>+56(SB)/8, $0x0002000200020002
GLOBL ktShr02<>(SB), RODATA|NOPTR, $64

#define TILE6_CONSTS \
	VMOVDQU64    ktQ6Idx<>+0(SB), Z26 \
	VMOVDQU64    ktQ6Idx<>+64(SB), Z27 \
	VMOVDQU64    ktQ6Idx<>+128(SB), Z28 \
	VMOVDQU64    ktQ6Idx<>+192(SB), Z29 \
	VMOVDQU64    ktShl42<>(SB), Z25 \
	VMOVDQU64    ktShr02<>(SB), Z24 \
	MOVL         $0x30303030, DX \
	VPBROADCASTD DX, Z30 \
	MOVL         $0x0f0f0f0f, DX \
	VPBROADCASTD DX, Z31 \
	MOVL         $0x55555555, DX \
	KMOVD        DX, K1 \
	MOVQ         accum+64(FP), DX \
	KMOVW        DX, K3

// Q6K_SCALES: the 16 signed scales of the super-block at AX as words in Y0 and as one word per
// dword (high word zero) in Z20-Z23 as the chunks need them; d into Z2.
#define Q6K_SCALES \
	VPMOVSXBW    192(AX), Y0 \
	VPERMW.Z     Z0, Z26, K1, Z20 \
	VPERMW.Z     Z0, Z27, K1, Z21 \
	VPERMW.Z     Z0, Z28, K1, Z22 \
	VPERMW.Z     Z0, Z29, K1, Z23 \
	MOVWLZX      208(AX), DX \
	VMOVD        DX, X1 \
	VCVTPH2PS    X1, X1 \
	VBROADCASTSS X1, Z2

// Q6K_HALF(qlo, qho, za, zb): the 128 6-bit codes of half h (ql at qlo, qh at qho) into za
// (elements 0-63 of the half) and zb (64-127).
#define Q6K_HALF(qlo, qho, za, zb) \
	VMOVDQU64       qlo(AX), Z8 \
	VBROADCASTI64X4 qho(AX), Z9 \
	VPSLLVW         Z25, Z9, za \
	VPANDD          Z30, za, za \
	VPTERNLOGD      $0xf8, Z31, Z8, za \
	VPSRLVW         Z24, Z9, zb \
	VPANDD          Z30, zb, zb \
	VPSRLW          $4, Z8, Z8 \
	VPTERNLOGD      $0xf8, Z31, Z8, zb

// KCOL6(yb, acc): acc += d·dy·(Σ scale·sums − 32·Σ scale·bsums) (per lane).
#define KCOL6(yb, acc) \
	VPXORD      Z8, Z8, Z8 \
	VPXORD      Z9, Z9, Z9 \
	VPXORD      Z10, Z10, Z10 \
	VPXORD      Z11, Z11, Z11 \
	VPDPBUSD    4 yb, Z4, Z8 \
	VPDPBUSD    68 yb, Z5, Z9 \
	VPDPBUSD    132 yb, Z6, Z10 \
	VPDPBUSD    196 yb, Z7, Z11 \
	VPXORD      Z12, Z12, Z12 \
	VPXORD      Y13, Y13, Y13 \
	VPDPWSSD    Z20, Z8, Z12 \
	VPDPWSSD    Z21, Z9, Z12 \
	VPDPWSSD    Z22, Z10, Z12 \
	VPDPWSSD    Z23, Z11, Z12 \
	VPDPWSSD    260 yb, Y0, Y13 \
	VPSLLD      $5, Z13, Z13 \
	VPSUBD      Z13, Z12, Z12 \
	VCVTDQ2PS   Z12, Z12 \
	VMULPS.BCST 0 yb, Z2, Z14 \
	VFMADD231PS Z14, Z12, acc

#define Q6K_SB \
	Q6K_SCALES \
	Q6K_HALF(0, 128, Z4, Z5) \
	Q6K_HALF(64, 160, Z6, Z7)

// func q6kTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q6kTile1VNNI(SB), NOSPLIT, $0-72
	TILE6_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
q6k1_row:
	VPXORD Z16, Z16, Z16
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
q6k1_sb:
	PREFETCHT0 KTPFD(AX)
	PREFETCHT0 KTPFD+64(AX)
	PREFETCHT0 KTPFD+128(AX)
	PREFETCHT0 KTPFD+192(AX)
	Q6K_SB
	KCOL6((BX), Z16)
	ADDQ   $210, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    q6k1_sb
	STORE(Z16, Y16, (DI))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    q6k1_row
	VZEROUPPER
	RET

// func q6kTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q6kTile4VNNI(SB), NOSPLIT, $0-72
	TILE6_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
q6k4_row:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
q6k4_sb:
	Q6K_SB
	KCOL6((BX), Z16)
	KCOL6((BX)(R11*1), Z17)
	KCOL6((BX)(R11*2), Z18)
	KCOL6((BX)(R12*1), Z19)
	ADDQ   $210, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    q6k4_sb
	MOVQ   ldc+56(FP), R8
	SHLQ   $2, R8
	LEAQ   (DI)(R8*2), R9
	STORE(Z16, Y16, (DI))
	STORE(Z17, Y17, (DI)(R8*1))
	STORE(Z18, Y18, (R9))
	STORE(Z19, Y19, (R9)(R8*1))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    q6k4_row
	VZEROUPPER
	RET

DATA ktQ5Bit<>+0(SB)/8, $0x0101010101010101
DATA ktQ5Bit<>+8(SB)/8, $0x0101010101010101
DATA ktQ5Bit<>+16(SB)/8, $0x0101010101010101
DATA ktQ5Bit<>+24(SB)/8, $0x0101010101010101
DATA ktQ5Bit<>+32(SB)/8, $0x0202020202020202
DATA ktQ5Bit<>+40(SB)/8, $0x0202020202020202
DATA ktQ5Bit<>+48(SB)/8, $0x0202020202020202
DATA ktQ5Bit<>+56(SB)/8, $0x0202020202020202
DATA ktQ5Bit<>+64(SB)/8, $0x0404040404040404
DATA ktQ5Bit<>+72(SB)/8, $0x0404040404040404
DATA ktQ5Bit<>+80(SB)/8, $0x0404040404040404
DATA ktQ5Bit<>+88(SB)/8, $0x0404040404040404
DATA ktQ5Bit<>+96(SB)/8, $0x0808080808080808
DATA ktQ5Bit<>+104(SB)/8, $0x0808080808080808
DATA ktQ5Bit<>+112(SB)/8, $0x0808080808080808
DATA ktQ5Bit<>+120(SB)/8, $0x0808080808080808
DATA ktQ5Bit<>+128(SB)/8, $0x1010101010101010
DATA ktQ5Bit<>+136(SB)/8, $0x1010101010101010
DATA ktQ5Bit<>+144(SB)/8, $0x1010101010101010
DATA ktQ5Bit<>+152(SB)/8, $0x1010101010101010
DATA ktQ5Bit<>+160(SB)/8, $0x2020202020202020
DATA ktQ5Bit<>+168(SB)/8, $0x2020202020202020
DATA ktQ5Bit<>+176(SB)/8, $0x2020202020202020
DATA ktQ5Bit<>+184(SB)/8, $0x2020202020202020
DATA ktQ5Bit<>+192(SB)/8, $0x4040404040404040
DATA ktQ5Bit<>+200(SB)/8, $0x4040404040404040
DATA ktQ5Bit<>+208(SB)/8, $0x4040404040404040
DATA ktQ5Bit<>+216(SB)/8, $0x4040404040404040
DATA ktQ5Bit<>+224(SB)/8, $0x8080808080808080
DATA ktQ5Bit<>+232(SB)/8, $0x8080808080808080
DATA ktQ5Bit<>+240(SB)/8, $0x8080808080808080
DATA ktQ5Bit<>+248(SB)/8, $0x8080808080808080
GLOBL ktQ5Bit<>(SB), RODATA|NOPTR, $256
DATA ktSixteen<>+0(SB)/8, $0x1010101010101010
DATA ktSixteen<>+8(SB)/8, $0x1010101010101010
DATA ktSixteen<>+16(SB)/8, $0x1010101010101010
DATA ktSixteen<>+24(SB)/8, $0x1010101010101010
DATA ktSixteen<>+32(SB)/8, $0x1010101010101010
DATA ktSixteen<>+40(SB)/8, $0x1010101010101010
DATA ktSixteen<>+48(SB)/8, $0x1010101010101010
DATA ktSixteen<>+56(SB)/8, $0x1010101010101010
GLOBL ktSixteen<>(SB), RODATA|NOPTR, $64

// Q5K_CODES: the 256 5-bit codes of the Q5_K super-block at AX into Z4-Z7 (the nibbles as for
// Q4_K, plus 16 where the element's bit of qh is set).
#define Q5K_CODES \
	VBROADCASTI64X4 48(AX), Z4 \
	VBROADCASTI64X4 80(AX), Z5 \
	VBROADCASTI64X4 112(AX), Z6 \
	VBROADCASTI64X4 144(AX), Z7 \
	VBROADCASTI64X4 16(AX), Z9 \
	VPSRLVW         Z30, Z4, Z4 \
	VPSRLVW         Z30, Z5, Z5 \
	VPSRLVW         Z30, Z6, Z6 \
	VPSRLVW         Z30, Z7, Z7 \
	VPANDD          Z31, Z4, Z4 \
	VPANDD          Z31, Z5, Z5 \
	VPANDD          Z31, Z6, Z6 \
	VPANDD          Z31, Z7, Z7 \
	VPTESTMB        ktQ5Bit<>+0(SB), Z9, K2 \
	VPADDB          ktSixteen<>(SB), Z4, K2, Z4 \
	VPTESTMB        ktQ5Bit<>+64(SB), Z9, K2 \
	VPADDB          ktSixteen<>(SB), Z5, K2, Z5 \
	VPTESTMB        ktQ5Bit<>+128(SB), Z9, K2 \
	VPADDB          ktSixteen<>(SB), Z6, K2, Z6 \
	VPTESTMB        ktQ5Bit<>+192(SB), Z9, K2 \
	VPADDB          ktSixteen<>(SB), Z7, K2, Z7

// func q5kTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q5kTile1VNNI(SB), NOSPLIT, $0-72
	TILE_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
q5k1_row:
	VPXORD Z16, Z16, Z16
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
q5k1_sb:
	PREFETCHT0 KTPFD(AX)
	PREFETCHT0 KTPFD+64(AX)
	PREFETCHT0 KTPFD+128(AX)
	Q4K_SCALES
	Q5K_CODES
	KCOL((BX), Z16)
	ADDQ   $176, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    q5k1_sb
	STORE(Z16, Y16, (DI))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    q5k1_row
	VZEROUPPER
	RET

// func q5kTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q5kTile4VNNI(SB), NOSPLIT, $0-72
	TILE_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
q5k4_row:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
q5k4_sb:
	Q4K_SCALES
	Q5K_CODES
	KCOL((BX), Z16)
	KCOL((BX)(R11*1), Z17)
	KCOL((BX)(R11*2), Z18)
	KCOL((BX)(R12*1), Z19)
	ADDQ   $176, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    q5k4_sb
	MOVQ   ldc+56(FP), R8
	SHLQ   $2, R8
	LEAQ   (DI)(R8*2), R9
	STORE(Z16, Y16, (DI))
	STORE(Z17, Y17, (DI)(R8*1))
	STORE(Z18, Y18, (R9))
	STORE(Z19, Y19, (R9)(R8*1))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    q5k4_row
	VZEROUPPER
	RET
