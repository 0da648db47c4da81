//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 mat-vec kernels: four weight rows against one activation row (four memory streams
// per call, as the AVX2 dot4 kernels), with masked loads for the k tail. Rows 0..3 accumulate
// in Z0..Z3 and Z4..Z7 (two accumulators per row); x lives in Z8/Z9, weights in Z10..Z13.
// VDPBF16PS is BYTE-encoded (the Go assembler does not know it); its register operands are
// written in the comments in Intel order.

// PFD is how far ahead (bytes) the four-row f16 mat-vec prefetches each weight row. Measured on
// Zen 5 (m=4096 k=14336 from DRAM, rows 64-byte aligned): the loop with one 64-byte load per row
// and cache line (split by VEXTRACTI64X4 before VCVTPH2PS) and PFD 2048 ran 33-35 GB/s on one
// core and 52-64 on two, against 29-31 / 47-54 for 32-byte VCVTPH2PS memory operands; PFD 1024,
// 3072, 4096, no prefetch, PREFETCHNTA, 128 bytes per row and step, and eight rows per pass were
// all slower.
#define PFD 2048

// PFD1 is dot1F16F32AVX512's prefetch distance. Its rows come from GGUF files in place, whose
// tensor data is 32-byte aligned (every tensor of the TinyLlama files here starts 32 bytes into
// a cache line), and its x from compute buffers of the same alignment: a 64-byte load then spans
// two lines. With 32-byte VCVTPH2PS memory operands (never split) and PFD1 4096, the TinyLlama
// f16 token's 154 products in file order (a throwaway benchmark on the mapped file, Zen 5) read
// 35.6-36.5 GB/s on one core against 32 with 64-byte loads and PFD 2048, and 24-28 with x 32
// bytes off a line (as in the model: 27.5 GB/s per the op profile); 3072 and 6144 were level or
// slower, 8192 slower.
#define PFD1 4096

// REDUCE4: X0 = [hsum(Z0+Z4), hsum(Z1+Z5), hsum(Z2+Z6), hsum(Z3+Z7)].
#define REDUCE4 \
	VADDPS        Z4, Z0, Z0 \
	VADDPS        Z5, Z1, Z1 \
	VADDPS        Z6, Z2, Z2 \
	VADDPS        Z7, Z3, Z3 \
	VEXTRACTF32X8 $1, Z0, Y4 \
	VEXTRACTF32X8 $1, Z1, Y5 \
	VEXTRACTF32X8 $1, Z2, Y6 \
	VEXTRACTF32X8 $1, Z3, Y7 \
	VADDPS        Y4, Y0, Y0 \
	VADDPS        Y5, Y1, Y1 \
	VADDPS        Y6, Y2, Y2 \
	VADDPS        Y7, Y3, Y3 \
	VHADDPS       Y1, Y0, Y0 \
	VHADDPS       Y3, Y2, Y2 \
	VHADDPS       Y2, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VADDPS        X1, X0, X0

// TAILMASKW / TAILMASKD: K1 = the low CX bits set (CX < 16 / < 32), for a masked tail; uses AX.
#define TAILMASKW \
	MOVL  $1, AX \
	SHLL  CX, AX \
	DECL  AX \
	KMOVW AX, K1

#define TAILMASKD \
	MOVL  $1, AX \
	SHLL  CX, AX \
	DECL  AX \
	KMOVD AX, K1

// HSUM0: X0 = the sum of Z0's 16 floats (halves, then quarters, then pairs); uses Z1.
#define HSUM0 \
	VEXTRACTF32X8 $1, Z0, Y1 \
	VADDPS        Y1, Y0, Y0 \
	VEXTRACTF128  $1, Y0, X1 \
	VADDPS        X1, X0, X0 \
	VMOVHLPS      X0, X1, X1 \
	VADDPS        X1, X0, X0 \
	VMOVSHDUP     X0, X1 \
	VADDSS        X1, X0, X0

#define ZERO8 \
	VPXORD Z0, Z0, Z0 \
	VPXORD Z1, Z1, Z1 \
	VPXORD Z2, Z2, Z2 \
	VPXORD Z3, Z3, Z3 \
	VPXORD Z4, Z4, Z4 \
	VPXORD Z5, Z5, Z5 \
	VPXORD Z6, Z6, Z6 \
	VPXORD Z7, Z7, Z7

// func dot4F32AVX512(k int, a *float32, lda int, x *float32, out *float32)
// out[r] = Σ_{p<k} a[r*lda+p]*x[p] for r < 4.
TEXT ·dot4F32AVX512(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ x+24(FP), DI
	MOVQ out+32(FP), DX
	SHLQ $2, BX
	LEAQ (SI)(BX*2), R8
	ZERO8
	MOVQ CX, AX
	SHRQ $5, AX
	JZ   d4f_16

d4f_32:
	VMOVUPS     (DI), Z8
	VMOVUPS     64(DI), Z9
	VFMADD231PS (SI), Z8, Z0
	VFMADD231PS 64(SI), Z9, Z4
	VFMADD231PS (SI)(BX*1), Z8, Z1
	VFMADD231PS 64(SI)(BX*1), Z9, Z5
	VFMADD231PS (R8), Z8, Z2
	VFMADD231PS 64(R8), Z9, Z6
	VFMADD231PS (R8)(BX*1), Z8, Z3
	VFMADD231PS 64(R8)(BX*1), Z9, Z7
	ADDQ        $128, SI
	ADDQ        $128, R8
	ADDQ        $128, DI
	DECQ        AX
	JNZ         d4f_32

d4f_16:
	ANDQ $31, CX
	JZ   d4f_done
	CMPQ CX, $16
	JB   d4f_tail
	VMOVUPS     (DI), Z8
	VFMADD231PS (SI), Z8, Z0
	VFMADD231PS (SI)(BX*1), Z8, Z1
	VFMADD231PS (R8), Z8, Z2
	VFMADD231PS (R8)(BX*1), Z8, Z3
	ADDQ        $64, SI
	ADDQ        $64, R8
	ADDQ        $64, DI
	SUBQ        $16, CX
	JZ          d4f_done

d4f_tail:
	TAILMASKW
	VMOVUPS.Z   (DI), K1, Z8
	VMOVUPS.Z   (SI), K1, Z10
	VMOVUPS.Z   (SI)(BX*1), K1, Z11
	VMOVUPS.Z   (R8), K1, Z12
	VMOVUPS.Z   (R8)(BX*1), K1, Z13
	VFMADD231PS Z10, Z8, Z4
	VFMADD231PS Z11, Z8, Z5
	VFMADD231PS Z12, Z8, Z6
	VFMADD231PS Z13, Z8, Z7

d4f_done:
	REDUCE4
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot4F16F32AVX512(k int, a *uint16, lda int, x *float32, out *float32)
// out[r] = Σ_{p<k} f32(a[r*lda+p])*x[p] for r < 4 (IEEE halves widened with VCVTPH2PS).
TEXT ·dot4F16F32AVX512(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ x+24(FP), DI
	MOVQ out+32(FP), DX
	SHLQ $1, BX
	LEAQ (SI)(BX*2), R8
	ZERO8
	MOVQ CX, AX
	SHRQ $5, AX
	JZ   d4h_16

d4h_32:
	PREFETCHT0    PFD(SI)
	PREFETCHT0    PFD(SI)(BX*1)
	PREFETCHT0    PFD(R8)
	PREFETCHT0    PFD(R8)(BX*1)
	VMOVUPS       (DI), Z8
	VMOVUPS       64(DI), Z9
	VMOVDQU16     (SI), Z10
	VMOVDQU16     (SI)(BX*1), Z11
	VMOVDQU16     (R8), Z12
	VMOVDQU16     (R8)(BX*1), Z13
	VEXTRACTI64X4 $1, Z10, Y14
	VEXTRACTI64X4 $1, Z11, Y15
	VEXTRACTI64X4 $1, Z12, Y24
	VEXTRACTI64X4 $1, Z13, Y25
	VCVTPH2PS     Y10, Z10
	VCVTPH2PS     Y14, Z14
	VCVTPH2PS     Y11, Z11
	VCVTPH2PS     Y15, Z15
	VCVTPH2PS     Y12, Z12
	VCVTPH2PS     Y24, Z24
	VCVTPH2PS     Y13, Z13
	VCVTPH2PS     Y25, Z25
	VFMADD231PS   Z10, Z8, Z0
	VFMADD231PS   Z14, Z9, Z4
	VFMADD231PS   Z11, Z8, Z1
	VFMADD231PS   Z15, Z9, Z5
	VFMADD231PS   Z12, Z8, Z2
	VFMADD231PS   Z24, Z9, Z6
	VFMADD231PS   Z13, Z8, Z3
	VFMADD231PS   Z25, Z9, Z7
	ADDQ          $64, SI
	ADDQ          $64, R8
	ADDQ          $128, DI
	DECQ          AX
	JNZ         d4h_32

d4h_16:
	ANDQ $31, CX
	JZ   d4h_done
	CMPQ CX, $16
	JB   d4h_tail
	VMOVUPS     (DI), Z8
	VCVTPH2PS   (SI), Z10
	VCVTPH2PS   (SI)(BX*1), Z11
	VCVTPH2PS   (R8), Z12
	VCVTPH2PS   (R8)(BX*1), Z13
	VFMADD231PS Z10, Z8, Z0
	VFMADD231PS Z11, Z8, Z1
	VFMADD231PS Z12, Z8, Z2
	VFMADD231PS Z13, Z8, Z3
	ADDQ        $32, SI
	ADDQ        $32, R8
	ADDQ        $64, DI
	SUBQ        $16, CX
	JZ          d4h_done

d4h_tail:
	TAILMASKW
	VMOVUPS.Z   (DI), K1, Z8
	VMOVDQU16.Z (SI), K1, Y10
	VMOVDQU16.Z (SI)(BX*1), K1, Y11
	VMOVDQU16.Z (R8), K1, Y12
	VMOVDQU16.Z (R8)(BX*1), K1, Y13
	VCVTPH2PS   Y10, Z10
	VCVTPH2PS   Y11, Z11
	VCVTPH2PS   Y12, Z12
	VCVTPH2PS   Y13, Z13
	VFMADD231PS Z10, Z8, Z4
	VFMADD231PS Z11, Z8, Z5
	VFMADD231PS Z12, Z8, Z6
	VFMADD231PS Z13, Z8, Z7

d4h_done:
	REDUCE4
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dot1F16F32AVX512(k int, a *uint16, x *float32) float32
// Σ_{p<k} a[p]*x[p]: one weight row, one memory stream (the rows of a task are read one after
// another, so the prefetch PFD1 ahead runs into the next row near the end of this one). Four
// 32-byte VCVTPH2PS loads per step (see PFD1), four accumulators.
TEXT ·dot1F16F32AVX512(SB), NOSPLIT, $0-28
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ x+16(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ CX, AX
	SHRQ $6, AX
	JZ   d1h_tail

d1h_64:
	PREFETCHT0  PFD1(SI)
	PREFETCHT0  PFD1+64(SI)
	VCVTPH2PS   (SI), Z10
	VCVTPH2PS   32(SI), Z12
	VCVTPH2PS   64(SI), Z11
	VCVTPH2PS   96(SI), Z13
	VFMADD231PS (DI), Z10, Z0
	VFMADD231PS 64(DI), Z12, Z1
	VFMADD231PS 128(DI), Z11, Z2
	VFMADD231PS 192(DI), Z13, Z3
	ADDQ        $128, SI
	ADDQ        $256, DI
	DECQ        AX
	JNZ         d1h_64

d1h_tail:
	ANDQ $63, CX

d1h_16:
	CMPQ        CX, $16
	JB          d1h_mask
	VCVTPH2PS   (SI), Z10
	VFMADD231PS (DI), Z10, Z0
	ADDQ        $32, SI
	ADDQ        $64, DI
	SUBQ        $16, CX
	JMP         d1h_16

d1h_mask:
	TESTQ       CX, CX
	JZ          d1h_done
	TAILMASKW
	VMOVUPS.Z   (DI), K1, Z8
	VMOVDQU16.Z (SI), K1, Y10
	VCVTPH2PS   Y10, Z10
	VFMADD231PS Z10, Z8, Z1

d1h_done:
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z2, Z0, Z0
	HSUM0
	VMOVSS        X0, ret+24(FP)
	VZEROUPPER
	RET

// func dot4BF16AVX512BF16(k int, a *uint16, lda int, x *uint16, out *float32)
// out[r] = Σ_{p<k} a[r*lda+p]*x[p] for r < 4, both bf16, by VDPBF16PS (pairs of products).
TEXT ·dot4BF16AVX512BF16(SB), NOSPLIT, $0-40
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), BX
	MOVQ x+24(FP), DI
	MOVQ out+32(FP), DX
	SHLQ $1, BX
	LEAQ (SI)(BX*2), R8
	ZERO8
	MOVQ CX, AX
	SHRQ $6, AX
	JZ   d4b_32

d4b_64:
	VMOVDQU16 (DI), Z8
	VMOVDQU16 64(DI), Z9
	VMOVDQU16 (SI), Z10
	VMOVDQU16 64(SI), Z11
	VMOVDQU16 (SI)(BX*1), Z12
	VMOVDQU16 64(SI)(BX*1), Z13
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm0, zmm10, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x26; BYTE $0x48; BYTE $0x52; BYTE $0xE1 // vdpbf16ps zmm4, zmm11, zmm9
	BYTE $0x62; BYTE $0xD2; BYTE $0x1E; BYTE $0x48; BYTE $0x52; BYTE $0xC8 // vdpbf16ps zmm1, zmm12, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x16; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm5, zmm13, zmm9
	VMOVDQU16 (R8), Z10
	VMOVDQU16 64(R8), Z11
	VMOVDQU16 (R8)(BX*1), Z12
	VMOVDQU16 64(R8)(BX*1), Z13
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm2, zmm10, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x26; BYTE $0x48; BYTE $0x52; BYTE $0xF1 // vdpbf16ps zmm6, zmm11, zmm9
	BYTE $0x62; BYTE $0xD2; BYTE $0x1E; BYTE $0x48; BYTE $0x52; BYTE $0xD8 // vdpbf16ps zmm3, zmm12, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x16; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm7, zmm13, zmm9
	ADDQ      $128, SI
	ADDQ      $128, R8
	ADDQ      $128, DI
	DECQ      AX
	JNZ       d4b_64

d4b_32:
	ANDQ $63, CX
	JZ   d4b_done
	CMPQ CX, $32
	JB   d4b_tail
	VMOVDQU16 (DI), Z8
	VMOVDQU16 (SI), Z10
	VMOVDQU16 (SI)(BX*1), Z11
	VMOVDQU16 (R8), Z12
	VMOVDQU16 (R8)(BX*1), Z13
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm0, zmm10, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x26; BYTE $0x48; BYTE $0x52; BYTE $0xC8 // vdpbf16ps zmm1, zmm11, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x1E; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm2, zmm12, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x16; BYTE $0x48; BYTE $0x52; BYTE $0xD8 // vdpbf16ps zmm3, zmm13, zmm8
	ADDQ      $64, SI
	ADDQ      $64, R8
	ADDQ      $64, DI
	SUBQ      $32, CX
	JZ        d4b_done

d4b_tail:
	TAILMASKD
	VMOVDQU16.Z (DI), K1, Z8
	VMOVDQU16.Z (SI), K1, Z10
	VMOVDQU16.Z (SI)(BX*1), K1, Z11
	VMOVDQU16.Z (R8), K1, Z12
	VMOVDQU16.Z (R8)(BX*1), K1, Z13
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm4, zmm10, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x26; BYTE $0x48; BYTE $0x52; BYTE $0xE8 // vdpbf16ps zmm5, zmm11, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x1E; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm6, zmm12, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x16; BYTE $0x48; BYTE $0x52; BYTE $0xF8 // vdpbf16ps zmm7, zmm13, zmm8

d4b_done:
	REDUCE4
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func dotBF16AVX512BF16(x, y []uint16) float32
// Σ x[i]*y[i] over len(x) bf16 values by VDPBF16PS; accumulators Z0, Z1.
TEXT ·dotBF16AVX512BF16(SB), NOSPLIT, $0-52
	MOVQ   x_base+0(FP), SI
	MOVQ   x_len+8(FP), CX
	MOVQ   y_base+24(FP), DI
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   CX, AX
	SHRQ   $6, AX
	JZ     db_32

db_64:
	PREFETCHT0   PFD1(SI)
	PREFETCHT0   PFD1+64(SI)
	VMOVDQU16    (SI), Y10
	VINSERTI64X4 $1, 32(SI), Z10, Z10
	VMOVDQU16    64(SI), Y11
	VINSERTI64X4 $1, 96(SI), Z11, Z11
	VMOVDQU16    (DI), Z8
	VMOVDQU16 64(DI), Z9
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm0, zmm10, zmm8
	BYTE $0x62; BYTE $0xD2; BYTE $0x26; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm1, zmm11, zmm9
	ADDQ      $128, SI
	ADDQ      $128, DI
	DECQ      AX
	JNZ       db_64

db_32:
	ANDQ $63, CX
	JZ   db_done
	CMPQ CX, $32
	JB   db_tail
	VMOVDQU16 (SI), Z10
	VMOVDQU16 (DI), Z8
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm0, zmm10, zmm8
	ADDQ      $64, SI
	ADDQ      $64, DI
	SUBQ      $32, CX
	JZ        db_done

db_tail:
	TAILMASKD
	VMOVDQU16.Z (SI), K1, Z10
	VMOVDQU16.Z (DI), K1, Z8
	BYTE $0x62; BYTE $0xD2; BYTE $0x2E; BYTE $0x48; BYTE $0x52; BYTE $0xC8 // vdpbf16ps zmm1, zmm10, zmm8

db_done:
	VADDPS        Z1, Z0, Z0
	HSUM0
	VMOVSS        X0, ret+48(FP)
	VZEROUPPER
	RET

// BF16ROUND(src, dst): 16 floats in src -> 16 bf16 (low words of dst dwords), ggml's rounding:
// (b + 0x7fff + (b>>16 & 1)) >> 16, or (b>>16) | 0x40 for a NaN. Needs Z28 = 1, Z29 = 0x7fff,
// Z30 = 0x7fffffff, Z31 = 0x7f800000, Z27 = 0x40.
#define BF16ROUND(src, dst) \
	VPSRLD   $16, src, Z1 \
	VPANDD   Z28, Z1, Z2 \
	VPADDD   Z2, src, dst \
	VPADDD   Z29, dst, dst \
	VPSRLD   $16, dst, dst \
	VPANDD   Z30, src, Z3 \
	VPCMPUD  $6, Z31, Z3, K2 \
	VPORD    Z27, Z1, K2, dst

// BF16CONSTS loads BF16ROUND's constants (clobbers AX).
#define BF16CONSTS \
	MOVL         $1, AX \
	VPBROADCASTD AX, Z28 \
	MOVL         $0x7fff, AX \
	VPBROADCASTD AX, Z29 \
	MOVL         $0x7fffffff, AX \
	VPBROADCASTD AX, Z30 \
	MOVL         $0x7f800000, AX \
	VPBROADCASTD AX, Z31 \
	MOVL         $0x40, AX \
	VPBROADCASTD AX, Z27

// func f32ToBF16RowAVX512(src []float32, dst []uint16)
TEXT ·f32ToBF16RowAVX512(SB), NOSPLIT, $0-48
	MOVQ         src_base+0(FP), SI
	MOVQ         src_len+8(FP), CX
	MOVQ         dst_base+24(FP), DI
	BF16CONSTS
	CMPQ         CX, $16
	JB           cb_tail

cb_16:
	VMOVDQU32 (SI), Z0
	BF16ROUND(Z0, Z4)
	VPMOVDW   Z4, (DI)
	ADDQ      $64, SI
	ADDQ      $32, DI
	SUBQ      $16, CX
	CMPQ      CX, $16
	JAE       cb_16

cb_tail:
	TESTQ       CX, CX
	JZ          cb_done
	TAILMASKW
	VMOVDQU32.Z (SI), K1, Z0
	BF16ROUND(Z0, Z4)
	VPMOVDW     Z4, K1, (DI)

cb_done:
	VZEROUPPER
	RET

// func f16ToBF16RowsAVX512(src *uint16, ld, rows, kb int, dst *uint16, ldd int)
// dst[r*ldd + p] = bf16(f32(src[r*ld + p])) for r < rows, p < kb (rows >= 1, kb a positive
// multiple of 16; ld and ldd in halves): VCVTPH2PS widens exactly, BF16ROUND rounds as
// f32ToBF16RowAVX512 does. Each 64 bytes of a row read prefetches the same columns 16 rows on
// (the next panel's rows, which the packer converts next).
TEXT ·f16ToBF16RowsAVX512(SB), NOSPLIT, $0-48
	MOVQ         src+0(FP), SI
	MOVQ         ld+8(FP), R8
	SHLQ         $1, R8
	MOVQ         rows+16(FP), R9
	MOVQ         kb+24(FP), R10
	MOVQ         dst+32(FP), DI
	MOVQ         ldd+40(FP), R11
	SHLQ         $1, R11
	MOVQ         R8, R12
	SHLQ         $4, R12
	BF16CONSTS

hb_row:
	MOVQ SI, AX
	MOVQ DI, DX
	MOVQ R10, CX
	CMPQ CX, $32
	JB   hb_16

hb_32:
	PREFETCHT0 (AX)(R12*1)
	VCVTPH2PS  (AX), Z0
	VCVTPH2PS  32(AX), Z5
	BF16ROUND(Z0, Z4)
	VPMOVDW    Z4, (DX)
	BF16ROUND(Z5, Z6)
	VPMOVDW    Z6, 32(DX)
	ADDQ       $64, AX
	ADDQ       $64, DX
	SUBQ       $32, CX
	CMPQ       CX, $32
	JAE        hb_32

hb_16:
	TESTQ     CX, CX
	JZ        hb_next
	VCVTPH2PS (AX), Z0
	BF16ROUND(Z0, Z4)
	VPMOVDW   Z4, (DX)

hb_next:
	ADDQ R8, SI
	ADDQ R11, DI
	DECQ R9
	JNZ  hb_row
	VZEROUPPER
	RET

// func dot4F16G3AVX512(k int, a *uint16, lda int, q *float32, ldq int, out *float32, ldo, nquad int)
// For each of nquad groups of four key rows (4·lda halves apart) and three query heads:
// out[h*ldo + 4·quad + r] = Σ_{p<k} f32(a[(4·quad+r)*lda+p])·q[h*ldq+p] (k a multiple of 32;
// attention scores of a head group over a block of keys). The rows are converted once per 32
// elements for the three heads; each head's four sums are dot4F16F32AVX512's bit for bit: the
// same two accumulators per row (even and odd 16-element halves), the same products (fused, the
// factors swapped), the same REDUCE4. Registers: Z0-Z7 the rows' halves (row r: Zr low, Zr+4
// high), head h's accumulators Z8+8h .. Z15+8h in REDUCE4's order.
// Each quad prefetches the quad 32 rows on (a generated token reads a cache that the weights have
// pushed out of the caches).
TEXT ·dot4F16G3AVX512(SB), NOSPLIT, $0-64
	MOVQ a+8(FP), R9
	MOVQ lda+16(FP), BX
	MOVQ q+24(FP), AX
	MOVQ ldq+32(FP), R12
	MOVQ out+40(FP), DX
	MOVQ ldo+48(FP), R13
	SHLQ $1, BX
	SHLQ $2, R12
	SHLQ $2, R13

g3_quad:
	MOVQ BX, CX
	SHLQ $5, CX
	LEAQ (R9)(CX*1), R10 // prefetch the quad 32 rows on (a generated token reads a cold cache)
	PREFETCHT0 (R10)
	PREFETCHT0 64(R10)
	PREFETCHT0 (R10)(BX*1)
	PREFETCHT0 64(R10)(BX*1)
	PREFETCHT0 (R10)(BX*2)
	PREFETCHT0 64(R10)(BX*2)
	LEAQ (R10)(BX*2), R10
	PREFETCHT0 (R10)(BX*1)
	PREFETCHT0 64(R10)(BX*1)
	MOVQ R9, SI
	LEAQ (R9)(BX*2), R8
	MOVQ AX, DI
	LEAQ (AX)(R12*1), R10 // head 1's q
	LEAQ (AX)(R12*2), R11 // head 2's q
	MOVQ k+0(FP), CX
	SHRQ $5, CX
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	VPXORD Z16, Z16, Z16
	VPXORD Z17, Z17, Z17
	VPXORD Z18, Z18, Z18
	VPXORD Z19, Z19, Z19
	VPXORD Z20, Z20, Z20
	VPXORD Z21, Z21, Z21
	VPXORD Z22, Z22, Z22
	VPXORD Z23, Z23, Z23
	VPXORD Z24, Z24, Z24
	VPXORD Z25, Z25, Z25
	VPXORD Z26, Z26, Z26
	VPXORD Z27, Z27, Z27
	VPXORD Z28, Z28, Z28
	VPXORD Z29, Z29, Z29
	VPXORD Z30, Z30, Z30
	VPXORD Z31, Z31, Z31

g3_32:
	VCVTPH2PS (SI), Z0
	VCVTPH2PS 32(SI), Z4
	VCVTPH2PS (SI)(BX*1), Z1
	VCVTPH2PS 32(SI)(BX*1), Z5
	VCVTPH2PS (R8), Z2
	VCVTPH2PS 32(R8), Z6
	VCVTPH2PS (R8)(BX*1), Z3
	VCVTPH2PS 32(R8)(BX*1), Z7
	VFMADD231PS (DI), Z0, Z8
	VFMADD231PS 64(DI), Z4, Z12
	VFMADD231PS (DI), Z1, Z9
	VFMADD231PS 64(DI), Z5, Z13
	VFMADD231PS (DI), Z2, Z10
	VFMADD231PS 64(DI), Z6, Z14
	VFMADD231PS (DI), Z3, Z11
	VFMADD231PS 64(DI), Z7, Z15
	VFMADD231PS (R10), Z0, Z16
	VFMADD231PS 64(R10), Z4, Z20
	VFMADD231PS (R10), Z1, Z17
	VFMADD231PS 64(R10), Z5, Z21
	VFMADD231PS (R10), Z2, Z18
	VFMADD231PS 64(R10), Z6, Z22
	VFMADD231PS (R10), Z3, Z19
	VFMADD231PS 64(R10), Z7, Z23
	VFMADD231PS (R11), Z0, Z24
	VFMADD231PS 64(R11), Z4, Z28
	VFMADD231PS (R11), Z1, Z25
	VFMADD231PS 64(R11), Z5, Z29
	VFMADD231PS (R11), Z2, Z26
	VFMADD231PS 64(R11), Z6, Z30
	VFMADD231PS (R11), Z3, Z27
	VFMADD231PS 64(R11), Z7, Z31
	ADDQ $64, SI
	ADDQ $64, R8
	ADDQ $128, DI
	ADDQ $128, R10
	ADDQ $128, R11
	DECQ CX
	JNZ  g3_32

	MOVQ DX, DI
	VMOVAPS Z8, Z0
	VMOVAPS Z9, Z1
	VMOVAPS Z10, Z2
	VMOVAPS Z11, Z3
	VMOVAPS Z12, Z4
	VMOVAPS Z13, Z5
	VMOVAPS Z14, Z6
	VMOVAPS Z15, Z7
	REDUCE4
	VMOVUPS X0, (DI)
	ADDQ    R13, DI
	VMOVAPS Z16, Z0
	VMOVAPS Z17, Z1
	VMOVAPS Z18, Z2
	VMOVAPS Z19, Z3
	VMOVAPS Z20, Z4
	VMOVAPS Z21, Z5
	VMOVAPS Z22, Z6
	VMOVAPS Z23, Z7
	REDUCE4
	VMOVUPS X0, (DI)
	ADDQ    R13, DI
	VMOVAPS Z24, Z0
	VMOVAPS Z25, Z1
	VMOVAPS Z26, Z2
	VMOVAPS Z27, Z3
	VMOVAPS Z28, Z4
	VMOVAPS Z29, Z5
	VMOVAPS Z30, Z6
	VMOVAPS Z31, Z7
	REDUCE4
	VMOVUPS X0, (DI)
	ADDQ $16, DX
	LEAQ (R9)(BX*4), R9
	DECQ nquad+56(FP)
	JNZ  g3_quad
	VZEROUPPER
	RET
