//go:build amd64 && !purego

#include "textflag.h"

// SGEMM micro-kernel and panel packing (AVX2 + FMA + F16C).
//
// Packed A panel (16 weight rows): ap[p*16 + r] = A[r][p].
// Packed B panel (6 activation rows): bp[p*6 + r] = B[r][p].
// The 6x16 tile of C: C[r][q] (row r = activation, 16 contiguous weight columns q) lives in
// Y4+2r (q 0..7) and Y5+2r (q 8..15).

// STEP(ao, bo): one rank-1 update from ao(SI) (16 floats of A) and bo(DI) (6 floats of B).
#define STEP(ao, bo) \
	VMOVUPS      ao(SI), Y0 \
	VMOVUPS      ao+32(SI), Y1 \
	VBROADCASTSS bo(DI), Y2 \
	VBROADCASTSS bo+4(DI), Y3 \
	VFMADD231PS  Y0, Y2, Y4 \
	VFMADD231PS  Y1, Y2, Y5 \
	VFMADD231PS  Y0, Y3, Y6 \
	VFMADD231PS  Y1, Y3, Y7 \
	VBROADCASTSS bo+8(DI), Y2 \
	VBROADCASTSS bo+12(DI), Y3 \
	VFMADD231PS  Y0, Y2, Y8 \
	VFMADD231PS  Y1, Y2, Y9 \
	VFMADD231PS  Y0, Y3, Y10 \
	VFMADD231PS  Y1, Y3, Y11 \
	VBROADCASTSS bo+16(DI), Y2 \
	VBROADCASTSS bo+20(DI), Y3 \
	VFMADD231PS  Y0, Y2, Y12 \
	VFMADD231PS  Y1, Y2, Y13 \
	VFMADD231PS  Y0, Y3, Y14 \
	VFMADD231PS  Y1, Y3, Y15

#define STOREROW(A0, A1) \
	VMOVUPS A0, (DX) \
	VMOVUPS A1, 32(DX) \
	ADDQ    BX, DX

#define ADDSTOREROW(A0, A1) \
	VADDPS  (DX), A0, A0 \
	VADDPS  32(DX), A1, A1 \
	VMOVUPS A0, (DX) \
	VMOVUPS A1, 32(DX) \
	ADDQ    BX, DX

// DOT4X3ROW(A0, A1, A2): weight row r (in Y3) times x rows 0-2 (Y0-Y2) into their
// accumulators: acc(j, r) of dot4x3 lives in Y(4+4j+r).
#define DOT4X3ROW(A0, A1, A2) \
	VFMADD231PS Y3, Y0, A0 \
	VFMADD231PS Y3, Y1, A1 \
	VFMADD231PS Y3, Y2, A2

#define DOT4X3OUT(A0, A1, A2, A3, off) \
	VMOVAPS A0, Y0 \
	VMOVAPS A1, Y1 \
	VMOVAPS A2, Y2 \
	VMOVAPS A3, Y3 \
	HSUM4 \
	VMOVUPS X0, off(DX)

// DOT4X3(LOADW, ESHIFT, WSTEP): the body of dot4x3 for weights of 1<<ESHIFT bytes, each read
// into float32 lanes by LOADW (VCVTPH2PS or VMOVUPS), WSTEP bytes of a row per 8 elements.
#define DOT4X3(LOADW, ESHIFT, WSTEP) \
	MOVQ   k8+0(FP), CX \
	MOVQ   a+8(FP), SI \
	MOVQ   lda+16(FP), BX \
	MOVQ   x+24(FP), DI \
	MOVQ   ldx+32(FP), R11 \
	MOVQ   out+40(FP), DX \
	SHLQ   $ESHIFT, BX \
	SHLQ   $2, R11 \
	LEAQ   (SI)(BX*2), R8 \
	LEAQ   (DI)(R11*2), R12 \
	VXORPS Y4, Y4, Y4 \
	VXORPS Y5, Y5, Y5 \
	VXORPS Y6, Y6, Y6 \
	VXORPS Y7, Y7, Y7 \
	VXORPS Y8, Y8, Y8 \
	VXORPS Y9, Y9, Y9 \
	VXORPS Y10, Y10, Y10 \
	VXORPS Y11, Y11, Y11 \
	VXORPS Y12, Y12, Y12 \
	VXORPS Y13, Y13, Y13 \
	VXORPS Y14, Y14, Y14 \
	VXORPS Y15, Y15, Y15 \
	PCALIGN $16 \
loop: \
	VMOVUPS (DI), Y0 \
	VMOVUPS (DI)(R11*1), Y1 \
	VMOVUPS (R12), Y2 \
	LOADW   (SI), Y3 \
	DOT4X3ROW(Y4, Y8, Y12) \
	LOADW   (SI)(BX*1), Y3 \
	DOT4X3ROW(Y5, Y9, Y13) \
	LOADW   (R8), Y3 \
	DOT4X3ROW(Y6, Y10, Y14) \
	LOADW   (R8)(BX*1), Y3 \
	DOT4X3ROW(Y7, Y11, Y15) \
	ADDQ    $WSTEP, SI \
	ADDQ    $WSTEP, R8 \
	ADDQ    $32, DI \
	ADDQ    $32, R12 \
	DECQ    CX \
	JNZ     loop \
	DOT4X3OUT(Y4, Y5, Y6, Y7, 0) \
	DOT4X3OUT(Y8, Y9, Y10, Y11, 16) \
	DOT4X3OUT(Y12, Y13, Y14, Y15, 32) \
	VZEROUPPER \
	RET

// func sgemm6x16AVX2(k int, a, b, c *float32, ldc int, accum int)
// C tile (6 rows of ldc floats, 16 columns) = (accum != 0 ? C : 0) + Σ_p b[p*6+r]*a[p*16+q].
TEXT ·sgemm6x16AVX2(SB), NOSPLIT, $0-48
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   b+16(FP), DI
	MOVQ   c+24(FP), DX
	MOVQ   ldc+32(FP), BX
	SHLQ   $2, BX
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
	MOVQ   CX, AX
	SHRQ   $3, AX
	JZ     gemm_k1

gemm_k8:
	// A 24 steps ahead: in the wide products' order (sgemm_owna.go) A streams from L2 or L3
	// (1536 bytes ahead ran 2-4% faster than 512 there on Zen 3, level elsewhere).
	PREFETCHT0 1536(SI)
	STEP(0, 0)
	STEP(64, 24)
	PREFETCHT0 1600(SI)
	STEP(128, 48)
	STEP(192, 72)
	PREFETCHT0 1664(SI)
	STEP(256, 96)
	STEP(320, 120)
	PREFETCHT0 1728(SI)
	STEP(384, 144)
	STEP(448, 168)
	ADDQ       $512, SI
	ADDQ       $192, DI
	DECQ       AX
	JNZ        gemm_k8

gemm_k1:
	ANDQ $7, CX
	JZ   gemm_store

gemm_k1_loop:
	STEP(0, 0)
	ADDQ $64, SI
	ADDQ $24, DI
	DECQ CX
	JNZ  gemm_k1_loop

gemm_store:
	MOVQ  accum+40(FP), AX
	TESTQ AX, AX
	JNZ   gemm_accum
	STOREROW(Y4, Y5)
	STOREROW(Y6, Y7)
	STOREROW(Y8, Y9)
	STOREROW(Y10, Y11)
	STOREROW(Y12, Y13)
	STOREROW(Y14, Y15)
	VZEROUPPER
	RET

gemm_accum:
	ADDSTOREROW(Y4, Y5)
	ADDSTOREROW(Y6, Y7)
	ADDSTOREROW(Y8, Y9)
	ADDSTOREROW(Y10, Y11)
	ADDSTOREROW(Y12, Y13)
	ADDSTOREROW(Y14, Y15)
	VZEROUPPER
	RET

// TRANSPOSE8: rows Y0..Y7 (8 floats each) -> columns Y8..Y15 (column c in Y8+c).
#define TRANSPOSE8 \
	VUNPCKLPS  Y1, Y0, Y8 \
	VUNPCKHPS  Y1, Y0, Y9 \
	VUNPCKLPS  Y3, Y2, Y10 \
	VUNPCKHPS  Y3, Y2, Y11 \
	VUNPCKLPS  Y5, Y4, Y12 \
	VUNPCKHPS  Y5, Y4, Y13 \
	VUNPCKLPS  Y7, Y6, Y14 \
	VUNPCKHPS  Y7, Y6, Y15 \
	VSHUFPS    $0x44, Y10, Y8, Y0 \
	VSHUFPS    $0xee, Y10, Y8, Y1 \
	VSHUFPS    $0x44, Y11, Y9, Y2 \
	VSHUFPS    $0xee, Y11, Y9, Y3 \
	VSHUFPS    $0x44, Y14, Y12, Y4 \
	VSHUFPS    $0xee, Y14, Y12, Y5 \
	VSHUFPS    $0x44, Y15, Y13, Y6 \
	VSHUFPS    $0xee, Y15, Y13, Y7 \
	VPERM2F128 $0x20, Y4, Y0, Y8 \
	VPERM2F128 $0x20, Y5, Y1, Y9 \
	VPERM2F128 $0x20, Y6, Y2, Y10 \
	VPERM2F128 $0x20, Y7, Y3, Y11 \
	VPERM2F128 $0x31, Y4, Y0, Y12 \
	VPERM2F128 $0x31, Y5, Y1, Y13 \
	VPERM2F128 $0x31, Y6, Y2, Y14 \
	VPERM2F128 $0x31, Y7, Y3, Y15

// STORECOLS(off, stride): column c to off + c*stride (DI).
#define STORECOLS(off, stride) \
	VMOVUPS Y8, off(DI) \
	VMOVUPS Y9, off+stride(DI) \
	VMOVUPS Y10, off+2*stride(DI) \
	VMOVUPS Y11, off+3*stride(DI) \
	VMOVUPS Y12, off+4*stride(DI) \
	VMOVUPS Y13, off+5*stride(DI) \
	VMOVUPS Y14, off+6*stride(DI) \
	VMOVUPS Y15, off+7*stride(DI)

// LOAD8F32(P, Q): rows at P, P+BX, P+2BX, P+R8 into Y0..Y3 and Q.. into Y4..Y7.
#define LOAD8F32(P, Q) \
	VMOVUPS (P), Y0 \
	VMOVUPS (P)(BX*1), Y1 \
	VMOVUPS (P)(BX*2), Y2 \
	VMOVUPS (P)(R8*1), Y3 \
	VMOVUPS (Q), Y4 \
	VMOVUPS (Q)(BX*1), Y5 \
	VMOVUPS (Q)(BX*2), Y6 \
	VMOVUPS (Q)(R8*1), Y7

#define LOAD8F16(P, Q) \
	VCVTPH2PS (P), Y0 \
	VCVTPH2PS (P)(BX*1), Y1 \
	VCVTPH2PS (P)(BX*2), Y2 \
	VCVTPH2PS (P)(R8*1), Y3 \
	VCVTPH2PS (Q), Y4 \
	VCVTPH2PS (Q)(BX*1), Y5 \
	VCVTPH2PS (Q)(BX*2), Y6 \
	VCVTPH2PS (Q)(R8*1), Y7

// func packA16AVX2(k8 int, a *float32, lda int, dst *float32)
// dst[p*16 + r] = a[r*lda + p] for r < 16, p < 8*k8.
TEXT ·packA16AVX2(SB), NOSPLIT, $0-32
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   packa_done
	SHLQ $2, BX
	LEAQ (BX)(BX*2), R8
	LEAQ (SI)(BX*4), R9
	LEAQ (R9)(BX*4), R10
	LEAQ (R10)(BX*4), R11

packa_loop:
	LOAD8F32(SI, R9)
	TRANSPOSE8
	STORECOLS(0, 64)
	LOAD8F32(R10, R11)
	TRANSPOSE8
	STORECOLS(32, 64)
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	ADDQ $512, DI
	DECQ CX
	JNZ  packa_loop

packa_done:
	VZEROUPPER
	RET

// func packA16F16AVX2(k8 int, a *uint16, lda int, dst *float32)
// dst[p*16 + r] = f32(a[r*lda + p]) for r < 16, p < 8*k8.
TEXT ·packA16F16AVX2(SB), NOSPLIT, $0-32
	MOVQ k8+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   packah_done
	SHLQ $1, BX
	LEAQ (BX)(BX*2), R8
	LEAQ (SI)(BX*4), R9
	LEAQ (R9)(BX*4), R10
	LEAQ (R10)(BX*4), R11

packah_loop:
	LOAD8F16(SI, R9)
	TRANSPOSE8
	STORECOLS(0, 64)
	LOAD8F16(R10, R11)
	TRANSPOSE8
	STORECOLS(32, 64)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $512, DI
	DECQ CX
	JNZ  packah_loop

packah_done:
	VZEROUPPER
	RET

// func packB6AVX2(k8 int, b *float32, ldb int, dst *float32)
// dst[p*6 + r] = b[r*ldb + p] for r < 6, p < 8*k8. Each column is written with a 32-byte
// store, so 2 floats past dst[48*k8] are overwritten (the caller leaves that slack).
TEXT ·packB6AVX2(SB), NOSPLIT, $0-32
	MOVQ k8+0(FP), CX
	MOVQ b+8(FP), SI
	MOVQ ldb+16(FP), BX
	MOVQ dst+24(FP), DI
	TESTQ CX, CX
	JZ   packb_done
	SHLQ $2, BX
	LEAQ (BX)(BX*2), R8
	LEAQ (SI)(BX*4), R9

packb_loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(BX*1), Y1
	VMOVUPS (SI)(BX*2), Y2
	VMOVUPS (SI)(R8*1), Y3
	VMOVUPS (R9), Y4
	VMOVUPS (R9)(BX*1), Y5
	VXORPS  Y6, Y6, Y6
	VXORPS  Y7, Y7, Y7
	TRANSPOSE8
	STORECOLS(0, 24)
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $192, DI
	DECQ CX
	JNZ  packb_loop

packb_done:
	VZEROUPPER
	RET

// 8 ones then 8 zeros: 8 dwords loaded at dotTailMask+32-4*r mask the first r lanes.
DATA dotTailMask<>+0(SB)/8, $0xffffffffffffffff
DATA dotTailMask<>+8(SB)/8, $0xffffffffffffffff
DATA dotTailMask<>+16(SB)/8, $0xffffffffffffffff
DATA dotTailMask<>+24(SB)/8, $0xffffffffffffffff
DATA dotTailMask<>+32(SB)/8, $0
DATA dotTailMask<>+40(SB)/8, $0
DATA dotTailMask<>+48(SB)/8, $0
DATA dotTailMask<>+56(SB)/8, $0
GLOBL dotTailMask<>(SB), RODATA|NOPTR, $64

// HSUM4: X0 = [hsum Y0, hsum Y1, hsum Y2, hsum Y3].
#define HSUM4 \
	VHADDPS      Y1, Y0, Y0 \
	VHADDPS      Y3, Y2, Y2 \
	VHADDPS      Y2, Y0, Y0 \
	VEXTRACTF128 $1, Y0, X1 \
	VADDPS       X1, X0, X0

// func dot4F32AVX2(k int, a *float32, lda int, x *float32, out *float32)
// out[r] = Σ_{p<k} a[r*lda+p]*x[p] for r < 4.
TEXT ·dot4F32AVX2(SB), NOSPLIT, $0-40
	MOVQ   k+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   lda+16(FP), BX
	MOVQ   x+24(FP), DI
	MOVQ   out+32(FP), DX
	SHLQ   $2, BX
	LEAQ   (SI)(BX*2), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   CX, AX
	SHRQ   $4, AX
	JZ     dot4_8

dot4_16:
	VMOVUPS     (DI), Y8
	VMOVUPS     32(DI), Y9
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS 32(SI), Y9, Y4
	VFMADD231PS (SI)(BX*1), Y8, Y1
	VFMADD231PS 32(SI)(BX*1), Y9, Y5
	VFMADD231PS (R8), Y8, Y2
	VFMADD231PS 32(R8), Y9, Y6
	VFMADD231PS (R8)(BX*1), Y8, Y3
	VFMADD231PS 32(R8)(BX*1), Y9, Y7
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, DI
	DECQ        AX
	JNZ         dot4_16

dot4_8:
	TESTQ $8, CX
	JZ    dot4_tail
	VMOVUPS     (DI), Y8
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS (SI)(BX*1), Y8, Y1
	VFMADD231PS (R8), Y8, Y2
	VFMADD231PS (R8)(BX*1), Y8, Y3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $32, DI

dot4_tail:
	ANDQ $7, CX
	JZ   dot4_done
	LEAQ dotTailMask<>+32(SB), AX
	SHLQ $2, CX
	SUBQ CX, AX
	VMOVDQU     (AX), Y10
	VMASKMOVPS  (DI), Y10, Y8
	VMASKMOVPS  (SI), Y10, Y9
	VFMADD231PS Y9, Y8, Y4
	VMASKMOVPS  (SI)(BX*1), Y10, Y9
	VFMADD231PS Y9, Y8, Y5
	VMASKMOVPS  (R8), Y10, Y9
	VFMADD231PS Y9, Y8, Y6
	VMASKMOVPS  (R8)(BX*1), Y10, Y9
	VFMADD231PS Y9, Y8, Y7

dot4_done:
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	HSUM4
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot4F16F32AVX2(k8 int, a *uint16, lda int, x *float32, out *float32, next int)
// out[r] = Σ_{p<8*k8} f32(a[r*lda+p])*x[p] for r < 4 (the caller adds the k%8 tail).
// With next != 0 it prefetches, while it reads rows 0-3, the same offsets of rows 4-7: the next
// call's rows in the caller's task (a 2048-wide f16 row is one 4 KiB page, where the hardware
// prefetcher starts over, so the next rows' first lines are then already on their way; f16
// mat-vec of 16384x2048, one thread: 6.4-7.7 -> 8.3-10.3 GB/s on Zen 3). The caller passes 0 for
// its task's last rows, whose successors another worker reads: prefetching them too cost a
// 2-thread F16 model 7% of its generation speed (25% more bytes read). With next == 0 it
// prefetches rows 0-3 themselves, which it reads anyway. The f32 kernel, whose rows span two
// pages, showed no gain from it.
TEXT ·dot4F16F32AVX2(SB), NOSPLIT, $0-48
	MOVQ   k8+0(FP), CX
	MOVQ   a+8(FP), SI
	MOVQ   lda+16(FP), BX
	MOVQ   x+24(FP), DI
	MOVQ   out+32(FP), DX
	SHLQ   $1, BX
	LEAQ   (SI)(BX*2), R8
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ   SI, R9          // rows 0 and 1 (next == 0), or 4 and 5: prefetched as rows 0-3 are read
	MOVQ   R8, R10         // rows 2 and 3, or 6 and 7
	MOVQ   next+40(FP), AX
	TESTQ  AX, AX
	JZ     dot4h_pf
	LEAQ   (SI)(BX*4), R9
	LEAQ   (R8)(BX*4), R10

dot4h_pf:
	MOVQ   CX, AX
	SHRQ   $1, AX
	JZ     dot4h_8

dot4h_16:
	PREFETCHT0  (R9)
	PREFETCHT0  (R9)(BX*1)
	PREFETCHT0  (R10)
	PREFETCHT0  (R10)(BX*1)
	ADDQ        $32, R9
	ADDQ        $32, R10
	VMOVUPS     (DI), Y8
	VMOVUPS     32(DI), Y9
	VCVTPH2PS   (SI), Y10
	VCVTPH2PS   16(SI), Y11
	VCVTPH2PS   (SI)(BX*1), Y12
	VCVTPH2PS   16(SI)(BX*1), Y13
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y11, Y9, Y4
	VFMADD231PS Y12, Y8, Y1
	VFMADD231PS Y13, Y9, Y5
	VCVTPH2PS   (R8), Y10
	VCVTPH2PS   16(R8), Y11
	VCVTPH2PS   (R8)(BX*1), Y12
	VCVTPH2PS   16(R8)(BX*1), Y13
	VFMADD231PS Y10, Y8, Y2
	VFMADD231PS Y11, Y9, Y6
	VFMADD231PS Y12, Y8, Y3
	VFMADD231PS Y13, Y9, Y7
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $64, DI
	DECQ        AX
	JNZ         dot4h_16

dot4h_8:
	TESTQ $1, CX
	JZ    dot4h_done
	VMOVUPS     (DI), Y8
	VCVTPH2PS   (SI), Y10
	VCVTPH2PS   (SI)(BX*1), Y12
	VFMADD231PS Y10, Y8, Y0
	VFMADD231PS Y12, Y8, Y1
	VCVTPH2PS   (R8), Y10
	VCVTPH2PS   (R8)(BX*1), Y12
	VFMADD231PS Y10, Y8, Y2
	VFMADD231PS Y12, Y8, Y3

dot4h_done:
	VADDPS  Y4, Y0, Y0
	VADDPS  Y5, Y1, Y1
	VADDPS  Y6, Y2, Y2
	VADDPS  Y7, Y3, Y3
	HSUM4
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot4x3F16F32AVX2(k8 int, a *uint16, lda int, x *float32, ldx int, out *float32)
// out[4j+r] = Σ_{p<8*k8} a[r*lda+p]*x[j*ldx+p] for r < 4, j < 3 (a in IEEE halves): the four
// weight rows are read once for three activation rows (a few-token prompt's MUL_MAT).
TEXT ·dot4x3F16F32AVX2(SB), NOSPLIT, $0-48
	DOT4X3(VCVTPH2PS, 1, 16)

// func dot4x3F32AVX2(k8 int, a *float32, lda int, x *float32, ldx int, out *float32)
// dot4x3F16F32AVX2 for float32 weights.
TEXT ·dot4x3F32AVX2(SB), NOSPLIT, $0-48
	DOT4X3(VMOVUPS, 2, 32)

// LOAD8BF16(P, Q): as LOAD8F32 from bf16 rows, widened exactly (zero-extend, shift left 16).
#define LOAD8BF16(P, Q) \
	VPMOVZXWD (P), Y0 \
	VPMOVZXWD (P)(BX*1), Y1 \
	VPMOVZXWD (P)(BX*2), Y2 \
	VPMOVZXWD (P)(R8*1), Y3 \
	VPMOVZXWD (Q), Y4 \
	VPMOVZXWD (Q)(BX*1), Y5 \
	VPMOVZXWD (Q)(BX*2), Y6 \
	VPMOVZXWD (Q)(R8*1), Y7 \
	VPSLLD    $16, Y0, Y0 \
	VPSLLD    $16, Y1, Y1 \
	VPSLLD    $16, Y2, Y2 \
	VPSLLD    $16, Y3, Y3 \
	VPSLLD    $16, Y4, Y4 \
	VPSLLD    $16, Y5, Y5 \
	VPSLLD    $16, Y6, Y6 \
	VPSLLD    $16, Y7, Y7

// func packA16BF16AVX2(k8 int, a *uint16, lda int, dst *float32)
// dst[p*16 + r] = f32(a[r*lda + p]) for r < 16, p < 8*k8 (a in bf16).
TEXT ·packA16BF16AVX2(SB), NOSPLIT, $0-32
	MOVQ  k8+0(FP), CX
	MOVQ  a+8(FP), SI
	MOVQ  lda+16(FP), BX
	MOVQ  dst+24(FP), DI
	TESTQ CX, CX
	JZ    packab_done
	SHLQ  $1, BX
	LEAQ  (BX)(BX*2), R8
	LEAQ  (SI)(BX*4), R9
	LEAQ  (R9)(BX*4), R10
	LEAQ  (R10)(BX*4), R11

packab_loop:
	LOAD8BF16(SI, R9)
	TRANSPOSE8
	STORECOLS(0, 64)
	LOAD8BF16(R10, R11)
	TRANSPOSE8
	STORECOLS(32, 64)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $16, R10
	ADDQ $16, R11
	ADDQ $512, DI
	DECQ CX
	JNZ  packab_loop

packab_done:
	VZEROUPPER
	RET

// func packB6BF16AVX2(k8 int, b *uint16, ldb int, dst *float32)
// packB6AVX2 from bf16 rows: dst[p*6 + r] = f32(b[r*ldb + p]); the same 2 floats of slack.
TEXT ·packB6BF16AVX2(SB), NOSPLIT, $0-32
	MOVQ  k8+0(FP), CX
	MOVQ  b+8(FP), SI
	MOVQ  ldb+16(FP), BX
	MOVQ  dst+24(FP), DI
	TESTQ CX, CX
	JZ    packbb_done
	SHLQ  $1, BX
	LEAQ  (BX)(BX*2), R8
	LEAQ  (SI)(BX*4), R9

packbb_loop:
	VPMOVZXWD (SI), Y0
	VPMOVZXWD (SI)(BX*1), Y1
	VPMOVZXWD (SI)(BX*2), Y2
	VPMOVZXWD (SI)(R8*1), Y3
	VPMOVZXWD (R9), Y4
	VPMOVZXWD (R9)(BX*1), Y5
	VPSLLD    $16, Y0, Y0
	VPSLLD    $16, Y1, Y1
	VPSLLD    $16, Y2, Y2
	VPSLLD    $16, Y3, Y3
	VPSLLD    $16, Y4, Y4
	VPSLLD    $16, Y5, Y5
	VXORPS    Y6, Y6, Y6
	VXORPS    Y7, Y7, Y7
	TRANSPOSE8
	STORECOLS(0, 24)
	ADDQ $16, SI
	ADDQ $16, R9
	ADDQ $192, DI
	DECQ CX
	JNZ  packbb_loop

packbb_done:
	VZEROUPPER
	RET
