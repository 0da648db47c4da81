package quant

// q3kScale returns the 6-bit stored scale u_j (0 … 63) of sub-block j from Q3_K's 12 bytes.
func q3kScale(s []byte, j int) int32 {
	var lo uint8
	if j < 8 {
		lo = s[j] & 0xF
	} else {
		lo = s[j-8] >> 4
	}
	return int32(lo | ((s[8+j%4]>>(2*(j/4)))&3)<<4)
}

// QuantizeRowQ3_K quantizes x into Q3_K super-blocks in dst, bit for bit as ggml's
// quantize_row_q3_K_ref. len(x) must be a multiple of QK_K and dst must hold
// len(x)/QK_K*BlockQ3_KSize bytes. Callers validate; otherwise it panics.
func QuantizeRowQ3_K(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ3_K", len(x), QK_K, BlockQ3_KSize, len(dst), "dst")
	var L [QK_K]int8
	var scales [QK_K / 16]float32
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockQ3_KSize : (i+1)*BlockQ3_KSize]
		hmask, qs, sc := blk[0:32], blk[32:96], blk[96:108]
		var maxScale, amax float32
		for j := range QK_K / 16 {
			scales[j] = makeQ3Quants(4, xb[16*j:16*j+16], L[16*j:16*j+16])
			if s := abs32(scales[j]); s > amax {
				amax, maxScale = s, scales[j]
			}
		}
		clear(sc)
		if maxScale != 0 {
			iscale := -32 / maxScale
			for j := range QK_K / 16 {
				l := int32(int8(nearestInt(iscale * scales[j])))
				l = clampInt(l, -32, 31) + 32
				if j < 8 {
					sc[j] = uint8(l & 0xF)
				} else {
					sc[j-8] |= uint8(l&0xF) << 4
				}
				sc[8+j%4] |= uint8(l>>4) << (2 * (j / 4))
			}
			putF16(blk[108:110], 1/iscale)
		} else {
			putF16(blk[108:110], 0)
		}
		d := getF16(blk[108:110])
		for j := range QK_K / 16 {
			dj := d * float32(q3kScale(sc, j)-32)
			if dj == 0 {
				continue
			}
			for ii := range 16 {
				L[16*j+ii] = int8(clampInt(nearestInt(xb[16*j+ii]/dj), -4, 3) + 4)
			}
		}
		clear(hmask)
		for e := range QK_K {
			if L[e] > 3 {
				hmask[e%32] |= 1 << (e / 32)
				L[e] -= 4
			}
		}
		for h := range 2 {
			for l := range 32 {
				e := 128*h + l
				qs[32*h+l] = uint8(L[e]) | uint8(L[e+32])<<2 | uint8(L[e+64])<<4 | uint8(L[e+96])<<6
			}
		}
	}
}

// DequantizeRowQ3_K expands Q3_K super-blocks from src into y as ggml's dequantize_row_q3_K.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowQ3_K(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ3_K", len(y), QK_K, BlockQ3_KSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ3_KSize : (i+1)*BlockQ3_KSize]
		yb := y[i*QK_K : (i+1)*QK_K]
		d := getF16(blk[108:110])
		hmask, qs, sc := blk[0:32], blk[32:96], blk[96:108]
		for e := range QK_K {
			h, k, l := e/128, (e%128)/32, e%32
			v := int32((qs[32*h+l] >> (2 * k)) & 3)
			if hmask[l]&(1<<(e/32)) == 0 {
				v -= 4
			}
			dl := d * float32(q3kScale(sc, e/16)-32)
			yb[e] = dl * float32(v)
		}
	}
}
