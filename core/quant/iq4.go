package quant

// iq4Search is the scale search of ggml's quantize_row_iq4_nl_impl for one 32-value block with
// weights x² and no importance matrix. ntry −1 is the reference IQ4_NL quantizer (codes kept in
// L); ntry 7 is the search used by IQ4_XS (and quantize_iq4_nl). It returns the block scale.
// The caller has checked that the block's largest magnitude is at least groupMaxEps.
func iq4Search(xb []float32, L []uint8, vmax float32, ntry int) float32 {
	kv := &KValuesIQ4NL
	var d float32
	if ntry > 0 {
		d = -vmax / float32(kv[0])
	} else {
		d = vmax / float32(kv[0])
	}
	id := 1 / d
	var sumqx, sumq2 float32
	for j, v := range xb {
		l := bestIndexInt8(kv, id*v)
		L[j] = uint8(l)
		q := float32(kv[l])
		w := v * v
		sumqx += float32(float32(w*q) * v)
		sumq2 += float32(float32(w*q) * q)
	}
	d = 0
	if sumq2 > 0 {
		d = sumqx / sumq2
	}
	best := d * sumqx
	for itry := -ntry; itry <= ntry; itry++ {
		id = float32(itry+int(kv[0])) / vmax
		sumqx, sumq2 = 0, 0
		for _, v := range xb {
			q := float32(kv[bestIndexInt8(kv, id*v)])
			w := v * v
			sumqx += float32(float32(w*q) * v)
			sumq2 += float32(float32(w*q) * q)
		}
		if sumq2 > 0 && float32(sumqx*sumqx) > float32(best*sumq2) {
			d = sumqx / sumq2
			best = d * sumqx
		}
	}
	return d
}

// QuantizeRowIQ4_NL quantizes x into IQ4_NL blocks in dst as ggml's quantize_row_iq4_nl_ref
// (the CPU from_float; ntry −1, no importance matrix). Bytes are identical to ggml's except
// for the codes of an all-zero block, which ggml takes from uninitialised scratch: here they
// repeat the previous block's codes, as ggml's scratch does after the first block (zeros for
// a leading zero block). len(x) must be a multiple of QK4_NL and dst must hold the blocks.
func QuantizeRowIQ4_NL(x []float32, dst []byte) {
	nb := blocks("QuantizeRowIQ4_NL", len(x), QK4_NL, BlockIQ4_NLSize, len(dst), "dst")
	var L [QK4_NL]uint8
	for i := range nb {
		xb := x[i*QK4_NL : (i+1)*QK4_NL]
		blk := dst[i*BlockIQ4_NLSize : (i+1)*BlockIQ4_NLSize]
		vmax, amax := maxWithSign(xb)
		var d float32
		if amax >= groupMaxEps {
			d = iq4Search(xb, L[:], vmax, -1)
		}
		putF16(blk[0:2], d)
		for j := range 16 {
			blk[2+j] = L[j] | L[j+16]<<4
		}
	}
}

// DequantizeRowIQ4_NL expands IQ4_NL blocks from src into y as ggml's dequantize_row_iq4_nl:
// element = d·kvalues[code]. len(y) must be a multiple of QK4_NL and src must hold the blocks.
func DequantizeRowIQ4_NL(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ4_NL", len(y), QK4_NL, BlockIQ4_NLSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockIQ4_NLSize : (i+1)*BlockIQ4_NLSize]
		d := getF16(blk[0:2])
		for j := range 16 {
			q := blk[2+j]
			y[i*QK4_NL+j] = d * float32(KValuesIQ4NL[q&0xF])
			y[i*QK4_NL+j+16] = d * float32(KValuesIQ4NL[q>>4])
		}
	}
}

// QuantizeRowIQ4_XS quantizes x into IQ4_XS super-blocks in dst, bit for bit as ggml's
// quantize_row_iq4_xs_ref (no importance matrix). len(x) must be a multiple of QK_K and dst
// must hold len(x)/QK_K*BlockIQ4_XSSize bytes. Callers validate; otherwise it panics.
func QuantizeRowIQ4_XS(x []float32, dst []byte) {
	nb := blocks("QuantizeRowIQ4_XS", len(x), QK_K, BlockIQ4_XSSize, len(dst), "dst")
	var L [32]uint8
	var scales [QK_K / 32]float32
	kv := &KValuesIQ4NL
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockIQ4_XSSize : (i+1)*BlockIQ4_XSSize]
		sl, qs := blk[4:8], blk[8:]
		clear(qs)
		var maxScale, amaxScale float32
		for ib := range QK_K / 32 {
			xs := xb[32*ib : 32*ib+32]
			vmax, amax := maxWithSign(xs)
			if amax < groupMaxEps {
				scales[ib] = 0
				continue
			}
			scales[ib] = iq4Search(xs, L[:], vmax, 7)
			if a := abs32(scales[ib]); a > amaxScale {
				amaxScale, maxScale = a, scales[ib]
			}
		}
		D := -maxScale / 32
		putF16(blk[0:2], D)
		var iD float32
		if D != 0 {
			iD = 1 / D
		}
		var sh uint16
		for ib := range QK_K / 32 {
			l := clampInt(nearestInt(iD*scales[ib]), -32, 31)
			dl := D * float32(l)
			var idl float32
			if dl != 0 {
				idl = 1 / dl
			}
			xs := xb[32*ib : 32*ib+32]
			for j := range 16 {
				lo := bestIndexInt8(kv, idl*xs[j])
				hi := bestIndexInt8(kv, idl*xs[j+16])
				qs[16*ib+j] = uint8(lo) | uint8(hi)<<4
			}
			l += 32
			if ib%2 == 0 {
				sl[ib/2] = uint8(l & 0xF)
			} else {
				sl[ib/2] |= uint8(l&0xF) << 4
			}
			sh |= uint16(l>>4) << (2 * ib)
		}
		putU16(blk[2:4], sh)
	}
}

// iq4xsScale returns the 6-bit stored scale (0 … 63) of sub-block ib of an IQ4_XS block.
func iq4xsScale(blk []byte, ib int) int32 {
	lo := (blk[4+ib/2] >> (4 * (ib % 2))) & 0xF
	hi := (getU16(blk[2:4]) >> (2 * ib)) & 3
	return int32(lo) | int32(hi)<<4
}

// DequantizeRowIQ4_XS expands IQ4_XS super-blocks from src into y as ggml's
// dequantize_row_iq4_xs: element = (d·(ls − 32))·kvalues[code]. len(y) must be a multiple of
// QK_K and src must hold the blocks.
func DequantizeRowIQ4_XS(src []byte, y []float32) {
	nb := blocks("DequantizeRowIQ4_XS", len(y), QK_K, BlockIQ4_XSSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockIQ4_XSSize : (i+1)*BlockIQ4_XSSize]
		d := getF16(blk[0:2])
		for ib := range QK_K / 32 {
			dl := d * float32(iq4xsScale(blk, ib)-32)
			for j := range 16 {
				q := blk[8+16*ib+j]
				y[i*QK_K+32*ib+j] = dl * float32(KValuesIQ4NL[q&0xF])
				y[i*QK_K+32*ib+j+16] = dl * float32(KValuesIQ4NL[q>>4])
			}
		}
	}
}
