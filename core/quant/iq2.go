package quant

// IQ2_XXS, IQ2_XS and IQ2_S, ggml's 2-bit codebook types, bit-compatible with ggml-common.h of
// ggml d99724f2. Each 256-value super-block has an f16 scale d and 32 groups of 8 values; a group
// is an entry of a grid of 8 magnitudes (8, 25 or 43, iq2xxs/iq2xs/iq2s_grid) with 8 sign bits.
// Sub-blocks of 32 (XXS) or 16 (XS, S) values carry a 4-bit scale s: their values are
// d·(0.5+s)/4·grid·sign. Every byte pattern of the fields decodes. ggml has no CPU quantizer for
// these types (its quantizers need importance-matrix grid maps), so neither has tandem: the
// types are read (dequantized, dotted against Q8_K), never written.
const (
	// BlockIQ2_XXSSize is the byte size of block_iq2_xxs: f16 d, then per 32 values two u32 (LE):
	// the first holds four 8-bit iq2xxs_grid indices (groups 0 … 3), the second four 7-bit
	// ksigns_iq2xs indices (bits 7l … 7l+6 for group l) and the sub-block scale in bits 28 … 31.
	BlockIQ2_XXSSize = 2 + QK_K/4

	// BlockIQ2_XSSize is the byte size of block_iq2_xs: f16 d, 32 u16 (LE) of a 9-bit iq2xs_grid
	// index and a 7-bit ksigns_iq2xs index (top bits) per group, then 8 bytes of scales (low
	// nibble for the first 16 values of a 32, high nibble for the next 16).
	BlockIQ2_XSSize = 2 + QK_K/4 + QK_K/32

	// BlockIQ2_SSize is the byte size of block_iq2_s: f16 d, 32 bytes of the low 8 bits of each
	// group's 10-bit iq2s_grid index, 32 bytes of sign masks (bit j negates value j of the group),
	// 8 bytes of the indices' top bits (bits 2l, 2l+1 of byte b for group 4b+l), then 8 bytes of
	// scales as in IQ2_XS.
	BlockIQ2_SSize = 2 + QK_K/4 + QK_K/16
)

// gridSigned8 writes the 8 values dl·grid[j]·(±1 by bit j of signs) into y.
func gridSigned8(y *[8]float32, dl float32, grid *[8]uint8, signs uint8) {
	for j := range 8 {
		y[j] = dl * float32(grid[j]) * iqSign(signs, j)
	}
}

// gridSignedDot8 is Σ grid[j]·q8[j]·(−1 where bit j of signs is set) over one group of 8.
func gridSignedDot8(grid *[8]uint8, signs uint8, q8 *[8]byte) int32 {
	var s int32
	for j := range 8 {
		p := int32(grid[j]) * int32(int8(q8[j]))
		if signs>>j&1 != 0 {
			p = -p
		}
		s += p
	}
	return s
}

// iq2Scale is d·(0.5+s)·0.25 in ggml's order.
func iq2Scale(d float32, s uint32) float32 { return float32(d*(0.5+float32(s))) * 0.25 }

// DequantizeRowIQ2_XXS expands IQ2_XXS blocks from src into y as ggml's dequantize_row_iq2_xxs.
// len(y) must be a multiple of QK_K and src must hold the blocks; otherwise it panics.
func DequantizeRowIQ2_XXS(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ2_XXS", len(y), QK_K, BlockIQ2_XXSSize, len(src), "src")
	for i := range nb {
		blk := (*[BlockIQ2_XXSSize]byte)(src[i*BlockIQ2_XXSSize:])
		d := getF16(blk[0:2])
		for ib := range QK_K / 32 {
			q := blk[2+8*ib : 10+8*ib]
			aux := getU32(q[4:8])
			db := iq2Scale(d, aux>>28)
			for l := range 4 {
				gridSigned8((*[8]float32)(y[i*QK_K+32*ib+8*l:]), db, &iq2xxsGrid[q[l]], ksignsIQ2XS[aux>>(7*l)&127])
			}
		}
	}
}

// DequantizeRowIQ2_XS expands IQ2_XS blocks from src into y as ggml's dequantize_row_iq2_xs.
// len(y) must be a multiple of QK_K and src must hold the blocks; otherwise it panics.
func DequantizeRowIQ2_XS(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ2_XS", len(y), QK_K, BlockIQ2_XSSize, len(src), "src")
	for i := range nb {
		blk := (*[BlockIQ2_XSSize]byte)(src[i*BlockIQ2_XSSize:])
		d := getF16(blk[0:2])
		for ib := range QK_K / 32 {
			sc := blk[2+QK_K/4+ib]
			db := [2]float32{iq2Scale(d, uint32(sc&0xf)), iq2Scale(d, uint32(sc>>4))}
			for l := range 4 {
				q := getU16(blk[2+8*ib+2*l:])
				gridSigned8((*[8]float32)(y[i*QK_K+32*ib+8*l:]), db[l/2], &iq2xsGrid[q&511], ksignsIQ2XS[q>>9])
			}
		}
	}
}

// iq2sGroup returns the grid entry and sign mask of group l of sub-block ib of an IQ2_S block.
func iq2sGroup(blk *[BlockIQ2_SSize]byte, ib, l int) (*[8]uint8, uint8) {
	qh := uint32(blk[2+QK_K/4+ib])
	idx := uint32(blk[2+4*ib+l]) | qh<<(8-2*l)&0x300
	return &iq2sGrid[idx], blk[2+QK_K/8+4*ib+l]
}

// DequantizeRowIQ2_S expands IQ2_S blocks from src into y as ggml's dequantize_row_iq2_s.
// len(y) must be a multiple of QK_K and src must hold the blocks; otherwise it panics.
func DequantizeRowIQ2_S(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ2_S", len(y), QK_K, BlockIQ2_SSize, len(src), "src")
	for i := range nb {
		blk := (*[BlockIQ2_SSize]byte)(src[i*BlockIQ2_SSize:])
		d := getF16(blk[0:2])
		for ib := range QK_K / 32 {
			sc := blk[2+QK_K/4+QK_K/32+ib]
			db := [2]float32{iq2Scale(d, uint32(sc&0xf)), iq2Scale(d, uint32(sc>>4))}
			for l := range 4 {
				g, s := iq2sGroup(blk, ib, l)
				gridSigned8((*[8]float32)(y[i*QK_K+32*ib+8*l:]), db[l/2], g, s)
			}
		}
	}
}

// DotIQ2_XXSQ8_K is ggml_vec_dot_iq2_xxs_q8_K (generic): per super-block the integer sum of
// (2s+1)·Σgrid·sign·q over its sub-blocks is scaled by (d_x·d_y) and added in float32; the total
// is multiplied by 0.125.
func DotIQ2_XXSQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ2_XXSQ8_K", n, QK_K, BlockIQ2_XXSSize, len(x), "x")
	blocks("DotIQ2_XXSQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ2_XXSSize]byte)(x[i*BlockIQ2_XXSSize:])
		by := (*[BlockQ8_KSize]byte)(y[i*BlockQ8_KSize:])
		var bsum int32
		for ib := range QK_K / 32 {
			q := bx[2+8*ib : 10+8*ib]
			aux := getU32(q[4:8])
			var sumi int32
			for l := range 4 {
				sumi += gridSignedDot8(&iq2xxsGrid[q[l]], ksignsIQ2XS[aux>>(7*l)&127], (*[8]byte)(by[4+32*ib+8*l:]))
			}
			bsum += sumi * int32(2*(aux>>28)+1)
		}
		d := getF16(bx[0:2]) * q8kD(by[:])
		sumf += float32(d * float32(bsum))
	}
	return 0.125 * sumf
}

// DotIQ2_XSQ8_K is ggml_vec_dot_iq2_xs_q8_K (generic): per 16 values the integer sum
// Σgrid·sign·q is weighted by 2s+1; per super-block the total is scaled by (d_x·d_y) and added in
// float32; the result is multiplied by 0.125.
func DotIQ2_XSQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ2_XSQ8_K", n, QK_K, BlockIQ2_XSSize, len(x), "x")
	blocks("DotIQ2_XSQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ2_XSSize]byte)(x[i*BlockIQ2_XSSize:])
		by := (*[BlockQ8_KSize]byte)(y[i*BlockQ8_KSize:])
		var bsum int32
		for ib := range QK_K / 32 {
			sc := bx[2+QK_K/4+ib]
			var sumi [2]int32
			for l := range 4 {
				q := getU16(bx[2+8*ib+2*l:])
				sumi[l/2] += gridSignedDot8(&iq2xsGrid[q&511], ksignsIQ2XS[q>>9], (*[8]byte)(by[4+32*ib+8*l:]))
			}
			bsum += sumi[0]*int32(2*(sc&0xf)+1) + sumi[1]*int32(2*(sc>>4)+1)
		}
		d := getF16(bx[0:2]) * q8kD(by[:])
		sumf += float32(d * float32(bsum))
	}
	return 0.125 * sumf
}

// DotIQ2_SQ8_K is ggml_vec_dot_iq2_s_q8_K (generic): as DotIQ2_XSQ8_K with IQ2_S's 10-bit grid
// indices and explicit sign masks.
func DotIQ2_SQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ2_SQ8_K", n, QK_K, BlockIQ2_SSize, len(x), "x")
	blocks("DotIQ2_SQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ2_SSize]byte)(x[i*BlockIQ2_SSize:])
		by := (*[BlockQ8_KSize]byte)(y[i*BlockQ8_KSize:])
		var bsum int32
		for ib := range QK_K / 32 {
			sc := bx[2+QK_K/4+QK_K/32+ib]
			var sumi [2]int32
			for l := range 4 {
				g, s := iq2sGroup(bx, ib, l)
				sumi[l/2] += gridSignedDot8(g, s, (*[8]byte)(by[4+32*ib+8*l:]))
			}
			bsum += int32(1+2*(sc&0xf))*sumi[0] + int32(1+2*(sc>>4))*sumi[1]
		}
		d := getF16(bx[0:2]) * q8kD(by[:])
		sumf += float32(d * float32(bsum))
	}
	return 0.125 * sumf
}
