package quant

// IQ1_S and IQ1_M, ggml's ~1.5-bit codebook types, bit-compatible with ggml-common.h of ggml
// d99724f2. A 256-value super-block holds 32 groups of 8 values; a group is an entry of the
// 2048-entry iq1s_grid (values −1, 0, 1) shifted by ±1/8 (IQ1S_DELTA) and scaled by an odd
// 3-bit multiplier (2s+1) of the block scale. Every byte pattern of the fields decodes. As for
// the IQ2 types, ggml's CPU has no quantizer for them, so tandem only reads them.
const (
	// BlockIQ1_SSize is the byte size of block_iq1_s: f16 d, 32 bytes of the low 8 bits of each
	// group's 11-bit grid index, then 8 u16 (LE), one per 32 values: bits 3l … 3l+2 are the top
	// index bits of group l, bits 12 … 14 the scale s, bit 15 the delta's sign (set: −1/8).
	BlockIQ1_SSize = 2 + QK_K/8 + QK_K/16

	// BlockIQ1_MSize is the byte size of block_iq1_m: 32 bytes of low index bits, 16 bytes (one
	// per two groups: low nibble for the first, high nibble for the second) of 3 top index bits
	// and the delta's sign bit (bit 3), then 8 bytes as four u16 (LE) holding a 3-bit scale per 16
	// values (bits 6k+3h … of u16 ib/2 for half h of sub-block ib, k = ib%2) and, in their top
	// nibbles, the 16 bits of the f16 block scale (u16 0 holds its low nibble).
	BlockIQ1_MSize = QK_K/8 + QK_K/16 + QK_K/32

	// iq1sDelta is ggml's IQ1S_DELTA (IQ1M_DELTA has the same value).
	iq1sDelta = 0.125
)

// gridShifted8 writes the 8 values dl·(grid[j]+delta) into y (grid bytes are int8).
func gridShifted8(y *[8]float32, dl, delta float32, grid *[8]uint8) {
	for j := range 8 {
		y[j] = dl * (float32(int8(grid[j])) + delta)
	}
}

// gridDot8 is Σ grid[j]·q8[j] over one group of 8 (grid bytes are int8).
func gridDot8(grid *[8]uint8, q8 *[8]byte) int32 {
	var s int32
	for j := range 8 {
		s += int32(int8(grid[j])) * int32(int8(q8[j]))
	}
	return s
}

// iq1sDeltaOf returns the delta for a set sign bit (−1/8) or a clear one (+1/8).
func iq1sDeltaOf(neg bool) float32 {
	if neg {
		return -iq1sDelta
	}
	return iq1sDelta
}

// DequantizeRowIQ1_S expands IQ1_S blocks from src into y as ggml's dequantize_row_iq1_s.
// len(y) must be a multiple of QK_K and src must hold the blocks; otherwise it panics.
func DequantizeRowIQ1_S(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ1_S", len(y), QK_K, BlockIQ1_SSize, len(src), "src")
	for i := range nb {
		blk := (*[BlockIQ1_SSize]byte)(src[i*BlockIQ1_SSize:])
		d := getF16(blk[0:2])
		for ib := range QK_K / 32 {
			qh := uint32(getU16(blk[2+QK_K/8+2*ib:]))
			dl := d * float32(2*(qh>>12&7)+1)
			delta := iq1sDeltaOf(qh&0x8000 != 0)
			for l := range 4 {
				idx := uint32(blk[2+4*ib+l]) | (qh>>(3*l)&7)<<8
				gridShifted8((*[8]float32)(y[i*QK_K+32*ib+8*l:]), dl, delta, &iq1sGrid[idx])
			}
		}
	}
}

// iq1mScale returns the f16 block scale of an IQ1_M block, spread over the top nibbles of its
// four scale words.
func iq1mScale(blk *[BlockIQ1_MSize]byte) float32 {
	sc := blk[QK_K/8+QK_K/16:]
	u := getU16(sc[0:])>>12 | getU16(sc[2:])>>8&0x00f0 | getU16(sc[4:])>>4&0x0f00 | getU16(sc[6:])&0xf000
	return fp16Table[u]
}

// iq1mSub returns the two 3-bit scale multipliers (2s+1) of sub-block ib of an IQ1_M block.
func iq1mSub(blk *[BlockIQ1_MSize]byte, ib int) (int32, int32) {
	w := getU16(blk[QK_K/8+QK_K/16+2*(ib/2):])
	sh := 6 * (ib % 2)
	return int32(2*(w>>sh&7) + 1), int32(2*(w>>(sh+3)&7) + 1)
}

// iq1mGroup returns the grid entry of group l of sub-block ib of an IQ1_M block and whether its
// delta is negative.
func iq1mGroup(blk *[BlockIQ1_MSize]byte, ib, l int) (*[8]uint8, bool) {
	qh := uint32(blk[QK_K/8+2*ib+l/2])
	if l%2 == 1 {
		qh >>= 4
	}
	return &iq1sGrid[uint32(blk[4*ib+l])|(qh&7)<<8], qh&8 != 0
}

// DequantizeRowIQ1_M expands IQ1_M blocks from src into y as ggml's dequantize_row_iq1_m.
// len(y) must be a multiple of QK_K and src must hold the blocks; otherwise it panics.
func DequantizeRowIQ1_M(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ1_M", len(y), QK_K, BlockIQ1_MSize, len(src), "src")
	for i := range nb {
		blk := (*[BlockIQ1_MSize]byte)(src[i*BlockIQ1_MSize:])
		d := iq1mScale(blk)
		for ib := range QK_K / 32 {
			s1, s2 := iq1mSub(blk, ib)
			dl := [2]float32{d * float32(s1), d * float32(s2)}
			for l := range 4 {
				g, neg := iq1mGroup(blk, ib, l)
				gridShifted8((*[8]float32)(y[i*QK_K+32*ib+8*l:]), dl[l/2], iq1sDeltaOf(neg), g)
			}
		}
	}
}

// DotIQ1_SQ8_K is ggml_vec_dot_iq1_s_q8_K (generic): per super-block the integer sums
// Σ(2s+1)·Σgrid·q and Σ(2s+1)·(±1)·bsums are combined as (d_x·d_y)·(sumi + 0.125·sumi1) in
// float32 and added in order.
func DotIQ1_SQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ1_SQ8_K", n, QK_K, BlockIQ1_SSize, len(x), "x")
	blocks("DotIQ1_SQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ1_SSize]byte)(x[i*BlockIQ1_SSize:])
		by := (*[BlockQ8_KSize]byte)(y[i*BlockQ8_KSize:])
		var sumi, sumi1 int32
		for ib := range QK_K / 32 {
			qh := uint32(getU16(bx[2+QK_K/8+2*ib:]))
			ls := int32(2*(qh>>12&7) + 1)
			delta := int32(1)
			if qh&0x8000 != 0 {
				delta = -1
			}
			var lsum int32
			for l := range 4 {
				idx := uint32(bx[2+4*ib+l]) | (qh>>(3*l)&7)<<8
				lsum += gridDot8(&iq1sGrid[idx], (*[8]byte)(by[4+32*ib+8*l:]))
			}
			sumi += ls * lsum
			sumi1 += ls * delta * (q8kBsum(by[:], 2*ib) + q8kBsum(by[:], 2*ib+1))
		}
		dd := getF16(bx[0:2]) * q8kD(by[:])
		sumf += float32(dd * float32(float32(sumi)+float32(iq1sDelta*float32(sumi1))))
	}
	return sumf
}

// DotIQ1_MQ8_K is ggml_vec_dot_iq1_m_q8_K (generic): per super-block the integer sums
// Σ(2s+1)·Σgrid·q and Σ(2s+1)·(±1)·Σq per 16 values are combined as
// (d_x·d_y)·(sumi1 + 0.125·sumi2) in float32 and added in order.
func DotIQ1_MQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ1_MQ8_K", n, QK_K, BlockIQ1_MSize, len(x), "x")
	blocks("DotIQ1_MQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ1_MSize]byte)(x[i*BlockIQ1_MSize:])
		by := (*[BlockQ8_KSize]byte)(y[i*BlockQ8_KSize:])
		var sumi1, sumi2 int32
		for ib := range QK_K / 32 {
			var sum1, sum2 [2]int32
			for l := range 4 {
				g, neg := iq1mGroup(bx, ib, l)
				q8 := (*[8]byte)(by[4+32*ib+8*l:])
				var qsum int32
				for j := range 8 {
					qsum += int32(int8(q8[j]))
				}
				if neg {
					qsum = -qsum
				}
				sum1[l/2] += gridDot8(g, q8)
				sum2[l/2] += qsum
			}
			ls1, ls2 := iq1mSub(bx, ib)
			sumi1 += sum1[0]*ls1 + sum1[1]*ls2
			sumi2 += sum2[0]*ls1 + sum2[1]*ls2
		}
		dd := iq1mScale(bx) * q8kD(by[:])
		sumf += float32(dd * float32(float32(sumi1)+float32(iq1sDelta*float32(sumi2))))
	}
	return sumf
}
