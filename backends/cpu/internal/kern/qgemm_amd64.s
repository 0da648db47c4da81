//go:build amd64 && !purego

#include "textflag.h"

// Quantized GEMM tiles (AVX2 + FMA + F16C): 4 weight rows x RN (1..3) activation rows over
// nb blocks, results to C[j*ldc + r] for r < 4, j < RN.
//
// Weights: Q4_0 (18-byte blocks) or Q8_0 (34-byte blocks), rows lda bytes apart.
// Activations: Q8_0 rows ldb bytes apart, plus their prepared data (rows ldp bytes apart):
// per block f32(dy) (Q8_0 kernels: 4 bytes per block) followed, for the Q4_0 kernels, by
// 8 int32 lanes v[l] = 8*(y[4l]+..+y[4l+3]) (36 bytes per block).
//
// Per block and weight row: Y0 = weight quants (Q4_0: unsigned nibbles; Q8_0: |x|),
// Y1 = broadcast f32(dx). Per pair: Y2 = 8 int32 lane sums, Y3 = dx*dy, acc += Y2*Y3.
// Q4_0: Σ(nib-8)*y = Σ nib*y - v (no sign folding needed: nibbles are unsigned).
// Q8_0: ggml's sign folding, |x| * (y*sign(x)).
// Registers: SI/BX/R8 weights (R8 = row 3), DI/DX activations, R9/R10 prepared data,
// CX block count, Y4.. accumulators (acc[i][j] = Y(4 + RN*i + j)).

DATA qNibMask<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA qNibMask<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA qNibMask<>+16(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA qNibMask<>+24(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL qNibMask<>(SB), RODATA|NOPTR, $32

DATA qOnes16<>+0(SB)/8, $0x0001000100010001
DATA qOnes16<>+8(SB)/8, $0x0001000100010001
DATA qOnes16<>+16(SB)/8, $0x0001000100010001
DATA qOnes16<>+24(SB)/8, $0x0001000100010001
GLOBL qOnes16<>(SB), RODATA|NOPTR, $32

DATA qEights8<>+0(SB)/8, $0x0808080808080808
DATA qEights8<>+8(SB)/8, $0x0808080808080808
DATA qEights8<>+16(SB)/8, $0x0808080808080808
DATA qEights8<>+24(SB)/8, $0x0808080808080808
GLOBL qEights8<>(SB), RODATA|NOPTR, $32

// Q4W(XQ, XD): Y0 = the 32 nibbles of the Q4_0 block (quants at XQ), Y1 = f32(d at XD).
#define Q4W(XQ, XD) \
	VMOVDQU      XQ, X0 \
	VPSRLW       $4, X0, X2 \
	VINSERTI128  $1, X2, Y0, Y0 \
	VPAND        qNibMask<>(SB), Y0, Y0 \
	VPBROADCASTW XD, X1 \
	VCVTPH2PS    X1, Y1

// Q8W(XQ, XD): Y0 = |x| of the Q8_0 block, Y1 = f32(d).
#define Q8W(XQ, XD) \
	VMOVDQU      XQ, Y0 \
	VPABSB       Y0, Y0 \
	VPBROADCASTW XD, X1 \
	VCVTPH2PS    X1, Y1

// PQ4(YQ, DY, V, ACC): ACC += dx*dy * (Σ nib*y - v) in 8 lanes.
#define PQ4(YQ, DY, V, ACC) \
	VPMADDUBSW   YQ, Y0, Y2 \
	VPMADDWD     qOnes16<>(SB), Y2, Y2 \
	VPSUBD       V, Y2, Y2 \
	VCVTDQ2PS    Y2, Y2 \
	VBROADCASTSS DY, Y3 \
	VMULPS       Y1, Y3, Y3 \
	VFMADD231PS  Y3, Y2, ACC

// PQ8(YQ, XQ, DY, ACC): ACC += dx*dy * Σ |x|*(y*sign(x)) in 8 lanes.
#define PQ8(YQ, XQ, DY, ACC) \
	VMOVDQU     YQ, Y2 \
	VPSIGNB     XQ, Y2, Y2 \
	VPMADDUBSW  Y2, Y0, Y2 \
	VPMADDWD    qOnes16<>(SB), Y2, Y2 \
	VCVTDQ2PS   Y2, Y2 \
	VBROADCASTSS DY, Y3 \
	VMULPS      Y1, Y3, Y3 \
	VFMADD231PS Y3, Y2, ACC

// HSUMQ(A, B, C, D, XA): X0 = [hsum A, hsum B, hsum C, hsum D]. Clobbers A, C.
#define HSUMQ(A, B, C, D, XA) \
	VHADDPS      B, A, A \
	VHADDPS      D, C, C \
	VHADDPS      C, A, A \
	VEXTRACTF128 $1, A, X0 \
	VADDPS       X0, XA, X0


// func qgemm4x1Q40(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)
TEXT ·qgemm4x1Q40(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ ldb+32(FP), DX
	MOVQ prep+40(FP), R9
	MOVQ ldp+48(FP), R10
	LEAQ (BX)(BX*2), R8
	ADDQ SI, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loop_qgemm4x1Q40:
	Q4W(2(SI), (SI))
	PQ4(2(DI), (R9), 4(R9), Y4)
	Q4W(2(SI)(BX*1), (SI)(BX*1))
	PQ4(2(DI), (R9), 4(R9), Y5)
	Q4W(2(SI)(BX*2), (SI)(BX*2))
	PQ4(2(DI), (R9), 4(R9), Y6)
	Q4W(2(R8), (R8))
	PQ4(2(DI), (R9), 4(R9), Y7)
	ADDQ $0x12, SI
	ADDQ $0x12, R8
	ADDQ $34, DI
	ADDQ $36, R9
	DECQ CX
	JNZ  loop_qgemm4x1Q40
	MOVQ c+56(FP), R11
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	HSUMQ(Y4, Y5, Y6, Y7, X4)
	VMOVUPS X0, (R11)
	VZEROUPPER
	RET

// func qgemm4x2Q40(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)
TEXT ·qgemm4x2Q40(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ ldb+32(FP), DX
	MOVQ prep+40(FP), R9
	MOVQ ldp+48(FP), R10
	LEAQ (BX)(BX*2), R8
	ADDQ SI, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop_qgemm4x2Q40:
	Q4W(2(SI), (SI))
	PQ4(2(DI), (R9), 4(R9), Y4)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y5)
	Q4W(2(SI)(BX*1), (SI)(BX*1))
	PQ4(2(DI), (R9), 4(R9), Y6)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y7)
	Q4W(2(SI)(BX*2), (SI)(BX*2))
	PQ4(2(DI), (R9), 4(R9), Y8)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y9)
	Q4W(2(R8), (R8))
	PQ4(2(DI), (R9), 4(R9), Y10)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y11)
	ADDQ $0x12, SI
	ADDQ $0x12, R8
	ADDQ $34, DI
	ADDQ $36, R9
	DECQ CX
	JNZ  loop_qgemm4x2Q40
	MOVQ c+56(FP), R11
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	HSUMQ(Y4, Y6, Y8, Y10, X4)
	VMOVUPS X0, (R11)
	ADDQ    R12, R11
	HSUMQ(Y5, Y7, Y9, Y11, X5)
	VMOVUPS X0, (R11)
	VZEROUPPER
	RET

// func qgemm4x3Q40(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)
TEXT ·qgemm4x3Q40(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ ldb+32(FP), DX
	MOVQ prep+40(FP), R9
	MOVQ ldp+48(FP), R10
	LEAQ (BX)(BX*2), R8
	ADDQ SI, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

loop_qgemm4x3Q40:
	Q4W(2(SI), (SI))
	PQ4(2(DI), (R9), 4(R9), Y4)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y5)
	PQ4(2(DI)(DX*2), (R9)(R10*2), 4(R9)(R10*2), Y6)
	Q4W(2(SI)(BX*1), (SI)(BX*1))
	PQ4(2(DI), (R9), 4(R9), Y7)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y8)
	PQ4(2(DI)(DX*2), (R9)(R10*2), 4(R9)(R10*2), Y9)
	Q4W(2(SI)(BX*2), (SI)(BX*2))
	PQ4(2(DI), (R9), 4(R9), Y10)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y11)
	PQ4(2(DI)(DX*2), (R9)(R10*2), 4(R9)(R10*2), Y12)
	Q4W(2(R8), (R8))
	PQ4(2(DI), (R9), 4(R9), Y13)
	PQ4(2(DI)(DX*1), (R9)(R10*1), 4(R9)(R10*1), Y14)
	PQ4(2(DI)(DX*2), (R9)(R10*2), 4(R9)(R10*2), Y15)
	ADDQ $0x12, SI
	ADDQ $0x12, R8
	ADDQ $34, DI
	ADDQ $36, R9
	DECQ CX
	JNZ  loop_qgemm4x3Q40
	MOVQ c+56(FP), R11
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	HSUMQ(Y4, Y7, Y10, Y13, X4)
	VMOVUPS X0, (R11)
	ADDQ    R12, R11
	HSUMQ(Y5, Y8, Y11, Y14, X5)
	VMOVUPS X0, (R11)
	ADDQ    R12, R11
	HSUMQ(Y6, Y9, Y12, Y15, X6)
	VMOVUPS X0, (R11)
	VZEROUPPER
	RET

// func qgemm4x1Q80(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)
TEXT ·qgemm4x1Q80(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ ldb+32(FP), DX
	MOVQ prep+40(FP), R9
	MOVQ ldp+48(FP), R10
	LEAQ (BX)(BX*2), R8
	ADDQ SI, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

loop_qgemm4x1Q80:
	Q8W(2(SI), (SI))
	PQ8(2(DI), 2(SI), (R9), Y4)
	Q8W(2(SI)(BX*1), (SI)(BX*1))
	PQ8(2(DI), 2(SI)(BX*1), (R9), Y5)
	Q8W(2(SI)(BX*2), (SI)(BX*2))
	PQ8(2(DI), 2(SI)(BX*2), (R9), Y6)
	Q8W(2(R8), (R8))
	PQ8(2(DI), 2(R8), (R9), Y7)
	ADDQ $0x22, SI
	ADDQ $0x22, R8
	ADDQ $34, DI
	ADDQ $4, R9
	DECQ CX
	JNZ  loop_qgemm4x1Q80
	MOVQ c+56(FP), R11
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	HSUMQ(Y4, Y5, Y6, Y7, X4)
	VMOVUPS X0, (R11)
	VZEROUPPER
	RET

// func qgemm4x2Q80(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)
TEXT ·qgemm4x2Q80(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ ldb+32(FP), DX
	MOVQ prep+40(FP), R9
	MOVQ ldp+48(FP), R10
	LEAQ (BX)(BX*2), R8
	ADDQ SI, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

loop_qgemm4x2Q80:
	Q8W(2(SI), (SI))
	PQ8(2(DI), 2(SI), (R9), Y4)
	PQ8(2(DI)(DX*1), 2(SI), (R9)(R10*1), Y5)
	Q8W(2(SI)(BX*1), (SI)(BX*1))
	PQ8(2(DI), 2(SI)(BX*1), (R9), Y6)
	PQ8(2(DI)(DX*1), 2(SI)(BX*1), (R9)(R10*1), Y7)
	Q8W(2(SI)(BX*2), (SI)(BX*2))
	PQ8(2(DI), 2(SI)(BX*2), (R9), Y8)
	PQ8(2(DI)(DX*1), 2(SI)(BX*2), (R9)(R10*1), Y9)
	Q8W(2(R8), (R8))
	PQ8(2(DI), 2(R8), (R9), Y10)
	PQ8(2(DI)(DX*1), 2(R8), (R9)(R10*1), Y11)
	ADDQ $0x22, SI
	ADDQ $0x22, R8
	ADDQ $34, DI
	ADDQ $4, R9
	DECQ CX
	JNZ  loop_qgemm4x2Q80
	MOVQ c+56(FP), R11
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	HSUMQ(Y4, Y6, Y8, Y10, X4)
	VMOVUPS X0, (R11)
	ADDQ    R12, R11
	HSUMQ(Y5, Y7, Y9, Y11, X5)
	VMOVUPS X0, (R11)
	VZEROUPPER
	RET

// func qgemm4x3Q80(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)
TEXT ·qgemm4x3Q80(SB), NOSPLIT, $0-72
	MOVQ nb+0(FP), CX
	MOVQ x+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ y+24(FP), DI
	MOVQ ldb+32(FP), DX
	MOVQ prep+40(FP), R9
	MOVQ ldp+48(FP), R10
	LEAQ (BX)(BX*2), R8
	ADDQ SI, R8
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15

loop_qgemm4x3Q80:
	Q8W(2(SI), (SI))
	PQ8(2(DI), 2(SI), (R9), Y4)
	PQ8(2(DI)(DX*1), 2(SI), (R9)(R10*1), Y5)
	PQ8(2(DI)(DX*2), 2(SI), (R9)(R10*2), Y6)
	Q8W(2(SI)(BX*1), (SI)(BX*1))
	PQ8(2(DI), 2(SI)(BX*1), (R9), Y7)
	PQ8(2(DI)(DX*1), 2(SI)(BX*1), (R9)(R10*1), Y8)
	PQ8(2(DI)(DX*2), 2(SI)(BX*1), (R9)(R10*2), Y9)
	Q8W(2(SI)(BX*2), (SI)(BX*2))
	PQ8(2(DI), 2(SI)(BX*2), (R9), Y10)
	PQ8(2(DI)(DX*1), 2(SI)(BX*2), (R9)(R10*1), Y11)
	PQ8(2(DI)(DX*2), 2(SI)(BX*2), (R9)(R10*2), Y12)
	Q8W(2(R8), (R8))
	PQ8(2(DI), 2(R8), (R9), Y13)
	PQ8(2(DI)(DX*1), 2(R8), (R9)(R10*1), Y14)
	PQ8(2(DI)(DX*2), 2(R8), (R9)(R10*2), Y15)
	ADDQ $0x22, SI
	ADDQ $0x22, R8
	ADDQ $34, DI
	ADDQ $4, R9
	DECQ CX
	JNZ  loop_qgemm4x3Q80
	MOVQ c+56(FP), R11
	MOVQ ldc+64(FP), R12
	SHLQ $2, R12
	HSUMQ(Y4, Y7, Y10, Y13, X4)
	VMOVUPS X0, (R11)
	ADDQ    R12, R11
	HSUMQ(Y5, Y8, Y11, Y14, X5)
	VMOVUPS X0, (R11)
	ADDQ    R12, R11
	HSUMQ(Y6, Y9, Y12, Y15, X6)
	VMOVUPS X0, (R11)
	VZEROUPPER
	RET

// func qprepQ4(nb int, y *byte, dst *float32)
// For each Q8_0 block of y, 36 bytes: f32(d), then int32 lanes v[l] = 8*(y[4l]+..+y[4l+3]).
TEXT ·qprepQ4(SB), NOSPLIT, $0-24
	MOVQ    nb+0(FP), CX
	MOVQ    y+8(FP), SI
	MOVQ    dst+16(FP), DI
	VMOVDQU qEights8<>(SB), Y2
	VMOVDQU qOnes16<>(SB), Y3

prep4_loop:
	MOVWLZX    (SI), AX
	VMOVD      AX, X0
	VCVTPH2PS  X0, X0
	VMOVSS     X0, (DI)
	VPMADDUBSW 2(SI), Y2, Y1
	VPMADDWD   Y3, Y1, Y1
	VMOVDQU    Y1, 4(DI)
	ADDQ       $34, SI
	ADDQ       $36, DI
	DECQ       CX
	JNZ        prep4_loop
	VZEROUPPER
	RET

// func qprepQ8(nb int, y *byte, dst *float32)
// For each Q8_0 block of y: f32(d).
TEXT ·qprepQ8(SB), NOSPLIT, $0-24
	MOVQ nb+0(FP), CX
	MOVQ y+8(FP), SI
	MOVQ dst+16(FP), DI

prep8_loop:
	MOVWLZX   (SI), AX
	VMOVD     AX, X0
	VCVTPH2PS X0, X0
	VMOVSS    X0, (DI)
	ADDQ      $34, SI
	ADDQ      $4, DI
	DECQ      CX
	JNZ       prep8_loop
	VZEROUPPER
	RET
