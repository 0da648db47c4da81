//go:build amd64 && !purego

#include "textflag.h"

// Q4_0 mat-vec rows with AVX-512 VNNI + VBMI, four blocks (128 weights, 72 bytes) per step.
//
// The activation row is prepared once (prepQ4x4) into 256 bytes per group of four Q8_0 blocks:
//   0..63    y[0:16] of blocks 0..3 (int8), one 16-byte lane per block
//   64..127  y[16:32] of blocks 0..3
//   128..191 int32 lanes -8*(y[4l..4l+3] + y[16+4l..16+4l+3]) (lane l of block i at 16i+4l)
//   192..255 f32(d) of block i repeated in its four lanes
// Per step the weight group is loaded twice (bytes 0..63 and 8..71); VPERMT2B gathers the four
// blocks' 16 quant bytes into one register and VPERMB their four scales, replicated per lane.
// The low nibbles (elements 0..15 of each block) pair with y[0:16] and the high ones with
// y[16:32]; VPDPBUSD accumulates u8 nibbles x s8 y onto -8·Σy, giving Σ (nib-8)·y per lane.

DATA q4x4QIdx<>+0(SB)/8, $0x0908070605040302
DATA q4x4QIdx<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA q4x4QIdx<>+16(SB)/8, $0x1b1a191817161514
DATA q4x4QIdx<>+24(SB)/8, $0x232221201f1e1d1c
DATA q4x4QIdx<>+32(SB)/8, $0x2d2c2b2a29282726
DATA q4x4QIdx<>+40(SB)/8, $0x3534333231302f2e
DATA q4x4QIdx<>+48(SB)/8, $0x3f3e3d3c3b3a3938
DATA q4x4QIdx<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL q4x4QIdx<>(SB), RODATA|NOPTR, $64

DATA q4x4SIdx<>+0(SB)/8, $0x0100010001000100
DATA q4x4SIdx<>+8(SB)/8, $0x1312131213121312
DATA q4x4SIdx<>+16(SB)/8, $0x2524252425242524
DATA q4x4SIdx<>+24(SB)/8, $0x3736373637363736
DATA q4x4SIdx<>+32(SB)/8, $0x0000000000000000
DATA q4x4SIdx<>+40(SB)/8, $0x0000000000000000
DATA q4x4SIdx<>+48(SB)/8, $0x0000000000000000
DATA q4x4SIdx<>+56(SB)/8, $0x0000000000000000
GLOBL q4x4SIdx<>(SB), RODATA|NOPTR, $64

DATA q4x4Nib<>+0(SB)/4, $0x0f0f0f0f
GLOBL q4x4Nib<>(SB), RODATA|NOPTR, $4

// func dotQ4_0Q4x4VNNI(ng int, x *byte, prep *byte) float32
// Σ over ng groups of four Q4_0 blocks at x against the prepared activation groups at prep.
TEXT ·dotQ4_0Q4x4VNNI(SB), NOSPLIT, $0-28
	MOVQ           ng+0(FP), CX
	MOVQ           x+8(FP), SI
	MOVQ           prep+16(FP), DI
	VMOVDQU64      q4x4QIdx<>(SB), Z10
	VMOVDQU64      q4x4SIdx<>(SB), Z11
	VPBROADCASTD   q4x4Nib<>(SB), Z12
	VPXORD         Z0, Z0, Z0
	VPXORD         Z1, Z1, Z1
	TESTQ          CX, CX
	JZ             q4x4_done

q4x4_loop:
	VMOVDQU64      (SI), Z2
	VPERMT2B       8(SI), Z10, Z2      // Z2 = quant bytes of the four blocks
	VPERMB         (SI), Z11, Z3       // Y3 = the four scales, each repeated 4 times (f16)
	VCVTPH2PS      Y3, Z3
	VMULPS         192(DI), Z3, Z3     // dx*dy per lane
	VPSRLW         $4, Z2, Z4
	VPANDD         Z12, Z2, Z2         // low nibbles
	VPANDD         Z12, Z4, Z4         // high nibbles
	VMOVDQU32      128(DI), Z5         // -8·Σy per lane
	VPDPBUSD       (DI), Z2, Z5
	VPDPBUSD       64(DI), Z4, Z5
	VCVTDQ2PS      Z5, Z5
	VFMADD231PS    Z3, Z5, Z0
	ADDQ           $72, SI
	ADDQ           $256, DI
	DECQ           CX
	JNZ            q4x4_loop

q4x4_done:
	VADDPS         Z1, Z0, Z0
	VEXTRACTF32X8  $1, Z0, Y1
	VADDPS         Y1, Y0, Y0
	VEXTRACTF128   $1, Y0, X1
	VADDPS         X1, X0, X0
	VMOVHLPS       X0, X1, X1
	VADDPS         X1, X0, X0
	VMOVSHDUP      X0, X1
	VADDSS         X1, X0, X0
	VMOVSS         X0, ret+24(FP)
	VZEROUPPER
	RET
