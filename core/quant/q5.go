package quant

// QuantizeRowQ5_0 quantizes x into Q5_0 blocks in dst, bit for bit as ggml's
// quantize_row_q5_0_ref: per block d = max/−16 (max: the element of largest magnitude, with its
// sign) and code = min(31, trunc(x/d + 16.5)). A zero block stores d = −0 and codes 16.
// len(x) must be a multiple of QK5_0 and dst must hold len(x)/QK5_0*BlockQ5_0Size bytes.
// Callers validate; otherwise it panics.
func QuantizeRowQ5_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ5_0", len(x), QK5_0, BlockQ5_0Size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK5_0 : (i+1)*QK5_0]
		blk := dst[i*BlockQ5_0Size : (i+1)*BlockQ5_0Size]
		var amax, vmax float32
		for _, v := range xb {
			if av := abs32(v); amax < av {
				amax, vmax = av, v
			}
		}
		d := vmax / -16
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(blk[0:2], d)
		var qh uint32
		for j := range QK5_0 / 2 {
			q0 := uint8(min(31, toInt8(float32(xb[j]*id)+16.5)))
			q1 := uint8(min(31, toInt8(float32(xb[j+16]*id)+16.5)))
			blk[6+j] = q0&0x0f | (q1&0x0f)<<4
			qh |= uint32(q0>>4&1)<<j | uint32(q1>>4&1)<<(j+16)
		}
		putU32(blk[2:6], qh)
	}
}

// DequantizeRowQ5_0 expands Q5_0 blocks from src into y as ggml's dequantize_row_q5_0:
// element = (code − 16)·d. len(y) must be a multiple of QK5_0 and src must hold the blocks.
func DequantizeRowQ5_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ5_0", len(y), QK5_0, BlockQ5_0Size, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ5_0Size : (i+1)*BlockQ5_0Size]
		yb := y[i*QK5_0 : (i+1)*QK5_0]
		d := getF16(blk[0:2])
		qh := getU32(blk[2:6])
		for j := range QK5_0 / 2 {
			q := blk[6+j]
			x0 := int32(q&0x0f|uint8(qh>>j&1)<<4) - 16
			x1 := int32(q>>4|uint8(qh>>(j+16)&1)<<4) - 16
			yb[j] = float32(x0) * d
			yb[j+16] = float32(x1) * d
		}
	}
}

// QuantizeRowQ5_1 quantizes x into Q5_1 blocks in dst, bit for bit as ggml's
// quantize_row_q5_1_ref: m = min, d = (max−min)/31, code = trunc((x−m)/d + 0.5). len(x) must be
// a multiple of QK5_1 and dst must hold the blocks. Callers validate; otherwise it panics.
func QuantizeRowQ5_1(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ5_1", len(x), QK5_1, BlockQ5_1Size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK5_1 : (i+1)*QK5_1]
		blk := dst[i*BlockQ5_1Size : (i+1)*BlockQ5_1Size]
		lo, hi := float32(3.4028234663852886e38), float32(-3.4028234663852886e38)
		for _, v := range xb {
			if v < lo {
				lo = v
			}
			if v > hi {
				hi = v
			}
		}
		d := (hi - lo) / 31
		var id float32
		if d != 0 {
			id = 1 / d
		}
		putF16(blk[0:2], d)
		putF16(blk[2:4], lo)
		var qh uint32
		for j := range QK5_1 / 2 {
			q0 := toUint8(float32((xb[j]-lo)*id) + 0.5)
			q1 := toUint8(float32((xb[j+16]-lo)*id) + 0.5)
			blk[8+j] = q0&0x0f | (q1&0x0f)<<4
			qh |= uint32(q0>>4&1)<<j | uint32(q1>>4&1)<<(j+16)
		}
		putU32(blk[4:8], qh)
	}
}

// DequantizeRowQ5_1 expands Q5_1 blocks from src into y as ggml's dequantize_row_q5_1:
// element = code·d + m. len(y) must be a multiple of QK5_1 and src must hold the blocks.
func DequantizeRowQ5_1(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ5_1", len(y), QK5_1, BlockQ5_1Size, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ5_1Size : (i+1)*BlockQ5_1Size]
		yb := y[i*QK5_1 : (i+1)*QK5_1]
		d := getF16(blk[0:2])
		m := getF16(blk[2:4])
		qh := getU32(blk[4:8])
		for j := range QK5_1 / 2 {
			q := blk[8+j]
			x0 := q&0x0f | uint8(qh>>j&1)<<4
			x1 := q>>4 | uint8(qh>>(j+16)&1)<<4
			yb[j] = float32(float32(x0)*d) + m
			yb[j+16] = float32(float32(x1)*d) + m
		}
	}
}
