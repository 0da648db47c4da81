package quant

// Q2_0, ggml's 2-bit type (type 42): blocks of 64 values, an f16 scale d and 2-bit codes c
// standing for (c−1)·d, i.e. −d, 0, d or 2d. Bit-compatible with ggml-common.h of ggml d99724f2.
const (
	// QK2_0 is the number of elements in a Q2_0 block.
	QK2_0 = 64
	// BlockQ2_0Size is the byte size of block_q2_0: f16 d, then 16 bytes of codes (byte j holds
	// elements 4j…4j+3 in bits 0-1, 2-3, 4-5, 6-7).
	BlockQ2_0Size = 2 + QK2_0/4
)

// q2Code is the code of w as quantize_row_q2_0_ref takes it: roundf(w·id)+1 (halves away from
// zero) clamped to 0…3. C's int conversion of NaN gives INT_MIN on x86, so NaN codes 0.
func q2Code(w, id float32) uint8 {
	v := w * id
	if v != v {
		return 0
	}
	r := roundHalfAway(v) + 1
	switch {
	case r < 0:
		return 0
	case r > 3:
		return 3
	}
	return uint8(r)
}

// QuantizeRowQ2_0 quantizes x into Q2_0 blocks in dst as ggml's quantize_row_q2_0_ref (also the
// CPU's from_float): d is the block's absolute maximum (NaNs skipped), each element rounds x/d
// half away from zero to −1…2, stored plus one. len(x) must be a multiple of QK2_0 and dst must
// hold len(x)/QK2_0*BlockQ2_0Size bytes; otherwise it panics.
func QuantizeRowQ2_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ2_0", len(x), QK2_0, BlockQ2_0Size, len(dst), "dst")
	for i := range nb {
		xb := (*[QK2_0]float32)(x[i*QK2_0:])
		blk := (*[BlockQ2_0Size]byte)(dst[i*BlockQ2_0Size:])
		var amax float32
		for _, v := range xb {
			if a := abs32(v); a > amax {
				amax = a
			}
		}
		var id float32
		if amax > 0 {
			id = 1 / amax
		}
		putF16(blk[0:2], amax)
		for j := range QK2_0 / 4 {
			var q uint8
			for k := range 4 {
				q |= q2Code(xb[4*j+k], id) << (2 * k)
			}
			blk[2+j] = q
		}
	}
}

// DequantizeRowQ2_0 expands Q2_0 blocks from src into y as ggml's dequantize_row_q2_0.
// len(y) must be a multiple of QK2_0 and src must hold the blocks.
func DequantizeRowQ2_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ2_0", len(y), QK2_0, BlockQ2_0Size, len(src), "src")
	for i := range nb {
		blk := (*[BlockQ2_0Size]byte)(src[i*BlockQ2_0Size:])
		d := getF16(blk[0:2])
		yb := (*[QK2_0]float32)(y[i*QK2_0:])
		for j := range QK2_0 {
			yb[j] = float32(int32(blk[2+j/4]>>(2*(j%4))&3)-1) * d
		}
	}
}

// DotQ2_0Q8_0 is ggml_vec_dot_q2_0_q8_0 (generic): per Q8_0 half of a block the integer sum of
// (code−1)·q is scaled by the Q8_0 scale and summed in float32, that sum scaled by d and the
// blocks summed in float32 in order.
func DotQ2_0Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotQ2_0Q8_0", n, QK2_0, BlockQ2_0Size, len(x), "x")
	blocks("DotQ2_0Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockQ2_0Size]byte)(x[i*BlockQ2_0Size:])
		var sumi float32
		for k := range 2 {
			by := (*[BlockQ8_0Size]byte)(y[(2*i+k)*BlockQ8_0Size:])
			var s int32
			for b := range 8 {
				c := bx[2+8*k+b]
				for e := range 4 {
					s += (int32(c>>(2*e)&3) - 1) * int32(int8(by[2+4*b+e]))
				}
			}
			sumi += float32(f16le(by[0], by[1]) * float32(s))
		}
		sumf += float32(getF16(bx[0:2]) * sumi)
	}
	return sumf
}
