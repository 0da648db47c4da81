package quant

// IQ3_XXS and IQ3_S, ggml's 3-bit lattice types (super-blocks of 256), bit-compatible with
// ggml-common.h of ggml d99724f2. Each group of four values is one entry of a grid of 4-byte
// magnitudes; the signs of eight values come as one byte. ggml's CPU has no quantizer for either
// (its quantizers need ggml_quantize_init's grid maps), so only dequantizers and dots live here.
//
//go:generate go run gen_iqtables.go -o iq3_grids.go iq3xxs_grid=iq3xxsGrid iq3s_grid=iq3sGrid

const (
	// BlockIQ3_XXSSize is the byte size of block_iq3_xxs: f16 d, 64 grid indices (8 per group
	// of 32), then per group of 32 a little-endian u32 holding four 7-bit sign indices
	// (ksigns_iq2xs, bits 7l…7l+6 for the eight values l) and a 4-bit scale s (bits 28…31);
	// the group's values are d·(0.5+s)·0.5·grid·sign.
	BlockIQ3_XXSSize = 2 + 3*QK_K/8

	// BlockIQ3_SSize is the byte size of block_iq3_s: f16 d, 64 low bytes of 9-bit grid indices,
	// 8 bytes of their high bits (byte g bit i for index i of group g), 32 sign bytes (one per
	// eight values), 4 bytes of two 4-bit scales s each (low nibble: even group); the group's
	// values are d·(1+2s)·grid·sign.
	BlockIQ3_SSize = 2 + 13*QK_K/32 + QK_K/64
)

// DequantizeRowIQ3_XXS expands IQ3_XXS blocks from src into y as ggml's dequantize_row_iq3_xxs.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowIQ3_XXS(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ3_XXS", len(y), QK_K, BlockIQ3_XXSSize, len(src), "src")
	for i := range nb {
		blk := (*[BlockIQ3_XXSSize]byte)(src[i*BlockIQ3_XXSSize:])
		d := getF16(blk[0:2])
		yb := (*[QK_K]float32)(y[i*QK_K:])
		for g := range QK_K / 32 {
			aux := getU32(blk[2+QK_K/4+4*g:])
			db := d * (0.5 + float32(aux>>28)) * 0.5
			for l := range 4 {
				s := ksignsIQ2XS[aux>>(7*l)&127]
				g1 := &iq3xxsGrid[blk[2+8*g+2*l]]
				g2 := &iq3xxsGrid[blk[2+8*g+2*l+1]]
				o := 32*g + 8*l
				for j := range 4 {
					yb[o+j] = db * float32(g1[j]) * iqSign(s, j)
					yb[o+4+j] = db * float32(g2[j]) * iqSign(s, 4+j)
				}
			}
		}
	}
}

// iq3sIndex is grid index l (0…7) of a group of IQ3_S: low byte qs[l], high bit l of qh.
func iq3sIndex(qs *[8]byte, qh byte, l int) uint16 { return uint16(qs[l]) | uint16(qh>>l&1)<<8 }

// DequantizeRowIQ3_S expands IQ3_S blocks from src into y as ggml's dequantize_row_iq3_s.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowIQ3_S(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ3_S", len(y), QK_K, BlockIQ3_SSize, len(src), "src")
	const qsOff, qhOff, sgOff, scOff = 2, 2 + QK_K/4, 2 + QK_K/4 + QK_K/32, 2 + QK_K/4 + QK_K/32 + QK_K/8
	for i := range nb {
		blk := (*[BlockIQ3_SSize]byte)(src[i*BlockIQ3_SSize:])
		d := getF16(blk[0:2])
		yb := (*[QK_K]float32)(y[i*QK_K:])
		for g := range QK_K / 32 {
			sc := blk[scOff+g/2] >> (4 * (g % 2)) & 0xf
			db := d * float32(1+2*int32(sc))
			qs := (*[8]byte)(blk[qsOff+8*g:])
			qh := blk[qhOff+g]
			for l := range 4 {
				s := blk[sgOff+4*g+l]
				g1 := &iq3sGrid[iq3sIndex(qs, qh, 2*l)]
				g2 := &iq3sGrid[iq3sIndex(qs, qh, 2*l+1)]
				o := 32*g + 8*l
				for j := range 4 {
					yb[o+j] = db * float32(g1[j]) * iqSign(s, j)
					yb[o+4+j] = db * float32(g2[j]) * iqSign(s, 4+j)
				}
			}
		}
	}
}

// iq3GroupDot is the integer dot of eight values (two grid entries, signs s) with eight int8
// activations.
func iq3GroupDot(g1, g2 *[4]uint8, s uint8, q8 *[8]byte) int32 {
	var sum int32
	for j := range 4 {
		a := int32(g1[j]) * int32(int8(q8[j]))
		b := int32(g2[j]) * int32(int8(q8[4+j]))
		if s>>j&1 != 0 {
			a = -a
		}
		if s>>(4+j)&1 != 0 {
			b = -b
		}
		sum += a + b
	}
	return sum
}

// DotIQ3_XXSQ8_K is ggml_vec_dot_iq3_xxs_q8_K (generic): per group of 32 the integer sum of
// grid·sign·q times (2s+1), summed over the super-block, scaled by d_x·d_y and summed in
// float32; the total times 0.25.
func DotIQ3_XXSQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ3_XXSQ8_K", n, QK_K, BlockIQ3_XXSSize, len(x), "x")
	blocks("DotIQ3_XXSQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ3_XXSSize]byte)(x[i*BlockIQ3_XXSSize:])
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		q8 := (*[QK_K]byte)(by[4:])
		d := getF16(bx[0:2]) * q8kD(by)
		var bsum int32
		for g := range QK_K / 32 {
			aux := getU32(bx[2+QK_K/4+4*g:])
			var sumi int32
			for l := range 4 {
				s := ksignsIQ2XS[aux>>(7*l)&127]
				sumi += iq3GroupDot(&iq3xxsGrid[bx[2+8*g+2*l]], &iq3xxsGrid[bx[2+8*g+2*l+1]], s,
					(*[8]byte)(q8[32*g+8*l:]))
			}
			bsum += sumi * int32(2*(aux>>28)+1)
		}
		sumf += float32(d * float32(bsum))
	}
	return 0.25 * sumf
}

// DotIQ3_SQ8_K is ggml_vec_dot_iq3_s_q8_K (generic): per group of 32 the integer sum of
// grid·sign·q times (2s+1), summed over the super-block, scaled by d_x·d_y and summed in
// float32.
func DotIQ3_SQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ3_SQ8_K", n, QK_K, BlockIQ3_SSize, len(x), "x")
	blocks("DotIQ3_SQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	const qsOff, qhOff, sgOff, scOff = 2, 2 + QK_K/4, 2 + QK_K/4 + QK_K/32, 2 + QK_K/4 + QK_K/32 + QK_K/8
	var sumf float32
	for i := range nb {
		bx := (*[BlockIQ3_SSize]byte)(x[i*BlockIQ3_SSize:])
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		q8 := (*[QK_K]byte)(by[4:])
		d := getF16(bx[0:2]) * q8kD(by)
		var bsum int32
		for g := range QK_K / 32 {
			ls := int32(2*(bx[scOff+g/2]>>(4*(g%2))&0xf)) + 1
			qs := (*[8]byte)(bx[qsOff+8*g:])
			qh := bx[qhOff+g]
			var sumi int32
			for l := range 4 {
				sumi += iq3GroupDot(&iq3sGrid[iq3sIndex(qs, qh, 2*l)], &iq3sGrid[iq3sIndex(qs, qh, 2*l+1)],
					bx[sgOff+4*g+l], (*[8]byte)(q8[32*g+8*l:]))
			}
			bsum += sumi * ls
		}
		sumf += float32(d * float32(bsum))
	}
	return sumf
}
