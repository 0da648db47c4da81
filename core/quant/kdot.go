package quant

import "math"

// The dot products below have the semantics of ggml's ggml_vec_dot_*_generic kernels: x is a
// row of weights, y a row of the weight type's vec_dot_type (Q8_0, Q8_1 or Q8_K), n the number
// of elements (a multiple of the block size); both rows must hold n elements. Integer sums are
// exact; the float32 steps follow ggml's order (see each function). Callers validate; otherwise
// they panic.

// DotQ5_0Q8_0 is ggml_vec_dot_q5_0_q8_0: per block sumf += (d_x·d_y)·Σ(code−16)·q_y.
func DotQ5_0Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotQ5_0Q8_0", n, QK5_0, BlockQ5_0Size, len(x), "x")
	blocks("DotQ5_0Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := x[i*BlockQ5_0Size : (i+1)*BlockQ5_0Size]
		by := y[i*BlockQ8_0Size : (i+1)*BlockQ8_0Size]
		qh := getU32(bx[2:6])
		var sumi int32
		for j := range 16 {
			q := bx[6+j]
			x0 := int32(q&0x0f|uint8(qh>>j&1)<<4) - 16
			x1 := int32(q>>4|uint8(qh>>(j+16)&1)<<4) - 16
			sumi += x0*int32(int8(by[2+j])) + x1*int32(int8(by[18+j]))
		}
		dd := f16le(bx[0], bx[1]) * f16le(by[0], by[1])
		sumf += float32(dd * float32(sumi))
	}
	return sumf
}

// DotQ5_1Q8_1 is ggml_vec_dot_q5_1_q8_1: per block sumf += (d_x·d_y)·Σcode·q_y + m_x·s_y.
func DotQ5_1Q8_1(n int, x, y []byte) float32 {
	nb := blocks("DotQ5_1Q8_1", n, QK5_1, BlockQ5_1Size, len(x), "x")
	blocks("DotQ5_1Q8_1", n, QK8_1, BlockQ8_1Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := x[i*BlockQ5_1Size : (i+1)*BlockQ5_1Size]
		by := y[i*BlockQ8_1Size : (i+1)*BlockQ8_1Size]
		qh := getU32(bx[4:8])
		var sumi int32
		for j := range 16 {
			q := bx[8+j]
			x0 := int32(q&0x0f | uint8(qh>>j&1)<<4)
			x1 := int32(q>>4 | uint8(qh>>(j+16)&1)<<4)
			sumi += x0*int32(int8(by[4+j])) + x1*int32(int8(by[20+j]))
		}
		dd := f16le(bx[0], bx[1]) * f16le(by[0], by[1])
		ms := f16le(bx[2], bx[3]) * f16le(by[2], by[3])
		sumf += float32(float32(dd*float32(sumi)) + ms)
	}
	return sumf
}

// DotIQ4_NLQ8_0 is ggml_vec_dot_iq4_nl_q8_0: per block sumf += (d_y·d_x)·Σkvalues[code]·q_y.
func DotIQ4_NLQ8_0(n int, x, y []byte) float32 {
	nb := blocks("DotIQ4_NLQ8_0", n, QK4_NL, BlockIQ4_NLSize, len(x), "x")
	blocks("DotIQ4_NLQ8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := x[i*BlockIQ4_NLSize : (i+1)*BlockIQ4_NLSize]
		by := y[i*BlockQ8_0Size : (i+1)*BlockQ8_0Size]
		var sumi int32
		for j := range 16 {
			q := bx[2+j]
			sumi += int32(int8(by[2+j]))*int32(KValuesIQ4NL[q&0xF]) + int32(int8(by[18+j]))*int32(KValuesIQ4NL[q>>4])
		}
		d := f16le(by[0], by[1]) * f16le(bx[0], bx[1])
		sumf += float32(d * float32(sumi))
	}
	return sumf
}

// q8kD returns the f32 scale of a Q8_K block.
func q8kD(by []byte) float32 { return math.Float32frombits(getU32(by[0:4])) }

// q8kBsum returns bsums[g] of a Q8_K block.
func q8kBsum(by []byte, g int) int32 { return int32(int16(getU16(by[260+2*g:]))) }

// DotIQ4_XSQ8_K is ggml_vec_dot_iq4_xs_q8_K: per sub-block sumf += ((d_x·d_y)·(ls−32))·Σ.
func DotIQ4_XSQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotIQ4_XSQ8_K", n, QK_K, BlockIQ4_XSSize, len(x), "x")
	blocks("DotIQ4_XSQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := x[i*BlockIQ4_XSSize : (i+1)*BlockIQ4_XSSize]
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		d4d8 := f16le(bx[0], bx[1]) * q8kD(by)
		for ib := range QK_K / 32 {
			dl := d4d8 * float32(iq4xsScale(bx, ib)-32)
			q8 := by[4+32*ib:]
			var sumi int32
			for j := range 16 {
				q := bx[8+16*ib+j]
				sumi += int32(int8(q8[j]))*int32(KValuesIQ4NL[q&0xF]) + int32(int8(q8[j+16]))*int32(KValuesIQ4NL[q>>4])
			}
			sumf += float32(dl * float32(sumi))
		}
	}
	return sumf
}

// DotQ2_KQ8_K is ggml_vec_dot_q2_K_q8_K: per super-block
// sumf += (d_y·d)·Σsc·Σq·q8 − (d_y·dmin)·Σm·bsums.
func DotQ2_KQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotQ2_KQ8_K", n, QK_K, BlockQ2_KSize, len(x), "x")
	blocks("DotQ2_KQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := x[i*BlockQ2_KSize : (i+1)*BlockQ2_KSize]
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		var summs, isum int32
		for j := range 16 {
			summs += q8kBsum(by, j) * int32(bx[j]>>4)
		}
		qs := bx[16:80]
		q8 := by[4:260]
		for e0 := 0; e0 < QK_K; e0 += 16 {
			h, k, l0 := e0/128, (e0%128)/32, e0%32
			var s int32
			for l := l0; l < l0+16; l++ {
				s += int32(int8(q8[128*h+32*k+l])) * int32((qs[32*h+l]>>(2*k))&3)
			}
			isum += int32(bx[e0/16]&0xF) * s
		}
		yd := q8kD(by)
		dall := yd * f16le(bx[80], bx[81])
		dmin := yd * f16le(bx[82], bx[83])
		sumf += float32(float32(dall*float32(isum)) - float32(dmin*float32(summs)))
	}
	return sumf
}

// kLanes accumulates ggml's eight integer lanes acc[e mod 8] += scale(e)·q8_e·a_e for one
// super-block whose values a and per-element scale (constant over groups of gs elements) are
// given by the caller.
func kLanes(acc *[8]int32, a *[QK_K]int8, q8 []byte, scale func(g int) int32, gs int) {
	for g := 0; g < QK_K; g += gs {
		sc := scale(g / gs)
		for e := g; e < g+gs; e += 8 {
			for l := range 8 {
				acc[l] += sc * int32(int8(q8[e+l])) * int32(a[e+l])
			}
		}
	}
}

// DotQ3_KQ8_K is ggml_vec_dot_q3_K_q8_K: eight lanes, sums[l] += (d·d_y)·acc[l] per
// super-block, lanes added in order at the end.
func DotQ3_KQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotQ3_KQ8_K", n, QK_K, BlockQ3_KSize, len(x), "x")
	blocks("DotQ3_KQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sums [8]float32
	var a [QK_K]int8
	for i := range nb {
		bx := x[i*BlockQ3_KSize : (i+1)*BlockQ3_KSize]
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		hmask, qs, sc := bx[0:32], bx[32:96], bx[96:108]
		for e := range QK_K {
			h, k, l := e/128, (e%128)/32, e%32
			v := int8((qs[32*h+l] >> (2 * k)) & 3)
			if hmask[l]&(1<<(e/32)) == 0 {
				v -= 4
			}
			a[e] = v
		}
		var acc [8]int32
		kLanes(&acc, &a, by[4:260], func(g int) int32 { return q3kScale(sc, g) - 32 }, 16)
		d := f16le(bx[108], bx[109]) * q8kD(by)
		for l := range 8 {
			sums[l] += float32(d * float32(acc[l]))
		}
	}
	var sumf float32
	for _, s := range sums {
		sumf += s
	}
	return sumf
}

// dotK45 is the shared body of the Q4_K and Q5_K dots (ggml_vec_dot_q4_K_q8_K and
// ggml_vec_dot_q5_K_q8_K): sumf collects −(dmin·d_y)·Σm·bsums per super-block, then the eight
// lane sums (d·d_y)·acc[l] are added in order.
func dotK45(nb int, x []byte, bsize int, y []byte, decode func(bx []byte, a *[QK_K]int8)) float32 {
	var sums [8]float32
	var a [QK_K]int8
	var sumf float32
	for i := range nb {
		bx := x[i*bsize : (i+1)*bsize]
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		decode(bx, &a)
		s := bx[4:16]
		var sc, mn [8]int32
		for j := range 8 {
			c, m := getScaleMinK4(j, s)
			sc[j], mn[j] = int32(c), int32(m)
		}
		var sumi int32
		for g := range 16 {
			sumi += q8kBsum(by, g) * mn[g/2]
		}
		var acc [8]int32
		kLanes(&acc, &a, by[4:260], func(g int) int32 { return sc[g] }, 32)
		yd := q8kD(by)
		d := f16le(bx[0], bx[1]) * yd
		for l := range 8 {
			sums[l] += float32(d * float32(acc[l]))
		}
		dmin := f16le(bx[2], bx[3]) * yd
		sumf -= float32(dmin * float32(sumi))
	}
	for _, s := range sums {
		sumf += s
	}
	return sumf
}

// DotQ4_KQ8_K is ggml_vec_dot_q4_K_q8_K.
func DotQ4_KQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotQ4_KQ8_K", n, QK_K, BlockQ4_KSize, len(x), "x")
	blocks("DotQ4_KQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	return dotK45(nb, x, BlockQ4_KSize, y, func(bx []byte, a *[QK_K]int8) {
		qs := bx[16:]
		for c := range 4 {
			for l := range 32 {
				a[64*c+l] = int8(qs[32*c+l] & 0xF)
				a[64*c+32+l] = int8(qs[32*c+l] >> 4)
			}
		}
	})
}

// DotQ5_KQ8_K is ggml_vec_dot_q5_K_q8_K.
func DotQ5_KQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotQ5_KQ8_K", n, QK_K, BlockQ5_KSize, len(x), "x")
	blocks("DotQ5_KQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	return dotK45(nb, x, BlockQ5_KSize, y, func(bx []byte, a *[QK_K]int8) {
		qh, qs := bx[16:48], bx[48:]
		for c := range 4 {
			for l := range 32 {
				lo, hi := qs[32*c+l]&0xF, qs[32*c+l]>>4
				lo |= (qh[l] >> (2 * c) & 1) << 4
				hi |= (qh[l] >> (2*c + 1) & 1) << 4
				a[64*c+l], a[64*c+32+l] = int8(lo), int8(hi)
			}
		}
	})
}

// DotQ6_KQ8_K is ggml_vec_dot_q6_K_q8_K: eight lanes with per-16 int8 scales and values
// code − 32, sums[l] += (d·d_y)·acc[l], lanes added in order at the end.
func DotQ6_KQ8_K(n int, x, y []byte) float32 {
	nb := blocks("DotQ6_KQ8_K", n, QK_K, BlockQ6_KSize, len(x), "x")
	blocks("DotQ6_KQ8_K", n, QK_K, BlockQ8_KSize, len(y), "y")
	var sums [8]float32
	var a [QK_K]int8
	for i := range nb {
		bx := x[i*BlockQ6_KSize : (i+1)*BlockQ6_KSize]
		by := y[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		for e := range QK_K {
			a[e] = int8(q6kCode(bx, e) - 32)
		}
		var acc [8]int32
		kLanes(&acc, &a, by[4:260], func(g int) int32 { return int32(int8(bx[192+g])) }, 16)
		d := f16le(bx[208], bx[209]) * q8kD(by)
		for l := range 8 {
			sums[l] += float32(d * float32(acc[l]))
		}
	}
	var sumf float32
	for _, s := range sums {
		sumf += s
	}
	return sumf
}
