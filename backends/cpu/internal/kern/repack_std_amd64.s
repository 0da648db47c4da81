//go:build amd64 && !purego

#include "textflag.h"

// On-the-fly repacking of standard Q4_0, Q4_1 and Q8_0 rows into repacked superblocks (see
// repack.go), AVX2 gathers: per block, each 4-byte slice of the 16 rows' blocks is one gather
// of 8 rows (rows 0..7 at the offsets in Y15, rows 8..15 at Y14), stored as is (Q8_0: XOR
// 0x80 per byte) at its chunk position; the f16 scales (and Q4_1 minimums) are the low (high)
// halves of the dwords at the blocks' starts, packed to words in row order.
//
// func repackStdQ40AVX2(nb int, dst, src *byte, idx *int32)
// func repackStdQ41AVX2(nb int, dst, src *byte, idx *int32)
// func repackStdQ80AVX2(nb int, dst, src *byte, idx *int32)
//	nb blocks of 16 rows: row r of block b at src + idx[r] + b*blocksize; superblock b at
//	dst + b*super.

// GATHER8(off, idx, dst): dst = the dwords at SI+off+idx[r], r < 8.
#define GATHER8(off, idx, dst) \
	VPCMPEQD Y13, Y13, Y13 \
	VPGATHERDD Y13, off(SI)(idx*1), dst

// SCALES(dstoff): the low words of Y0 (rows 0..7) and Y1 (rows 8..15) in row order at DI+dstoff.
#define SCALES(dstoff) \
	VPAND Y12, Y0, Y0 \
	VPAND Y12, Y1, Y1 \
	VPACKUSDW Y1, Y0, Y2 \
	VPERMQ $0xD8, Y2, Y2 \
	VMOVDQU Y2, dstoff(DI)

#define CHUNK(soff, doff) \
	GATHER8(soff, Y15, Y3) \
	GATHER8(soff, Y14, Y4) \
	VMOVDQU Y3, doff(DI) \
	VMOVDQU Y4, doff+32(DI)

#define CHUNK8(soff, doff) \
	GATHER8(soff, Y15, Y3) \
	GATHER8(soff, Y14, Y4) \
	VPXOR Y11, Y3, Y3 \
	VPXOR Y11, Y4, Y4 \
	VMOVDQU Y3, doff(DI) \
	VMOVDQU Y4, doff+32(DI)

#define PROLOGUE \
	MOVQ nb+0(FP), CX \
	MOVQ dst+8(FP), DI \
	MOVQ src+16(FP), SI \
	MOVQ idx+24(FP), AX \
	VMOVDQU (AX), Y15 \
	VMOVDQU 32(AX), Y14 \
	VPCMPEQD Y12, Y12, Y12 \
	VPSRLD $16, Y12, Y12

TEXT ·repackStdQ40AVX2(SB), NOSPLIT, $0-32
	PROLOGUE
	TESTQ CX, CX
	JZ q40done
q40loop:
	GATHER8(0, Y15, Y0)
	GATHER8(0, Y14, Y1)
	SCALES(0)
	CHUNK(2, 32)
	CHUNK(6, 96)
	CHUNK(10, 160)
	CHUNK(14, 224)
	ADDQ $18, SI
	ADDQ $288, DI
	DECQ CX
	JNZ q40loop
q40done:
	VZEROUPPER
	RET

TEXT ·repackStdQ41AVX2(SB), NOSPLIT, $0-32
	PROLOGUE
	TESTQ CX, CX
	JZ q41done
q41loop:
	GATHER8(0, Y15, Y0)
	GATHER8(0, Y14, Y1)
	VPSRLD $16, Y0, Y5
	VPSRLD $16, Y1, Y6
	SCALES(0)
	VPACKUSDW Y6, Y5, Y2
	VPERMQ $0xD8, Y2, Y2
	VMOVDQU Y2, 32(DI)
	CHUNK(4, 64)
	CHUNK(8, 128)
	CHUNK(12, 192)
	CHUNK(16, 256)
	ADDQ $20, SI
	ADDQ $320, DI
	DECQ CX
	JNZ q41loop
q41done:
	VZEROUPPER
	RET

TEXT ·repackStdQ80AVX2(SB), NOSPLIT, $0-32
	PROLOGUE
	MOVL $0x80808080, AX
	MOVD AX, X11
	VPBROADCASTD X11, Y11
	TESTQ CX, CX
	JZ q80done
q80loop:
	GATHER8(0, Y15, Y0)
	GATHER8(0, Y14, Y1)
	SCALES(0)
	CHUNK8(2, 32)
	CHUNK8(6, 96)
	CHUNK8(10, 160)
	CHUNK8(14, 224)
	CHUNK8(18, 288)
	CHUNK8(22, 352)
	CHUNK8(26, 416)
	CHUNK8(30, 480)
	ADDQ $34, SI
	ADDQ $544, DI
	DECQ CX
	JNZ q80loop
q80done:
	VZEROUPPER
	RET
