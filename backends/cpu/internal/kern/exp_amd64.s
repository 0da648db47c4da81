//go:build amd64 && !purego

#include "textflag.h"

// Vectorized exp and the activations built on it (AVX2 + FMA). Same algorithm as expf in
// generic.go: clamp to [-104, 89], n = rint(x*log2e), r = x - n*ln2hi - n*ln2lo,
// SLEEF's degree-7 polynomial, and 2^n applied as 2^(n>>1) * 2^(n-(n>>1)).

#define VEC8(name, v) \
	DATA name<>+0(SB)/4, v \
	DATA name<>+4(SB)/4, v \
	DATA name<>+8(SB)/4, v \
	DATA name<>+12(SB)/4, v \
	DATA name<>+16(SB)/4, v \
	DATA name<>+20(SB)/4, v \
	DATA name<>+24(SB)/4, v \
	DATA name<>+28(SB)/4, v \
	GLOBL name<>(SB), RODATA|NOPTR, $32

VEC8(expLog2e, $0x3fb8aa3b)
VEC8(expLn2Hi, $0x3f317200)
VEC8(expLn2Lo, $0x35bfbe8e)
VEC8(expC0, $0x39502bda)
VEC8(expC1, $0x3ab696c9)
VEC8(expC2, $0x3c0888a6)
VEC8(expC3, $0x3d2aaa7a)
VEC8(expC4, $0x3e2aaaab)
VEC8(expC5, $0x3f000000)
VEC8(expHi, $0x42b20000)
VEC8(expLo, $0xc2d00000)
VEC8(expOne, $0x3f800000)
VEC8(expBias, $0x0000007f)
VEC8(expSign, $0x80000000)
VEC8(geluC1, $0xbfcc422a)
VEC8(geluC2, $0xbd922279)

// 8 ones then 8 zeros: loading 8 dwords at expTailMask+32-4*r gives a mask of r lanes.
DATA expTailMask<>+0(SB)/8, $0xffffffffffffffff
DATA expTailMask<>+8(SB)/8, $0xffffffffffffffff
DATA expTailMask<>+16(SB)/8, $0xffffffffffffffff
DATA expTailMask<>+24(SB)/8, $0xffffffffffffffff
DATA expTailMask<>+32(SB)/8, $0
DATA expTailMask<>+40(SB)/8, $0
DATA expTailMask<>+48(SB)/8, $0
DATA expTailMask<>+56(SB)/8, $0
GLOBL expTailMask<>(SB), RODATA|NOPTR, $64

// Registers: Y5 lo clamp, Y6 hi clamp, Y13 ln2lo, Y14 ln2hi, Y15 log2e.
#define EXPCONSTS \
	VMOVUPS expLo<>(SB), Y5 \
	VMOVUPS expHi<>(SB), Y6 \
	VMOVUPS expLn2Lo<>(SB), Y13 \
	VMOVUPS expLn2Hi<>(SB), Y14 \
	VMOVUPS expLog2e<>(SB), Y15

// EXP8: Y0 = exp(Y0). Clobbers Y1-Y4. The clamps keep a NaN (it is the second source).
#define EXP8 \
	VMAXPS      Y0, Y5, Y0 \
	VMINPS      Y0, Y6, Y0 \
	VMULPS      Y15, Y0, Y1 \
	VROUNDPS    $0, Y1, Y1 \
	VMOVAPS     Y0, Y2 \
	VFNMADD231PS Y14, Y1, Y2 \
	VFNMADD231PS Y13, Y1, Y2 \
	VMOVUPS     expC0<>(SB), Y3 \
	VFMADD213PS expC1<>(SB), Y2, Y3 \
	VFMADD213PS expC2<>(SB), Y2, Y3 \
	VFMADD213PS expC3<>(SB), Y2, Y3 \
	VFMADD213PS expC4<>(SB), Y2, Y3 \
	VFMADD213PS expC5<>(SB), Y2, Y3 \
	VMULPS      Y2, Y2, Y4 \
	VFMADD213PS Y2, Y4, Y3 \
	VADDPS      expOne<>(SB), Y3, Y3 \
	VCVTPS2DQ   Y1, Y1 \
	VPSRAD      $1, Y1, Y2 \
	VPSUBD      Y2, Y1, Y1 \
	VPADDD      expBias<>(SB), Y2, Y2 \
	VPADDD      expBias<>(SB), Y1, Y1 \
	VPSLLD      $23, Y2, Y2 \
	VPSLLD      $23, Y1, Y1 \
	VMULPS      Y2, Y3, Y3 \
	VMULPS      Y1, Y3, Y0

// TAILMASK: Y12 = mask of the CX (< 8) remaining lanes. Clobbers AX.
#define TAILMASK \
	LEAQ    expTailMask<>+32(SB), AX \
	SHLQ    $2, CX \
	SUBQ    CX, AX \
	VMOVDQU (AX), Y12

// func expF32AVX2(dst, src []float32)
TEXT ·expF32AVX2(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	EXPCONSTS
	CMPQ CX, $8
	JB   exp_tail

exp_8:
	VMOVUPS (SI), Y0
	EXP8
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JAE     exp_8

exp_tail:
	TESTQ CX, CX
	JZ    exp_done
	TAILMASK
	VMASKMOVPS (SI), Y12, Y0
	EXP8
	VMASKMOVPS Y0, Y12, (DI)

exp_done:
	VZEROUPPER
	RET

// func expSumF32AVX2(dst, src []float32, sub float32) float32
TEXT ·expSumF32AVX2(SB), NOSPLIT, $0-60
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VBROADCASTSS sub+48(FP), Y11
	VXORPS       Y10, Y10, Y10
	EXPCONSTS
	CMPQ         CX, $8
	JB           expsum_tail

expsum_8:
	VMOVUPS (SI), Y0
	VSUBPS  Y11, Y0, Y0
	EXP8
	VMOVUPS Y0, (DI)
	VADDPS  Y0, Y10, Y10
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JAE     expsum_8

expsum_tail:
	TESTQ CX, CX
	JZ    expsum_done
	TAILMASK
	VMASKMOVPS (SI), Y12, Y0
	VSUBPS     Y11, Y0, Y0
	EXP8
	VMASKMOVPS Y0, Y12, (DI)
	VANDPS     Y12, Y0, Y0
	VADDPS     Y0, Y10, Y10

expsum_done:
	VEXTRACTF128 $1, Y10, X1
	VADDPS       X1, X10, X0
	VMOVHLPS     X0, X1, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	VMOVSS       X0, ret+56(FP)
	VZEROUPPER
	RET

// func siluF32AVX2(dst, src []float32)
TEXT ·siluF32AVX2(SB), NOSPLIT, $0-48
	MOVQ    dst_base+0(FP), DI
	MOVQ    src_base+24(FP), SI
	MOVQ    src_len+32(FP), CX
	EXPCONSTS
	VMOVUPS expSign<>(SB), Y8
	VMOVUPS expOne<>(SB), Y9
	CMPQ    CX, $8
	JB      silu_tail

silu_8:
	VMOVUPS (SI), Y7
	VXORPS  Y8, Y7, Y0
	EXP8
	VADDPS  Y9, Y0, Y0
	VDIVPS  Y0, Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	SUBQ    $8, CX
	CMPQ    CX, $8
	JAE     silu_8

silu_tail:
	TESTQ CX, CX
	JZ    silu_done
	TAILMASK
	VMASKMOVPS (SI), Y12, Y7
	VXORPS     Y8, Y7, Y0
	EXP8
	VADDPS     Y9, Y0, Y0
	VDIVPS     Y0, Y7, Y0
	VMASKMOVPS Y0, Y12, (DI)

silu_done:
	VZEROUPPER
	RET

// func geluF32AVX2(dst, src []float32)
TEXT ·geluF32AVX2(SB), NOSPLIT, $0-48
	MOVQ    dst_base+0(FP), DI
	MOVQ    src_base+24(FP), SI
	MOVQ    src_len+32(FP), CX
	EXPCONSTS
	VMOVUPS geluC1<>(SB), Y8
	VMOVUPS expOne<>(SB), Y9
	VMOVUPS geluC2<>(SB), Y10
	CMPQ    CX, $8
	JB      gelu_tail

gelu_8:
	VMOVUPS     (SI), Y7
	VMULPS      Y7, Y7, Y1
	VFMADD213PS Y8, Y10, Y1
	VMULPS      Y1, Y7, Y0
	EXP8
	VADDPS      Y9, Y0, Y0
	VDIVPS      Y0, Y7, Y0
	VMOVUPS     Y0, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	CMPQ        CX, $8
	JAE         gelu_8

gelu_tail:
	TESTQ CX, CX
	JZ    gelu_done
	TAILMASK
	VMASKMOVPS  (SI), Y12, Y7
	VMULPS      Y7, Y7, Y1
	VFMADD213PS Y8, Y10, Y1
	VMULPS      Y1, Y7, Y0
	EXP8
	VADDPS      Y9, Y0, Y0
	VDIVPS      Y0, Y7, Y0
	VMASKMOVPS  Y0, Y12, (DI)

gelu_done:
	VZEROUPPER
	RET

// The 512-bit exp-sum: the same algorithm and constants (broadcast from the 8-lane tables), 16
// lanes a step and the tail under a lane mask. Registers: Z5 lo clamp, Z6 hi clamp, Z13 ln2lo,
// Z14 ln2hi, Z15 log2e, Z11 sub, Z10 the 16 partial sums.
#define EXPCONSTS512 \
	VBROADCASTSS expLo<>(SB), Z5 \
	VBROADCASTSS expHi<>(SB), Z6 \
	VBROADCASTSS expLn2Lo<>(SB), Z13 \
	VBROADCASTSS expLn2Hi<>(SB), Z14 \
	VBROADCASTSS expLog2e<>(SB), Z15

// EXP16: Z0 = exp(Z0) as EXP8 computes each lane. Clobbers Z1-Z4.
#define EXP16 \
	VMAXPS           Z0, Z5, Z0 \
	VMINPS           Z0, Z6, Z0 \
	VMULPS           Z15, Z0, Z1 \
	VRNDSCALEPS      $0, Z1, Z1 \
	VMOVAPS          Z0, Z2 \
	VFNMADD231PS     Z14, Z1, Z2 \
	VFNMADD231PS     Z13, Z1, Z2 \
	VBROADCASTSS     expC0<>(SB), Z3 \
	VFMADD213PS.BCST expC1<>(SB), Z2, Z3 \
	VFMADD213PS.BCST expC2<>(SB), Z2, Z3 \
	VFMADD213PS.BCST expC3<>(SB), Z2, Z3 \
	VFMADD213PS.BCST expC4<>(SB), Z2, Z3 \
	VFMADD213PS.BCST expC5<>(SB), Z2, Z3 \
	VMULPS           Z2, Z2, Z4 \
	VFMADD213PS      Z2, Z4, Z3 \
	VADDPS.BCST      expOne<>(SB), Z3, Z3 \
	VCVTPS2DQ        Z1, Z1 \
	VPSRAD           $1, Z1, Z2 \
	VPSUBD           Z2, Z1, Z1 \
	VPADDD.BCST      expBias<>(SB), Z2, Z2 \
	VPADDD.BCST      expBias<>(SB), Z1, Z1 \
	VPSLLD           $23, Z2, Z2 \
	VPSLLD           $23, Z1, Z1 \
	VMULPS           Z2, Z3, Z3 \
	VMULPS           Z1, Z3, Z0

// func expSumF32AVX512(dst, src []float32, sub float32) float32
TEXT ·expSumF32AVX512(SB), NOSPLIT, $0-60
	MOVQ         dst_base+0(FP), DI
	MOVQ         src_base+24(FP), SI
	MOVQ         src_len+32(FP), CX
	VBROADCASTSS sub+48(FP), Z11
	VPXORD       Z10, Z10, Z10
	EXPCONSTS512
	CMPQ         CX, $16
	JB           expsum512_tail

expsum512_16:
	VMOVUPS (SI), Z0
	VSUBPS  Z11, Z0, Z0
	EXP16
	VMOVUPS Z0, (DI)
	VADDPS  Z0, Z10, Z10
	ADDQ    $64, SI
	ADDQ    $64, DI
	SUBQ    $16, CX
	CMPQ    CX, $16
	JAE     expsum512_16

expsum512_tail:
	TESTQ   CX, CX
	JZ      expsum512_done
	MOVL    $1, AX
	SHLL    CX, AX
	DECL    AX
	KMOVW   AX, K1
	VMOVUPS.Z (SI), K1, Z0
	VSUBPS  Z11, Z0, Z0
	EXP16
	VMOVUPS Z0, K1, (DI)
	VADDPS  Z0, Z10, K1, Z10

expsum512_done:
	VEXTRACTF32X8 $1, Z10, Y1
	VADDPS        Y1, Y10, Y10
	VEXTRACTF128  $1, Y10, X1
	VADDPS        X1, X10, X0
	VMOVHLPS      X0, X1, X1
	VADDPS        X1, X0, X0
	VMOVSHDUP     X0, X1
	VADDSS        X1, X0, X0
	VMOVSS        X0, ret+56(FP)
	VZEROUPPER
	RET
