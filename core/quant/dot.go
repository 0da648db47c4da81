package quant

// DotQ8_0Q8_0 returns the dot product of the first n elements of two Q8_0 rows x and y, with the
// semantics of ggml's ggml_vec_dot_q8_0_q8_0_generic: per block the integer sum of q_x*q_y,
// times (d_x*d_y), accumulated in float32 in block order. n must be a multiple of QK8_0 and both
// rows must hold n/QK8_0 blocks. Callers validate; otherwise it panics.
func DotQ8_0Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotQ8_0Q8_0", n, QK8_0, BlockQ8_0Size, len(x), "x")
	blocks("DotQ8_0Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockQ8_0Size]byte)(x[i*BlockQ8_0Size:])
		by := (*[BlockQ8_0Size]byte)(y[i*BlockQ8_0Size:])
		var sumi int32
		for j := 2; j < BlockQ8_0Size; j++ {
			sumi += int32(int8(bx[j])) * int32(int8(by[j]))
		}
		dd := float32(f16le(bx[0], bx[1]) * f16le(by[0], by[1]))
		sumf += float32(float32(sumi) * dd)
	}
	return sumf
}

// DotQ4_0Q8_0 returns the dot product of the first n elements of a Q4_0 row x (weights) and a
// Q8_0 row y (activations), with the semantics of ggml's ggml_vec_dot_q4_0_q8_0_generic: per
// block the integer sum of (nibble-8)*q_y, times d_x then times d_y, accumulated in float32 in
// block order. n must be a multiple of 32 and x and y must hold n/32 blocks of their formats.
// Callers validate; otherwise it panics.
func DotQ4_0Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotQ4_0Q8_0", n, QK4_0, BlockQ4_0Size, len(x), "x")
	blocks("DotQ4_0Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockQ4_0Size]byte)(x[i*BlockQ4_0Size:])
		by := (*[BlockQ8_0Size]byte)(y[i*BlockQ8_0Size:])
		var sumi int32
		for j := range QK4_0 / 2 {
			q := bx[2+j]
			sumi += (int32(q&0x0f) - 8) * int32(int8(by[2+j]))
			sumi += (int32(q>>4) - 8) * int32(int8(by[2+j+QK8_0/2]))
		}
		t := float32(float32(sumi) * f16le(bx[0], bx[1]))
		sumf += float32(t * f16le(by[0], by[1]))
	}
	return sumf
}

// DotQ4_1Q8_1 returns the dot product of the first n elements of a Q4_1 row x (weights) and a
// Q8_1 row y (activations), with the semantics of ggml's ggml_vec_dot_q4_1_q8_1_generic: per
// block (d_x*d_y)*sumi + m_x*s_y, where sumi is the integer sum of nibble*q_y and s_y is the
// block's stored d*sum(q), accumulated in float32 in block order. n must be a multiple of 32 and
// x and y must hold n/32 blocks of their formats. Callers validate; otherwise it panics.
func DotQ4_1Q8_1(n int, x, y []byte) float32 {
	nb := blocks("DotQ4_1Q8_1", n, QK4_1, BlockQ4_1Size, len(x), "x")
	blocks("DotQ4_1Q8_1", n, QK8_1, BlockQ8_1Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := (*[BlockQ4_1Size]byte)(x[i*BlockQ4_1Size:])
		by := (*[BlockQ8_1Size]byte)(y[i*BlockQ8_1Size:])
		var sumi int32
		for j := range QK4_1 / 2 {
			q := bx[4+j]
			sumi += int32(q&0x0f) * int32(int8(by[4+j]))
			sumi += int32(q>>4) * int32(int8(by[4+j+QK8_1/2]))
		}
		dd := float32(f16le(bx[0], bx[1]) * f16le(by[0], by[1]))
		ms := float32(f16le(bx[2], bx[3]) * f16le(by[2], by[3]))
		sumf += float32(float32(dd*float32(sumi)) + ms)
	}
	return sumf
}

// f16le decodes the little-endian f16 stored in bytes lo, hi.
func f16le(lo, hi byte) float32 {
	return fp16Table[uint16(lo)|uint16(hi)<<8]
}
