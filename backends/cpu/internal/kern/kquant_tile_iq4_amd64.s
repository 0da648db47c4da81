//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels of the IQ4 dots, AVX-512 VNNI + VBMI (kquant_tile.go; structure and arguments
// as in kquant_tile_amd64.s): IQ4_XS against Q8_K, IQ4_NL against Q8_0. Both map the 4-bit
// codes through the IQ4 table with VPERMB.

DATA iqTabU<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA iqTabU<>+8(SB)/8, $0xf1d9c5b5a6998d81
GLOBL iqTabU<>(SB), RODATA|NOPTR, $16
DATA iqTabS<>+0(SB)/8, $0xf6eaddcfbfad9881
DATA iqTabS<>+8(SB)/8, $0x7159453526190d01
GLOBL iqTabS<>(SB), RODATA|NOPTR, $16
DATA iqShift0404<>+0(SB)/8, $0x0000000000000000
DATA iqShift0404<>+8(SB)/8, $0x0000000000000000
DATA iqShift0404<>+16(SB)/8, $0x0004000400040004
DATA iqShift0404<>+24(SB)/8, $0x0004000400040004
DATA iqShift0404<>+32(SB)/8, $0x0000000000000000
DATA iqShift0404<>+40(SB)/8, $0x0000000000000000
DATA iqShift0404<>+48(SB)/8, $0x0004000400040004
DATA iqShift0404<>+56(SB)/8, $0x0004000400040004
GLOBL iqShift0404<>(SB), RODATA|NOPTR, $64
DATA iqPermD<>+0(SB)/8, $0x0000000000000000
DATA iqPermD<>+8(SB)/8, $0x0000000000000000
DATA iqPermD<>+16(SB)/8, $0x0000000000000000
DATA iqPermD<>+24(SB)/8, $0x0000000000000000
DATA iqPermD<>+32(SB)/8, $0x0000000100000001
DATA iqPermD<>+40(SB)/8, $0x0000000100000001
DATA iqPermD<>+48(SB)/8, $0x0000000100000001
DATA iqPermD<>+56(SB)/8, $0x0000000100000001
DATA iqPermD<>+64(SB)/8, $0x0000000200000002
DATA iqPermD<>+72(SB)/8, $0x0000000200000002
DATA iqPermD<>+80(SB)/8, $0x0000000200000002
DATA iqPermD<>+88(SB)/8, $0x0000000200000002
DATA iqPermD<>+96(SB)/8, $0x0000000300000003
DATA iqPermD<>+104(SB)/8, $0x0000000300000003
DATA iqPermD<>+112(SB)/8, $0x0000000300000003
DATA iqPermD<>+120(SB)/8, $0x0000000300000003
DATA iqPermD<>+128(SB)/8, $0x0000000400000004
DATA iqPermD<>+136(SB)/8, $0x0000000400000004
DATA iqPermD<>+144(SB)/8, $0x0000000400000004
DATA iqPermD<>+152(SB)/8, $0x0000000400000004
DATA iqPermD<>+160(SB)/8, $0x0000000500000005
DATA iqPermD<>+168(SB)/8, $0x0000000500000005
DATA iqPermD<>+176(SB)/8, $0x0000000500000005
DATA iqPermD<>+184(SB)/8, $0x0000000500000005
DATA iqPermD<>+192(SB)/8, $0x0000000600000006
DATA iqPermD<>+200(SB)/8, $0x0000000600000006
DATA iqPermD<>+208(SB)/8, $0x0000000600000006
DATA iqPermD<>+216(SB)/8, $0x0000000600000006
DATA iqPermD<>+224(SB)/8, $0x0000000700000007
DATA iqPermD<>+232(SB)/8, $0x0000000700000007
DATA iqPermD<>+240(SB)/8, $0x0000000700000007
DATA iqPermD<>+248(SB)/8, $0x0000000700000007
GLOBL iqPermD<>(SB), RODATA|NOPTR, $256
DATA iqPairW<>+0(SB)/8, $0x0002000200000000
DATA iqPairW<>+8(SB)/8, $0x0006000600040004
DATA iqPairW<>+16(SB)/8, $0x000a000a00080008
DATA iqPairW<>+24(SB)/8, $0x000e000e000c000c
DATA iqPairW<>+32(SB)/8, $0x0000000000000000
DATA iqPairW<>+40(SB)/8, $0x0000000000000000
DATA iqPairW<>+48(SB)/8, $0x0000000000000000
DATA iqPairW<>+56(SB)/8, $0x0000000000000000
GLOBL iqPairW<>(SB), RODATA|NOPTR, $64
DATA iqIdxDx<>+0(SB)/8, $0x001b001200090000
DATA iqIdxDx<>+8(SB)/8, $0x003f0036002d0024
DATA iqIdxDx<>+16(SB)/8, $0x0000000000000000
DATA iqIdxDx<>+24(SB)/8, $0x0000000000000000
DATA iqIdxDx<>+32(SB)/8, $0x0000000000000000
DATA iqIdxDx<>+40(SB)/8, $0x0000000000000000
DATA iqIdxDx<>+48(SB)/8, $0x0000000000000000
DATA iqIdxDx<>+56(SB)/8, $0x0000000000000000
GLOBL iqIdxDx<>(SB), RODATA|NOPTR, $64
DATA iqArrX<>+0(SB)/8, $0x0706050403020100
DATA iqArrX<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA iqArrX<>+16(SB)/8, $0x0706050403020100
DATA iqArrX<>+24(SB)/8, $0x0f0e0d0c0b0a0908
DATA iqArrX<>+32(SB)/8, $0x1716151413121110
DATA iqArrX<>+40(SB)/8, $0x1f1e1d1c1b1a1918
DATA iqArrX<>+48(SB)/8, $0x1716151413121110
DATA iqArrX<>+56(SB)/8, $0x1f1e1d1c1b1a1918
GLOBL iqArrX<>(SB), RODATA|NOPTR, $64
DATA iqArr012<>+0(SB)/8, $0x0706050403020100
DATA iqArr012<>+8(SB)/8, $0x0f0e0d0c0b0a0908
DATA iqArr012<>+16(SB)/8, $0x0706050403020100
DATA iqArr012<>+24(SB)/8, $0x0f0e0d0c0b0a0908
DATA iqArr012<>+32(SB)/8, $0x1918171615141312
DATA iqArr012<>+40(SB)/8, $0x21201f1e1d1c1b1a
DATA iqArr012<>+48(SB)/8, $0x1918171615141312
DATA iqArr012<>+56(SB)/8, $0x21201f1e1d1c1b1a
GLOBL iqArr012<>(SB), RODATA|NOPTR, $64
DATA iqArr3<>+0(SB)/8, $0x2524232221201f1e
DATA iqArr3<>+8(SB)/8, $0x2d2c2b2a29282726
DATA iqArr3<>+16(SB)/8, $0x2524232221201f1e
DATA iqArr3<>+24(SB)/8, $0x2d2c2b2a29282726
DATA iqArr3<>+32(SB)/8, $0x3736353433323130
DATA iqArr3<>+40(SB)/8, $0x3f3e3d3c3b3a3938
DATA iqArr3<>+48(SB)/8, $0x3736353433323130
DATA iqArr3<>+56(SB)/8, $0x3f3e3d3c3b3a3938
GLOBL iqArr3<>(SB), RODATA|NOPTR, $64
DATA iqArrL0<>+0(SB)/8, $0x0908070605040302
DATA iqArrL0<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA iqArrL0<>+16(SB)/8, $0x0908070605040302
DATA iqArrL0<>+24(SB)/8, $0x11100f0e0d0c0b0a
DATA iqArrL0<>+32(SB)/8, $0x1b1a191817161514
DATA iqArrL0<>+40(SB)/8, $0x232221201f1e1d1c
DATA iqArrL0<>+48(SB)/8, $0x1b1a191817161514
DATA iqArrL0<>+56(SB)/8, $0x232221201f1e1d1c
GLOBL iqArrL0<>(SB), RODATA|NOPTR, $64
DATA iqArrL1<>+0(SB)/8, $0x2d2c2b2a29282726
DATA iqArrL1<>+8(SB)/8, $0x3534333231302f2e
DATA iqArrL1<>+16(SB)/8, $0x2d2c2b2a29282726
DATA iqArrL1<>+24(SB)/8, $0x3534333231302f2e
DATA iqArrL1<>+32(SB)/8, $0x3f3e3d3c3b3a3938
DATA iqArrL1<>+40(SB)/8, $0x4746454443424140
DATA iqArrL1<>+48(SB)/8, $0x3f3e3d3c3b3a3938
DATA iqArrL1<>+56(SB)/8, $0x4746454443424140
GLOBL iqArrL1<>(SB), RODATA|NOPTR, $64
DATA iqArrL2<>+0(SB)/8, $0x11100f0e0d0c0b0a
DATA iqArrL2<>+8(SB)/8, $0x1918171615141312
DATA iqArrL2<>+16(SB)/8, $0x11100f0e0d0c0b0a
DATA iqArrL2<>+24(SB)/8, $0x1918171615141312
DATA iqArrL2<>+32(SB)/8, $0x232221201f1e1d1c
DATA iqArrL2<>+40(SB)/8, $0x2b2a292827262524
DATA iqArrL2<>+48(SB)/8, $0x232221201f1e1d1c
DATA iqArrL2<>+56(SB)/8, $0x2b2a292827262524
GLOBL iqArrL2<>(SB), RODATA|NOPTR, $64
DATA iq32<>+0(SB)/8, $0x0000002000000020
GLOBL iq32<>(SB), RODATA|NOPTR, $8

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

// ---- IQ4_XS × Q8_K ----
//
// Codes map through the table kvalues+128 (unsigned, 1-241), so that VPDPBUSD gives per dword
// Σ (kv+128)·q8 (|sum| < 2^17: too wide for the 16-bit scale multiply of Q4_K, so VPMULLD
// scales the dwords by their sub-block's ls−32); 128·Σ scale·(bsum pair) removes the offset.
// Registers: Z0 scales (dwords), Z2 d, Z3 pair index, Z4-Z7 codes, Z8-Z14 temporaries,
// Z16-Z19 accumulators, Z20-Z23 scale dwords per chunk, Y24 scale pairs (words), Z25 shifts,
// Z26-Z29 chunk scale indices, Z30 table, Z31 code byte arrangement, R10/R13 PDEP masks, K3
// accum.

#define IQ4X_CONSTS \
	VBROADCASTI32X4 iqTabU<>(SB), Z30 \
	VMOVDQU64       iqShift0404<>(SB), Z25 \
	VMOVDQU64       iqPermD<>+0(SB), Z26 \
	VMOVDQU64       iqPermD<>+64(SB), Z27 \
	VMOVDQU64       iqPermD<>+128(SB), Z28 \
	VMOVDQU64       iqPermD<>+192(SB), Z29 \
	VMOVDQU64       iqPairW<>(SB), Z3 \
	VMOVDQU64       iqArrX<>(SB), Z31 \
	MOVQ            $0x0f0f0f0f0f0f0f0f, R10 \
	MOVQ            $0x3030303030303030, R13 \
	MOVQ            accum+64(FP), DX \
	KMOVW           DX, K3

// IQ4X_CODES(o, zc): the 64 codes of chunk c (sub-blocks 2c and 2c+1, 32 packed bytes at
// o(AX)) as kvalues+128 in element order: the bytes arranged to [lo 2c, hi 2c, lo 2c+1,
// hi 2c+1] by VPERMB, the nibble selected by the per-lane shift alone (the 64-entry VPERMB
// lookup, the table repeated four times, ignores bits 4-7).
#define IQ4X_CODES(o, zc) \
	VMOVDQU  o(AX), Y8 \
	VPERMB   Z8, Z31, zc \
	VPSRLVW  Z25, zc, zc \
	VPERMB   Z30, zc, zc

// IQ4X_SB: unpack the IQ4_XS super-block at AX: scales ls−32 (the low nibbles of scales_l
// spread to one byte per sub-block by PDEP, the high bit pairs of scales_h to bits 4-5),
// d, and the codes.
#define IQ4X_SB \
	MOVL         4(AX), DX \
	PDEPQ        R10, DX, DX \
	MOVWLZX      2(AX), R9 \
	PDEPQ        R13, R9, R9 \
	ORQ          R9, DX \
	VMOVQ        DX, X0 \
	VPMOVZXBD    X0, Z0 \
	VPSUBD.BCST  iq32<>(SB), Z0, Z0 \
	VPERMD       Z0, Z26, Z20 \
	VPERMD       Z0, Z27, Z21 \
	VPERMD       Z0, Z28, Z22 \
	VPERMD       Z0, Z29, Z23 \
	VPERMW       Z0, Z3, Z24 \
	MOVWLZX      0(AX), DX \
	VMOVD        DX, X1 \
	VCVTPH2PS    X1, X1 \
	VBROADCASTSS X1, Z2 \
	IQ4X_CODES(8, Z4) \
	IQ4X_CODES(40, Z5) \
	IQ4X_CODES(72, Z6) \
	IQ4X_CODES(104, Z7)

// KCOLX(yb, acc): acc += d·dy·(Σ scale·sums − 128·Σ scale·bsums) (per lane).
#define KCOLX(yb, acc) \
	VPXORD      Z8, Z8, Z8 \
	VPXORD      Z9, Z9, Z9 \
	VPXORD      Z10, Z10, Z10 \
	VPXORD      Z11, Z11, Z11 \
	VPDPBUSD    4 yb, Z4, Z8 \
	VPDPBUSD    68 yb, Z5, Z9 \
	VPDPBUSD    132 yb, Z6, Z10 \
	VPDPBUSD    196 yb, Z7, Z11 \
	VPMULLD     Z20, Z8, Z8 \
	VPMULLD     Z21, Z9, Z9 \
	VPMULLD     Z22, Z10, Z10 \
	VPMULLD     Z23, Z11, Z11 \
	VPADDD      Z9, Z8, Z8 \
	VPADDD      Z11, Z10, Z10 \
	VPADDD      Z10, Z8, Z12 \
	VPXORD      Y13, Y13, Y13 \
	VPDPWSSD    260 yb, Y24, Y13 \
	VPSLLD      $7, Z13, Z13 \
	VPSUBD      Z13, Z12, Z12 \
	VCVTDQ2PS   Z12, Z12 \
	VMULPS.BCST 0 yb, Z2, Z14 \
	VFMADD231PS Z14, Z12, acc

// func iq4xsTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4xsTile1VNNI(SB), NOSPLIT, $0-72
	IQ4X_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
iqx1_row:
	VPXORD Z16, Z16, Z16
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
iqx1_sb:
	IQ4X_SB
	KCOLX((BX), Z16)
	ADDQ   $136, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    iqx1_sb
	STORE(Z16, Y16, (DI))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    iqx1_row
	VZEROUPPER
	RET

// func iq4xsTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4xsTile4VNNI(SB), NOSPLIT, $0-72
	IQ4X_CONSTS
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
iqx4_row:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	MOVQ   nb+0(FP), CX
iqx4_sb:
	IQ4X_SB
	KCOLX((BX), Z16)
	KCOLX((BX)(R11*1), Z17)
	KCOLX((BX)(R11*2), Z18)
	KCOLX((BX)(R12*1), Z19)
	ADDQ   $136, AX
	ADDQ   $292, BX
	DECQ   CX
	JNZ    iqx4_sb
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
	JNZ    iqx4_row
	VZEROUPPER
	RET

// ---- IQ4_NL × Q8_0 ----
//
// Eight blocks (256 elements) per step, chunk c = blocks 2c and 2c+1. Q8_0 has no block sums,
// so the offset goes to the activations instead: the codes map to signed kvalues, the
// activations + 128 (unsigned) multiply them, and −128·Σ kv per dword, a property of the
// weights alone, starts each sum. Per dword the exact sum of 4 products is converted to float
// and scaled by dx·dy of its block.
// Registers: Z4-Z7 codes, Z21/Z31/Z14/Z15 offsets of chunks 0-3, Z8-Z11 temporaries,
// Z16-Z19 and Z0-Z3 accumulators (even and odd chunks), Y20 the eight dx, Z22/Z23 code byte
// arrangements, Z24 table, Z25 shifts, Z26 word index of the dx, Z27/Z29/Z12/Z13 lane
// indices of chunks 0-3, Z28 zero, Z30 0x80 bytes, K3 accum.

#define IQ4N_CONSTS \
	IQ4N_CONSTS0 \
	MOVQ            accum+64(FP), DX \
	KMOVW           DX, K3

#define IQ4N_CONSTS0 \
	VBROADCASTI32X4 iqTabS<>(SB), Z24 \
	VMOVDQU64       iqShift0404<>(SB), Z25 \
	VMOVDQU64       iqIdxDx<>(SB), Z26 \
	VMOVDQU64       iqPermD<>+0(SB), Z27 \
	VMOVDQU64       iqPermD<>+64(SB), Z29 \
	VMOVDQU64       iqPermD<>+128(SB), Z12 \
	VMOVDQU64       iqPermD<>+192(SB), Z13 \
	VPXORD          Z28, Z28, Z28 \
	MOVL            $0x80808080, DX \
	VPBROADCASTD    DX, Z30 \
	VMOVDQU64       iqArr012<>(SB), Z22 \
	VMOVDQU64       iqArr3<>(SB), Z23

// IQ4N_CHUNK(o, zarr, zc, zneg): the codes of chunk c (blocks 2c and 2c+1, from the 64 bytes
// at o(AX) rearranged by zarr to [quants 2c, quants 2c, quants 2c+1, quants 2c+1]) as signed
// kvalues into zc, and −128·Σ kv per dword into zneg. The nibble of each byte is selected by
// the per-lane shift alone: the 64-entry VPERMB lookup (the table repeated four times) ignores
// bits 4-7.
#define IQ4N_CHUNK(o, zarr, zc, zneg) \
	VMOVDQU64 o(AX), zc \
	VPERMB    zc, zarr, zc \
	VPSRLVW   Z25, zc, zc \
	VPERMB    Z24, zc, zc \
	VPXORD    zneg, zneg, zneg \
	VPDPBUSD  zc, Z30, zneg \
	VPSUBD    zneg, Z28, zneg

// IQ4N_SB: the eight IQ4_NL blocks at AX: their scales (gathered from two 64-byte windows by
// one word permute) as floats into Y20, the codes into Z4-Z7, the offsets into Z21, Z31, Z14,
// Z15. The windows of the codes stay inside the 144 bytes (chunk 3's starts 30 bytes early).
#define IQ4N_SB \
	VMOVDQU64 0(AX), Z8 \
	VPERMT2W  64(AX), Z26, Z8 \
	VCVTPH2PS X8, Y20 \
	IQ4N_CHUNK(2, Z22, Z4, Z21) \
	IQ4N_CHUNK(38, Z22, Z5, Z31) \
	IQ4N_CHUNK(74, Z22, Z6, Z14) \
	IQ4N_CHUNK(80, Z23, Z7, Z15)

// KNL(q0, q1, yb, zc, zidx, zneg, acc): chunk c of the Q8_0 blocks at yb (quants of block 2c
// at q0, of 2c+1 at q1), Y9 = dx·dy of the eight blocks: the activations + 128 (XOR 0x80:
// unsigned, exact for every byte) against the signed kvalues, from −128·Σ kv, give the exact
// Σ kv·q8 per dword; acc += dx·dy·that per lane.
#define KNL(q0, q1, yb, zc, zidx, zneg, acc) \
	VPERMPS      Z9, zidx, Z8 \
	VMOVDQU      q0 yb, Y10 \
	VINSERTI64X4 $1, q1 yb, Z10, Z10 \
	VPXORD       Z30, Z10, Z10 \
	VMOVDQA64    zneg, Z11 \
	VPDPBUSD     zc, Z10, Z11 \
	VCVTDQ2PS    Z11, Z11 \
	VFMADD231PS  Z8, Z11, acc

// DYQ8(yb): the scales of the eight Q8_0 blocks at yb (gathered as words in general
// registers) as floats into Y9.
#define DYQ8(yb) \
	MOVWQZX   0 yb, DX \
	MOVWQZX   34 yb, R9 \
	SHLQ      $16, R9 \
	ORQ       R9, DX \
	MOVWQZX   68 yb, R9 \
	SHLQ      $32, R9 \
	ORQ       R9, DX \
	MOVWQZX   102 yb, R9 \
	SHLQ      $48, R9 \
	ORQ       R9, DX \
	VMOVQ     DX, X9 \
	MOVWQZX   136 yb, DX \
	MOVWQZX   170 yb, R9 \
	SHLQ      $16, R9 \
	ORQ       R9, DX \
	MOVWQZX   204 yb, R9 \
	SHLQ      $32, R9 \
	ORQ       R9, DX \
	MOVWQZX   238 yb, R9 \
	SHLQ      $48, R9 \
	ORQ       R9, DX \
	VPINSRQ   $1, DX, X9, X9 \
	VCVTPH2PS X9, Y9

// KCOLQ(yb, acc, acc2): the four chunks of the Q8_0 blocks at yb, Y9 = dx·dy; even chunks
// into acc, odd ones into acc2 (two dependency chains; STOREN adds them before the
// horizontal sum).
#define KCOLQ(yb, acc, acc2) \
	KNL(2, 36, yb, Z4, Z27, Z21, acc) \
	KNL(70, 104, yb, Z5, Z29, Z31, acc2) \
	KNL(138, 172, yb, Z6, Z12, Z14, acc) \
	KNL(206, 240, yb, Z7, Z13, Z15, acc2)

// KCOLN(yb, acc, acc2): the eight Q8_0 blocks at yb against the unpacked weights.
#define KCOLN(yb, acc, acc2) \
	DYQ8(yb) \
	VMULPS Y20, Y9, Y9 \
	KCOLQ(yb, acc, acc2)

#define STOREN(acc, yacc, acc2, dst) \
	VADDPS acc2, acc, acc \
	STORE(acc, yacc, dst)

// The 1-row kernel (the mat-vec) streams each weight byte once, so it moves what belongs to
// the activations alone out of the row loop: iq4nlPrepVNNI stages the Q8_0 row once per call
// (kTileSpec.prep) as, per step of eight blocks (320 bytes, 64-byte aligned), the 256 quants
// + 128 (XOR 0x80) without their scales and the eight dy as floats, 32 bytes of padding: a
// footprint (k·1.25 bytes) that stays in L1 beside the weight stream. The weights take three
// loads per step (0, 64 and 80: whole cache lines where the step is aligned), each chunk
// arranged by one byte permute (two sources for chunk 1). The integer sum per dword and
// every float operation are those of the 4-row kernel.

// NLPREP(q0, q1, o): chunk o/64 of the Q8_0 blocks at BX (quants at q0 and q1) + 128 into the
// staged step at R10.
#define NLPREP(q0, q1, o) \
	VMOVDQU      q0(BX), Y10 \
	VINSERTI64X4 $1, q1(BX), Z10, Z10 \
	VPXORD       Z30, Z10, Z10 \
	VMOVDQU64    Z10, o(R10)

// KNL1(o, zc, zidx, acc): chunk o/64 of the staged step at R10 against the arranged code
// bytes zc, Y9 = dx·dy of the eight blocks (as IQ4N_CHUNK and KNL).
#define KNL1(o, zc, zidx, acc) \
	VPSRLVW     Z25, zc, zc \
	VPERMB      Z24, zc, zc \
	VPXORD      Z11, Z11, Z11 \
	VPDPBUSD    zc, Z30, Z11 \
	VPSUBD      Z11, Z28, Z11 \
	VMOVDQU64   o(R10), Z10 \
	VPDPBUSD    zc, Z10, Z11 \
	VPERMPS     Z9, zidx, Z8 \
	VCVTDQ2PS   Z11, Z11 \
	VFMADD231PS Z8, Z11, acc

// func iq4nlPrepVNNI(nb int, y *byte, buf *byte)
// The staged form of nb steps of the Q8_0 row at y into buf (320·nb bytes, 64-byte aligned).
TEXT ·iq4nlPrepVNNI(SB), NOSPLIT, $0-24
	IQ4N_CONSTS0
	MOVQ y+8(FP), BX
	MOVQ buf+16(FP), R10
	MOVQ nb+0(FP), CX
iqnp_step:
	DYQ8((BX))
	VMOVUPS Y9, 256(R10)
	NLPREP(2, 36, 0)
	NLPREP(70, 104, 64)
	NLPREP(138, 172, 128)
	NLPREP(206, 240, 192)
	ADDQ    $272, BX
	ADDQ    $320, R10
	DECQ    CX
	JNZ     iqnp_step
	VZEROUPPER
	RET

// func iq4nlTile1VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
// (nb counts groups of eight blocks; y is the staged row of iq4nlPrepVNNI, ldy unused)
TEXT ·iq4nlTile1VNNI(SB), NOSPLIT, $0-72
	IQ4N_CONSTS
	VMOVDQU64       iqArrL0<>(SB), Z17
	VMOVDQU64       iqArrL1<>(SB), Z18
	VMOVDQU64       iqArrL2<>(SB), Z19
	MOVQ            x+8(FP), SI
	MOVQ            c+48(FP), DI
iqn1_row:
	VPXORD Z16, Z16, Z16
	VPXORD Z0, Z0, Z0
	MOVQ   SI, AX
	MOVQ   y+32(FP), R10
	MOVQ   nb+0(FP), CX
iqn1_sb:
	PREFETCHT0 2048(AX)
	PREFETCHT0 2112(AX)
	PREFETCHT0 2176(AX)
	VMOVDQU64 0(AX), Z4
	VMOVDQU64 64(AX), Z6
	VMOVDQU64 80(AX), Z7
	VMOVDQA64 Z4, Z8
	VPERMT2W  Z6, Z26, Z8
	VCVTPH2PS X8, Y20
	VMULPS    256(R10), Y20, Y9
	VMOVDQA64 Z18, Z5
	VPERMI2B  Z6, Z4, Z5
	VPERMB    Z4, Z17, Z4
	VPERMB    Z6, Z19, Z6
	VPERMB    Z7, Z23, Z7
	KNL1(0, Z4, Z27, Z16)
	KNL1(64, Z5, Z29, Z0)
	KNL1(128, Z6, Z12, Z16)
	KNL1(192, Z7, Z13, Z0)
	ADDQ   $144, AX
	ADDQ   $320, R10
	DECQ   CX
	JNZ    iqn1_sb
	STOREN(Z16, Y16, Z0, (DI))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    iqn1_row
	VZEROUPPER
	RET

// func iq4nlTile4VNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
// The scales of the four activation rows are converted once per call into the frame (32
// bytes per row and step, at 128·step + 32·row): nb ≤ kTileKC = 16.
TEXT ·iq4nlTile4VNNI(SB), 0, $2048-72
	IQ4N_CONSTS
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	MOVQ y+32(FP), BX
	LEAQ 0(SP), R10
	MOVQ nb+0(FP), CX
iqn4_dy:
	DYQ8((BX))
	VMOVUPS Y9, 0(R10)
	DYQ8((BX)(R11*1))
	VMOVUPS Y9, 32(R10)
	DYQ8((BX)(R11*2))
	VMOVUPS Y9, 64(R10)
	DYQ8((BX)(R12*1))
	VMOVUPS Y9, 96(R10)
	ADDQ $272, BX
	ADDQ $128, R10
	DECQ CX
	JNZ  iqn4_dy
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
iqn4_row:
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   SI, AX
	MOVQ   y+32(FP), BX
	LEAQ   0(SP), R10
	MOVQ   nb+0(FP), CX
iqn4_sb:
	IQ4N_SB
	VMULPS 0(R10), Y20, Y9
	KCOLQ((BX), Z16, Z0)
	VMULPS 32(R10), Y20, Y9
	KCOLQ((BX)(R11*1), Z17, Z1)
	VMULPS 64(R10), Y20, Y9
	KCOLQ((BX)(R11*2), Z18, Z2)
	VMULPS 96(R10), Y20, Y9
	KCOLQ((BX)(R12*1), Z19, Z3)
	ADDQ   $144, AX
	ADDQ   $272, BX
	ADDQ   $128, R10
	DECQ   CX
	JNZ    iqn4_sb
	MOVQ   ldc+56(FP), R8
	SHLQ   $2, R8
	LEAQ   (DI)(R8*2), R9
	STOREN(Z16, Y16, Z0, (DI))
	STOREN(Z17, Y17, Z1, (DI)(R8*1))
	STOREN(Z18, Y18, Z2, (R9))
	STOREN(Z19, Y19, Z3, (R9)(R8*1))
	ADDQ   ldx+16(FP), SI
	ADDQ   $4, DI
	DECQ   m+24(FP)
	JNZ    iqn4_row
	VZEROUPPER
	RET
