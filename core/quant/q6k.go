package quant

import "math"

// QuantizeRowQ6_K quantizes x into Q6_K super-blocks in dst, bit for bit as ggml's
// quantize_row_q6_K_ref. A super-block whose scales are all (near) zero is stored as zero bytes.
// len(x) must be a multiple of QK_K and dst must hold len(x)/QK_K*BlockQ6_KSize bytes.
// Callers validate; otherwise it panics.
func QuantizeRowQ6_K(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ6_K", len(x), QK_K, BlockQ6_KSize, len(dst), "dst")
	var L [QK_K]int8
	var scales [QK_K / 16]float32
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockQ6_KSize : (i+1)*BlockQ6_KSize]
		var maxScale, maxAbs float32
		for j := range QK_K / 16 {
			scales[j] = makeQxQuants(32, xb[16*j:16*j+16], L[16*j:16*j+16], 1)
			if a := abs32(scales[j]); a > maxAbs {
				maxAbs, maxScale = a, scales[j]
			}
		}
		if maxAbs < groupMaxEps {
			clear(blk)
			continue
		}
		ql, qh, sc := blk[0:128], blk[128:192], blk[192:208]
		iscale := -128 / maxScale
		putF16(blk[208:210], 1/iscale)
		for j := range QK_K / 16 {
			sc[j] = uint8(int8(min(127, nearestInt(iscale*scales[j]))))
		}
		d := getF16(blk[208:210])
		for j := range QK_K / 16 {
			dj := d * float32(int8(sc[j]))
			if dj == 0 {
				continue
			}
			for ii := range 16 {
				L[16*j+ii] = int8(clampInt(nearestInt(xb[16*j+ii]/dj), -32, 31) + 32)
			}
		}
		for h := range 2 {
			for l := range 32 {
				e := 128*h + l
				q1, q2, q3, q4 := uint8(L[e]), uint8(L[e+32]), uint8(L[e+64]), uint8(L[e+96])
				ql[64*h+l] = q1&0xF | (q3&0xF)<<4
				ql[64*h+32+l] = q2&0xF | (q4&0xF)<<4
				qh[32*h+l] = q1>>4 | (q2>>4)<<2 | (q3>>4)<<4 | (q4>>4)<<6
			}
		}
	}
}

// DequantizeRowQ6_K expands Q6_K super-blocks from src into y as ggml's dequantize_row_q6_K:
// element = (d·sc)·(code − 32). len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowQ6_K(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ6_K", len(y), QK_K, BlockQ6_KSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ6_KSize : (i+1)*BlockQ6_KSize]
		yb := y[i*QK_K : (i+1)*QK_K]
		d := getF16(blk[208:210])
		for e := range QK_K {
			yb[e] = float32(d*float32(int8(blk[192+e/16]))) * float32(q6kCode(blk, e)-32)
		}
	}
}

// q6kCode returns the 6-bit code (0 … 63) of element e of a Q6_K block.
func q6kCode(blk []byte, e int) int32 {
	h, k, l := e/128, (e%128)/32, e%32
	lo := blk[64*h+32*(k&1)+l] >> (4 * (k >> 1)) & 0xF
	hi := (blk[128+32*h+l] >> (2 * k)) & 3
	return int32(lo | hi<<4)
}

// QuantizeRowQ8_K quantizes x into Q8_K super-blocks in dst, bit for bit as ggml's
// quantize_row_q8_K_ref (also its x86 CPU from_float): d = 1/(−127/max), codes
// min(127, nearest_int(x·(−127/max))), bsums the sums of 16 codes. An all-zero block gets d = 0,
// zero codes and zero bsums (ggml leaves bsums untouched there). len(x) must be a multiple of
// QK_K and dst must hold len(x)/QK_K*BlockQ8_KSize bytes. Callers validate; otherwise it panics.
func QuantizeRowQ8_K(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ8_K", len(x), QK_K, BlockQ8_KSize, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK_K : (i+1)*QK_K]
		blk := dst[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		vmax, amax := maxWithSign(xb)
		if amax == 0 {
			clear(blk)
			continue
		}
		iscale := -127 / vmax
		qs := blk[4:260]
		for j, v := range xb {
			qs[j] = uint8(int8(min(127, nearestInt(iscale*v))))
		}
		for g := range QK_K / 16 {
			var sum int32
			for _, q := range qs[16*g : 16*g+16] {
				sum += int32(int8(q))
			}
			putU16(blk[260+2*g:], uint16(int16(sum)))
		}
		putU32(blk[0:4], math.Float32bits(1/iscale))
	}
}

// DequantizeRowQ8_K expands Q8_K super-blocks from src into y: element = d·q.
// len(y) must be a multiple of QK_K and src must hold the blocks.
func DequantizeRowQ8_K(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ8_K", len(y), QK_K, BlockQ8_KSize, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ8_KSize : (i+1)*BlockQ8_KSize]
		d := math.Float32frombits(getU32(blk[0:4]))
		for j := range QK_K {
			y[i*QK_K+j] = d * float32(int8(blk[4+j]))
		}
	}
}
