//go:build amd64 && !purego

#include "textflag.h"

// BF16 GEMM micro-kernel for AVX-512 BF16: a 12x32 C tile from bf16 pairs with VDPBF16PS.
//
// The panels hold bf16 pairs (two consecutive k of one row in a 32-bit slot, the even k in the
// low half): an A pair panel is ap[q*16 + r] (16 weight rows, the second panel 16*kp slots
// after the first), a B pair panel bp[q*6 + r] (6 activation rows, the second bs slots after the
// first). Per pair step: two 64-byte A loads, 12 broadcasts of a B pair, 24 VDPBF16PS (each two
// multiply-adds per lane), so a step does the work of two f32 steps with the same instructions.
// C rows 0..11 in Z8+2r / Z9+2r as in sgemm12x32AVX512. VDPBF16PS is BYTE-encoded (the Go
// assembler does not know it); the comments give it in Intel order (zmm acc, zmm B, zmm A).

#define STOREROWBF(A0, A1) \
	VMOVUPS A0, (DX) \
	VMOVUPS A1, 64(DX) \
	ADDQ    BX, DX

#define ADDSTOREROWBF(A0, A1) \
	VADDPS  (DX), A0, A0 \
	VADDPS  64(DX), A1, A1 \
	VMOVUPS A0, (DX) \
	VMOVUPS A1, 64(DX) \
	ADDQ    BX, DX

// func sgemm12x32BF16AVX512(kp int, a, b *float32, bs int, c *float32, ldc int, accum int)
// C tile (12 rows of ldc floats, 32 columns) = (accum != 0 ? C : 0) + Σ_q Σ_h B(q, r, h)*A(q, i, h)
// over kp pair steps, accumulated per lane as VDPBF16PS does (the odd product first).
TEXT ·sgemm12x32BF16AVX512(SB), NOSPLIT, $0-56
	MOVQ    kp+0(FP), CX
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
	ADDQ    SI, R9            // second A panel: a + 16*kp slots
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
	JZ      b12_k1

b12_k4:
	PREFETCHT0 512(SI)
	PREFETCHT0 512(R9)
	VMOVUPS      (SI), Z0
	VMOVUPS      (R9), Z1
	VBROADCASTSS (DI), Z2
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm8, zmm2, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm9, zmm2, zmm1
	VBROADCASTSS 4(DI), Z3
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm10, zmm3, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm11, zmm3, zmm1
	VBROADCASTSS 8(DI), Z4
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm12, zmm4, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm13, zmm4, zmm1
	VBROADCASTSS 12(DI), Z5
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm14, zmm5, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm15, zmm5, zmm1
	VBROADCASTSS 16(DI), Z6
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm16, zmm6, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm17, zmm6, zmm1
	VBROADCASTSS 20(DI), Z7
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm18, zmm7, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm19, zmm7, zmm1
	VBROADCASTSS (R10), Z2
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm20, zmm2, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm21, zmm2, zmm1
	VBROADCASTSS 4(R10), Z3
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm22, zmm3, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm23, zmm3, zmm1
	VBROADCASTSS 8(R10), Z4
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm24, zmm4, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm25, zmm4, zmm1
	VBROADCASTSS 12(R10), Z5
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm26, zmm5, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm27, zmm5, zmm1
	VBROADCASTSS 16(R10), Z6
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm28, zmm6, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm29, zmm6, zmm1
	VBROADCASTSS 20(R10), Z7
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm30, zmm7, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm31, zmm7, zmm1
	VMOVUPS      64(SI), Z0
	VMOVUPS      64(R9), Z1
	VBROADCASTSS 24(DI), Z2
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm8, zmm2, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm9, zmm2, zmm1
	VBROADCASTSS 28(DI), Z3
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm10, zmm3, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm11, zmm3, zmm1
	VBROADCASTSS 32(DI), Z4
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm12, zmm4, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm13, zmm4, zmm1
	VBROADCASTSS 36(DI), Z5
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm14, zmm5, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm15, zmm5, zmm1
	VBROADCASTSS 40(DI), Z6
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm16, zmm6, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm17, zmm6, zmm1
	VBROADCASTSS 44(DI), Z7
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm18, zmm7, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm19, zmm7, zmm1
	VBROADCASTSS 24(R10), Z2
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm20, zmm2, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm21, zmm2, zmm1
	VBROADCASTSS 28(R10), Z3
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm22, zmm3, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm23, zmm3, zmm1
	VBROADCASTSS 32(R10), Z4
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm24, zmm4, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm25, zmm4, zmm1
	VBROADCASTSS 36(R10), Z5
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm26, zmm5, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm27, zmm5, zmm1
	VBROADCASTSS 40(R10), Z6
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm28, zmm6, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm29, zmm6, zmm1
	VBROADCASTSS 44(R10), Z7
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm30, zmm7, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm31, zmm7, zmm1
	PREFETCHT0 576(SI)
	PREFETCHT0 576(R9)
	VMOVUPS      128(SI), Z0
	VMOVUPS      128(R9), Z1
	VBROADCASTSS 48(DI), Z2
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm8, zmm2, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm9, zmm2, zmm1
	VBROADCASTSS 52(DI), Z3
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm10, zmm3, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm11, zmm3, zmm1
	VBROADCASTSS 56(DI), Z4
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm12, zmm4, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm13, zmm4, zmm1
	VBROADCASTSS 60(DI), Z5
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm14, zmm5, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm15, zmm5, zmm1
	VBROADCASTSS 64(DI), Z6
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm16, zmm6, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm17, zmm6, zmm1
	VBROADCASTSS 68(DI), Z7
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm18, zmm7, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm19, zmm7, zmm1
	VBROADCASTSS 48(R10), Z2
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm20, zmm2, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm21, zmm2, zmm1
	VBROADCASTSS 52(R10), Z3
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm22, zmm3, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm23, zmm3, zmm1
	VBROADCASTSS 56(R10), Z4
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm24, zmm4, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm25, zmm4, zmm1
	VBROADCASTSS 60(R10), Z5
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm26, zmm5, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm27, zmm5, zmm1
	VBROADCASTSS 64(R10), Z6
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm28, zmm6, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm29, zmm6, zmm1
	VBROADCASTSS 68(R10), Z7
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm30, zmm7, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm31, zmm7, zmm1
	VMOVUPS      192(SI), Z0
	VMOVUPS      192(R9), Z1
	VBROADCASTSS 72(DI), Z2
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm8, zmm2, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm9, zmm2, zmm1
	VBROADCASTSS 76(DI), Z3
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm10, zmm3, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm11, zmm3, zmm1
	VBROADCASTSS 80(DI), Z4
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm12, zmm4, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm13, zmm4, zmm1
	VBROADCASTSS 84(DI), Z5
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm14, zmm5, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm15, zmm5, zmm1
	VBROADCASTSS 88(DI), Z6
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm16, zmm6, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm17, zmm6, zmm1
	VBROADCASTSS 92(DI), Z7
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm18, zmm7, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm19, zmm7, zmm1
	VBROADCASTSS 72(R10), Z2
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm20, zmm2, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm21, zmm2, zmm1
	VBROADCASTSS 76(R10), Z3
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm22, zmm3, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm23, zmm3, zmm1
	VBROADCASTSS 80(R10), Z4
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm24, zmm4, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm25, zmm4, zmm1
	VBROADCASTSS 84(R10), Z5
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm26, zmm5, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm27, zmm5, zmm1
	VBROADCASTSS 88(R10), Z6
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm28, zmm6, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm29, zmm6, zmm1
	VBROADCASTSS 92(R10), Z7
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm30, zmm7, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm31, zmm7, zmm1
	ADDQ       $256, SI
	ADDQ       $256, R9
	ADDQ       $96, DI
	ADDQ       $96, R10
	DECQ       AX
	JNZ        b12_k4

b12_k1:
	ANDQ $3, CX
	JZ   b12_store

b12_k1_loop:
	VMOVUPS      (SI), Z0
	VMOVUPS      (R9), Z1
	VBROADCASTSS (DI), Z2
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm8, zmm2, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm9, zmm2, zmm1
	VBROADCASTSS 4(DI), Z3
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm10, zmm3, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm11, zmm3, zmm1
	VBROADCASTSS 8(DI), Z4
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm12, zmm4, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm13, zmm4, zmm1
	VBROADCASTSS 12(DI), Z5
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm14, zmm5, zmm0
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm15, zmm5, zmm1
	VBROADCASTSS 16(DI), Z6
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm16, zmm6, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm17, zmm6, zmm1
	VBROADCASTSS 20(DI), Z7
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm18, zmm7, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm19, zmm7, zmm1
	VBROADCASTSS (R10), Z2
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm20, zmm2, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm21, zmm2, zmm1
	VBROADCASTSS 4(R10), Z3
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm22, zmm3, zmm0
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm23, zmm3, zmm1
	VBROADCASTSS 8(R10), Z4
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC0 // vdpbf16ps zmm24, zmm4, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC9 // vdpbf16ps zmm25, zmm4, zmm1
	VBROADCASTSS 12(R10), Z5
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD0 // vdpbf16ps zmm26, zmm5, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xD9 // vdpbf16ps zmm27, zmm5, zmm1
	VBROADCASTSS 16(R10), Z6
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE0 // vdpbf16ps zmm28, zmm6, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x4E; BYTE $0x48; BYTE $0x52; BYTE $0xE9 // vdpbf16ps zmm29, zmm6, zmm1
	VBROADCASTSS 20(R10), Z7
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF0 // vdpbf16ps zmm30, zmm7, zmm0
	BYTE $0x62; BYTE $0x62; BYTE $0x46; BYTE $0x48; BYTE $0x52; BYTE $0xF9 // vdpbf16ps zmm31, zmm7, zmm1
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $24, DI
	ADDQ $24, R10
	DECQ CX
	JNZ  b12_k1_loop

b12_store:
	MOVQ  accum+48(FP), AX
	TESTQ AX, AX
	JNZ   b12_accum
	STOREROWBF(Z8, Z9)
	STOREROWBF(Z10, Z11)
	STOREROWBF(Z12, Z13)
	STOREROWBF(Z14, Z15)
	STOREROWBF(Z16, Z17)
	STOREROWBF(Z18, Z19)
	STOREROWBF(Z20, Z21)
	STOREROWBF(Z22, Z23)
	STOREROWBF(Z24, Z25)
	STOREROWBF(Z26, Z27)
	STOREROWBF(Z28, Z29)
	STOREROWBF(Z30, Z31)
	VZEROUPPER
	RET

b12_accum:
	ADDSTOREROWBF(Z8, Z9)
	ADDSTOREROWBF(Z10, Z11)
	ADDSTOREROWBF(Z12, Z13)
	ADDSTOREROWBF(Z14, Z15)
	ADDSTOREROWBF(Z16, Z17)
	ADDSTOREROWBF(Z18, Z19)
	ADDSTOREROWBF(Z20, Z21)
	ADDSTOREROWBF(Z22, Z23)
	ADDSTOREROWBF(Z24, Z25)
	ADDSTOREROWBF(Z26, Z27)
	ADDSTOREROWBF(Z28, Z29)
	ADDSTOREROWBF(Z30, Z31)
	VZEROUPPER
	RET
