//go:build amd64 && !purego

#include "textflag.h"

// Mat-vec rows on standard-layout Q4_0, Q4_1 and Q8_0 weights, AVX-512 VNNI + VBMI: four weight
// rows (lda bytes apart) against one activation row prepared per group of four blocks (prepMV4,
// 256 bytes: y[0:16] of the four blocks, y[16:32], then 16 int32 corrections — Q4_0: -8·Σy,
// Q8_0: -128·Σy of the lane's 8 quants; Q4_1: 0 — and f32 dy per lane; Q4_1 adds 64 bytes of f32
// sy in lane 0 of each block, zero elsewhere). Per step and row four blocks' quants are gathered
// by byte permutes into 16-byte lanes (lane i: block i; Q4: low nibbles pair with y[0:16], high
// with y[16:32]; Q8_0: quants 0..15 and 16..31, XOR 0x80 to unsigned), VPDPBUSD accumulates the
// lane's integer sum onto its correction (exact), and acc += float(sum) * (dx*dy)
// (Q4_1: + mx*sy).
//
// Each row's blocks are decoded once per step and dotted with nj (1..4) prepared activation rows
// (ps bytes apart), so n = 2..4 read the weights once; the row sums are reduced and stored to
// out[4*j+r] (row r's dot with activation row j). What brought the kernels to the f32 mat-vec's
// bandwidth (profiled with perf: the time sat on the first load of each row): every step loads
// the activation groups once into registers shared by the four rows (four times fewer L1 loads)
// and prefetches each row stream MVPF bytes ahead.
//
// func mvQ40x4VNNI(ng int, x *byte, lda int, prep *byte, ps, nj int, out *float32)
// func mvQ41x4VNNI(ng int, x *byte, lda int, prep *byte, ps, nj int, out *float32)
// func mvQ80x4VNNI(ng int, x *byte, lda int, prep *byte, ps, nj int, out *float32)
//
// Registers: SI row 0 (rows 1..3 at R8, 2*R8, R9 = 3*lda), DI/R10/R11/R12 prep rows 0..3, Z0-Z3,
// Z4-Z7, Z20-Z23, Z24-Z27 the accumulators of activation rows 0..3, Z8-Z11 tables/masks,
// Z12-Z17 temporaries. For nj ≤ 3 Z24-Z31 hold the groups of activation rows 0 and 1, row 2's
// in the registers left (Z11, Z15, Z18, Z19 as free per type, the rest read from memory); for
// nj = 4 Z28-Z31 hold row 0's, the registers left row 1's, rows 2 and 3 are read from memory.

DATA mvQ80Lo<>+0(SB)/8, $0x0908070605040302
DATA mvQ80Lo<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA mvQ80Lo<>+16(SB)/8, $0x2b2a292827262524
DATA mvQ80Lo<>+24(SB)/8, $0x333231302f2e2d2c
DATA mvQ80Lo<>+32(SB)/8, $0x4d4c4b4a49484746
DATA mvQ80Lo<>+40(SB)/8, $0x5554535251504f4e
DATA mvQ80Lo<>+48(SB)/8, $0x6f6e6d6c6b6a6968
DATA mvQ80Lo<>+56(SB)/8, $0x7776757473727170
GLOBL mvQ80Lo<>(SB), RODATA|NOPTR, $64

DATA mvQ80Hi<>+0(SB)/8, $0x11100f0e0d0c0b0a
DATA mvQ80Hi<>+8(SB)/8, $0x1918171615141312
DATA mvQ80Hi<>+16(SB)/8, $0x333231302f2e2d2c
DATA mvQ80Hi<>+24(SB)/8, $0x3b3a393837363534
DATA mvQ80Hi<>+32(SB)/8, $0x5554535251504f4e
DATA mvQ80Hi<>+40(SB)/8, $0x5d5c5b5a59585756
DATA mvQ80Hi<>+48(SB)/8, $0x7776757473727170
DATA mvQ80Hi<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL mvQ80Hi<>(SB), RODATA|NOPTR, $64

DATA mvQ80S<>+0(SB)/8, $0x0100010001000100
DATA mvQ80S<>+8(SB)/8, $0x2322232223222322
DATA mvQ80S<>+16(SB)/8, $0x4544454445444544
DATA mvQ80S<>+24(SB)/8, $0x6766676667666766
DATA mvQ80S<>+32(SB)/8, $0x0000000000000000
DATA mvQ80S<>+40(SB)/8, $0x0000000000000000
DATA mvQ80S<>+48(SB)/8, $0x0000000000000000
DATA mvQ80S<>+56(SB)/8, $0x0000000000000000
GLOBL mvQ80S<>(SB), RODATA|NOPTR, $64

DATA mvQ41Q<>+0(SB)/8, $0x0b0a090807060504
DATA mvQ41Q<>+8(SB)/8, $0x131211100f0e0d0c
DATA mvQ41Q<>+16(SB)/8, $0x1f1e1d1c1b1a1918
DATA mvQ41Q<>+24(SB)/8, $0x2726252423222120
DATA mvQ41Q<>+32(SB)/8, $0x333231302f2e2d2c
DATA mvQ41Q<>+40(SB)/8, $0x3b3a393837363534
DATA mvQ41Q<>+48(SB)/8, $0x7776757473727170
DATA mvQ41Q<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL mvQ41Q<>(SB), RODATA|NOPTR, $64

DATA mvQ41D<>+0(SB)/8, $0x0100010001000100
DATA mvQ41D<>+8(SB)/8, $0x1514151415141514
DATA mvQ41D<>+16(SB)/8, $0x2928292829282928
DATA mvQ41D<>+24(SB)/8, $0x3d3c3d3c3d3c3d3c
DATA mvQ41D<>+32(SB)/8, $0x0000000000000000
DATA mvQ41D<>+40(SB)/8, $0x0000000000000000
DATA mvQ41D<>+48(SB)/8, $0x0000000000000000
DATA mvQ41D<>+56(SB)/8, $0x0000000000000000
GLOBL mvQ41D<>(SB), RODATA|NOPTR, $64

DATA mvQ41M<>+0(SB)/8, $0x0302030203020302
DATA mvQ41M<>+8(SB)/8, $0x1716171617161716
DATA mvQ41M<>+16(SB)/8, $0x2b2a2b2a2b2a2b2a
DATA mvQ41M<>+24(SB)/8, $0x3f3e3f3e3f3e3f3e
DATA mvQ41M<>+32(SB)/8, $0x0000000000000000
DATA mvQ41M<>+40(SB)/8, $0x0000000000000000
DATA mvQ41M<>+48(SB)/8, $0x0000000000000000
DATA mvQ41M<>+56(SB)/8, $0x0000000000000000
GLOBL mvQ41M<>(SB), RODATA|NOPTR, $64

DATA mvQ40Q<>+0(SB)/8, $0x0908070605040302
DATA mvQ40Q<>+8(SB)/8, $0x11100f0e0d0c0b0a
DATA mvQ40Q<>+16(SB)/8, $0x1b1a191817161514
DATA mvQ40Q<>+24(SB)/8, $0x232221201f1e1d1c
DATA mvQ40Q<>+32(SB)/8, $0x2d2c2b2a29282726
DATA mvQ40Q<>+40(SB)/8, $0x3534333231302f2e
DATA mvQ40Q<>+48(SB)/8, $0x3f3e3d3c3b3a3938
DATA mvQ40Q<>+56(SB)/8, $0x7f7e7d7c7b7a7978
GLOBL mvQ40Q<>(SB), RODATA|NOPTR, $64
DATA mvQ40S<>+0(SB)/8, $0x0100010001000100
DATA mvQ40S<>+8(SB)/8, $0x1312131213121312
DATA mvQ40S<>+16(SB)/8, $0x2524252425242524
DATA mvQ40S<>+24(SB)/8, $0x3736373637363736
DATA mvQ40S<>+32(SB)/8, $0x0000000000000000
DATA mvQ40S<>+40(SB)/8, $0x0000000000000000
DATA mvQ40S<>+48(SB)/8, $0x0000000000000000
DATA mvQ40S<>+56(SB)/8, $0x0000000000000000
GLOBL mvQ40S<>(SB), RODATA|NOPTR, $64
DATA mvNib<>+0(SB)/4, $0x0f0f0f0f
GLOBL mvNib<>(SB), RODATA|NOPTR, $4

// REDUCE4(a, b, c, d, ...) sums the lanes of a..d (Z0..Z15: VHADDPS has no EVEX form) into
// out[off/4 .. off/4+3] (BX); Z28..Z31 are temporaries.
#define REDUCE4(za, zb, zc, zd, ya, yb, yc, yd, xa, off) \
	VEXTRACTF32X8 $1, za, Y28 \
	VADDPS Y28, ya, ya \
	VEXTRACTF32X8 $1, zb, Y29 \
	VADDPS Y29, yb, yb \
	VEXTRACTF32X8 $1, zc, Y30 \
	VADDPS Y30, yc, yc \
	VEXTRACTF32X8 $1, zd, Y31 \
	VADDPS Y31, yd, yd \
	VHADDPS yb, ya, ya \
	VHADDPS yd, yc, yc \
	VHADDPS yc, ya, ya \
	VEXTRACTF32X4 $1, ya, X28 \
	VADDPS X28, xa, xa \
	VMOVUPS xa, off(BX)

// PF4(off) prefetches the line MVPF+off bytes ahead of each of the four rows: the four row
// streams are more than the hardware prefetcher keeps ahead of (profiles showed the kernels
// waiting on the first load of every row), so each step asks for the lines MVPF bytes ahead.
#define MVPF 3072
#define PF4(off) \
	PREFETCHT0 (MVPF+off)(SI) \
	PREFETCHT0 (MVPF+off)(SI)(R8*1) \
	PREFETCHT0 (MVPF+off)(SI)(R8*2) \
	PREFETCHT0 (MVPF+off)(SI)(R9*1)

#define PROLOGUE \
	MOVQ ng+0(FP), CX \
	MOVQ x+8(FP), SI \
	MOVQ lda+16(FP), R8 \
	LEAQ (R8)(R8*2), R9 \
	MOVQ prep+24(FP), DI \
	MOVQ ps+32(FP), R10 \
	LEAQ (DI)(R10*1), R10 \
	MOVQ ps+32(FP), R11 \
	LEAQ (R10)(R11*1), R11 \
	MOVQ ps+32(FP), R12 \
	LEAQ (R11)(R12*1), R12 \
	MOVQ nj+40(FP), DX \
	MOVQ out+48(FP), BX \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27

// DEC40(b0, b8): one Q4_0 row's four blocks at b0 — Z12 low nibbles, Z14 high nibbles (lane i:
// block i), Z13 the blocks' dx (f32, per lane).
#define DEC40(b0, b8) \
	VMOVDQU64 b0, Z12 \
	VPERMB Z12, Z9, Z13 \
	VPERMT2B b8, Z8, Z12 \
	VCVTPH2PS Y13, Z13 \
	VPSRLW $4, Z12, Z14 \
	VPANDD Z10, Z12, Z12 \
	VPANDD Z10, Z14, Z14

// DEC80(b0, b8, b64, b72): one Q8_0 row's four blocks — Z12 quants 0..15, Z14 quants 16..31
// (XOR 0x80: unsigned), Z13 dx.
#define DEC80(b0, b8, b64, b72) \
	VMOVDQU64 b0, Z12 \
	VMOVDQA64 Z12, Z13 \
	VPERMT2B b64, Z8, Z12 \
	VPERMT2B b64, Z11, Z13 \
	VMOVDQU64 b8, Z14 \
	VPERMT2B b72, Z9, Z14 \
	VPXORD Z10, Z12, Z12 \
	VPXORD Z10, Z14, Z14 \
	VCVTPH2PS Y13, Z13

// DEC41(b0, b16): one Q4_1 row's four blocks — Z12/Z14 low/high nibbles, Z13 dx, Z15 mx.
#define DEC41(b0, b16) \
	VMOVDQU64 b0, Z12 \
	VPERMB Z12, Z9, Z13 \
	VPERMB Z12, Z11, Z15 \
	VPERMT2B b16, Z8, Z12 \
	VCVTPH2PS Y13, Z13 \
	VCVTPH2PS Y15, Z15 \
	VPSRLW $4, Z12, Z14 \
	VPANDD Z10, Z12, Z12 \
	VPANDD Z10, Z14, Z14

// DOT(P, acc): the decoded row against the prepared activation group at P: the lanes' integer
// sums on their corrections, acc += float(sum) * (dx*dy).
#define DOT(P, acc) \
	VMOVDQU32 128(P), Z16 \
	VPDPBUSD (P), Z12, Z16 \
	VPDPBUSD 64(P), Z14, Z16 \
	VCVTDQ2PS Z16, Z16 \
	VMULPS 192(P), Z13, Z17 \
	VFMADD231PS Z17, Z16, acc

// LOADP(P, a, b, c, d) loads the prepared activation group at P into a..d (the four weight rows
// share the registers instead of loading the group four times); LOADP41 loads Q4_1's (y[0:16],
// y[16:32], dy, sy: no corrections).
#define LOADP(P, a, b, c, d) \
	VMOVDQU64 (P), a \
	VMOVDQU64 64(P), b \
	VMOVDQU64 128(P), c \
	VMOVDQU64 192(P), d

#define LOADP41(P, a, b, c, d) \
	VMOVDQU64 (P), a \
	VMOVDQU64 64(P), b \
	VMOVDQU64 192(P), c \
	VMOVDQU64 256(P), d

// DOTR(acc, a, b, c, d) is DOT on a group loaded by LOADP, DOTR41 DOT41 on one loaded by LOADP41.
#define DOTR(acc, a, b, c, d) \
	VMOVDQA64 c, Z16 \
	VPDPBUSD a, Z12, Z16 \
	VPDPBUSD b, Z14, Z16 \
	VCVTDQ2PS Z16, Z16 \
	VMULPS d, Z13, Z17 \
	VFMADD231PS Z17, Z16, acc

#define DOTR41(acc, a, b, c, d) \
	VPXORD Z16, Z16, Z16 \
	VPDPBUSD a, Z12, Z16 \
	VPDPBUSD b, Z14, Z16 \
	VCVTDQ2PS Z16, Z16 \
	VMULPS c, Z13, Z17 \
	VFMADD231PS Z17, Z16, acc \
	VFMADD231PS d, Z15, acc

// DOT41(P, acc): DOT for Q4_1 (no correction) plus acc += mx*sy.
#define DOT41(P, acc) \
	VPXORD Z16, Z16, Z16 \
	VPDPBUSD (P), Z12, Z16 \
	VPDPBUSD 64(P), Z14, Z16 \
	VCVTDQ2PS Z16, Z16 \
	VMULPS 192(P), Z13, Z17 \
	VFMADD231PS Z17, Z16, acc \
	VFMADD231PS 256(P), Z15, acc

TEXT ·mvQ40x4VNNI(SB), NOSPLIT, $0-56
	PROLOGUE
	VMOVDQU64 mvQ40Q<>(SB), Z8
	VMOVDQU64 mvQ40S<>(SB), Z9
	VPBROADCASTD mvNib<>(SB), Z10
	TESTQ CX, CX
	JZ q40done
	CMPQ DX, $2
	JLT q40loop1
	JEQ q40loop2
	CMPQ DX, $3
	JEQ q40loop3
q40loop4:
	PF4(0)
	PF4(64)
	LOADP(DI, Z28, Z29, Z30, Z31)
	LOADP(R10, Z11, Z15, Z18, Z19)
	DEC40((SI), 8(SI))
	DOTR(Z0, Z28, Z29, Z30, Z31)
	DOTR(Z4, Z11, Z15, Z18, Z19)
	DOT(R11, Z20)
	DOT(R12, Z24)
	DEC40((SI)(R8*1), 8(SI)(R8*1))
	DOTR(Z1, Z28, Z29, Z30, Z31)
	DOTR(Z5, Z11, Z15, Z18, Z19)
	DOT(R11, Z21)
	DOT(R12, Z25)
	DEC40((SI)(R8*2), 8(SI)(R8*2))
	DOTR(Z2, Z28, Z29, Z30, Z31)
	DOTR(Z6, Z11, Z15, Z18, Z19)
	DOT(R11, Z22)
	DOT(R12, Z26)
	DEC40((SI)(R9*1), 8(SI)(R9*1))
	DOTR(Z3, Z28, Z29, Z30, Z31)
	DOTR(Z7, Z11, Z15, Z18, Z19)
	DOT(R11, Z23)
	DOT(R12, Z27)
	ADDQ $72, SI
	ADDQ $256, DI
	ADDQ $256, R10
	ADDQ $256, R11
	ADDQ $256, R12
	DECQ CX
	JNZ q40loop4
	JMP q40done
q40loop3:
	PF4(0)
	PF4(64)
	LOADP(DI, Z24, Z25, Z26, Z27)
	LOADP(R10, Z28, Z29, Z30, Z31)
	LOADP(R11, Z11, Z15, Z18, Z19)
	DEC40((SI), 8(SI))
	DOTR(Z0, Z24, Z25, Z26, Z27)
	DOTR(Z4, Z28, Z29, Z30, Z31)
	DOTR(Z20, Z11, Z15, Z18, Z19)
	DEC40((SI)(R8*1), 8(SI)(R8*1))
	DOTR(Z1, Z24, Z25, Z26, Z27)
	DOTR(Z5, Z28, Z29, Z30, Z31)
	DOTR(Z21, Z11, Z15, Z18, Z19)
	DEC40((SI)(R8*2), 8(SI)(R8*2))
	DOTR(Z2, Z24, Z25, Z26, Z27)
	DOTR(Z6, Z28, Z29, Z30, Z31)
	DOTR(Z22, Z11, Z15, Z18, Z19)
	DEC40((SI)(R9*1), 8(SI)(R9*1))
	DOTR(Z3, Z24, Z25, Z26, Z27)
	DOTR(Z7, Z28, Z29, Z30, Z31)
	DOTR(Z23, Z11, Z15, Z18, Z19)
	ADDQ $72, SI
	ADDQ $256, DI
	ADDQ $256, R10
	ADDQ $256, R11
	DECQ CX
	JNZ q40loop3
	JMP q40done
q40loop2:
	PF4(0)
	PF4(64)
	LOADP(DI, Z24, Z25, Z26, Z27)
	LOADP(R10, Z28, Z29, Z30, Z31)
	DEC40((SI), 8(SI))
	DOTR(Z0, Z24, Z25, Z26, Z27)
	DOTR(Z4, Z28, Z29, Z30, Z31)
	DEC40((SI)(R8*1), 8(SI)(R8*1))
	DOTR(Z1, Z24, Z25, Z26, Z27)
	DOTR(Z5, Z28, Z29, Z30, Z31)
	DEC40((SI)(R8*2), 8(SI)(R8*2))
	DOTR(Z2, Z24, Z25, Z26, Z27)
	DOTR(Z6, Z28, Z29, Z30, Z31)
	DEC40((SI)(R9*1), 8(SI)(R9*1))
	DOTR(Z3, Z24, Z25, Z26, Z27)
	DOTR(Z7, Z28, Z29, Z30, Z31)
	ADDQ $72, SI
	ADDQ $256, DI
	ADDQ $256, R10
	DECQ CX
	JNZ q40loop2
	JMP q40done
q40loop1:
	PF4(0)
	PF4(64)
	LOADP(DI, Z24, Z25, Z26, Z27)
	DEC40((SI), 8(SI))
	DOTR(Z0, Z24, Z25, Z26, Z27)
	DEC40((SI)(R8*1), 8(SI)(R8*1))
	DOTR(Z1, Z24, Z25, Z26, Z27)
	DEC40((SI)(R8*2), 8(SI)(R8*2))
	DOTR(Z2, Z24, Z25, Z26, Z27)
	DEC40((SI)(R9*1), 8(SI)(R9*1))
	DOTR(Z3, Z24, Z25, Z26, Z27)
	ADDQ $72, SI
	ADDQ $256, DI
	DECQ CX
	JNZ q40loop1
q40done:
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 0)
	CMPQ DX, $2
	JLT q40ret
	REDUCE4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4, 16)
	CMPQ DX, $2
	JEQ q40ret
	VMOVAPS Z20, Z0
	VMOVAPS Z21, Z1
	VMOVAPS Z22, Z2
	VMOVAPS Z23, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 32)
	CMPQ DX, $3
	JEQ q40ret
	VMOVAPS Z24, Z0
	VMOVAPS Z25, Z1
	VMOVAPS Z26, Z2
	VMOVAPS Z27, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 48)
q40ret:
	VZEROUPPER
	RET

TEXT ·mvQ80x4VNNI(SB), NOSPLIT, $0-56
	PROLOGUE
	VMOVDQU64 mvQ80Lo<>(SB), Z8
	VMOVDQU64 mvQ80Hi<>(SB), Z9
	VMOVDQU64 mvQ80S<>(SB), Z11
	MOVL $0x80808080, AX
	VPBROADCASTD AX, Z10
	TESTQ CX, CX
	JZ q80done
	CMPQ DX, $2
	JLT q80loop1
	JEQ q80loop2
	CMPQ DX, $3
	JEQ q80loop3
q80loop4:
	PF4(0)
	PF4(64)
	PF4(128)
	LOADP(DI, Z28, Z29, Z30, Z31)
	VMOVDQU64 (R10), Z15
	VMOVDQU64 64(R10), Z18
	VMOVDQU64 128(R10), Z19
	DEC80((SI), 8(SI), 64(SI), 72(SI))
	DOTR(Z0, Z28, Z29, Z30, Z31)
	DOTR(Z4, Z15, Z18, Z19, 192(R10))
	DOT(R11, Z20)
	DOT(R12, Z24)
	DEC80((SI)(R8*1), 8(SI)(R8*1), 64(SI)(R8*1), 72(SI)(R8*1))
	DOTR(Z1, Z28, Z29, Z30, Z31)
	DOTR(Z5, Z15, Z18, Z19, 192(R10))
	DOT(R11, Z21)
	DOT(R12, Z25)
	DEC80((SI)(R8*2), 8(SI)(R8*2), 64(SI)(R8*2), 72(SI)(R8*2))
	DOTR(Z2, Z28, Z29, Z30, Z31)
	DOTR(Z6, Z15, Z18, Z19, 192(R10))
	DOT(R11, Z22)
	DOT(R12, Z26)
	DEC80((SI)(R9*1), 8(SI)(R9*1), 64(SI)(R9*1), 72(SI)(R9*1))
	DOTR(Z3, Z28, Z29, Z30, Z31)
	DOTR(Z7, Z15, Z18, Z19, 192(R10))
	DOT(R11, Z23)
	DOT(R12, Z27)
	ADDQ $136, SI
	ADDQ $256, DI
	ADDQ $256, R10
	ADDQ $256, R11
	ADDQ $256, R12
	DECQ CX
	JNZ q80loop4
	JMP q80done
q80loop3:
	PF4(0)
	PF4(64)
	PF4(128)
	LOADP(DI, Z24, Z25, Z26, Z27)
	LOADP(R10, Z28, Z29, Z30, Z31)
	VMOVDQU64 (R11), Z15
	VMOVDQU64 64(R11), Z18
	VMOVDQU64 128(R11), Z19
	DEC80((SI), 8(SI), 64(SI), 72(SI))
	DOTR(Z0, Z24, Z25, Z26, Z27)
	DOTR(Z4, Z28, Z29, Z30, Z31)
	DOTR(Z20, Z15, Z18, Z19, 192(R11))
	DEC80((SI)(R8*1), 8(SI)(R8*1), 64(SI)(R8*1), 72(SI)(R8*1))
	DOTR(Z1, Z24, Z25, Z26, Z27)
	DOTR(Z5, Z28, Z29, Z30, Z31)
	DOTR(Z21, Z15, Z18, Z19, 192(R11))
	DEC80((SI)(R8*2), 8(SI)(R8*2), 64(SI)(R8*2), 72(SI)(R8*2))
	DOTR(Z2, Z24, Z25, Z26, Z27)
	DOTR(Z6, Z28, Z29, Z30, Z31)
	DOTR(Z22, Z15, Z18, Z19, 192(R11))
	DEC80((SI)(R9*1), 8(SI)(R9*1), 64(SI)(R9*1), 72(SI)(R9*1))
	DOTR(Z3, Z24, Z25, Z26, Z27)
	DOTR(Z7, Z28, Z29, Z30, Z31)
	DOTR(Z23, Z15, Z18, Z19, 192(R11))
	ADDQ $136, SI
	ADDQ $256, DI
	ADDQ $256, R10
	ADDQ $256, R11
	DECQ CX
	JNZ q80loop3
	JMP q80done
q80loop2:
	PF4(0)
	PF4(64)
	PF4(128)
	LOADP(DI, Z24, Z25, Z26, Z27)
	LOADP(R10, Z28, Z29, Z30, Z31)
	DEC80((SI), 8(SI), 64(SI), 72(SI))
	DOTR(Z0, Z24, Z25, Z26, Z27)
	DOTR(Z4, Z28, Z29, Z30, Z31)
	DEC80((SI)(R8*1), 8(SI)(R8*1), 64(SI)(R8*1), 72(SI)(R8*1))
	DOTR(Z1, Z24, Z25, Z26, Z27)
	DOTR(Z5, Z28, Z29, Z30, Z31)
	DEC80((SI)(R8*2), 8(SI)(R8*2), 64(SI)(R8*2), 72(SI)(R8*2))
	DOTR(Z2, Z24, Z25, Z26, Z27)
	DOTR(Z6, Z28, Z29, Z30, Z31)
	DEC80((SI)(R9*1), 8(SI)(R9*1), 64(SI)(R9*1), 72(SI)(R9*1))
	DOTR(Z3, Z24, Z25, Z26, Z27)
	DOTR(Z7, Z28, Z29, Z30, Z31)
	ADDQ $136, SI
	ADDQ $256, DI
	ADDQ $256, R10
	DECQ CX
	JNZ q80loop2
	JMP q80done
q80loop1:
	PF4(0)
	PF4(64)
	PF4(128)
	LOADP(DI, Z24, Z25, Z26, Z27)
	DEC80((SI), 8(SI), 64(SI), 72(SI))
	DOTR(Z0, Z24, Z25, Z26, Z27)
	DEC80((SI)(R8*1), 8(SI)(R8*1), 64(SI)(R8*1), 72(SI)(R8*1))
	DOTR(Z1, Z24, Z25, Z26, Z27)
	DEC80((SI)(R8*2), 8(SI)(R8*2), 64(SI)(R8*2), 72(SI)(R8*2))
	DOTR(Z2, Z24, Z25, Z26, Z27)
	DEC80((SI)(R9*1), 8(SI)(R9*1), 64(SI)(R9*1), 72(SI)(R9*1))
	DOTR(Z3, Z24, Z25, Z26, Z27)
	ADDQ $136, SI
	ADDQ $256, DI
	DECQ CX
	JNZ q80loop1
q80done:
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 0)
	CMPQ DX, $2
	JLT q80ret
	REDUCE4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4, 16)
	CMPQ DX, $2
	JEQ q80ret
	VMOVAPS Z20, Z0
	VMOVAPS Z21, Z1
	VMOVAPS Z22, Z2
	VMOVAPS Z23, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 32)
	CMPQ DX, $3
	JEQ q80ret
	VMOVAPS Z24, Z0
	VMOVAPS Z25, Z1
	VMOVAPS Z26, Z2
	VMOVAPS Z27, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 48)
q80ret:
	VZEROUPPER
	RET

TEXT ·mvQ41x4VNNI(SB), NOSPLIT, $0-56
	PROLOGUE
	VMOVDQU64 mvQ41Q<>(SB), Z8
	VMOVDQU64 mvQ41D<>(SB), Z9
	VMOVDQU64 mvQ41M<>(SB), Z11
	VPBROADCASTD mvNib<>(SB), Z10
	TESTQ CX, CX
	JZ q41done
	CMPQ DX, $2
	JLT q41loop1
	JEQ q41loop2
	CMPQ DX, $3
	JEQ q41loop3
q41loop4:
	PF4(0)
	PF4(64)
	LOADP41(DI, Z28, Z29, Z30, Z31)
	VMOVDQU64 (R10), Z18
	VMOVDQU64 64(R10), Z19
	DEC41((SI), 16(SI))
	DOTR41(Z0, Z28, Z29, Z30, Z31)
	DOTR41(Z4, Z18, Z19, 192(R10), 256(R10))
	DOT41(R11, Z20)
	DOT41(R12, Z24)
	DEC41((SI)(R8*1), 16(SI)(R8*1))
	DOTR41(Z1, Z28, Z29, Z30, Z31)
	DOTR41(Z5, Z18, Z19, 192(R10), 256(R10))
	DOT41(R11, Z21)
	DOT41(R12, Z25)
	DEC41((SI)(R8*2), 16(SI)(R8*2))
	DOTR41(Z2, Z28, Z29, Z30, Z31)
	DOTR41(Z6, Z18, Z19, 192(R10), 256(R10))
	DOT41(R11, Z22)
	DOT41(R12, Z26)
	DEC41((SI)(R9*1), 16(SI)(R9*1))
	DOTR41(Z3, Z28, Z29, Z30, Z31)
	DOTR41(Z7, Z18, Z19, 192(R10), 256(R10))
	DOT41(R11, Z23)
	DOT41(R12, Z27)
	ADDQ $80, SI
	ADDQ $320, DI
	ADDQ $320, R10
	ADDQ $320, R11
	ADDQ $320, R12
	DECQ CX
	JNZ q41loop4
	JMP q41done
q41loop3:
	PF4(0)
	PF4(64)
	LOADP41(DI, Z24, Z25, Z26, Z27)
	LOADP41(R10, Z28, Z29, Z30, Z31)
	VMOVDQU64 (R11), Z18
	VMOVDQU64 64(R11), Z19
	DEC41((SI), 16(SI))
	DOTR41(Z0, Z24, Z25, Z26, Z27)
	DOTR41(Z4, Z28, Z29, Z30, Z31)
	DOTR41(Z20, Z18, Z19, 192(R11), 256(R11))
	DEC41((SI)(R8*1), 16(SI)(R8*1))
	DOTR41(Z1, Z24, Z25, Z26, Z27)
	DOTR41(Z5, Z28, Z29, Z30, Z31)
	DOTR41(Z21, Z18, Z19, 192(R11), 256(R11))
	DEC41((SI)(R8*2), 16(SI)(R8*2))
	DOTR41(Z2, Z24, Z25, Z26, Z27)
	DOTR41(Z6, Z28, Z29, Z30, Z31)
	DOTR41(Z22, Z18, Z19, 192(R11), 256(R11))
	DEC41((SI)(R9*1), 16(SI)(R9*1))
	DOTR41(Z3, Z24, Z25, Z26, Z27)
	DOTR41(Z7, Z28, Z29, Z30, Z31)
	DOTR41(Z23, Z18, Z19, 192(R11), 256(R11))
	ADDQ $80, SI
	ADDQ $320, DI
	ADDQ $320, R10
	ADDQ $320, R11
	DECQ CX
	JNZ q41loop3
	JMP q41done
q41loop2:
	PF4(0)
	PF4(64)
	LOADP41(DI, Z24, Z25, Z26, Z27)
	LOADP41(R10, Z28, Z29, Z30, Z31)
	DEC41((SI), 16(SI))
	DOTR41(Z0, Z24, Z25, Z26, Z27)
	DOTR41(Z4, Z28, Z29, Z30, Z31)
	DEC41((SI)(R8*1), 16(SI)(R8*1))
	DOTR41(Z1, Z24, Z25, Z26, Z27)
	DOTR41(Z5, Z28, Z29, Z30, Z31)
	DEC41((SI)(R8*2), 16(SI)(R8*2))
	DOTR41(Z2, Z24, Z25, Z26, Z27)
	DOTR41(Z6, Z28, Z29, Z30, Z31)
	DEC41((SI)(R9*1), 16(SI)(R9*1))
	DOTR41(Z3, Z24, Z25, Z26, Z27)
	DOTR41(Z7, Z28, Z29, Z30, Z31)
	ADDQ $80, SI
	ADDQ $320, DI
	ADDQ $320, R10
	DECQ CX
	JNZ q41loop2
	JMP q41done
q41loop1:
	PF4(0)
	PF4(64)
	LOADP41(DI, Z24, Z25, Z26, Z27)
	DEC41((SI), 16(SI))
	DOTR41(Z0, Z24, Z25, Z26, Z27)
	DEC41((SI)(R8*1), 16(SI)(R8*1))
	DOTR41(Z1, Z24, Z25, Z26, Z27)
	DEC41((SI)(R8*2), 16(SI)(R8*2))
	DOTR41(Z2, Z24, Z25, Z26, Z27)
	DEC41((SI)(R9*1), 16(SI)(R9*1))
	DOTR41(Z3, Z24, Z25, Z26, Z27)
	ADDQ $80, SI
	ADDQ $320, DI
	DECQ CX
	JNZ q41loop1
q41done:
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 0)
	CMPQ DX, $2
	JLT q41ret
	REDUCE4(Z4, Z5, Z6, Z7, Y4, Y5, Y6, Y7, X4, 16)
	CMPQ DX, $2
	JEQ q41ret
	VMOVAPS Z20, Z0
	VMOVAPS Z21, Z1
	VMOVAPS Z22, Z2
	VMOVAPS Z23, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 32)
	CMPQ DX, $3
	JEQ q41ret
	VMOVAPS Z24, Z0
	VMOVAPS Z25, Z1
	VMOVAPS Z26, Z2
	VMOVAPS Z27, Z3
	REDUCE4(Z0, Z1, Z2, Z3, Y0, Y1, Y2, Y3, X0, 48)
q41ret:
	VZEROUPPER
	RET
