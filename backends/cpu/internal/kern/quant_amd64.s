//go:build amd64 && !purego

#include "textflag.h"

// Q8_0/Q8_1 quantization and the quantized dot products (AVX2 + FMA + F16C).

DATA absMaskF32<>+0(SB)/8, $0x7fffffff7fffffff
DATA absMaskF32<>+8(SB)/8, $0x7fffffff7fffffff
DATA absMaskF32<>+16(SB)/8, $0x7fffffff7fffffff
DATA absMaskF32<>+24(SB)/8, $0x7fffffff7fffffff
GLOBL absMaskF32<>(SB), RODATA|NOPTR, $32

DATA signMaskF32<>+0(SB)/8, $0x8000000080000000
DATA signMaskF32<>+8(SB)/8, $0x8000000080000000
DATA signMaskF32<>+16(SB)/8, $0x8000000080000000
DATA signMaskF32<>+24(SB)/8, $0x8000000080000000
GLOBL signMaskF32<>(SB), RODATA|NOPTR, $32

DATA oneF32<>+0(SB)/8, $0x3f8000003f800000
DATA oneF32<>+8(SB)/8, $0x3f8000003f800000
DATA oneF32<>+16(SB)/8, $0x3f8000003f800000
DATA oneF32<>+24(SB)/8, $0x3f8000003f800000
GLOBL oneF32<>(SB), RODATA|NOPTR, $32

DATA halfF32<>+0(SB)/8, $0x3f0000003f000000
DATA halfF32<>+8(SB)/8, $0x3f0000003f000000
DATA halfF32<>+16(SB)/8, $0x3f0000003f000000
DATA halfF32<>+24(SB)/8, $0x3f0000003f000000
GLOBL halfF32<>(SB), RODATA|NOPTR, $32

DATA lowByteMask<>+0(SB)/8, $0x000000ff000000ff
DATA lowByteMask<>+8(SB)/8, $0x000000ff000000ff
DATA lowByteMask<>+16(SB)/8, $0x000000ff000000ff
DATA lowByteMask<>+24(SB)/8, $0x000000ff000000ff
GLOBL lowByteMask<>(SB), RODATA|NOPTR, $32

// VPERMD index that undoes the lane interleaving of VPACKUSDW+VPACKUSWB.
DATA packPerm<>+0(SB)/4, $0
DATA packPerm<>+4(SB)/4, $4
DATA packPerm<>+8(SB)/4, $1
DATA packPerm<>+12(SB)/4, $5
DATA packPerm<>+16(SB)/4, $2
DATA packPerm<>+20(SB)/4, $6
DATA packPerm<>+24(SB)/4, $3
DATA packPerm<>+28(SB)/4, $7
GLOBL packPerm<>(SB), RODATA|NOPTR, $32

DATA ones8<>+0(SB)/8, $0x0101010101010101
DATA ones8<>+8(SB)/8, $0x0101010101010101
DATA ones8<>+16(SB)/8, $0x0101010101010101
DATA ones8<>+24(SB)/8, $0x0101010101010101
GLOBL ones8<>(SB), RODATA|NOPTR, $32

DATA ones16<>+0(SB)/8, $0x0001000100010001
DATA ones16<>+8(SB)/8, $0x0001000100010001
DATA ones16<>+16(SB)/8, $0x0001000100010001
DATA ones16<>+24(SB)/8, $0x0001000100010001
GLOBL ones16<>(SB), RODATA|NOPTR, $32

DATA nibMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA nibMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL nibMask<>(SB), RODATA|NOPTR, $32

DATA eights8<>+0(SB)/8, $0x0808080808080808
DATA eights8<>+8(SB)/8, $0x0808080808080808
DATA eights8<>+16(SB)/8, $0x0808080808080808
DATA eights8<>+24(SB)/8, $0x0808080808080808
GLOBL eights8<>(SB), RODATA|NOPTR, $32

DATA f127<>+0(SB)/4, $0x42fe0000
GLOBL f127<>(SB), RODATA|NOPTR, $4

// Constants kept in registers by the quantizers:
//   Y15 abs mask, Y14 0.5, Y13 sign mask, Y12 1.0, Y11 low-byte mask.

// ROUNDF_CVT: R = (int32)roundf(R) with C semantics: round half away from zero, computed
// exactly as t = trunc(x); t += copysign(1,x) if |x-t| >= 0.5; then cvttps2dq
// (non-finite -> 0x80000000). Clobbers Y8, Y9, Y10.
#define ROUNDF_CVT(R) \
	VROUNDPS   $3, R, Y8 \
	VSUBPS     Y8, R, Y9 \
	VANDPS     Y15, Y9, Y9 \
	VCMPPS     $13, Y14, Y9, Y9 \
	VANDPS     Y13, R, Y10 \
	VORPS      Y12, Y10, Y10 \
	VANDPS     Y9, Y10, Y10 \
	VADDPS     Y10, Y8, R \
	VCVTTPS2DQ R, R

// Q8SCALE takes a block's amax from the 8 lanes of Y4 to d = amax/127 in X4, f16(d) in AX and
// id = 1/d (0 where d is 0) in X5, X12 holding 1.0. Clobbers X6, X7.
#define Q8SCALE \
	VEXTRACTF128 $1, Y4, X5 \
	VMAXPS       X5, X4, X4 \
	VMOVHLPS     X4, X5, X5 \
	VMAXPS       X5, X4, X4 \
	VMOVSHDUP    X4, X5 \
	VMAXSS       X5, X4, X4 \
	VDIVSS       f127<>(SB), X4, X4 \
	VMOVAPS      X12, X5 \
	VDIVSS       X4, X5, X5 \
	VXORPS       X6, X6, X6 \
	VCMPSS       $4, X6, X4, X7 \
	VANDPS       X7, X5, X5 \
	VCVTPS2PH    $0, X4, X6 \
	VMOVD        X6, AX

// Q8BLOCK quantizes the 32 floats at (SI) into 32 int8 in Y0 and leaves the float32 d in X4
// and f16(d) in AX.
#define Q8BLOCK \
	VMOVUPS      (SI), Y0 \
	VMOVUPS      32(SI), Y1 \
	VMOVUPS      64(SI), Y2 \
	VMOVUPS      96(SI), Y3 \
	VANDPS       Y15, Y0, Y4 \
	VANDPS       Y15, Y1, Y5 \
	VANDPS       Y15, Y2, Y6 \
	VANDPS       Y15, Y3, Y7 \
	VMAXPS       Y5, Y4, Y4 \
	VMAXPS       Y7, Y6, Y6 \
	VMAXPS       Y6, Y4, Y4 \
	Q8SCALE \
	VBROADCASTSS X5, Y5 \
	VMULPS       Y5, Y0, Y0 \
	VMULPS       Y5, Y1, Y1 \
	VMULPS       Y5, Y2, Y2 \
	VMULPS       Y5, Y3, Y3 \
	ROUNDF_CVT(Y0) \
	ROUNDF_CVT(Y1) \
	ROUNDF_CVT(Y2) \
	ROUNDF_CVT(Y3) \
	VPAND        Y11, Y0, Y0 \
	VPAND        Y11, Y1, Y1 \
	VPAND        Y11, Y2, Y2 \
	VPAND        Y11, Y3, Y3 \
	VPACKUSDW    Y1, Y0, Y0 \
	VPACKUSDW    Y3, Y2, Y2 \
	VPACKUSWB    Y2, Y0, Y0 \
	VMOVDQU      packPerm<>(SB), Y7 \
	VPERMD       Y0, Y7, Y0

#define Q8CONSTS \
	VMOVUPS absMaskF32<>(SB), Y15 \
	VMOVUPS halfF32<>(SB), Y14 \
	VMOVUPS signMaskF32<>(SB), Y13 \
	VMOVUPS oneF32<>(SB), Y12 \
	VMOVDQU lowByteMask<>(SB), Y11

// func quantizeRowQ8_0AVX2(x []float32, dst []byte)
TEXT ·quantizeRowQ8_0AVX2(SB), NOSPLIT, $0-48
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ dst_base+24(FP), DI
	SHRQ $5, CX
	JZ   q80_done
	Q8CONSTS

q80_loop:
	Q8BLOCK
	MOVW    AX, (DI)
	VMOVDQU Y0, 2(DI)
	ADDQ    $128, SI
	ADDQ    $34, DI
	DECQ    CX
	JNZ     q80_loop

q80_done:
	VZEROUPPER
	RET

// func quantizeRowQ8_1AVX2(x []float32, dst []byte)
TEXT ·quantizeRowQ8_1AVX2(SB), NOSPLIT, $0-48
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ dst_base+24(FP), DI
	SHRQ $5, CX
	JZ   q81_done
	Q8CONSTS

q81_loop:
	Q8BLOCK
	MOVW         AX, (DI)
	VMOVDQU      Y0, 4(DI)
	// s = f16(float32(sum of the stored int8) * d)
	VMOVDQU      ones8<>(SB), Y1
	VPMADDUBSW   Y0, Y1, Y1
	VPMADDWD     ones16<>(SB), Y1, Y1
	VEXTRACTI128 $1, Y1, X2
	VPADDD       X2, X1, X1
	VPSHUFD      $0x4e, X1, X2
	VPADDD       X2, X1, X1
	VPSHUFD      $0xb1, X1, X2
	VPADDD       X2, X1, X1
	VCVTDQ2PS    X1, X1
	VMULSS       X4, X1, X1
	VCVTPS2PH    $0, X1, X2
	VMOVD        X2, AX
	MOVW         AX, 2(DI)
	ADDQ         $128, SI
	ADDQ         $36, DI
	DECQ         CX
	JNZ          q81_loop

q81_done:
	VZEROUPPER
	RET

// HSUM2: X0 = horizontal sum of Y0 + Y7.
#define HSUM2 \
	VADDPS       Y7, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X1, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0

// SCALE2(xoff, yoff, DST, XDST, XTMP): DST = broadcast(f32(half at xoff(SI)) *
// f32(half at yoff(DI))), XDST being DST's X form. Clobbers AX, BX and XTMP.
#define SCALE2(xoff, yoff, DST, XDST, XTMP) \
	MOVWLZX      xoff(SI), AX \
	MOVWLZX      yoff(DI), BX \
	SHLL         $16, BX \
	ORL          BX, AX \
	VMOVD        AX, XDST \
	VCVTPH2PS    XDST, XDST \
	VMOVSHDUP    XDST, XTMP \
	VMULSS       XTMP, XDST, XDST \
	VBROADCASTSS XDST, DST

// I8DOT(X, Y, T, ACC, S): ACC += S * float(pairwise int32 sums of X*Y) for 32 int8 lanes,
// using the sign-folding of ggml's AVX2 kernels (|x| as unsigned, y*sign(x) signed).
// Y15 must hold 16-bit ones. Clobbers X, Y, T.
#define I8DOT(X, Y, T, ACC, S) \
	VPSIGNB     X, Y, Y \
	VPSIGNB     X, X, X \
	VPMADDUBSW  Y, X, T \
	VPMADDWD    Y15, T, T \
	VCVTDQ2PS   T, T \
	VFMADD231PS T, S, ACC

// func dotQ8_0Q8_0AVX2(nb int, x, y *byte) float32
TEXT ·dotQ8_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ    nb+0(FP), CX
	MOVQ    x+8(FP), SI
	MOVQ    y+16(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  Y7, Y7, Y7
	VMOVDQU ones16<>(SB), Y15
	CMPQ    CX, $2
	JB      q8q8_1

q8q8_2:
	SCALE2(0, 0, Y1, X1, X2)
	SCALE2(34, 34, Y8, X8, X2)
	VMOVDQU 2(SI), Y2
	VMOVDQU 2(DI), Y3
	VMOVDQU 36(SI), Y9
	VMOVDQU 36(DI), Y10
	I8DOT(Y2, Y3, Y4, Y0, Y1)
	I8DOT(Y9, Y10, Y11, Y7, Y8)
	ADDQ    $68, SI
	ADDQ    $68, DI
	SUBQ    $2, CX
	CMPQ    CX, $2
	JAE     q8q8_2

q8q8_1:
	TESTQ CX, CX
	JZ    q8q8_done
	SCALE2(0, 0, Y1, X1, X2)
	VMOVDQU 2(SI), Y2
	VMOVDQU 2(DI), Y3
	I8DOT(Y2, Y3, Y4, Y0, Y1)

q8q8_done:
	HSUM2
	VMOVSS     X0, ret+24(FP)
	VZEROUPPER
	RET

// NIBBLES(off, XR, R, T): R = 32 bytes, low nibbles of the 16 bytes at off(SI) then their
// high nibbles. Y14 must hold 0x0f bytes.
#define NIBBLES(off, XR, R, XT) \
	VMOVDQU     off(SI), XR \
	VPSRLW      $4, XR, XT \
	VINSERTI128 $1, XT, R, R \
	VPAND       Y14, R, R

// func dotQ4_0Q8_0AVX2(nb int, x, y *byte) float32
TEXT ·dotQ4_0Q8_0AVX2(SB), NOSPLIT, $0-28
	MOVQ    nb+0(FP), CX
	MOVQ    x+8(FP), SI
	MOVQ    y+16(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  Y7, Y7, Y7
	VMOVDQU ones16<>(SB), Y15
	VMOVDQU nibMask<>(SB), Y14
	VMOVDQU eights8<>(SB), Y13
	CMPQ    CX, $2
	JB      q4q8_1

q4q8_2:
	SCALE2(0, 0, Y1, X1, X2)
	SCALE2(18, 34, Y8, X8, X2)
	NIBBLES(2, X2, Y2, X3)
	NIBBLES(20, X9, Y9, X3)
	VPSUBB  Y13, Y2, Y2
	VPSUBB  Y13, Y9, Y9
	VMOVDQU 2(DI), Y3
	VMOVDQU 36(DI), Y10
	I8DOT(Y2, Y3, Y4, Y0, Y1)
	I8DOT(Y9, Y10, Y11, Y7, Y8)
	ADDQ    $36, SI
	ADDQ    $68, DI
	SUBQ    $2, CX
	CMPQ    CX, $2
	JAE     q4q8_2

q4q8_1:
	TESTQ CX, CX
	JZ    q4q8_done
	SCALE2(0, 0, Y1, X1, X2)
	NIBBLES(2, X2, Y2, X3)
	VPSUBB  Y13, Y2, Y2
	VMOVDQU 2(DI), Y3
	I8DOT(Y2, Y3, Y4, Y0, Y1)

q4q8_done:
	HSUM2
	VMOVSS     X0, ret+24(FP)
	VZEROUPPER
	RET

// Q41BLOCK(xoff, yoff, R, XR, T, XT, S, XS, ACC): one Q4_1 x Q8_1 block. The d products go
// to ACC as in the other dots, m*s is added to the scalar X12.
#define Q41BLOCK(xoff, yoff, R, XR, T, XT, S, XS, ACC) \
	VMOVD        xoff(SI), XS \
	VMOVD        yoff(DI), XT \
	VCVTPH2PS    XS, XS \
	VCVTPH2PS    XT, XT \
	VMULPS       XT, XS, XS \
	VMOVSHDUP    XS, XT \
	VADDSS       XT, X12, X12 \
	VBROADCASTSS XS, S \
	NIBBLES(xoff+4, XR, R, XT) \
	VPMADDUBSW   yoff+4(DI), R, T \
	VPMADDWD     Y15, T, T \
	VCVTDQ2PS    T, T \
	VFMADD231PS  T, S, ACC

// func dotQ4_1Q8_1AVX2(nb int, x, y *byte) float32
TEXT ·dotQ4_1Q8_1AVX2(SB), NOSPLIT, $0-28
	MOVQ    nb+0(FP), CX
	MOVQ    x+8(FP), SI
	MOVQ    y+16(FP), DI
	VXORPS  Y0, Y0, Y0
	VXORPS  Y7, Y7, Y7
	VXORPS  X12, X12, X12
	VMOVDQU ones16<>(SB), Y15
	VMOVDQU nibMask<>(SB), Y14
	CMPQ    CX, $2
	JB      q41_1

q41_2:
	Q41BLOCK(0, 0, Y2, X2, Y3, X3, Y1, X1, Y0)
	Q41BLOCK(20, 36, Y9, X9, Y10, X10, Y8, X8, Y7)
	ADDQ $40, SI
	ADDQ $72, DI
	SUBQ $2, CX
	CMPQ CX, $2
	JAE  q41_2

q41_1:
	TESTQ CX, CX
	JZ    q41_done
	Q41BLOCK(0, 0, Y2, X2, Y3, X3, Y1, X1, Y0)

q41_done:
	HSUM2
	VADDSS     X12, X0, X0
	VMOVSS     X0, ret+24(FP)
	VZEROUPPER
	RET

// func anyNonFiniteAVX2(x *float32, n int) bool
// Whether any of x[0:n] (n a multiple of 8) is NaN or ±Inf: its exponent field all ones. Each
// lane ORs together the compares of 32 floats a turn; the result is the OR of all lanes.
TEXT ·anyNonFiniteAVX2(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x7f800000, AX
	VMOVD AX, X15
	VPBROADCASTD X15, Y15
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	CMPQ CX, $32
	JB   nf_tail
nf_loop32:
	VPAND (SI), Y15, Y0
	VPAND 32(SI), Y15, Y1
	VPAND 64(SI), Y15, Y2
	VPAND 96(SI), Y15, Y3
	VPCMPEQD Y15, Y0, Y0
	VPCMPEQD Y15, Y1, Y1
	VPCMPEQD Y15, Y2, Y2
	VPCMPEQD Y15, Y3, Y3
	VPOR Y0, Y4, Y4
	VPOR Y1, Y5, Y5
	VPOR Y2, Y4, Y4
	VPOR Y3, Y5, Y5
	ADDQ $128, SI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  nf_loop32
nf_tail:
	TESTQ CX, CX
	JZ    nf_done
	VPAND (SI), Y15, Y0
	VPCMPEQD Y15, Y0, Y0
	VPOR Y0, Y4, Y4
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  nf_tail
nf_done:
	VPOR Y5, Y4, Y4
	VPTEST Y4, Y4
	SETNE ret+16(FP)
	VZEROUPPER
	RET

// ROUNDF_CVT512: ROUNDF_CVT on 16 lanes (the same operations, the half test into K1 and the
// copysign(1, x) added under it). Clobbers Z8, Z9, Z10, K1; needs Z15 abs mask, Z14 0.5, Z13
// sign mask, Z12 1.0.
#define ROUNDF_CVT512(R) \
	VRNDSCALEPS $3, R, Z8 \
	VSUBPS      Z8, R, Z9 \
	VANDPS      Z15, Z9, Z9 \
	VCMPPS      $13, Z14, Z9, K1 \
	VANDPS      Z13, R, Z10 \
	VORPS       Z12, Z10, Z10 \
	VADDPS      Z10, Z8, K1, Z8 \
	VCVTTPS2DQ  Z8, R

// func quantizeRowQ8_0AVX512(x []float32, dst []byte)
// quantizeRowQ8_0AVX2 on 16 lanes: a block is two vectors, its maximum a shorter tree, its
// codes the int32s' low bytes (VPMOVDB, as the AVX2 kernel's masked packs keep them).
TEXT ·quantizeRowQ8_0AVX512(SB), NOSPLIT, $0-48
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ dst_base+24(FP), DI
	SHRQ $5, CX
	JZ   q80z_done
	VBROADCASTSS absMaskF32<>(SB), Z15
	VBROADCASTSS halfF32<>(SB), Z14
	VBROADCASTSS signMaskF32<>(SB), Z13
	VBROADCASTSS oneF32<>(SB), Z12

q80z_loop:
	VMOVUPS       (SI), Z0
	VMOVUPS       64(SI), Z1
	VANDPS        Z15, Z0, Z4
	VANDPS        Z15, Z1, Z5
	VMAXPS        Z5, Z4, Z4
	VEXTRACTF64X4 $1, Z4, Y5
	VMAXPS        Y5, Y4, Y4
	Q8SCALE
	VBROADCASTSS  X5, Z5
	VMULPS        Z5, Z0, Z0
	VMULPS        Z5, Z1, Z1
	ROUNDF_CVT512(Z0)
	ROUNDF_CVT512(Z1)
	VPMOVDB       Z0, X0
	VPMOVDB       Z1, X1
	MOVW          AX, (DI)
	VMOVDQU       X0, 2(DI)
	VMOVDQU       X1, 18(DI)
	ADDQ          $128, SI
	ADDQ          $34, DI
	DECQ          CX
	JNZ           q80z_loop

q80z_done:
	VZEROUPPER
	RET
