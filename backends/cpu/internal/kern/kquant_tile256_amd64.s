//go:build amd64 && !purego

#include "textflag.h"

// Tile kernels of the K-quant dots on 256-bit registers (kquant_tile.go), for the AVX2 and
// AVX-VNNI kernel sets: the structure and arguments of kquant_tile_amd64.s (one weight row at
// a time, its super-block unpacked once for 1 or 4 activation rows), Y0-Y15 and VEX only.
// Per 32 codes VPMADDUBSW gives the code·q8 pair sums as int16 (exact: the codes are at most
// 63, so |pair| ≤ 2·63·128 < 2^15 even for q8 = −128), and the sub-block scale multiplies
// and sums them into dwords: VPMADDWD + VPADDD in the AVX2 kernels, one VEX VPDPWSSD in the
// AVX-VNNI ones (BYTE-encoded: the Go assembler knows only its EVEX form). Per super-block the
// 8 int32 lanes of each activation row are converted to float and scaled by d·dy; the mins
// (Q4_K, Q5_K) or the −32 offset (Q6_K) come from the Q8_K bsums by VPMADDWD. At the end of a row
// each accumulator is summed horizontally and stored to c (added to it when accum != 0).
//
// Registers: Y4-Y7 int32 sums of activation rows 0-3, Y10 pair sums, Y11-Y14 float
// accumulators; Q4_K, Q5_K: Y0 nibble mask, Y1 the scales as words, Y2/Y3 the scales of the two
// sub-blocks in flight, Y8/Y9 their codes, Y15 the mins per bsum; Q6_K: Y0/Y1 ql, Y2 qh of
// the half in flight, Y8 codes, Y9 scales (AVX-VNNI), the frame the 8 scale vectors of a
// super-block (32·c + 128·half: sub-block 2c of the half in the low 128 bits, 2c+1 high).

DATA kt2BcW<>+0(SB)/8, $0x0100010001000100
DATA kt2BcW<>+8(SB)/8, $0x0100010001000100
DATA kt2BcW<>+16(SB)/8, $0x0100010001000100
DATA kt2BcW<>+24(SB)/8, $0x0100010001000100
DATA kt2BcW<>+32(SB)/8, $0x0302030203020302
DATA kt2BcW<>+40(SB)/8, $0x0302030203020302
DATA kt2BcW<>+48(SB)/8, $0x0302030203020302
DATA kt2BcW<>+56(SB)/8, $0x0302030203020302
DATA kt2BcW<>+64(SB)/8, $0x0504050405040504
DATA kt2BcW<>+72(SB)/8, $0x0504050405040504
DATA kt2BcW<>+80(SB)/8, $0x0504050405040504
DATA kt2BcW<>+88(SB)/8, $0x0504050405040504
DATA kt2BcW<>+96(SB)/8, $0x0706070607060706
DATA kt2BcW<>+104(SB)/8, $0x0706070607060706
DATA kt2BcW<>+112(SB)/8, $0x0706070607060706
DATA kt2BcW<>+120(SB)/8, $0x0706070607060706
DATA kt2BcW<>+128(SB)/8, $0x0908090809080908
DATA kt2BcW<>+136(SB)/8, $0x0908090809080908
DATA kt2BcW<>+144(SB)/8, $0x0908090809080908
DATA kt2BcW<>+152(SB)/8, $0x0908090809080908
DATA kt2BcW<>+160(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kt2BcW<>+168(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kt2BcW<>+176(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kt2BcW<>+184(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kt2BcW<>+192(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kt2BcW<>+200(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kt2BcW<>+208(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kt2BcW<>+216(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kt2BcW<>+224(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kt2BcW<>+232(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kt2BcW<>+240(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kt2BcW<>+248(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kt2BcW<>(SB), RODATA|NOPTR, $256
DATA kt6Bc<>+0(SB)/8, $0x0100010001000100
DATA kt6Bc<>+8(SB)/8, $0x0100010001000100
DATA kt6Bc<>+16(SB)/8, $0x0302030203020302
DATA kt6Bc<>+24(SB)/8, $0x0302030203020302
DATA kt6Bc<>+32(SB)/8, $0x0504050405040504
DATA kt6Bc<>+40(SB)/8, $0x0504050405040504
DATA kt6Bc<>+48(SB)/8, $0x0706070607060706
DATA kt6Bc<>+56(SB)/8, $0x0706070607060706
DATA kt6Bc<>+64(SB)/8, $0x0908090809080908
DATA kt6Bc<>+72(SB)/8, $0x0908090809080908
DATA kt6Bc<>+80(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kt6Bc<>+88(SB)/8, $0x0b0a0b0a0b0a0b0a
DATA kt6Bc<>+96(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kt6Bc<>+104(SB)/8, $0x0d0c0d0c0d0c0d0c
DATA kt6Bc<>+112(SB)/8, $0x0f0e0f0e0f0e0f0e
DATA kt6Bc<>+120(SB)/8, $0x0f0e0f0e0f0e0f0e
GLOBL kt6Bc<>(SB), RODATA|NOPTR, $128
DATA kt2M0F<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kt2M0F<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kt2M0F<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA kt2M0F<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL kt2M0F<>(SB), RODATA|NOPTR, $32
DATA kt2M30<>+0(SB)/8, $0x3030303030303030
DATA kt2M30<>+8(SB)/8, $0x3030303030303030
DATA kt2M30<>+16(SB)/8, $0x3030303030303030
DATA kt2M30<>+24(SB)/8, $0x3030303030303030
GLOBL kt2M30<>(SB), RODATA|NOPTR, $32
DATA kt2M10<>+0(SB)/8, $0x1010101010101010
DATA kt2M10<>+8(SB)/8, $0x1010101010101010
DATA kt2M10<>+16(SB)/8, $0x1010101010101010
DATA kt2M10<>+24(SB)/8, $0x1010101010101010
GLOBL kt2M10<>(SB), RODATA|NOPTR, $32
DATA kt2M07<>+0(SB)/8, $0x0707070707070707
DATA kt2M07<>+8(SB)/8, $0x0707070707070707
DATA kt2M07<>+16(SB)/8, $0x0707070707070707
DATA kt2M07<>+24(SB)/8, $0x0707070707070707
GLOBL kt2M07<>(SB), RODATA|NOPTR, $32
DATA kt2M01<>+0(SB)/8, $0x0101010101010101
DATA kt2M01<>+8(SB)/8, $0x0101010101010101
DATA kt2M01<>+16(SB)/8, $0x0101010101010101
DATA kt2M01<>+24(SB)/8, $0x0101010101010101
GLOBL kt2M01<>(SB), RODATA|NOPTR, $32
DATA kt2W1<>+0(SB)/8, $0x0001000100010001
DATA kt2W1<>+8(SB)/8, $0x0001000100010001
DATA kt2W1<>+16(SB)/8, $0x0001000100010001
DATA kt2W1<>+24(SB)/8, $0x0001000100010001
GLOBL kt2W1<>(SB), RODATA|NOPTR, $32
DATA kt2Wm128<>+0(SB)/8, $0xff80ff80ff80ff80
DATA kt2Wm128<>+8(SB)/8, $0xff80ff80ff80ff80
DATA kt2Wm128<>+16(SB)/8, $0xff80ff80ff80ff80
DATA kt2Wm128<>+24(SB)/8, $0xff80ff80ff80ff80
GLOBL kt2Wm128<>(SB), RODATA|NOPTR, $32
DATA kt2W32<>+0(SB)/8, $0x0020002000200020
DATA kt2W32<>+8(SB)/8, $0x0020002000200020
GLOBL kt2W32<>(SB), RODATA|NOPTR, $16
DATA kt2IQLo<>+0(SB)/8, $0x766a5d4f3f2d1801
DATA kt2IQLo<>+8(SB)/8, $0x7159453526190d01
GLOBL kt2IQLo<>(SB), RODATA|NOPTR, $16

// K2DOT(o, yb, codes, sc, acc): acc += Σ pairs of sc·(codes·q8) for the 32 activation bytes
// at o yb (AVX2: VPMADDUBSW, VPMADDWD, VPADDD); K2DOTV(o, yb, codes, dpw) the same with the
// AVX-VNNI instruction dpw (a DPW_ macro) for the last two.
#define K2DOT(o, yb, codes, sc, acc) \
	VPMADDUBSW o yb, codes, Y10 \
	VPMADDWD   sc, Y10, Y10 \
	VPADDD     Y10, acc, acc

#define K2DOTV(o, yb, codes, dpw) \
	VPMADDUBSW o yb, codes, Y10 \
	dpw
// STORE2(acc, xacc, dst): dst = Σ lanes of acc (+ dst where X3 is all ones: accum).
#define STORE2(acc, xacc, dst) \
	VEXTRACTF128 $1, acc, X10 \
	VADDPS       X10, xacc, X10 \
	VPERMILPS    $0x4e, X10, X2 \
	VADDPS       X2, X10, X10 \
	VPERMILPS    $0xb1, X10, X2 \
	VADDPS       X2, X10, X10 \
	VMOVSS       dst, X2 \
	VANDPS       X3, X2, X2 \
	VADDSS       X2, X10, X10 \
	VMOVSS       X10, dst

// Q4K2_SB: the 6-bit scales of the Q4_K super-block at AX as words in both halves of Y1, the
// mins as words, each twice (one per bsum of its sub-block), in Y15.
#define Q4K2_SB \
	MOVL        4(AX), DX \
	MOVL        8(AX), R8 \
	MOVL        12(AX), R9 \
	MOVL        DX, R10 \
	ANDL        $0x3f3f3f3f, R10 \
	SHRL        $6, DX \
	ANDL        $0x03030303, DX \
	SHLL        $4, DX \
	MOVL        R9, R13 \
	ANDL        $0x0f0f0f0f, R13 \
	ORL         R13, DX \
	SHLQ        $32, DX \
	ORQ         R10, DX \
	MOVL        R8, R10 \
	ANDL        $0x3f3f3f3f, R10 \
	SHRL        $6, R8 \
	ANDL        $0x03030303, R8 \
	SHLL        $4, R8 \
	SHRL        $4, R9 \
	ANDL        $0x0f0f0f0f, R9 \
	ORL         R9, R8 \
	SHLQ        $32, R8 \
	ORQ         R10, R8 \
	VMOVQ       DX, X1 \
	VPMOVZXBW   X1, X1 \
	VINSERTI128 $1, X1, Y1, Y1 \
	VMOVQ       R8, X15 \
	VPUNPCKLBW  X15, X15, X15 \
	VPMOVZXBW   X15, Y15

// Q4K2_J(qo, so0, so1): the 64 codes of qs at qo(AX) (sub-blocks 2j, 2j+1: low nibbles into
// Y8, high into Y9) and their scales broadcast to every word of Y2 and Y3.
#define Q4K2_J(qo, so0, so1) \
	VMOVDQU qo(AX), Y9 \
	VPAND   Y0, Y9, Y8 \
	VPSRLW  $4, Y9, Y9 \
	VPAND   Y0, Y9, Y9 \
	VPSHUFB kt2BcW<>+so0(SB), Y1, Y2 \
	VPSHUFB kt2BcW<>+so1(SB), Y1, Y3

// Q5K2_HL(n, codes), Q5K2_HR(n, codes), Q5K2_H4(codes): the fifth bit of the Q5_K codes
// (bit 4−n, 4+n or 4 of the qh bytes at 16(AX), shifted to bit 4) into codes. The word
// shifts move no other byte's bit into bit 4.
#define Q5K2_HL(n, codes) \
	VMOVDQU 16(AX), Y10 \
	VPSLLW  $n, Y10, Y10 \
	VPAND   kt2M10<>(SB), Y10, Y10 \
	VPOR    Y10, codes, codes

#define Q5K2_HR(n, codes) \
	VMOVDQU 16(AX), Y10 \
	VPSRLW  $n, Y10, Y10 \
	VPAND   kt2M10<>(SB), Y10, Y10 \
	VPOR    Y10, codes, codes

#define Q5K2_H4(codes) \
	VMOVDQU 16(AX), Y10 \
	VPAND   kt2M10<>(SB), Y10, Y10 \
	VPOR    Y10, codes, codes

// Q4K2_D: d and dmin of the super-block at AX broadcast into Y8 and Y9.
#define Q4K2_D \
	MOVL         0(AX), DX \
	VMOVD        DX, X8 \
	VCVTPH2PS    X8, X8 \
	VMOVSHDUP    X8, X9 \
	VBROADCASTSS X8, Y8 \
	VBROADCASTSS X9, Y9

// Q4K2_FIN(yb, acc, facc): facc += d·dy·acc − dmin·dy·Σ min·bsums (per lane).
#define Q4K2_FIN(yb, acc, facc) \
	VPMADDWD     260 yb, Y15, Y10 \
	VCVTDQ2PS    Y10, Y10 \
	VCVTDQ2PS    acc, acc \
	VBROADCASTSS 0 yb, Y2 \
	VMULPS       Y2, Y8, Y3 \
	VMULPS       Y2, Y9, Y2 \
	VFMADD231PS  Y3, acc, facc \
	VFNMADD231PS Y2, Y10, facc

// IQ4 codes (IQ4_XS, IQ4_NL): a 4-bit code n stands for kv[n] = kvalues[n]; with u = kv+128
// (unsigned, 1-241) too wide for VPMADDUBSW pairs, kv·q8 = lo[n]·q8 − 128·[n < 8]·q8 where
// lo[n] = u & 0x7f (kt2IQLo, in Y0): two VPMADDUBSW per 32 codes, both exact, and the second
// one's pair sums scaled by −128 (times the sub-block scale for IQ4_XS).

// IQ2_CODES(o): the 32 codes of the 16 bytes at o(AX) (low nibbles are elements 0-15, high
// nibbles 16-31) as lo[n] into Y8 and [n < 8] into Y9.
#define IQ2_CODES(o) \
	VMOVDQU     o(AX), X9 \
	VPSRLW      $4, X9, X10 \
	VINSERTI128 $1, X10, Y9, Y9 \
	VPAND       kt2M0F<>(SB), Y9, Y9 \
	VPSHUFB     Y9, Y0, Y8 \
	VPCMPGTB    kt2M07<>(SB), Y9, Y9 \
	VPANDN      kt2M01<>(SB), Y9, Y9

// IQX2_SB: the scales ls−32 of the IQ4_XS super-block at AX as words in both halves of Y1,
// and −128·(ls−32) in Y15 (the low nibbles of scales_l spread to one byte per sub-block by
// PDEP with the mask in R10, the high bit pairs of scales_h to bits 4-5 with R13).
#define IQX2_SB \
	MOVL        4(AX), DX \
	PDEPQ       R10, DX, DX \
	MOVWLZX     2(AX), R9 \
	PDEPQ       R13, R9, R9 \
	ORQ         R9, DX \
	VMOVQ       DX, X1 \
	VPMOVZXBW   X1, X1 \
	VPSUBW      kt2W32<>(SB), X1, X1 \
	VINSERTI128 $1, X1, Y1, Y1 \
	VPSLLW      $7, Y1, Y10 \
	VPXOR       Y15, Y15, Y15 \
	VPSUBW      Y10, Y15, Y15

// IQX2_FIN(yb, acc, facc): facc += d·dy·acc (per lane).
#define IQX2_FIN(yb, acc, facc) \
	VCVTDQ2PS    acc, acc \
	VBROADCASTSS 0 yb, Y10 \
	VMULPS       Y10, Y8, Y10 \
	VFMADD231PS  Y10, acc, facc

// IQN2_BLK(q, d, yb, facc): one Q8_0 block (quants at q yb, scale at d yb) against the codes
// in Y8/Y9, Y2 = dx: facc += dx·dy·Σ kv·q8 (per lane).
#define IQN2_BLK(q, d, yb, facc) \
	VPMADDUBSW   q yb, Y8, Y10 \
	VPMADDUBSW   q yb, Y9, Y3 \
	VPMADDWD     kt2W1<>(SB), Y10, Y10 \
	VPMADDWD     kt2Wm128<>(SB), Y3, Y3 \
	VPADDD       Y3, Y10, Y10 \
	VCVTDQ2PS    Y10, Y10 \
	VPBROADCASTW d yb, X3 \
	VCVTPH2PS    X3, Y3 \
	VMULPS       Y2, Y3, Y3 \
	VFMADD231PS  Y3, Y10, facc

// Q6K2_SCALES: the 8 scale vectors of the Q6_K super-block at AX into the frame.
#define Q6K2_SCALES \
	VPMOVSXBW 192(AX), Y8 \
	VPERMQ    $0x44, Y8, Y9 \
	VPERMQ    $0xee, Y8, Y8 \
	VPSHUFB   kt6Bc<>+0(SB), Y9, Y10 \
	VMOVDQU   Y10, 0(SP) \
	VPSHUFB   kt6Bc<>+32(SB), Y9, Y10 \
	VMOVDQU   Y10, 32(SP) \
	VPSHUFB   kt6Bc<>+64(SB), Y9, Y10 \
	VMOVDQU   Y10, 64(SP) \
	VPSHUFB   kt6Bc<>+96(SB), Y9, Y10 \
	VMOVDQU   Y10, 96(SP) \
	VPSHUFB   kt6Bc<>+0(SB), Y8, Y10 \
	VMOVDQU   Y10, 128(SP) \
	VPSHUFB   kt6Bc<>+32(SB), Y8, Y10 \
	VMOVDQU   Y10, 160(SP) \
	VPSHUFB   kt6Bc<>+64(SB), Y8, Y10 \
	VMOVDQU   Y10, 192(SP) \
	VPSHUFB   kt6Bc<>+96(SB), Y8, Y10 \
	VMOVDQU   Y10, 224(SP)

// Q6K2_RCc(m0f, m30): the 32 6-bit codes c of the half in flight into Y8 (ql low nibbles of
// bytes 0-31 or 32-63, then their high nibbles; the qh bit pair 2c, 2c+1 as bits 4-5), with
// the masks 0x0f and 0x30 in m0f and m30.
#define Q6K2_RC0(m0f, m30) \
	VPAND  m0f, Y0, Y8 \
	VPSLLW $4, Y2, Y10 \
	VPAND  m30, Y10, Y10 \
	VPOR   Y10, Y8, Y8

#define Q6K2_RC1(m0f, m30) \
	VPAND  m0f, Y1, Y8 \
	VPSLLW $2, Y2, Y10 \
	VPAND  m30, Y10, Y10 \
	VPOR   Y10, Y8, Y8

#define Q6K2_RC2(m0f, m30) \
	VPSRLW $4, Y0, Y8 \
	VPAND  m0f, Y8, Y8 \
	VPAND  m30, Y2, Y10 \
	VPOR   Y10, Y8, Y8

#define Q6K2_RC3(m0f, m30) \
	VPSRLW $4, Y1, Y8 \
	VPAND  m0f, Y8, Y8 \
	VPSRLW $2, Y2, Y10 \
	VPAND  m30, Y10, Y10 \
	VPOR   Y10, Y8, Y8

// Q6K2_D: the 16 scales as words into Y0, d broadcast into Y1.
#define Q6K2_D \
	VPMOVSXBW    192(AX), Y0 \
	MOVWLZX      208(AX), DX \
	VMOVD        DX, X1 \
	VCVTPH2PS    X1, X1 \
	VBROADCASTSS X1, Y1

// Q6K2_FIN(yb, acc, facc): facc += d·dy·(acc − 32·Σ scale·bsums) (per lane).
#define Q6K2_FIN(yb, acc, facc) \
	VPMADDWD     260 yb, Y0, Y10 \
	VPSLLD       $5, Y10, Y10 \
	VPSUBD       Y10, acc, acc \
	VCVTDQ2PS    acc, acc \
	VBROADCASTSS 0 yb, Y10 \
	VMULPS       Y10, Y1, Y10 \
	VFMADD231PS  Y10, acc, facc


// DPW_Yacc_Ysc: the AVX-VNNI vpdpwssd ymm(acc), ymm10, ymm(sc) (acc += pair products of
// the words of Y10 and sc), BYTE-encoded (3-byte VEX C4, map 0F38, pp 66, W0, L 1:
// inverted R and B in byte 1, inverted vvvv = 10 in byte 2, opcode 0x52, ModRM).
#define DPW_Y4_Y2 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xe2 // vpdpwssd ymm4, ymm10, ymm2
#define DPW_Y4_Y3 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xe3 // vpdpwssd ymm4, ymm10, ymm3
#define DPW_Y4_Y9 BYTE $0xC4; BYTE $0xc2; BYTE $0x2d; BYTE $0x52; BYTE $0xe1 // vpdpwssd ymm4, ymm10, ymm9
#define DPW_Y5_Y2 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xea // vpdpwssd ymm5, ymm10, ymm2
#define DPW_Y5_Y3 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xeb // vpdpwssd ymm5, ymm10, ymm3
#define DPW_Y5_Y9 BYTE $0xC4; BYTE $0xc2; BYTE $0x2d; BYTE $0x52; BYTE $0xe9 // vpdpwssd ymm5, ymm10, ymm9
#define DPW_Y6_Y2 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xf2 // vpdpwssd ymm6, ymm10, ymm2
#define DPW_Y6_Y3 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xf3 // vpdpwssd ymm6, ymm10, ymm3
#define DPW_Y6_Y9 BYTE $0xC4; BYTE $0xc2; BYTE $0x2d; BYTE $0x52; BYTE $0xf1 // vpdpwssd ymm6, ymm10, ymm9
#define DPW_Y7_Y2 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xfa // vpdpwssd ymm7, ymm10, ymm2
#define DPW_Y7_Y3 BYTE $0xC4; BYTE $0xe2; BYTE $0x2d; BYTE $0x52; BYTE $0xfb // vpdpwssd ymm7, ymm10, ymm3
#define DPW_Y7_Y9 BYTE $0xC4; BYTE $0xc2; BYTE $0x2d; BYTE $0x52; BYTE $0xf9 // vpdpwssd ymm7, ymm10, ymm9

// func q4kTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q4kTile1AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ m+24(FP), R14 // R14: the last address whose prefetches stay in this call's rows
	IMULQ ldx+16(FP), R14
	ADDQ SI, R14
	SUBQ $8528, R14
	MOVQ c+48(FP), DI
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q4k1avx2_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q4k1avx2_sb:
	CMPQ AX, R14
	JAE q4k1avx2_nopf
	PREFETCHT0 8400(AX)
	PREFETCHT0 8464(AX)
	PREFETCHT0 8528(AX)
q4k1avx2_nopf:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	Q4K2_J(16, 0, 32)
	K2DOT(4, (BX), Y8, Y2, Y4)
	K2DOT(36, (BX), Y9, Y3, Y4)
	Q4K2_J(48, 64, 96)
	K2DOT(68, (BX), Y8, Y2, Y4)
	K2DOT(100, (BX), Y9, Y3, Y4)
	Q4K2_J(80, 128, 160)
	K2DOT(132, (BX), Y8, Y2, Y4)
	K2DOT(164, (BX), Y9, Y3, Y4)
	Q4K2_J(112, 192, 224)
	K2DOT(196, (BX), Y8, Y2, Y4)
	K2DOT(228, (BX), Y9, Y3, Y4)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	ADDQ $144, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q4k1avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q4k1avx2_row
	VZEROUPPER
	RET

// func q4kTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q4kTile4AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q4k4avx2_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q4k4avx2_sb:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q4K2_J(16, 0, 32)
	K2DOT(4, (BX), Y8, Y2, Y4)
	K2DOT(36, (BX), Y9, Y3, Y4)
	K2DOT(4, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(36, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(4, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(36, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(4, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(36, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_J(48, 64, 96)
	K2DOT(68, (BX), Y8, Y2, Y4)
	K2DOT(100, (BX), Y9, Y3, Y4)
	K2DOT(68, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(100, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(68, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(100, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(68, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(100, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_J(80, 128, 160)
	K2DOT(132, (BX), Y8, Y2, Y4)
	K2DOT(164, (BX), Y9, Y3, Y4)
	K2DOT(132, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(164, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(132, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(164, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(132, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(164, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_J(112, 192, 224)
	K2DOT(196, (BX), Y8, Y2, Y4)
	K2DOT(228, (BX), Y9, Y3, Y4)
	K2DOT(196, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(228, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(196, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(228, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(196, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(228, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	Q4K2_FIN((BX)(R11*1), Y5, Y12)
	Q4K2_FIN((BX)(R11*2), Y6, Y13)
	Q4K2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $144, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q4k4avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q4k4avx2_row
	VZEROUPPER
	RET

// func q4kTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q4kTile1AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q4k1avxvnni_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q4k1avxvnni_sb:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	Q4K2_J(16, 0, 32)
	K2DOTV(4, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(36, (BX), Y9, DPW_Y4_Y3)
	Q4K2_J(48, 64, 96)
	K2DOTV(68, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(100, (BX), Y9, DPW_Y4_Y3)
	Q4K2_J(80, 128, 160)
	K2DOTV(132, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(164, (BX), Y9, DPW_Y4_Y3)
	Q4K2_J(112, 192, 224)
	K2DOTV(196, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(228, (BX), Y9, DPW_Y4_Y3)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	ADDQ $144, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q4k1avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q4k1avxvnni_row
	VZEROUPPER
	RET

// func q4kTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q4kTile4AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q4k4avxvnni_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q4k4avxvnni_sb:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q4K2_J(16, 0, 32)
	K2DOTV(4, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(36, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(4, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(36, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(4, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(36, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(4, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(36, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_J(48, 64, 96)
	K2DOTV(68, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(100, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(68, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(100, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(68, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(100, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(68, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(100, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_J(80, 128, 160)
	K2DOTV(132, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(164, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(132, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(164, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(132, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(164, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(132, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(164, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_J(112, 192, 224)
	K2DOTV(196, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(228, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(196, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(228, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(196, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(228, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(196, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(228, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	Q4K2_FIN((BX)(R11*1), Y5, Y12)
	Q4K2_FIN((BX)(R11*2), Y6, Y13)
	Q4K2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $144, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q4k4avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q4k4avxvnni_row
	VZEROUPPER
	RET

// func q6kTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
// The weight rows stream past once (the mat-vec): each super-block prefetches the bytes 8400 on
// (two 4 KiB pages ahead, where the hardware prefetcher starts over at every page), as the Q4_K,
// Q5_K and IQ4_XS one-row kernels do, but never past the call's last row (the rows after them are
// another task's, often another worker's: prefetching them cost a 2-thread model's generation
// 3-5%); a Q6_K mat-vec of 32768x2048 from memory on one Zen 3 thread went from 5.8-7.6 to
// 9.1-10.0 GB/s (420 bytes ahead: no gain), Q5_K's from 5.9-6.5 to 6.0-9.6, L3-resident rows the
// same within noise.
TEXT ·q6kTile1AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ m+24(FP), R14 // R14: the last address whose prefetches stay in this call's rows
	IMULQ ldx+16(FP), R14
	ADDQ SI, R14
	SUBQ $8592, R14
	MOVQ c+48(FP), DI
	VMOVDQU kt2M0F<>(SB), Y12
	VMOVDQU kt2M30<>(SB), Y13
q6k1avx2_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q6k1avx2_sb:
	CMPQ AX, R14
	JAE q6k1avx2_nopf
	PREFETCHT0 8400(AX)
	PREFETCHT0 8464(AX)
	PREFETCHT0 8528(AX)
	PREFETCHT0 8592(AX)
q6k1avx2_nopf:
	VPMOVSXBW 192(AX), Y8
	VPERMQ $0x44, Y8, Y5
	VPERMQ $0xee, Y8, Y6
	VPXOR Y4, Y4, Y4
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU 128(AX), Y2
	Q6K2_RC0(Y12, Y13)
	VPSHUFB kt6Bc<>+0(SB), Y5, Y9
	K2DOT(4, (BX), Y8, Y9, Y4)
	Q6K2_RC1(Y12, Y13)
	VPSHUFB kt6Bc<>+32(SB), Y5, Y9
	K2DOT(36, (BX), Y8, Y9, Y4)
	Q6K2_RC2(Y12, Y13)
	VPSHUFB kt6Bc<>+64(SB), Y5, Y9
	K2DOT(68, (BX), Y8, Y9, Y4)
	Q6K2_RC3(Y12, Y13)
	VPSHUFB kt6Bc<>+96(SB), Y5, Y9
	K2DOT(100, (BX), Y8, Y9, Y4)
	VMOVDQU 64(AX), Y0
	VMOVDQU 96(AX), Y1
	VMOVDQU 160(AX), Y2
	Q6K2_RC0(Y12, Y13)
	VPSHUFB kt6Bc<>+0(SB), Y6, Y9
	K2DOT(132, (BX), Y8, Y9, Y4)
	Q6K2_RC1(Y12, Y13)
	VPSHUFB kt6Bc<>+32(SB), Y6, Y9
	K2DOT(164, (BX), Y8, Y9, Y4)
	Q6K2_RC2(Y12, Y13)
	VPSHUFB kt6Bc<>+64(SB), Y6, Y9
	K2DOT(196, (BX), Y8, Y9, Y4)
	Q6K2_RC3(Y12, Y13)
	VPSHUFB kt6Bc<>+96(SB), Y6, Y9
	K2DOT(228, (BX), Y8, Y9, Y4)
	Q6K2_D
	Q6K2_FIN((BX), Y4, Y11)
	ADDQ $210, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q6k1avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q6k1avx2_row
	VZEROUPPER
	RET

// func q6kTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q6kTile4AVX2(SB), 0, $256-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
q6k4avx2_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q6k4avx2_sb:
	VMOVDQU kt2M0F<>(SB), Y3
	VMOVDQU kt2M30<>(SB), Y15
	Q6K2_SCALES
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU 128(AX), Y2
	Q6K2_RC0(Y3, Y15)
	VMOVDQU 0(SP), Y9
	K2DOT(4, (BX), Y8, Y9, Y4)
	K2DOT(4, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(4, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(4, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_RC1(Y3, Y15)
	VMOVDQU 32(SP), Y9
	K2DOT(36, (BX), Y8, Y9, Y4)
	K2DOT(36, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(36, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(36, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_RC2(Y3, Y15)
	VMOVDQU 64(SP), Y9
	K2DOT(68, (BX), Y8, Y9, Y4)
	K2DOT(68, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(68, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(68, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_RC3(Y3, Y15)
	VMOVDQU 96(SP), Y9
	K2DOT(100, (BX), Y8, Y9, Y4)
	K2DOT(100, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(100, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(100, (BX)(R12*1), Y8, Y9, Y7)
	VMOVDQU 64(AX), Y0
	VMOVDQU 96(AX), Y1
	VMOVDQU 160(AX), Y2
	Q6K2_RC0(Y3, Y15)
	VMOVDQU 128(SP), Y9
	K2DOT(132, (BX), Y8, Y9, Y4)
	K2DOT(132, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(132, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(132, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_RC1(Y3, Y15)
	VMOVDQU 160(SP), Y9
	K2DOT(164, (BX), Y8, Y9, Y4)
	K2DOT(164, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(164, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(164, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_RC2(Y3, Y15)
	VMOVDQU 192(SP), Y9
	K2DOT(196, (BX), Y8, Y9, Y4)
	K2DOT(196, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(196, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(196, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_RC3(Y3, Y15)
	VMOVDQU 224(SP), Y9
	K2DOT(228, (BX), Y8, Y9, Y4)
	K2DOT(228, (BX)(R11*1), Y8, Y9, Y5)
	K2DOT(228, (BX)(R11*2), Y8, Y9, Y6)
	K2DOT(228, (BX)(R12*1), Y8, Y9, Y7)
	Q6K2_D
	Q6K2_FIN((BX), Y4, Y11)
	Q6K2_FIN((BX)(R11*1), Y5, Y12)
	Q6K2_FIN((BX)(R11*2), Y6, Y13)
	Q6K2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $210, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q6k4avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q6k4avx2_row
	VZEROUPPER
	RET

// func q6kTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q6kTile1AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	VMOVDQU kt2M0F<>(SB), Y12
	VMOVDQU kt2M30<>(SB), Y13
q6k1avxvnni_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q6k1avxvnni_sb:
	VPMOVSXBW 192(AX), Y8
	VPERMQ $0x44, Y8, Y5
	VPERMQ $0xee, Y8, Y6
	VPXOR Y4, Y4, Y4
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU 128(AX), Y2
	Q6K2_RC0(Y12, Y13)
	VPSHUFB kt6Bc<>+0(SB), Y5, Y9
	K2DOTV(4, (BX), Y8, DPW_Y4_Y9)
	Q6K2_RC1(Y12, Y13)
	VPSHUFB kt6Bc<>+32(SB), Y5, Y9
	K2DOTV(36, (BX), Y8, DPW_Y4_Y9)
	Q6K2_RC2(Y12, Y13)
	VPSHUFB kt6Bc<>+64(SB), Y5, Y9
	K2DOTV(68, (BX), Y8, DPW_Y4_Y9)
	Q6K2_RC3(Y12, Y13)
	VPSHUFB kt6Bc<>+96(SB), Y5, Y9
	K2DOTV(100, (BX), Y8, DPW_Y4_Y9)
	VMOVDQU 64(AX), Y0
	VMOVDQU 96(AX), Y1
	VMOVDQU 160(AX), Y2
	Q6K2_RC0(Y12, Y13)
	VPSHUFB kt6Bc<>+0(SB), Y6, Y9
	K2DOTV(132, (BX), Y8, DPW_Y4_Y9)
	Q6K2_RC1(Y12, Y13)
	VPSHUFB kt6Bc<>+32(SB), Y6, Y9
	K2DOTV(164, (BX), Y8, DPW_Y4_Y9)
	Q6K2_RC2(Y12, Y13)
	VPSHUFB kt6Bc<>+64(SB), Y6, Y9
	K2DOTV(196, (BX), Y8, DPW_Y4_Y9)
	Q6K2_RC3(Y12, Y13)
	VPSHUFB kt6Bc<>+96(SB), Y6, Y9
	K2DOTV(228, (BX), Y8, DPW_Y4_Y9)
	Q6K2_D
	Q6K2_FIN((BX), Y4, Y11)
	ADDQ $210, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q6k1avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q6k1avxvnni_row
	VZEROUPPER
	RET

// func q6kTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q6kTile4AVXVNNI(SB), 0, $256-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
q6k4avxvnni_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q6k4avxvnni_sb:
	VMOVDQU kt2M0F<>(SB), Y3
	VMOVDQU kt2M30<>(SB), Y15
	Q6K2_SCALES
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU 128(AX), Y2
	Q6K2_RC0(Y3, Y15)
	VMOVDQU 0(SP), Y9
	K2DOTV(4, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(4, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(4, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(4, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_RC1(Y3, Y15)
	VMOVDQU 32(SP), Y9
	K2DOTV(36, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(36, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(36, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(36, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_RC2(Y3, Y15)
	VMOVDQU 64(SP), Y9
	K2DOTV(68, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(68, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(68, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(68, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_RC3(Y3, Y15)
	VMOVDQU 96(SP), Y9
	K2DOTV(100, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(100, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(100, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(100, (BX)(R12*1), Y8, DPW_Y7_Y9)
	VMOVDQU 64(AX), Y0
	VMOVDQU 96(AX), Y1
	VMOVDQU 160(AX), Y2
	Q6K2_RC0(Y3, Y15)
	VMOVDQU 128(SP), Y9
	K2DOTV(132, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(132, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(132, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(132, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_RC1(Y3, Y15)
	VMOVDQU 160(SP), Y9
	K2DOTV(164, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(164, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(164, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(164, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_RC2(Y3, Y15)
	VMOVDQU 192(SP), Y9
	K2DOTV(196, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(196, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(196, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(196, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_RC3(Y3, Y15)
	VMOVDQU 224(SP), Y9
	K2DOTV(228, (BX), Y8, DPW_Y4_Y9)
	K2DOTV(228, (BX)(R11*1), Y8, DPW_Y5_Y9)
	K2DOTV(228, (BX)(R11*2), Y8, DPW_Y6_Y9)
	K2DOTV(228, (BX)(R12*1), Y8, DPW_Y7_Y9)
	Q6K2_D
	Q6K2_FIN((BX), Y4, Y11)
	Q6K2_FIN((BX)(R11*1), Y5, Y12)
	Q6K2_FIN((BX)(R11*2), Y6, Y13)
	Q6K2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $210, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q6k4avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q6k4avxvnni_row
	VZEROUPPER
	RET

// func q5kTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q5kTile1AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ m+24(FP), R14 // R14: the last address whose prefetches stay in this call's rows
	IMULQ ldx+16(FP), R14
	ADDQ SI, R14
	SUBQ $8528, R14
	MOVQ c+48(FP), DI
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q5k1avx2_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q5k1avx2_sb:
	CMPQ AX, R14
	JAE q5k1avx2_nopf
	PREFETCHT0 8400(AX)
	PREFETCHT0 8464(AX)
	PREFETCHT0 8528(AX)
q5k1avx2_nopf:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	Q4K2_J(48, 0, 32)
	Q5K2_HL(4, Y8)
	Q5K2_HL(3, Y9)
	K2DOT(4, (BX), Y8, Y2, Y4)
	K2DOT(36, (BX), Y9, Y3, Y4)
	Q4K2_J(80, 64, 96)
	Q5K2_HL(2, Y8)
	Q5K2_HL(1, Y9)
	K2DOT(68, (BX), Y8, Y2, Y4)
	K2DOT(100, (BX), Y9, Y3, Y4)
	Q4K2_J(112, 128, 160)
	Q5K2_H4(Y8)
	Q5K2_HR(1, Y9)
	K2DOT(132, (BX), Y8, Y2, Y4)
	K2DOT(164, (BX), Y9, Y3, Y4)
	Q4K2_J(144, 192, 224)
	Q5K2_HR(2, Y8)
	Q5K2_HR(3, Y9)
	K2DOT(196, (BX), Y8, Y2, Y4)
	K2DOT(228, (BX), Y9, Y3, Y4)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	ADDQ $176, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q5k1avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q5k1avx2_row
	VZEROUPPER
	RET

// func q5kTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q5kTile4AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q5k4avx2_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q5k4avx2_sb:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q4K2_J(48, 0, 32)
	Q5K2_HL(4, Y8)
	Q5K2_HL(3, Y9)
	K2DOT(4, (BX), Y8, Y2, Y4)
	K2DOT(36, (BX), Y9, Y3, Y4)
	K2DOT(4, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(36, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(4, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(36, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(4, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(36, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_J(80, 64, 96)
	Q5K2_HL(2, Y8)
	Q5K2_HL(1, Y9)
	K2DOT(68, (BX), Y8, Y2, Y4)
	K2DOT(100, (BX), Y9, Y3, Y4)
	K2DOT(68, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(100, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(68, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(100, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(68, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(100, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_J(112, 128, 160)
	Q5K2_H4(Y8)
	Q5K2_HR(1, Y9)
	K2DOT(132, (BX), Y8, Y2, Y4)
	K2DOT(164, (BX), Y9, Y3, Y4)
	K2DOT(132, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(164, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(132, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(164, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(132, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(164, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_J(144, 192, 224)
	Q5K2_HR(2, Y8)
	Q5K2_HR(3, Y9)
	K2DOT(196, (BX), Y8, Y2, Y4)
	K2DOT(228, (BX), Y9, Y3, Y4)
	K2DOT(196, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(228, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(196, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(228, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(196, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(228, (BX)(R12*1), Y9, Y3, Y7)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	Q4K2_FIN((BX)(R11*1), Y5, Y12)
	Q4K2_FIN((BX)(R11*2), Y6, Y13)
	Q4K2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $176, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q5k4avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q5k4avx2_row
	VZEROUPPER
	RET

// func q5kTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q5kTile1AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q5k1avxvnni_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q5k1avxvnni_sb:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	Q4K2_J(48, 0, 32)
	Q5K2_HL(4, Y8)
	Q5K2_HL(3, Y9)
	K2DOTV(4, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(36, (BX), Y9, DPW_Y4_Y3)
	Q4K2_J(80, 64, 96)
	Q5K2_HL(2, Y8)
	Q5K2_HL(1, Y9)
	K2DOTV(68, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(100, (BX), Y9, DPW_Y4_Y3)
	Q4K2_J(112, 128, 160)
	Q5K2_H4(Y8)
	Q5K2_HR(1, Y9)
	K2DOTV(132, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(164, (BX), Y9, DPW_Y4_Y3)
	Q4K2_J(144, 192, 224)
	Q5K2_HR(2, Y8)
	Q5K2_HR(3, Y9)
	K2DOTV(196, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(228, (BX), Y9, DPW_Y4_Y3)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	ADDQ $176, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q5k1avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q5k1avxvnni_row
	VZEROUPPER
	RET

// func q5kTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·q5kTile4AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	MOVL $0x0f0f0f0f, DX
	VMOVD DX, X0
	VPBROADCASTD X0, Y0
q5k4avxvnni_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
q5k4avxvnni_sb:
	Q4K2_SB
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	Q4K2_J(48, 0, 32)
	Q5K2_HL(4, Y8)
	Q5K2_HL(3, Y9)
	K2DOTV(4, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(36, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(4, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(36, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(4, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(36, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(4, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(36, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_J(80, 64, 96)
	Q5K2_HL(2, Y8)
	Q5K2_HL(1, Y9)
	K2DOTV(68, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(100, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(68, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(100, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(68, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(100, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(68, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(100, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_J(112, 128, 160)
	Q5K2_H4(Y8)
	Q5K2_HR(1, Y9)
	K2DOTV(132, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(164, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(132, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(164, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(132, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(164, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(132, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(164, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_J(144, 192, 224)
	Q5K2_HR(2, Y8)
	Q5K2_HR(3, Y9)
	K2DOTV(196, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(228, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(196, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(228, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(196, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(228, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(196, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(228, (BX)(R12*1), Y9, DPW_Y7_Y3)
	Q4K2_D
	Q4K2_FIN((BX), Y4, Y11)
	Q4K2_FIN((BX)(R11*1), Y5, Y12)
	Q4K2_FIN((BX)(R11*2), Y6, Y13)
	Q4K2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $176, AX
	ADDQ $292, BX
	DECQ CX
	JNZ q5k4avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ q5k4avxvnni_row
	VZEROUPPER
	RET

// func iq4xsTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4xsTile1AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ m+24(FP), R14 // R14: the last address whose prefetches stay in this call's rows
	IMULQ ldx+16(FP), R14
	ADDQ SI, R14
	SUBQ $8528, R14
	MOVQ c+48(FP), DI
	VBROADCASTI128 kt2IQLo<>(SB), Y0
	MOVQ $0x0f0f0f0f0f0f0f0f, R10
	MOVQ $0x3030303030303030, R13
iqx1avx2_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
iqx1avx2_sb:
	CMPQ AX, R14
	JAE iqx1avx2_nopf
	PREFETCHT0 8400(AX)
	PREFETCHT0 8464(AX)
	PREFETCHT0 8528(AX)
iqx1avx2_nopf:
	IQX2_SB
	VPXOR Y4, Y4, Y4
	IQ2_CODES(8)
	VPSHUFB kt2BcW<>+0(SB), Y1, Y2
	VPSHUFB kt2BcW<>+0(SB), Y15, Y3
	K2DOT(4, (BX), Y8, Y2, Y4)
	K2DOT(4, (BX), Y9, Y3, Y4)
	IQ2_CODES(24)
	VPSHUFB kt2BcW<>+32(SB), Y1, Y2
	VPSHUFB kt2BcW<>+32(SB), Y15, Y3
	K2DOT(36, (BX), Y8, Y2, Y4)
	K2DOT(36, (BX), Y9, Y3, Y4)
	IQ2_CODES(40)
	VPSHUFB kt2BcW<>+64(SB), Y1, Y2
	VPSHUFB kt2BcW<>+64(SB), Y15, Y3
	K2DOT(68, (BX), Y8, Y2, Y4)
	K2DOT(68, (BX), Y9, Y3, Y4)
	IQ2_CODES(56)
	VPSHUFB kt2BcW<>+96(SB), Y1, Y2
	VPSHUFB kt2BcW<>+96(SB), Y15, Y3
	K2DOT(100, (BX), Y8, Y2, Y4)
	K2DOT(100, (BX), Y9, Y3, Y4)
	IQ2_CODES(72)
	VPSHUFB kt2BcW<>+128(SB), Y1, Y2
	VPSHUFB kt2BcW<>+128(SB), Y15, Y3
	K2DOT(132, (BX), Y8, Y2, Y4)
	K2DOT(132, (BX), Y9, Y3, Y4)
	IQ2_CODES(88)
	VPSHUFB kt2BcW<>+160(SB), Y1, Y2
	VPSHUFB kt2BcW<>+160(SB), Y15, Y3
	K2DOT(164, (BX), Y8, Y2, Y4)
	K2DOT(164, (BX), Y9, Y3, Y4)
	IQ2_CODES(104)
	VPSHUFB kt2BcW<>+192(SB), Y1, Y2
	VPSHUFB kt2BcW<>+192(SB), Y15, Y3
	K2DOT(196, (BX), Y8, Y2, Y4)
	K2DOT(196, (BX), Y9, Y3, Y4)
	IQ2_CODES(120)
	VPSHUFB kt2BcW<>+224(SB), Y1, Y2
	VPSHUFB kt2BcW<>+224(SB), Y15, Y3
	K2DOT(228, (BX), Y8, Y2, Y4)
	K2DOT(228, (BX), Y9, Y3, Y4)
	MOVWLZX 0(AX), DX
	VMOVD DX, X8
	VCVTPH2PS X8, X8
	VBROADCASTSS X8, Y8
	IQX2_FIN((BX), Y4, Y11)
	ADDQ $136, AX
	ADDQ $292, BX
	DECQ CX
	JNZ iqx1avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ iqx1avx2_row
	VZEROUPPER
	RET

// func iq4xsTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4xsTile4AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	VBROADCASTI128 kt2IQLo<>(SB), Y0
	MOVQ $0x0f0f0f0f0f0f0f0f, R10
	MOVQ $0x3030303030303030, R13
iqx4avx2_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
iqx4avx2_sb:
	IQX2_SB
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	IQ2_CODES(8)
	VPSHUFB kt2BcW<>+0(SB), Y1, Y2
	VPSHUFB kt2BcW<>+0(SB), Y15, Y3
	K2DOT(4, (BX), Y8, Y2, Y4)
	K2DOT(4, (BX), Y9, Y3, Y4)
	K2DOT(4, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(4, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(4, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(4, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(4, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(4, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(24)
	VPSHUFB kt2BcW<>+32(SB), Y1, Y2
	VPSHUFB kt2BcW<>+32(SB), Y15, Y3
	K2DOT(36, (BX), Y8, Y2, Y4)
	K2DOT(36, (BX), Y9, Y3, Y4)
	K2DOT(36, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(36, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(36, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(36, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(36, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(36, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(40)
	VPSHUFB kt2BcW<>+64(SB), Y1, Y2
	VPSHUFB kt2BcW<>+64(SB), Y15, Y3
	K2DOT(68, (BX), Y8, Y2, Y4)
	K2DOT(68, (BX), Y9, Y3, Y4)
	K2DOT(68, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(68, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(68, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(68, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(68, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(68, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(56)
	VPSHUFB kt2BcW<>+96(SB), Y1, Y2
	VPSHUFB kt2BcW<>+96(SB), Y15, Y3
	K2DOT(100, (BX), Y8, Y2, Y4)
	K2DOT(100, (BX), Y9, Y3, Y4)
	K2DOT(100, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(100, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(100, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(100, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(100, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(100, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(72)
	VPSHUFB kt2BcW<>+128(SB), Y1, Y2
	VPSHUFB kt2BcW<>+128(SB), Y15, Y3
	K2DOT(132, (BX), Y8, Y2, Y4)
	K2DOT(132, (BX), Y9, Y3, Y4)
	K2DOT(132, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(132, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(132, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(132, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(132, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(132, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(88)
	VPSHUFB kt2BcW<>+160(SB), Y1, Y2
	VPSHUFB kt2BcW<>+160(SB), Y15, Y3
	K2DOT(164, (BX), Y8, Y2, Y4)
	K2DOT(164, (BX), Y9, Y3, Y4)
	K2DOT(164, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(164, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(164, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(164, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(164, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(164, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(104)
	VPSHUFB kt2BcW<>+192(SB), Y1, Y2
	VPSHUFB kt2BcW<>+192(SB), Y15, Y3
	K2DOT(196, (BX), Y8, Y2, Y4)
	K2DOT(196, (BX), Y9, Y3, Y4)
	K2DOT(196, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(196, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(196, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(196, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(196, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(196, (BX)(R12*1), Y9, Y3, Y7)
	IQ2_CODES(120)
	VPSHUFB kt2BcW<>+224(SB), Y1, Y2
	VPSHUFB kt2BcW<>+224(SB), Y15, Y3
	K2DOT(228, (BX), Y8, Y2, Y4)
	K2DOT(228, (BX), Y9, Y3, Y4)
	K2DOT(228, (BX)(R11*1), Y8, Y2, Y5)
	K2DOT(228, (BX)(R11*1), Y9, Y3, Y5)
	K2DOT(228, (BX)(R11*2), Y8, Y2, Y6)
	K2DOT(228, (BX)(R11*2), Y9, Y3, Y6)
	K2DOT(228, (BX)(R12*1), Y8, Y2, Y7)
	K2DOT(228, (BX)(R12*1), Y9, Y3, Y7)
	MOVWLZX 0(AX), DX
	VMOVD DX, X8
	VCVTPH2PS X8, X8
	VBROADCASTSS X8, Y8
	IQX2_FIN((BX), Y4, Y11)
	IQX2_FIN((BX)(R11*1), Y5, Y12)
	IQX2_FIN((BX)(R11*2), Y6, Y13)
	IQX2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $136, AX
	ADDQ $292, BX
	DECQ CX
	JNZ iqx4avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ iqx4avx2_row
	VZEROUPPER
	RET

// func iq4xsTile1AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4xsTile1AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	VBROADCASTI128 kt2IQLo<>(SB), Y0
	MOVQ $0x0f0f0f0f0f0f0f0f, R10
	MOVQ $0x3030303030303030, R13
iqx1avxvnni_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
iqx1avxvnni_sb:
	IQX2_SB
	VPXOR Y4, Y4, Y4
	IQ2_CODES(8)
	VPSHUFB kt2BcW<>+0(SB), Y1, Y2
	VPSHUFB kt2BcW<>+0(SB), Y15, Y3
	K2DOTV(4, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(4, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(24)
	VPSHUFB kt2BcW<>+32(SB), Y1, Y2
	VPSHUFB kt2BcW<>+32(SB), Y15, Y3
	K2DOTV(36, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(36, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(40)
	VPSHUFB kt2BcW<>+64(SB), Y1, Y2
	VPSHUFB kt2BcW<>+64(SB), Y15, Y3
	K2DOTV(68, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(68, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(56)
	VPSHUFB kt2BcW<>+96(SB), Y1, Y2
	VPSHUFB kt2BcW<>+96(SB), Y15, Y3
	K2DOTV(100, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(100, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(72)
	VPSHUFB kt2BcW<>+128(SB), Y1, Y2
	VPSHUFB kt2BcW<>+128(SB), Y15, Y3
	K2DOTV(132, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(132, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(88)
	VPSHUFB kt2BcW<>+160(SB), Y1, Y2
	VPSHUFB kt2BcW<>+160(SB), Y15, Y3
	K2DOTV(164, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(164, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(104)
	VPSHUFB kt2BcW<>+192(SB), Y1, Y2
	VPSHUFB kt2BcW<>+192(SB), Y15, Y3
	K2DOTV(196, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(196, (BX), Y9, DPW_Y4_Y3)
	IQ2_CODES(120)
	VPSHUFB kt2BcW<>+224(SB), Y1, Y2
	VPSHUFB kt2BcW<>+224(SB), Y15, Y3
	K2DOTV(228, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(228, (BX), Y9, DPW_Y4_Y3)
	MOVWLZX 0(AX), DX
	VMOVD DX, X8
	VCVTPH2PS X8, X8
	VBROADCASTSS X8, Y8
	IQX2_FIN((BX), Y4, Y11)
	ADDQ $136, AX
	ADDQ $292, BX
	DECQ CX
	JNZ iqx1avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ iqx1avxvnni_row
	VZEROUPPER
	RET

// func iq4xsTile4AVXVNNI(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4xsTile4AVXVNNI(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	VBROADCASTI128 kt2IQLo<>(SB), Y0
	MOVQ $0x0f0f0f0f0f0f0f0f, R10
	MOVQ $0x3030303030303030, R13
iqx4avxvnni_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
iqx4avxvnni_sb:
	IQX2_SB
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	IQ2_CODES(8)
	VPSHUFB kt2BcW<>+0(SB), Y1, Y2
	VPSHUFB kt2BcW<>+0(SB), Y15, Y3
	K2DOTV(4, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(4, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(4, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(4, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(4, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(4, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(4, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(4, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(24)
	VPSHUFB kt2BcW<>+32(SB), Y1, Y2
	VPSHUFB kt2BcW<>+32(SB), Y15, Y3
	K2DOTV(36, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(36, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(36, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(36, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(36, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(36, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(36, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(36, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(40)
	VPSHUFB kt2BcW<>+64(SB), Y1, Y2
	VPSHUFB kt2BcW<>+64(SB), Y15, Y3
	K2DOTV(68, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(68, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(68, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(68, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(68, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(68, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(68, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(68, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(56)
	VPSHUFB kt2BcW<>+96(SB), Y1, Y2
	VPSHUFB kt2BcW<>+96(SB), Y15, Y3
	K2DOTV(100, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(100, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(100, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(100, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(100, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(100, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(100, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(100, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(72)
	VPSHUFB kt2BcW<>+128(SB), Y1, Y2
	VPSHUFB kt2BcW<>+128(SB), Y15, Y3
	K2DOTV(132, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(132, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(132, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(132, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(132, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(132, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(132, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(132, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(88)
	VPSHUFB kt2BcW<>+160(SB), Y1, Y2
	VPSHUFB kt2BcW<>+160(SB), Y15, Y3
	K2DOTV(164, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(164, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(164, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(164, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(164, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(164, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(164, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(164, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(104)
	VPSHUFB kt2BcW<>+192(SB), Y1, Y2
	VPSHUFB kt2BcW<>+192(SB), Y15, Y3
	K2DOTV(196, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(196, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(196, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(196, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(196, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(196, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(196, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(196, (BX)(R12*1), Y9, DPW_Y7_Y3)
	IQ2_CODES(120)
	VPSHUFB kt2BcW<>+224(SB), Y1, Y2
	VPSHUFB kt2BcW<>+224(SB), Y15, Y3
	K2DOTV(228, (BX), Y8, DPW_Y4_Y2)
	K2DOTV(228, (BX), Y9, DPW_Y4_Y3)
	K2DOTV(228, (BX)(R11*1), Y8, DPW_Y5_Y2)
	K2DOTV(228, (BX)(R11*1), Y9, DPW_Y5_Y3)
	K2DOTV(228, (BX)(R11*2), Y8, DPW_Y6_Y2)
	K2DOTV(228, (BX)(R11*2), Y9, DPW_Y6_Y3)
	K2DOTV(228, (BX)(R12*1), Y8, DPW_Y7_Y2)
	K2DOTV(228, (BX)(R12*1), Y9, DPW_Y7_Y3)
	MOVWLZX 0(AX), DX
	VMOVD DX, X8
	VCVTPH2PS X8, X8
	VBROADCASTSS X8, Y8
	IQX2_FIN((BX), Y4, Y11)
	IQX2_FIN((BX)(R11*1), Y5, Y12)
	IQX2_FIN((BX)(R11*2), Y6, Y13)
	IQX2_FIN((BX)(R12*1), Y7, Y14)
	ADDQ $136, AX
	ADDQ $292, BX
	DECQ CX
	JNZ iqx4avxvnni_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ iqx4avxvnni_row
	VZEROUPPER
	RET

// func iq4nlTile1AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4nlTile1AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	VBROADCASTI128 kt2IQLo<>(SB), Y0
iqn1avx2_row:
	VXORPS Y11, Y11, Y11
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
iqn1avx2_sb:
	IQ2_CODES(2)
	MOVWLZX 0(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(2, 0, (BX), Y11)
	IQ2_CODES(20)
	MOVWLZX 18(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(36, 34, (BX), Y11)
	IQ2_CODES(38)
	MOVWLZX 36(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(70, 68, (BX), Y11)
	IQ2_CODES(56)
	MOVWLZX 54(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(104, 102, (BX), Y11)
	IQ2_CODES(74)
	MOVWLZX 72(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(138, 136, (BX), Y11)
	IQ2_CODES(92)
	MOVWLZX 90(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(172, 170, (BX), Y11)
	IQ2_CODES(110)
	MOVWLZX 108(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(206, 204, (BX), Y11)
	IQ2_CODES(128)
	MOVWLZX 126(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(240, 238, (BX), Y11)
	ADDQ $144, AX
	ADDQ $272, BX
	DECQ CX
	JNZ iqn1avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	STORE2(Y11, X11, (DI))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ iqn1avx2_row
	VZEROUPPER
	RET

// func iq4nlTile4AVX2(nb int, x *byte, ldx, m int, y *byte, ldy int, c *float32, ldc, accum int)
TEXT ·iq4nlTile4AVX2(SB), NOSPLIT, $0-72
	MOVQ x+8(FP), SI
	MOVQ c+48(FP), DI
	MOVQ ldy+40(FP), R11
	LEAQ (R11)(R11*2), R12
	VBROADCASTI128 kt2IQLo<>(SB), Y0
iqn4avx2_row:
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	MOVQ SI, AX
	MOVQ y+32(FP), BX
	MOVQ nb+0(FP), CX
iqn4avx2_sb:
	IQ2_CODES(2)
	MOVWLZX 0(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(2, 0, (BX), Y11)
	IQN2_BLK(2, 0, (BX)(R11*1), Y12)
	IQN2_BLK(2, 0, (BX)(R11*2), Y13)
	IQN2_BLK(2, 0, (BX)(R12*1), Y14)
	IQ2_CODES(20)
	MOVWLZX 18(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(36, 34, (BX), Y11)
	IQN2_BLK(36, 34, (BX)(R11*1), Y12)
	IQN2_BLK(36, 34, (BX)(R11*2), Y13)
	IQN2_BLK(36, 34, (BX)(R12*1), Y14)
	IQ2_CODES(38)
	MOVWLZX 36(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(70, 68, (BX), Y11)
	IQN2_BLK(70, 68, (BX)(R11*1), Y12)
	IQN2_BLK(70, 68, (BX)(R11*2), Y13)
	IQN2_BLK(70, 68, (BX)(R12*1), Y14)
	IQ2_CODES(56)
	MOVWLZX 54(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(104, 102, (BX), Y11)
	IQN2_BLK(104, 102, (BX)(R11*1), Y12)
	IQN2_BLK(104, 102, (BX)(R11*2), Y13)
	IQN2_BLK(104, 102, (BX)(R12*1), Y14)
	IQ2_CODES(74)
	MOVWLZX 72(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(138, 136, (BX), Y11)
	IQN2_BLK(138, 136, (BX)(R11*1), Y12)
	IQN2_BLK(138, 136, (BX)(R11*2), Y13)
	IQN2_BLK(138, 136, (BX)(R12*1), Y14)
	IQ2_CODES(92)
	MOVWLZX 90(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(172, 170, (BX), Y11)
	IQN2_BLK(172, 170, (BX)(R11*1), Y12)
	IQN2_BLK(172, 170, (BX)(R11*2), Y13)
	IQN2_BLK(172, 170, (BX)(R12*1), Y14)
	IQ2_CODES(110)
	MOVWLZX 108(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(206, 204, (BX), Y11)
	IQN2_BLK(206, 204, (BX)(R11*1), Y12)
	IQN2_BLK(206, 204, (BX)(R11*2), Y13)
	IQN2_BLK(206, 204, (BX)(R12*1), Y14)
	IQ2_CODES(128)
	MOVWLZX 126(AX), DX
	VMOVD DX, X2
	VCVTPH2PS X2, X2
	VBROADCASTSS X2, Y2
	IQN2_BLK(240, 238, (BX), Y11)
	IQN2_BLK(240, 238, (BX)(R11*1), Y12)
	IQN2_BLK(240, 238, (BX)(R11*2), Y13)
	IQN2_BLK(240, 238, (BX)(R12*1), Y14)
	ADDQ $144, AX
	ADDQ $272, BX
	DECQ CX
	JNZ iqn4avx2_sb
	MOVQ accum+64(FP), DX
	NEGQ DX
	VMOVQ DX, X3
	MOVQ ldc+56(FP), R8
	SHLQ $2, R8
	LEAQ (DI)(R8*2), R9
	STORE2(Y11, X11, (DI))
	STORE2(Y12, X12, (DI)(R8*1))
	STORE2(Y13, X13, (R9))
	STORE2(Y14, X14, (R9)(R8*1))
	ADDQ ldx+16(FP), SI
	ADDQ $4, DI
	DECQ m+24(FP)
	JNZ iqn4avx2_row
	VZEROUPPER
	RET
