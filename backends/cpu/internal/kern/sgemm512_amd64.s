//go:build amd64 && !purego

#include "textflag.h"

// SGEMM micro-kernel for AVX-512F: a 6x32 tile of C from two adjacent packed 16-row A panels.
//
// The packing is the AVX2 kernel's (ap[p*16 + r] per 16-row panel, bp[p*6 + r]); the second
// panel starts 16*k floats after the first. C row r (an activation row) holds 32 contiguous
// weight columns: Z4+2r (columns 0..15, from the first panel) and Z5+2r (16..31, second panel).
// Per k step: two 64-byte A loads, six broadcasts of B, twelve 512-bit FMAs.
// Every cache line of both A panels is prefetched 8 k steps (512 bytes) ahead (one line per panel
// and step; two per four steps left half the lines to the hardware), and the 12x32 kernel
// prefetches its C tile's rows on entry, so the tile's loads and stores at the end do not wait
// on L3: on Zen 5, 2048³ f32 on one worker, 202-215 -> 218-219 GFLOPS, alternating binaries.

// STEP512(ao, bo): one rank-1 update from ao(SI), ao(R9) (16 floats of each A panel) and bo(DI).
#define STEP512(ao, bo) \
	VMOVUPS      ao(SI), Z0 \
	VMOVUPS      ao(R9), Z1 \
	VBROADCASTSS bo(DI), Z2 \
	VBROADCASTSS bo+4(DI), Z3 \
	VFMADD231PS  Z0, Z2, Z4 \
	VFMADD231PS  Z1, Z2, Z5 \
	VFMADD231PS  Z0, Z3, Z6 \
	VFMADD231PS  Z1, Z3, Z7 \
	VBROADCASTSS bo+8(DI), Z2 \
	VBROADCASTSS bo+12(DI), Z3 \
	VFMADD231PS  Z0, Z2, Z8 \
	VFMADD231PS  Z1, Z2, Z9 \
	VFMADD231PS  Z0, Z3, Z10 \
	VFMADD231PS  Z1, Z3, Z11 \
	VBROADCASTSS bo+16(DI), Z2 \
	VBROADCASTSS bo+20(DI), Z3 \
	VFMADD231PS  Z0, Z2, Z12 \
	VFMADD231PS  Z1, Z2, Z13 \
	VFMADD231PS  Z0, Z3, Z14 \
	VFMADD231PS  Z1, Z3, Z15

#define STOREROW512(A0, A1) \
	VMOVUPS A0, (DX) \
	VMOVUPS A1, 64(DX) \
	ADDQ    BX, DX

#define ADDSTOREROW512(A0, A1) \
	VADDPS  (DX), A0, A0 \
	VADDPS  64(DX), A1, A1 \
	VMOVUPS A0, (DX) \
	VMOVUPS A1, 64(DX) \
	ADDQ    BX, DX

// func sgemm6x32AVX512(k int, a, b, c *float32, ldc int, accum int)
// C tile (6 rows of ldc floats, 32 columns) = (accum != 0 ? C : 0) + Σ_p b[p*6+r]*A(p, q), where
// A(p, q) = a[p*16+q] for q < 16 and a[16*k + p*16 + q-16] for q >= 16.
TEXT ·sgemm6x32AVX512(SB), NOSPLIT, $0-48
	MOVQ    k+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    c+24(FP), DX
	MOVQ    ldc+32(FP), BX
	SHLQ    $2, BX
	MOVQ    CX, R9
	SHLQ    $6, R9
	ADDQ    SI, R9            // second panel: a + 16*k floats
	VPXORD  Z4, Z4, Z4
	VPXORD  Z5, Z5, Z5
	VPXORD  Z6, Z6, Z6
	VPXORD  Z7, Z7, Z7
	VPXORD  Z8, Z8, Z8
	VPXORD  Z9, Z9, Z9
	VPXORD  Z10, Z10, Z10
	VPXORD  Z11, Z11, Z11
	VPXORD  Z12, Z12, Z12
	VPXORD  Z13, Z13, Z13
	VPXORD  Z14, Z14, Z14
	VPXORD  Z15, Z15, Z15
	MOVQ    CX, AX
	SHRQ    $2, AX
	JZ      g512_k1

g512_k4:
	PREFETCHT0 512(SI)
	PREFETCHT0 512(R9)
	STEP512(0, 0)
	PREFETCHT0 576(SI)
	PREFETCHT0 576(R9)
	STEP512(64, 24)
	PREFETCHT0 640(SI)
	PREFETCHT0 640(R9)
	STEP512(128, 48)
	PREFETCHT0 704(SI)
	PREFETCHT0 704(R9)
	STEP512(192, 72)
	ADDQ       $256, SI
	ADDQ       $256, R9
	ADDQ       $96, DI
	DECQ       AX
	JNZ        g512_k4

g512_k1:
	ANDQ $3, CX
	JZ   g512_store

g512_k1_loop:
	STEP512(0, 0)
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $24, DI
	DECQ CX
	JNZ  g512_k1_loop

g512_store:
	MOVQ  accum+40(FP), AX
	TESTQ AX, AX
	JNZ   g512_accum
	STOREROW512(Z4, Z5)
	STOREROW512(Z6, Z7)
	STOREROW512(Z8, Z9)
	STOREROW512(Z10, Z11)
	STOREROW512(Z12, Z13)
	STOREROW512(Z14, Z15)
	VZEROUPPER
	RET

g512_accum:
	ADDSTOREROW512(Z4, Z5)
	ADDSTOREROW512(Z6, Z7)
	ADDSTOREROW512(Z8, Z9)
	ADDSTOREROW512(Z10, Z11)
	ADDSTOREROW512(Z12, Z13)
	ADDSTOREROW512(Z14, Z15)
	VZEROUPPER
	RET

// 12x32 variant: two adjacent 6-row B panels (the second bs floats after the first, passed in
// bytes) against two adjacent A panels; C rows 0..11 in Z8+2r / Z9+2r. Per k step: 2 A loads,
// 12 broadcasts, 24 FMAs, so the FMA units rather than the loads set the pace.

// STEP12(ao, bo): one rank-1 update of the 12x32 tile.
#define STEP12(ao, bo) \
	VMOVUPS      ao(SI), Z0 \
	VMOVUPS      ao(R9), Z1 \
	VBROADCASTSS bo(DI), Z2 \
	VFMADD231PS  Z0, Z2, Z8 \
	VFMADD231PS  Z1, Z2, Z9 \
	VBROADCASTSS bo+4(DI), Z3 \
	VFMADD231PS  Z0, Z3, Z10 \
	VFMADD231PS  Z1, Z3, Z11 \
	VBROADCASTSS bo+8(DI), Z4 \
	VFMADD231PS  Z0, Z4, Z12 \
	VFMADD231PS  Z1, Z4, Z13 \
	VBROADCASTSS bo+12(DI), Z5 \
	VFMADD231PS  Z0, Z5, Z14 \
	VFMADD231PS  Z1, Z5, Z15 \
	VBROADCASTSS bo+16(DI), Z6 \
	VFMADD231PS  Z0, Z6, Z16 \
	VFMADD231PS  Z1, Z6, Z17 \
	VBROADCASTSS bo+20(DI), Z7 \
	VFMADD231PS  Z0, Z7, Z18 \
	VFMADD231PS  Z1, Z7, Z19 \
	VBROADCASTSS bo(R10), Z2 \
	VFMADD231PS  Z0, Z2, Z20 \
	VFMADD231PS  Z1, Z2, Z21 \
	VBROADCASTSS bo+4(R10), Z3 \
	VFMADD231PS  Z0, Z3, Z22 \
	VFMADD231PS  Z1, Z3, Z23 \
	VBROADCASTSS bo+8(R10), Z4 \
	VFMADD231PS  Z0, Z4, Z24 \
	VFMADD231PS  Z1, Z4, Z25 \
	VBROADCASTSS bo+12(R10), Z5 \
	VFMADD231PS  Z0, Z5, Z26 \
	VFMADD231PS  Z1, Z5, Z27 \
	VBROADCASTSS bo+16(R10), Z6 \
	VFMADD231PS  Z0, Z6, Z28 \
	VFMADD231PS  Z1, Z6, Z29 \
	VBROADCASTSS bo+20(R10), Z7 \
	VFMADD231PS  Z0, Z7, Z30 \
	VFMADD231PS  Z1, Z7, Z31

// func sgemm12x32AVX512(k int, a, b *float32, bs int, c *float32, ldc int, accum int)
// C tile (12 rows, 32 columns) = (accum != 0 ? C : 0) + Σ_p B(p, r)*A(p, q), with A as in
// sgemm6x32AVX512 and B(p, r) = b[p*6+r] for r < 6, b[bs + p*6 + r-6] for r >= 6 (bs in floats).
TEXT ·sgemm12x32AVX512(SB), NOSPLIT, $0-56
	MOVQ    k+0(FP), CX
	MOVQ    a+8(FP), SI
	MOVQ    b+16(FP), DI
	MOVQ    bs+24(FP), R10
	SHLQ    $2, R10
	ADDQ    DI, R10           // second B panel
	MOVQ    c+32(FP), DX
	MOVQ    ldc+40(FP), BX
	SHLQ    $2, BX
	MOVQ    CX, R9
	SHLQ    $6, R9
	ADDQ    SI, R9            // second A panel: a + 16*k floats
	MOVQ    DX, R11
	MOVQ    $12, R12

g12_pfc:
	PREFETCHT0 (R11)          // the C tile's row (128 bytes)
	PREFETCHT0 64(R11)
	ADDQ       BX, R11
	DECQ       R12
	JNZ        g12_pfc
	VPXORD  Z8, Z8, Z8
	VPXORD  Z9, Z9, Z9
	VPXORD  Z10, Z10, Z10
	VPXORD  Z11, Z11, Z11
	VPXORD  Z12, Z12, Z12
	VPXORD  Z13, Z13, Z13
	VPXORD  Z14, Z14, Z14
	VPXORD  Z15, Z15, Z15
	VPXORD  Z16, Z16, Z16
	VPXORD  Z17, Z17, Z17
	VPXORD  Z18, Z18, Z18
	VPXORD  Z19, Z19, Z19
	VPXORD  Z20, Z20, Z20
	VPXORD  Z21, Z21, Z21
	VPXORD  Z22, Z22, Z22
	VPXORD  Z23, Z23, Z23
	VPXORD  Z24, Z24, Z24
	VPXORD  Z25, Z25, Z25
	VPXORD  Z26, Z26, Z26
	VPXORD  Z27, Z27, Z27
	VPXORD  Z28, Z28, Z28
	VPXORD  Z29, Z29, Z29
	VPXORD  Z30, Z30, Z30
	VPXORD  Z31, Z31, Z31
	MOVQ    CX, AX
	SHRQ    $2, AX
	JZ      g12_k1

g12_k4:
	PREFETCHT0 512(SI)
	PREFETCHT0 512(R9)
	STEP12(0, 0)
	PREFETCHT0 576(SI)
	PREFETCHT0 576(R9)
	STEP12(64, 24)
	PREFETCHT0 640(SI)
	PREFETCHT0 640(R9)
	STEP12(128, 48)
	PREFETCHT0 704(SI)
	PREFETCHT0 704(R9)
	STEP12(192, 72)
	ADDQ       $256, SI
	ADDQ       $256, R9
	ADDQ       $96, DI
	ADDQ       $96, R10
	DECQ       AX
	JNZ        g12_k4

g12_k1:
	ANDQ $3, CX
	JZ   g12_store

g12_k1_loop:
	STEP12(0, 0)
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $24, DI
	ADDQ $24, R10
	DECQ CX
	JNZ  g12_k1_loop

g12_store:
	MOVQ  accum+48(FP), AX
	TESTQ AX, AX
	JNZ   g12_accum
	STOREROW512(Z8, Z9)
	STOREROW512(Z10, Z11)
	STOREROW512(Z12, Z13)
	STOREROW512(Z14, Z15)
	STOREROW512(Z16, Z17)
	STOREROW512(Z18, Z19)
	STOREROW512(Z20, Z21)
	STOREROW512(Z22, Z23)
	STOREROW512(Z24, Z25)
	STOREROW512(Z26, Z27)
	STOREROW512(Z28, Z29)
	STOREROW512(Z30, Z31)
	VZEROUPPER
	RET

g12_accum:
	ADDSTOREROW512(Z8, Z9)
	ADDSTOREROW512(Z10, Z11)
	ADDSTOREROW512(Z12, Z13)
	ADDSTOREROW512(Z14, Z15)
	ADDSTOREROW512(Z16, Z17)
	ADDSTOREROW512(Z18, Z19)
	ADDSTOREROW512(Z20, Z21)
	ADDSTOREROW512(Z22, Z23)
	ADDSTOREROW512(Z24, Z25)
	ADDSTOREROW512(Z26, Z27)
	ADDSTOREROW512(Z28, Z29)
	ADDSTOREROW512(Z30, Z31)
	VZEROUPPER
	RET
