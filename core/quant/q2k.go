package quant

// QuantizeRowQ2_K quantizes x into Q2_K super-blocks in dst, bit for bit as ggml's
// quantize_row_q2_K_ref (no importance matrix). len(x) must be a multiple of QK_K and dst must
// hold len(x)/QK_K*BlockQ2_KSize bytes. Callers validate; otherwise it panics.
func QuantizeRowQ2_K(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ2_K", len(x), QK_K, BlockQ2_KSize, len(dst), "dst")
	var L [QK_K]uint8
	var laux [16]uint8
	var w [16]float32
	var mins, scales [QK_K / 16]float32
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockQ2_KSize : (i+1)*BlockQ2_KSize]
		sc := blk[0:16]
		var maxScale, maxMin float32
		for j := range QK_K / 16 {
			xs := xb[16*j : 16*j+16]
			for l, v := range xs {
				w[l] = abs32(v)
			}
			scales[j], mins[j] = makeQKX2Quants(3, xs, w[:], L[16*j:16*j+16], laux[:], -0.5, 0.1, 15, true)
			if scales[j] > maxScale {
				maxScale = scales[j]
			}
			if mins[j] > maxMin {
				maxMin = mins[j]
			}
		}
		if maxScale > 0 {
			iscale := 15 / maxScale
			for j := range QK_K / 16 {
				sc[j] = uint8(nearestInt(iscale * scales[j]))
			}
			putF16(blk[80:82], maxScale/15)
		} else {
			clear(sc)
			putF16(blk[80:82], 0)
		}
		if maxMin > 0 {
			iscale := 15 / maxMin
			for j := range QK_K / 16 {
				sc[j] |= uint8(nearestInt(iscale*mins[j]) << 4)
			}
			putF16(blk[82:84], maxMin/15)
		} else {
			putF16(blk[82:84], 0)
		}
		d, dmin := getF16(blk[80:82]), getF16(blk[82:84])
		for j := range QK_K / 16 {
			dj := d * float32(sc[j]&0xF)
			if dj == 0 {
				continue
			}
			dm := dmin * float32(sc[j]>>4)
			for ii := range 16 {
				L[16*j+ii] = uint8(clampInt(nearestInt((xb[16*j+ii]+float32(dm))/dj), 0, 3))
			}
		}
		qs := blk[16:80]
		for h := range 2 {
			for l := range 32 {
				e := 128*h + l
				qs[32*h+l] = L[e] | L[e+32]<<2 | L[e+64]<<4 | L[e+96]<<6
			}
		}
	}
}

// DequantizeRowQ2_K expands Q2_K super-blocks from src into y as ggml's dequantize_row_q2_K.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowQ2_K(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ2_K", len(y), QK_K, BlockQ2_KSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ2_KSize : (i+1)*BlockQ2_KSize]
		yb := y[i*QK_K : (i+1)*QK_K]
		d, dmin := getF16(blk[80:82]), getF16(blk[82:84])
		qs := blk[16:80]
		for e := range QK_K {
			h, k, l := e/128, (e%128)/32, e%32
			q := (qs[32*h+l] >> (2 * k)) & 3
			sc := blk[e/16]
			dl := d * float32(sc&0xF)
			ml := dmin * float32(sc>>4)
			yb[e] = float32(dl*float32(q)) - float32(ml)
		}
	}
}
