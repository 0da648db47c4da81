//go:build amd64 && !purego

#include "textflag.h"

// SUM4Y: X0 = the sum of the 32 floats of Y0..Y3 (four accumulators); uses Y1.
#define SUM4Y \
	VADDPS       Y1, Y0, Y0 \
	VADDPS       Y3, Y2, Y2 \
	VADDPS       Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0 \
	VMOVHLPS     X0, X1, X1 \
	VADDPS       X1, X0, X0 \
	VMOVSHDUP    X0, X1 \
	VADDSS       X1, X0, X0

// Float vector kernels: AVX2 + FMA + F16C. Every routine ends with VZEROUPPER.
// Go operand order: VFMADD231PS a, b, acc computes acc += b*a.

// func dotF32AVX2(x, y []float32) float32
TEXT ·dotF32AVX2(SB), NOSPLIT, $0-52
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JB     dotf32_8

dotf32_32:
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JAE         dotf32_32

dotf32_8:
	CMPQ CX, $8
	JB   dotf32_reduce
	VMOVUPS     (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dotf32_8

dotf32_reduce:
	SUM4Y
	TESTQ        CX, CX
	JZ           dotf32_done

dotf32_tail:
	VMOVSS      (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         dotf32_tail

dotf32_done:
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// func axpyF32AVX2(a float32, x, y []float32)
TEXT ·axpyF32AVX2(SB), NOSPLIT, $0-56
	VBROADCASTSS a+0(FP), Y0
	MOVQ         x_base+8(FP), SI
	MOVQ         x_len+16(FP), CX
	MOVQ         y_base+32(FP), DI
	CMPQ         CX, $32
	JB           axpy_8

axpy_32:
	VMOVUPS     (DI), Y1
	VMOVUPS     32(DI), Y2
	VMOVUPS     64(DI), Y3
	VMOVUPS     96(DI), Y4
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VFMADD231PS 64(SI), Y0, Y3
	VFMADD231PS 96(SI), Y0, Y4
	VMOVUPS     Y1, (DI)
	VMOVUPS     Y2, 32(DI)
	VMOVUPS     Y3, 64(DI)
	VMOVUPS     Y4, 96(DI)
	ADDQ        $128, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JAE         axpy_32

axpy_8:
	CMPQ CX, $8
	JB   axpy_tail
	VMOVUPS     (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS     Y1, (DI)
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         axpy_8

axpy_tail:
	TESTQ CX, CX
	JZ    axpy_done

axpy_1:
	VMOVSS      (DI), X1
	VFMADD231SS (SI), X0, X1
	VMOVSS      X1, (DI)
	ADDQ        $4, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         axpy_1

axpy_done:
	VZEROUPPER
	RET

// func scaleF32AVX2(a float32, x []float32)
TEXT ·scaleF32AVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS a+0(FP), Y0
	MOVQ         x_base+8(FP), DI
	MOVQ         x_len+16(FP), CX
	CMPQ         CX, $32
	JB           scale_8

scale_32:
	VMULPS  (DI), Y0, Y1
	VMULPS  32(DI), Y0, Y2
	VMULPS  64(DI), Y0, Y3
	VMULPS  96(DI), Y0, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JAE     scale_32

scale_8:
	CMPQ CX, $8
	JB   scale_tail
	VMULPS  (DI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     scale_8

scale_tail:
	TESTQ CX, CX
	JZ    scale_done

scale_1:
	VMULSS (DI), X0, X1
	VMOVSS X1, (DI)
	ADDQ   $4, DI
	DECQ   CX
	JNZ    scale_1

scale_done:
	VZEROUPPER
	RET

// func addF32AVX2(dst, a, b []float32)
TEXT ·addF32AVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	CMPQ CX, $32
	JB   add_8

add_32:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VADDPS  (DX), Y0, Y0
	VADDPS  32(DX), Y1, Y1
	VADDPS  64(DX), Y2, Y2
	VADDPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JAE     add_32

add_8:
	CMPQ CX, $8
	JB   add_tail
	VMOVUPS (SI), Y0
	VADDPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     add_8

add_tail:
	TESTQ CX, CX
	JZ    add_done

add_1:
	VMOVSS (SI), X0
	VADDSS (DX), X0, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DX
	ADDQ   $4, DI
	DECQ   CX
	JNZ    add_1

add_done:
	VZEROUPPER
	RET

// func mulF32AVX2(dst, a, b []float32)
TEXT ·mulF32AVX2(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), SI
	MOVQ b_base+48(FP), DX
	CMPQ CX, $32
	JB   mul_8

mul_32:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMULPS  (DX), Y0, Y0
	VMULPS  32(DX), Y1, Y1
	VMULPS  64(DX), Y2, Y2
	VMULPS  96(DX), Y3, Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, SI
	ADDQ    $128, DX
	ADDQ    $128, DI
	SUBQ    $32, CX
	CMPQ    CX, $32
	JAE     mul_32

mul_8:
	CMPQ CX, $8
	JB   mul_tail
	VMOVUPS (SI), Y0
	VMULPS  (DX), Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DX
	ADDQ    $32, DI
	SUBQ    $8, CX
	JMP     mul_8

mul_tail:
	TESTQ CX, CX
	JZ    mul_done

mul_1:
	VMOVSS (SI), X0
	VMULSS (DX), X0, X0
	VMOVSS X0, (DI)
	ADDQ   $4, SI
	ADDQ   $4, DX
	ADDQ   $4, DI
	DECQ   CX
	JNZ    mul_1

mul_done:
	VZEROUPPER
	RET

// func maxF32AVX2(x []float32) float32
TEXT ·maxF32AVX2(SB), NOSPLIT, $0-28
	MOVQ         x_base+0(FP), SI
	MOVQ         x_len+8(FP), CX
	VBROADCASTSS negInfF32<>(SB), Y0
	VMOVAPS      Y0, Y1
	CMPQ         CX, $16
	JB           max_8

max_16:
	VMAXPS (SI), Y0, Y0
	VMAXPS 32(SI), Y1, Y1
	ADDQ   $64, SI
	SUBQ   $16, CX
	CMPQ   CX, $16
	JAE    max_16

max_8:
	CMPQ CX, $8
	JB   max_reduce
	VMAXPS (SI), Y0, Y0
	ADDQ   $32, SI
	SUBQ   $8, CX

max_reduce:
	VMAXPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS       X1, X0, X0
	VMOVHLPS     X0, X1, X1
	VMAXPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VMAXSS       X1, X0, X0
	TESTQ        CX, CX
	JZ           max_done

max_1:
	VMAXSS (SI), X0, X0
	ADDQ   $4, SI
	DECQ   CX
	JNZ    max_1

max_done:
	VMOVSS     X0, ret+24(FP)
	VZEROUPPER
	RET

DATA negInfF32<>+0(SB)/4, $0xff800000
GLOBL negInfF32<>(SB), RODATA|NOPTR, $4

// func dotF16AVX2(x, y []uint16) float32
TEXT ·dotF16AVX2(SB), NOSPLIT, $0-52
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JB     dotf16_8

dotf16_32:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VCVTPH2PS   (DI), Y8
	VCVTPH2PS   16(DI), Y9
	VCVTPH2PS   32(DI), Y10
	VCVTPH2PS   48(DI), Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JAE         dotf16_32

dotf16_8:
	CMPQ CX, $8
	JB   dotf16_reduce
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   (DI), Y8
	VFMADD231PS Y8, Y4, Y0
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX
	JMP         dotf16_8

dotf16_reduce:
	SUM4Y
	TESTQ        CX, CX
	JZ           dotf16_done

dotf16_1:
	MOVWLZX     (SI), AX
	MOVWLZX     (DI), BX
	VMOVD       AX, X4
	VMOVD       BX, X8
	VCVTPH2PS   X4, X4
	VCVTPH2PS   X8, X8
	VFMADD231SS X8, X4, X0
	ADDQ        $2, SI
	ADDQ        $2, DI
	DECQ        CX
	JNZ         dotf16_1

dotf16_done:
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotF16F32AVX2(x []uint16, y []float32) float32
TEXT ·dotF16F32AVX2(SB), NOSPLIT, $0-52
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $32
	JB     dotf16f32_8

dotf16f32_32:
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $64, SI
	ADDQ        $128, DI
	SUBQ        $32, CX
	CMPQ        CX, $32
	JAE         dotf16f32_32

dotf16f32_8:
	CMPQ CX, $8
	JB   dotf16f32_reduce
	VCVTPH2PS   (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ        $16, SI
	ADDQ        $32, DI
	SUBQ        $8, CX
	JMP         dotf16f32_8

dotf16f32_reduce:
	SUM4Y
	TESTQ        CX, CX
	JZ           dotf16f32_done

dotf16f32_1:
	MOVWLZX     (SI), AX
	VMOVD       AX, X4
	VCVTPH2PS   X4, X4
	VFMADD231SS (DI), X4, X0
	ADDQ        $2, SI
	ADDQ        $4, DI
	DECQ        CX
	JNZ         dotf16f32_1

dotf16f32_done:
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// func dotBF16AVX2(x, y []uint16) float32
TEXT ·dotBF16AVX2(SB), NOSPLIT, $0-52
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	CMPQ   CX, $16
	JB     dotbf16_8

dotbf16_16:
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   16(SI), Y5
	VPMOVZXWD   (DI), Y6
	VPMOVZXWD   16(DI), Y7
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y5, Y5
	VPSLLD      $16, Y6, Y6
	VPSLLD      $16, Y7, Y7
	VFMADD231PS Y6, Y4, Y0
	VFMADD231PS Y7, Y5, Y1
	ADDQ        $32, SI
	ADDQ        $32, DI
	SUBQ        $16, CX
	CMPQ        CX, $16
	JAE         dotbf16_16

dotbf16_8:
	CMPQ CX, $8
	JB   dotbf16_reduce
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   (DI), Y6
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y6, Y6
	VFMADD231PS Y6, Y4, Y2
	ADDQ        $16, SI
	ADDQ        $16, DI
	SUBQ        $8, CX

dotbf16_reduce:
	VADDPS       Y1, Y0, Y0
	VADDPS       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VMOVHLPS     X0, X1, X1
	VADDPS       X1, X0, X0
	VMOVSHDUP    X0, X1
	VADDSS       X1, X0, X0
	TESTQ        CX, CX
	JZ           dotbf16_done

dotbf16_1:
	MOVWLZX     (SI), AX
	MOVWLZX     (DI), BX
	SHLL        $16, AX
	SHLL        $16, BX
	VMOVD       AX, X4
	VMOVD       BX, X6
	VFMADD231SS X6, X4, X0
	ADDQ        $2, SI
	ADDQ        $2, DI
	DECQ        CX
	JNZ         dotbf16_1

dotbf16_done:
	VMOVSS     X0, ret+48(FP)
	VZEROUPPER
	RET

// func f16ToF32RowAVX2(src []uint16, dst []float32)
TEXT ·f16ToF32RowAVX2(SB), NOSPLIT, $0-48
	MOVQ src_base+0(FP), SI
	MOVQ src_len+8(FP), CX
	MOVQ dst_base+24(FP), DI
	CMPQ CX, $32
	JB   h2f_8

h2f_32:
	VCVTPH2PS (SI), Y0
	VCVTPH2PS 16(SI), Y1
	VCVTPH2PS 32(SI), Y2
	VCVTPH2PS 48(SI), Y3
	VMOVUPS   Y0, (DI)
	VMOVUPS   Y1, 32(DI)
	VMOVUPS   Y2, 64(DI)
	VMOVUPS   Y3, 96(DI)
	ADDQ      $64, SI
	ADDQ      $128, DI
	SUBQ      $32, CX
	CMPQ      CX, $32
	JAE       h2f_32

h2f_8:
	CMPQ CX, $8
	JB   h2f_tail
	VCVTPH2PS (SI), Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $16, SI
	ADDQ      $32, DI
	SUBQ      $8, CX
	JMP       h2f_8

h2f_tail:
	TESTQ CX, CX
	JZ    h2f_done

h2f_1:
	MOVWLZX   (SI), AX
	VMOVD     AX, X0
	VCVTPH2PS X0, X0
	VMOVSS    X0, (DI)
	ADDQ      $2, SI
	ADDQ      $4, DI
	DECQ      CX
	JNZ       h2f_1

h2f_done:
	VZEROUPPER
	RET

// func f32ToF16RowAVX2(src []float32, dst []uint16)
TEXT ·f32ToF16RowAVX2(SB), NOSPLIT, $0-48
	MOVQ src_base+0(FP), SI
	MOVQ src_len+8(FP), CX
	MOVQ dst_base+24(FP), DI
	CMPQ CX, $32
	JB   f2h_8

f2h_32:
	VMOVUPS   (SI), Y0
	VMOVUPS   32(SI), Y1
	VMOVUPS   64(SI), Y2
	VMOVUPS   96(SI), Y3
	VCVTPS2PH $0, Y0, (DI)
	VCVTPS2PH $0, Y1, 16(DI)
	VCVTPS2PH $0, Y2, 32(DI)
	VCVTPS2PH $0, Y3, 48(DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	CMPQ      CX, $32
	JAE       f2h_32

f2h_8:
	CMPQ CX, $8
	JB   f2h_tail
	VMOVUPS   (SI), Y0
	VCVTPS2PH $0, Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $16, DI
	SUBQ      $8, CX
	JMP       f2h_8

f2h_tail:
	TESTQ CX, CX
	JZ    f2h_done

f2h_1:
	VMOVSS    (SI), X0
	VCVTPS2PH $0, X0, X1
	VMOVD     X1, AX
	MOVW      AX, (DI)
	ADDQ      $4, SI
	ADDQ      $2, DI
	DECQ      CX
	JNZ       f2h_1

f2h_done:
	VZEROUPPER
	RET

// func dot1F16F32AVX2(k int, a *uint16, x *float32) float32
// Σ_{p<k} a[p]*x[p] for k a multiple of 32: one weight row, one memory stream, prefetched
// 4096 bytes ahead (into the next row near this one's end), four 16-byte VCVTPH2PS loads per
// step and four accumulators.
TEXT ·dot1F16F32AVX2(SB), NOSPLIT, $0-28
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   x+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     d1a_done

d1a_32:
	PREFETCHT0  4096(SI)
	VCVTPH2PS   (SI), Y4
	VCVTPH2PS   16(SI), Y5
	VCVTPH2PS   32(SI), Y6
	VCVTPH2PS   48(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $64, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         d1a_32

d1a_done:
	SUM4Y
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dot1BF16AVX2(k int, a, x *uint16) float32
// Σ_{p<k} a[p]*x[p] over bf16 values for k a multiple of 32: one weight row, one memory stream
// prefetched 4096 bytes ahead (as dot1F16F32AVX2), the bf16 widened by a 16-bit shift.
TEXT ·dot1BF16AVX2(SB), NOSPLIT, $0-28
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   x+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     d1b_done

d1b_32:
	PREFETCHT0  4096(SI)
	VPMOVZXWD   (SI), Y4
	VPMOVZXWD   16(SI), Y5
	VPMOVZXWD   32(SI), Y6
	VPMOVZXWD   48(SI), Y7
	VPMOVZXWD   (DI), Y8
	VPMOVZXWD   16(DI), Y9
	VPMOVZXWD   32(DI), Y10
	VPMOVZXWD   48(DI), Y11
	VPSLLD      $16, Y4, Y4
	VPSLLD      $16, Y5, Y5
	VPSLLD      $16, Y6, Y6
	VPSLLD      $16, Y7, Y7
	VPSLLD      $16, Y8, Y8
	VPSLLD      $16, Y9, Y9
	VPSLLD      $16, Y10, Y10
	VPSLLD      $16, Y11, Y11
	VFMADD231PS Y8, Y4, Y0
	VFMADD231PS Y9, Y5, Y1
	VFMADD231PS Y10, Y6, Y2
	VFMADD231PS Y11, Y7, Y3
	ADDQ        $64, SI
	ADDQ        $64, DI
	DECQ        CX
	JNZ         d1b_32

d1b_done:
	SUM4Y
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func dot1F32AVX2(k int, a, x *float32) float32
// Σ_{p<k} a[p]*x[p] for k a multiple of 32: one weight row, one memory stream prefetched 4096
// bytes ahead (both lines of a step), four accumulators.
TEXT ·dot1F32AVX2(SB), NOSPLIT, $0-28
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   x+16(FP), DI
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	SHRQ   $5, CX
	JZ     d1f_done

d1f_32:
	PREFETCHT0  4096(SI)
	PREFETCHT0  4160(SI)
	VMOVUPS     (SI), Y4
	VMOVUPS     32(SI), Y5
	VMOVUPS     64(SI), Y6
	VMOVUPS     96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ        $128, SI
	ADDQ        $128, DI
	DECQ        CX
	JNZ         d1f_32

d1f_done:
	SUM4Y
	VMOVSS X0, ret+24(FP)
	VZEROUPPER
	RET
