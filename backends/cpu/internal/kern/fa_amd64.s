//go:build amd64 && !purego

#include "textflag.h"

// func faVAccF16AVX2(nk int, v *uint16, ldv int, w *float32, acc *float32, dv int)
// acc[d] += Σ_{c<nk} w[c]·f32(v[c*ldv+d]) for d < dv (dv a multiple of 32, nk ≥ 1): 32 columns
// of the accumulator at a time stay in Y0..Y3 while the value rows stream by, each key
// prefetching the row 16 on.
TEXT ·faVAccF16AVX2(SB), NOSPLIT, $0-48
	MOVQ nk+0(FP), CX
	MOVQ v+8(FP), SI
	MOVQ ldv+16(FP), BX
	SHLQ $1, BX
	MOVQ w+24(FP), DI
	MOVQ acc+32(FP), DX
	MOVQ dv+40(FP), R8
	MOVQ BX, R12
	SHLQ $4, R12           // 16 rows: how far ahead the rows are prefetched

fav_chunk:
	VMOVUPS (DX), Y0
	VMOVUPS 32(DX), Y1
	VMOVUPS 64(DX), Y2
	VMOVUPS 96(DX), Y3
	MOVQ    SI, R9
	MOVQ    DI, R10
	MOVQ    CX, R11

fav_key:
	PREFETCHT0   (R9)(R12*1)
	VBROADCASTSS (R10), Y4
	VCVTPH2PS    (R9), Y5
	VCVTPH2PS    16(R9), Y6
	VFMADD231PS  Y5, Y4, Y0
	VFMADD231PS  Y6, Y4, Y1
	VCVTPH2PS    32(R9), Y7
	VCVTPH2PS    48(R9), Y8
	VFMADD231PS  Y7, Y4, Y2
	VFMADD231PS  Y8, Y4, Y3
	ADDQ         BX, R9
	ADDQ         $4, R10
	DECQ         R11
	JNZ          fav_key

	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ    $128, DX
	ADDQ    $64, SI
	SUBQ    $32, R8
	JNZ     fav_chunk
	VZEROUPPER
	RET

// func faVAccF16AVX512(nk int, v *uint16, ldv int, w *float32, acc *float32, dv int)
// faVAccF16AVX2 with 64 accumulators per pass over the keys (dv a multiple of 64): the same
// FMA per element in the same key order (bit for bit its sums), half the instructions; the
// 32-byte VCVTPH2PS loads never span two lines of 32-byte aligned rows. Each key prefetches the
// row 16 on: a generated token's cache was pushed out of the caches by the weights since its last
// reading.
TEXT ·faVAccF16AVX512(SB), NOSPLIT, $0-48
	MOVQ nk+0(FP), CX
	MOVQ v+8(FP), SI
	MOVQ ldv+16(FP), BX
	SHLQ $1, BX
	MOVQ w+24(FP), DI
	MOVQ acc+32(FP), DX
	MOVQ dv+40(FP), R8
	MOVQ BX, R12
	SHLQ $4, R12           // 16 rows: how far ahead the rows are prefetched

fav5_chunk:
	VMOVUPS (DX), Z0
	VMOVUPS 64(DX), Z1
	VMOVUPS 128(DX), Z2
	VMOVUPS 192(DX), Z3
	MOVQ    SI, R9
	MOVQ    DI, R10
	MOVQ    CX, R11

fav5_key:
	PREFETCHT0   (R9)(R12*1)
	PREFETCHT0   64(R9)(R12*1)
	VBROADCASTSS (R10), Z4
	VCVTPH2PS    (R9), Z5
	VCVTPH2PS    32(R9), Z6
	VFMADD231PS  Z5, Z4, Z0
	VFMADD231PS  Z6, Z4, Z1
	VCVTPH2PS    64(R9), Z7
	VCVTPH2PS    96(R9), Z8
	VFMADD231PS  Z7, Z4, Z2
	VFMADD231PS  Z8, Z4, Z3
	ADDQ         BX, R9
	ADDQ         $4, R10
	DECQ         R11
	JNZ          fav5_key

	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, 128(DX)
	VMOVUPS Z3, 192(DX)
	ADDQ    $256, DX
	ADDQ    $128, SI
	SUBQ    $64, R8
	JNZ     fav5_chunk
	VZEROUPPER
	RET

// func faVAccF16H4AVX512(nk int, v *uint16, ldv int, w *float32, ldw int, acc *float32, dv int)
// faVAccF16AVX512 for four heads over the same value rows: head h's weights at w + h*ldw floats,
// its dv accumulators at acc + h*dv floats. Each 64-column piece of a row is converted once and
// added to the four heads' accumulators (Z0-Z3, Z4-Z7, Z8-Z11, Z12-Z15) with the FMA the
// one-head kernel does, in the same key order: every head's sums bit for bit its. Each key
// prefetches the row 8 on (TinyLlama Q4_0 after 4000 tokens: attention 6.7-7.1 -> 5.9-6.0 ms a
// token with the key prefetches of dot4F16G3AVX512).
TEXT ·faVAccF16H4AVX512(SB), NOSPLIT, $0-56
	MOVQ nk+0(FP), CX
	MOVQ v+8(FP), SI
	MOVQ ldv+16(FP), BX
	SHLQ $1, BX
	MOVQ w+24(FP), DI
	MOVQ ldw+32(FP), R12
	SHLQ $2, R12           // bytes from one head's weights to the next's
	LEAQ (R12)(R12*2), AX  // three heads' weights
	MOVQ acc+40(FP), DX
	MOVQ dv+48(FP), R8
	MOVQ R8, R13
	SHLQ $2, R13           // bytes from one head's accumulators to the next's

fav4_chunk:
	LEAQ    (DX)(R13*2), R9
	ADDQ    R13, R9        // head 3's accumulators
	VMOVUPS (DX), Z0
	VMOVUPS 64(DX), Z1
	VMOVUPS 128(DX), Z2
	VMOVUPS 192(DX), Z3
	VMOVUPS (DX)(R13*1), Z4
	VMOVUPS 64(DX)(R13*1), Z5
	VMOVUPS 128(DX)(R13*1), Z6
	VMOVUPS 192(DX)(R13*1), Z7
	VMOVUPS (DX)(R13*2), Z8
	VMOVUPS 64(DX)(R13*2), Z9
	VMOVUPS 128(DX)(R13*2), Z10
	VMOVUPS 192(DX)(R13*2), Z11
	VMOVUPS (R9), Z12
	VMOVUPS 64(R9), Z13
	VMOVUPS 128(R9), Z14
	VMOVUPS 192(R9), Z15
	MOVQ    SI, R9
	MOVQ    DI, R10
	MOVQ    CX, R11

fav4_key:
	PREFETCHT0   (R9)(BX*8)    // 8 rows on: a generated token reads a cold cache
	PREFETCHT0   64(R9)(BX*8)
	VCVTPH2PS    (R9), Z16
	VCVTPH2PS    32(R9), Z17
	VCVTPH2PS    64(R9), Z18
	VCVTPH2PS    96(R9), Z19
	VBROADCASTSS (R10), Z20
	VFMADD231PS  Z16, Z20, Z0
	VFMADD231PS  Z17, Z20, Z1
	VFMADD231PS  Z18, Z20, Z2
	VFMADD231PS  Z19, Z20, Z3
	VBROADCASTSS (R10)(R12*1), Z21
	VFMADD231PS  Z16, Z21, Z4
	VFMADD231PS  Z17, Z21, Z5
	VFMADD231PS  Z18, Z21, Z6
	VFMADD231PS  Z19, Z21, Z7
	VBROADCASTSS (R10)(R12*2), Z22
	VFMADD231PS  Z16, Z22, Z8
	VFMADD231PS  Z17, Z22, Z9
	VFMADD231PS  Z18, Z22, Z10
	VFMADD231PS  Z19, Z22, Z11
	VBROADCASTSS (R10)(AX*1), Z23
	VFMADD231PS  Z16, Z23, Z12
	VFMADD231PS  Z17, Z23, Z13
	VFMADD231PS  Z18, Z23, Z14
	VFMADD231PS  Z19, Z23, Z15
	ADDQ         BX, R9
	ADDQ         $4, R10
	DECQ         R11
	JNZ          fav4_key

	LEAQ    (DX)(R13*2), R9
	ADDQ    R13, R9
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	VMOVUPS Z2, 128(DX)
	VMOVUPS Z3, 192(DX)
	VMOVUPS Z4, (DX)(R13*1)
	VMOVUPS Z5, 64(DX)(R13*1)
	VMOVUPS Z6, 128(DX)(R13*1)
	VMOVUPS Z7, 192(DX)(R13*1)
	VMOVUPS Z8, (DX)(R13*2)
	VMOVUPS Z9, 64(DX)(R13*2)
	VMOVUPS Z10, 128(DX)(R13*2)
	VMOVUPS Z11, 192(DX)(R13*2)
	VMOVUPS Z12, (R9)
	VMOVUPS Z13, 64(R9)
	VMOVUPS Z14, 128(R9)
	VMOVUPS Z15, 192(R9)
	ADDQ    $256, DX
	ADDQ    $128, SI
	SUBQ    $64, R8
	JNZ     fav4_chunk
	VZEROUPPER
	RET

// func scoresF32AVX2(dst, d, m []float32, scale float32)
// dst[i] = d[i]*scale + m[i] (rounded after the product and after the sum), -Inf where m[i] is
// -Inf: attention scores from dots and mask values. Eight lanes a step, the rest one at a time.
TEXT ·scoresF32AVX2(SB), NOSPLIT, $0-76
	MOVQ         dst_base+0(FP), DI
	MOVQ         dst_len+8(FP), CX
	MOVQ         d_base+24(FP), SI
	MOVQ         m_base+48(FP), DX
	VBROADCASTSS scale+72(FP), Y7
	MOVL         $0xff800000, AX
	VMOVD        AX, X6
	VPBROADCASTD X6, Y6       // -Inf
	CMPQ         CX, $8
	JB           sc_tail

sc_8:
	VMULPS    (SI), Y7, Y0
	VMOVUPS   (DX), Y1
	VADDPS    Y1, Y0, Y0
	VCMPPS    $0, Y6, Y1, Y2 // m == -Inf
	VBLENDVPS Y2, Y6, Y0, Y0
	VMOVUPS   Y0, (DI)
	ADDQ      $32, SI
	ADDQ      $32, DX
	ADDQ      $32, DI
	SUBQ      $8, CX
	CMPQ      CX, $8
	JAE       sc_8

sc_tail:
	TESTQ     CX, CX
	JZ        sc_done
	VMOVSS    (SI), X0
	VMULSS    X7, X0, X0
	VMOVSS    (DX), X1
	VADDSS    X1, X0, X0
	VCMPSS    $0, X6, X1, X2
	VBLENDVPS X2, X6, X0, X0
	VMOVSS    X0, (DI)
	ADDQ      $4, SI
	ADDQ      $4, DX
	ADDQ      $4, DI
	DECQ      CX
	JMP       sc_tail

sc_done:
	VZEROUPPER
	RET
