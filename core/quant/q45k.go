package quant

import "math"

// quantizeK45 is the shared body of quantize_row_q4_K_ref (nmax 15) and quantize_row_q5_K_ref
// (nmax 31): it writes d, dmin and the packed scales of one super-block into head (16 bytes)
// and returns the codes (0 … nmax) in L.
func quantizeK45(xb []float32, head []byte, L *[QK_K]uint8, nmax int32) {
	var laux [32]uint8
	var w [32]float32
	var mins, scales [QK_K / 32]float32
	rmin, nstep := float32(-1), 20
	if nmax == 31 {
		rmin, nstep = -0.5, 15
	}
	var maxScale, maxMin float32
	for j := range QK_K / 32 {
		xs := xb[32*j : 32*j+32]
		var sumX2 float32
		for _, v := range xs {
			sumX2 += float32(v * v)
		}
		av := float32(math.Sqrt(float64(sumX2 / 32)))
		for l, v := range xs {
			w[l] = av + abs32(v)
		}
		scales[j], mins[j] = makeQKX2Quants(nmax, xs, w[:], L[32*j:32*j+32], laux[:], rmin, 0.1, nstep, false)
		if scales[j] > maxScale {
			maxScale = scales[j]
		}
		if mins[j] > maxMin {
			maxMin = mins[j]
		}
	}
	var invScale, invMin float32
	if maxScale > 0 {
		invScale = 63 / maxScale
	}
	if maxMin > 0 {
		invMin = 63 / maxMin
	}
	s := head[4:16]
	for j := range QK_K / 32 {
		ls := min(63, uint8(nearestInt(invScale*scales[j])))
		lm := min(63, uint8(nearestInt(invMin*mins[j])))
		if j < 4 {
			s[j] = ls
			s[j+4] = lm
		} else {
			s[j+4] = ls&0xF | (lm&0xF)<<4
			s[j-4] |= (ls >> 4) << 6
			s[j] |= (lm >> 4) << 6
		}
	}
	putF16(head[0:2], maxScale/63)
	putF16(head[2:4], maxMin/63)
	d, dmin := getF16(head[0:2]), getF16(head[2:4])
	for j := range QK_K / 32 {
		sc, m := getScaleMinK4(j, s)
		dj := d * float32(sc)
		if dj == 0 {
			continue
		}
		dm := dmin * float32(m)
		for ii := range 32 {
			L[32*j+ii] = uint8(clampInt(nearestInt((xb[32*j+ii]+float32(dm))/dj), 0, nmax))
		}
	}
}

// QuantizeRowQ4_K quantizes x into Q4_K super-blocks in dst, bit for bit as ggml's
// quantize_row_q4_K_ref. len(x) must be a multiple of QK_K and dst must hold
// len(x)/QK_K*BlockQ4_KSize bytes. Callers validate; otherwise it panics.
func QuantizeRowQ4_K(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ4_K", len(x), QK_K, BlockQ4_KSize, len(dst), "dst")
	var L [QK_K]uint8
	for i := range nb {
		blk := dst[i*BlockQ4_KSize : (i+1)*BlockQ4_KSize]
		quantizeK45(x[i*QK_K:(i+1)*QK_K], blk[0:16], &L, 15)
		qs := blk[16:]
		for c := range 4 {
			for l := range 32 {
				qs[32*c+l] = L[64*c+l] | L[64*c+32+l]<<4
			}
		}
	}
}

// DequantizeRowQ4_K expands Q4_K super-blocks from src into y as ggml's dequantize_row_q4_K:
// element = (d·sc)·q − dmin·m. len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowQ4_K(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ4_K", len(y), QK_K, BlockQ4_KSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ4_KSize : (i+1)*BlockQ4_KSize]
		yb := y[i*QK_K : (i+1)*QK_K]
		d, dmin := getF16(blk[0:2]), getF16(blk[2:4])
		s, qs := blk[4:16], blk[16:]
		for j := range QK_K / 32 {
			sc, m := getScaleMinK4(j, s)
			d1, m1 := d*float32(sc), dmin*float32(m)
			c, shift := j/2, 4*(j%2)
			for l := range 32 {
				q := (qs[32*c+l] >> shift) & 0xF
				yb[32*j+l] = float32(d1*float32(q)) - float32(m1)
			}
		}
	}
}

// QuantizeRowQ5_K quantizes x into Q5_K super-blocks in dst, bit for bit as ggml's
// quantize_row_q5_K_ref. len(x) must be a multiple of QK_K and dst must hold
// len(x)/QK_K*BlockQ5_KSize bytes. Callers validate; otherwise it panics.
func QuantizeRowQ5_K(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ5_K", len(x), QK_K, BlockQ5_KSize, len(dst), "dst")
	var L [QK_K]uint8
	for i := range nb {
		blk := dst[i*BlockQ5_KSize : (i+1)*BlockQ5_KSize]
		quantizeK45(x[i*QK_K:(i+1)*QK_K], blk[0:16], &L, 31)
		qh, qs := blk[16:48], blk[48:]
		clear(qh)
		for e := range QK_K {
			if L[e] > 15 {
				L[e] -= 16
				qh[e%32] |= 1 << (e / 32)
			}
		}
		for c := range 4 {
			for l := range 32 {
				qs[32*c+l] = L[64*c+l] | L[64*c+32+l]<<4
			}
		}
	}
}

// DequantizeRowQ5_K expands Q5_K super-blocks from src into y as ggml's dequantize_row_q5_K.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowQ5_K(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ5_K", len(y), QK_K, BlockQ5_KSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ5_KSize : (i+1)*BlockQ5_KSize]
		yb := y[i*QK_K : (i+1)*QK_K]
		d, dmin := getF16(blk[0:2]), getF16(blk[2:4])
		s, qh, qs := blk[4:16], blk[16:48], blk[48:]
		for j := range QK_K / 32 {
			sc, m := getScaleMinK4(j, s)
			d1, m1 := d*float32(sc), dmin*float32(m)
			c, shift := j/2, 4*(j%2)
			for l := range 32 {
				q := (qs[32*c+l] >> shift) & 0xF
				if qh[l]&(1<<j) != 0 {
					q += 16
				}
				yb[32*j+l] = float32(d1*float32(q)) - float32(m1)
			}
		}
	}
}
