package quant

import "math"

// MXFP4, NVFP4 and Q1_0, bit-compatible with ggml-common.h of ggml d99724f2.
//
// MXFP4 and NVFP4 store 4-bit E2M1 codes (sign, two exponent bits, one mantissa bit: the values
// 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives). ggml keeps the code table doubled (KValuesFP4,
// integers) and halves the scales instead, so a code q with block scale s stands for
// KValuesFP4[q]·(s/2). MXFP4 has one E8M0 scale (a bare power of two) per 32 values; NVFP4 has
// one UE4M3 scale (an unsigned 8-bit float) per 16 values, four of them per 64-value block. Q1_0
// keeps one sign bit per value and one f16 magnitude per 128 values.
const (
	// QK_MXFP4 is the number of elements in an MXFP4 block.
	QK_MXFP4 = 32
	// BlockMXFP4Size is the byte size of block_mxfp4: one E8M0 exponent byte e, then 16 bytes of
	// codes (element j in the low nibble of byte j, element j+16 in its high nibble).
	BlockMXFP4Size = 1 + QK_MXFP4/2

	// QK_NVFP4 is the number of elements in an NVFP4 block.
	QK_NVFP4 = 64
	// QK_NVFP4Sub is the number of elements sharing one UE4M3 scale of an NVFP4 block.
	QK_NVFP4Sub = 16
	// BlockNVFP4Size is the byte size of block_nvfp4: four UE4M3 scale bytes (one per 16-element
	// sub-block), then 32 bytes of codes, 8 per sub-block (sub-block element j in the low nibble
	// of its byte j, element j+8 in the high nibble).
	BlockNVFP4Size = QK_NVFP4/QK_NVFP4Sub + QK_NVFP4/2

	// QK1_0 is the number of elements in a Q1_0 block.
	QK1_0 = 128
	// BlockQ1_0Size is the byte size of block_q1_0: f16 d, then 16 bytes of sign bits (element j
	// is bit j%8 of byte j/8; a set bit stands for +d, a clear one for −d).
	BlockQ1_0Size = 2 + QK1_0/8
)

// KValuesFP4 is ggml's kvalues_mxfp4: twice the E2M1 value of each 4-bit code (codes 0 … 7 are
// 0, 0.5, 1, 1.5, 2, 3, 4, 6; codes 8 … 15 their negatives, code 8 a negative zero, here 0).
var KValuesFP4 = [16]int8{0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12}

// E8M0ToFP32Half returns half the value of the E8M0 scale e, 2^(e−128), as ggml's
// ggml_e8m0_to_fp32_half (e 0 and 1 give the subnormals 2^−128 and 2^−127; e 255, a NaN in the
// OCP format, gives 2^127 as ggml's).
func E8M0ToFP32Half(e uint8) float32 {
	if e < 2 {
		return math.Float32frombits(0x00200000 << e)
	}
	return math.Float32frombits(uint32(e-1) << 23)
}

// ue4m3Half holds UE4M3ToFP32Half of every byte.
var ue4m3Half = func() (t [256]float32) {
	for i := range t {
		t[i] = ue4m3Decode(uint8(i))
	}
	return t
}()

// ue4m3Decode is the UE4M3 decoding of ggml_ue4m3_to_fp32 (4 exponent bits of bias 7, 3 mantissa
// bits, the top bit ignored; 0 and 0x7F are zero), halved. Every value is exact in float32.
func ue4m3Decode(x uint8) float32 {
	if x == 0 || x == 0x7F {
		return 0
	}
	exp, man := int(x>>3)&0xF, float64(x&7)
	var raw float64
	if exp == 0 {
		raw = math.Ldexp(man, -9)
	} else {
		raw = math.Ldexp(1+man/8, exp-7)
	}
	return float32(raw * 0.5)
}

// UE4M3ToFP32Half returns half the value of the UE4M3 scale byte x, as ggml's ggml_ue4m3_to_fp32
// (which halves to match the doubled KValuesFP4): exponent (x>>3)&15 with bias 7, mantissa x&7,
// subnormal for exponent 0; bytes 0 and 0x7F give 0. Bit 7 is ignored.
func UE4M3ToFP32Half(x uint8) float32 { return ue4m3Half[x] }

// FP32ToUE4M3 rounds a scale to UE4M3 as ggml's ggml_fp32_to_ue4m3: 0 for x ≤ 0 and NaN, values
// above 448 clamp to 448 (0x7E), normal values round on the first dropped mantissa bit (halves
// away from zero), subnormals (below 2^−6) to the nearest multiple of 2^−9, 0 below 2^−10.
func FP32ToUE4M3(x float32) uint8 {
	if !(x > 0) {
		return 0
	}
	if x > 448 {
		x = 448
	}
	bits := math.Float32bits(x)
	exp := int(bits>>23&0xFF) - 127 + 7
	man := int(bits >> 20 & 7)
	if exp <= 0 {
		m := int(float32(x*512) + 0.5)
		if m > 7 {
			m = 7
		}
		if m < 1 {
			return 0
		}
		return uint8(m)
	}
	if exp >= 15 {
		return 0x7E
	}
	man += int(bits >> 19 & 1)
	if man > 7 {
		man = 0
		exp++
		if exp >= 15 {
			return 0x7E
		}
	}
	return uint8(exp<<3 | man)
}

// bestIndexFP4 is ggml's best_index_mxfp4: the code whose value KValuesFP4[i]·d is closest to x,
// the first of equals (so 0 before −0, and code 0 for a NaN x).
func bestIndexFP4(x, d float32) uint8 {
	best := uint8(0)
	bestErr := abs32(x)
	for i := 1; i < 16; i++ {
		if err := abs32(float32(float32(KValuesFP4[i])*d) - x); err < bestErr {
			best, bestErr = uint8(i), err
		}
	}
	return best
}

// mxfp4Exponent is the E8M0 scale ggml's quantize_row_mxfp4_ref picks for a block whose largest
// magnitude is amax: floor(log2(amax)) − 2 + 127 (so that amax/2^(e−127) falls in [4, 8), the
// largest codes), 0 for an all-zero block. As in ggml (built with gcc on x86-64) the float result
// is truncated to a 32-bit integer and then to its low byte: blocks whose largest magnitude is
// below 2^−125 wrap around to huge scales, and an infinite one gives 0.
func mxfp4Exponent(amax float32) uint8 {
	if !(amax > 0) {
		return 0
	}
	if math.IsInf(float64(amax), 0) {
		return 0 // cvttss2si's 0x80000000
	}
	l := float32(math.Log2(float64(amax)))
	f := float32(math.Floor(float64(l))) - 2 + 127
	return uint8(int32(f))
}

// QuantizeRowMXFP4 quantizes x into MXFP4 blocks in dst as ggml's quantize_row_mxfp4_ref (also the
// CPU's from_float): each block's exponent from its largest magnitude (mxfp4Exponent), each value
// to the nearest code at half that scale. len(x) must be a multiple of QK_MXFP4 and dst must hold
// len(x)/QK_MXFP4*BlockMXFP4Size bytes; otherwise it panics.
func QuantizeRowMXFP4(x []float32, dst []byte) {
	nb := blocks("QuantizeRowMXFP4", len(x), QK_MXFP4, BlockMXFP4Size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK_MXFP4 : (i+1)*QK_MXFP4]
		blk := dst[i*BlockMXFP4Size : (i+1)*BlockMXFP4Size]
		var amax float32
		for _, v := range xb {
			if a := abs32(v); amax < a {
				amax = a
			}
		}
		e := mxfp4Exponent(amax)
		d := E8M0ToFP32Half(e)
		blk[0] = e
		for j := range QK_MXFP4 / 2 {
			blk[1+j] = bestIndexFP4(xb[j], d) | bestIndexFP4(xb[j+QK_MXFP4/2], d)<<4
		}
	}
}

// DequantizeRowMXFP4 expands MXFP4 blocks from src into y as ggml's dequantize_row_mxfp4:
// element = KValuesFP4[code]·E8M0ToFP32Half(e). len(y) must be a multiple of QK_MXFP4 and src
// must hold the blocks.
func DequantizeRowMXFP4(src []byte, y []float32) {
	nb := blocks("DequantizeRowMXFP4", len(y), QK_MXFP4, BlockMXFP4Size, len(src), "src")
	for i := range nb {
		blk := src[i*BlockMXFP4Size : (i+1)*BlockMXFP4Size]
		d := E8M0ToFP32Half(blk[0])
		yb := y[i*QK_MXFP4 : (i+1)*QK_MXFP4]
		for j := range QK_MXFP4 / 2 {
			q := blk[1+j]
			yb[j] = float32(KValuesFP4[q&0xF]) * d
			yb[j+QK_MXFP4/2] = float32(KValuesFP4[q>>4]) * d
		}
	}
}

// QuantizeRowNVFP4 quantizes x into NVFP4 blocks in dst as ggml's quantize_row_nvfp4_ref (also the
// CPU's from_float): each 16-value sub-block's scale is FP32ToUE4M3(amax/6), each value the
// nearest code at that (halved) scale. len(x) must be a multiple of QK_NVFP4 and dst must hold
// len(x)/QK_NVFP4*BlockNVFP4Size bytes; otherwise it panics.
func QuantizeRowNVFP4(x []float32, dst []byte) {
	nb := blocks("QuantizeRowNVFP4", len(x), QK_NVFP4, BlockNVFP4Size, len(dst), "dst")
	const nsub, half = QK_NVFP4 / QK_NVFP4Sub, QK_NVFP4Sub / 2
	for i := range nb {
		blk := dst[i*BlockNVFP4Size : (i+1)*BlockNVFP4Size]
		for s := range nsub {
			xb := x[i*QK_NVFP4+s*QK_NVFP4Sub : i*QK_NVFP4+(s+1)*QK_NVFP4Sub]
			var amax float32
			for _, v := range xb {
				if a := abs32(v); amax < a {
					amax = a
				}
			}
			ue := FP32ToUE4M3(amax / 6)
			blk[s] = ue
			d := UE4M3ToFP32Half(ue)
			for j := range half {
				blk[nsub+s*half+j] = bestIndexFP4(xb[j], d) | bestIndexFP4(xb[j+half], d)<<4
			}
		}
	}
}

// DequantizeRowNVFP4 expands NVFP4 blocks from src into y as ggml's dequantize_row_nvfp4:
// element = KValuesFP4[code]·UE4M3ToFP32Half(scale of its sub-block). len(y) must be a multiple
// of QK_NVFP4 and src must hold the blocks.
func DequantizeRowNVFP4(src []byte, y []float32) {
	nb := blocks("DequantizeRowNVFP4", len(y), QK_NVFP4, BlockNVFP4Size, len(src), "src")
	const nsub, half = QK_NVFP4 / QK_NVFP4Sub, QK_NVFP4Sub / 2
	for i := range nb {
		blk := src[i*BlockNVFP4Size : (i+1)*BlockNVFP4Size]
		for s := range nsub {
			d := UE4M3ToFP32Half(blk[s])
			yb := y[i*QK_NVFP4+s*QK_NVFP4Sub : i*QK_NVFP4+(s+1)*QK_NVFP4Sub]
			for j := range half {
				q := blk[nsub+s*half+j]
				yb[j] = float32(KValuesFP4[q&0xF]) * d
				yb[j+half] = float32(KValuesFP4[q>>4]) * d
			}
		}
	}
}

// QuantizeRowQ1_0 quantizes x into Q1_0 blocks in dst as ggml's quantize_row_q1_0_ref (also the
// CPU's from_float): d is the mean magnitude of the block (summed in order in float32), each bit
// set where the value is ≥ 0 (−0 included, NaN not). len(x) must be a multiple of QK1_0 and dst
// must hold len(x)/QK1_0*BlockQ1_0Size bytes; otherwise it panics.
func QuantizeRowQ1_0(x []float32, dst []byte) {
	nb := blocks("QuantizeRowQ1_0", len(x), QK1_0, BlockQ1_0Size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK1_0 : (i+1)*QK1_0]
		blk := dst[i*BlockQ1_0Size : (i+1)*BlockQ1_0Size]
		var sum float32
		for _, v := range xb {
			sum += abs32(v)
		}
		putF16(blk[0:2], sum/QK1_0)
		for j := range QK1_0 / 8 {
			var b uint8
			for k, v := range xb[8*j : 8*j+8] {
				if v >= 0 {
					b |= 1 << k
				}
			}
			blk[2+j] = b
		}
	}
}

// DequantizeRowQ1_0 expands Q1_0 blocks from src into y as ggml's dequantize_row_q1_0: +d where
// an element's bit is set, −d where it is clear. len(y) must be a multiple of QK1_0 and src must
// hold the blocks.
func DequantizeRowQ1_0(src []byte, y []float32) {
	nb := blocks("DequantizeRowQ1_0", len(y), QK1_0, BlockQ1_0Size, len(src), "src")
	for i := range nb {
		blk := src[i*BlockQ1_0Size : (i+1)*BlockQ1_0Size]
		d := getF16(blk[0:2])
		pm := [2]float32{-d, d}
		yb := y[i*QK1_0 : (i+1)*QK1_0]
		for j := range QK1_0 {
			yb[j] = pm[blk[2+j/8]>>(j%8)&1]
		}
	}
}

// DotMXFP4Q8_0 is ggml_vec_dot_mxfp4_q8_0 (generic): per block
// sumf += (d_y·E8M0ToFP32Half(e))·Σ KValuesFP4[code]·q_y, in ggml's float order.
func DotMXFP4Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotMXFP4Q8_0", n, QK_MXFP4, BlockMXFP4Size, len(x), "x")
	blocks("DotMXFP4Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	kv := &KValuesFP4
	var sumf float32
	for i := range nb {
		bx := x[i*BlockMXFP4Size : (i+1)*BlockMXFP4Size]
		by := y[i*BlockQ8_0Size : (i+1)*BlockQ8_0Size]
		codes, q := (*[QK_MXFP4 / 2]byte)(bx[1:]), (*[QK8_0]byte)(by[2:])
		var sumi int32
		for j := range QK_MXFP4 / 2 {
			c := codes[j]
			sumi += int32(int8(q[j]))*int32(kv[c&0xF]) + int32(int8(q[j+16]))*int32(kv[c>>4])
		}
		d := f16le(by[0], by[1]) * E8M0ToFP32Half(bx[0])
		sumf += float32(d * float32(sumi))
	}
	return sumf
}

// DotNVFP4Q8_0 is ggml_vec_dot_nvfp4_q8_0 (generic): each NVFP4 block meets two Q8_0 blocks; per
// 16-value sub-block sumf += d_y·UE4M3ToFP32Half(scale)·Σ KValuesFP4[code]·q_y, in ggml's float
// order.
func DotNVFP4Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotNVFP4Q8_0", n, QK_NVFP4, BlockNVFP4Size, len(x), "x")
	blocks("DotNVFP4Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	const nsub, half = QK_NVFP4 / QK_NVFP4Sub, QK_NVFP4Sub / 2
	kv := &KValuesFP4
	var sumf float32
	for i := range nb {
		bx := (*[BlockNVFP4Size]byte)(x[i*BlockNVFP4Size:])
		for s := range nsub {
			by := (*[BlockQ8_0Size]byte)(y[(2*i+s/2)*BlockQ8_0Size:])
			q := (*[QK_NVFP4Sub]byte)(by[2+(s%2)*QK_NVFP4Sub:])
			codes := (*[half]byte)(bx[nsub+s*half:])
			var sumi int32
			for j := range half {
				c := codes[j]
				sumi += int32(int8(q[j]))*int32(kv[c&0xF]) + int32(int8(q[j+half]))*int32(kv[c>>4])
			}
			dd := f16le(by[0], by[1]) * UE4M3ToFP32Half(bx[s])
			sumf += float32(dd * float32(sumi))
		}
	}
	return sumf
}

// DotQ1_0Q8_0 is ggml_vec_dot_q1_0_q8_0 (generic): each Q1_0 block meets four Q8_0 blocks; per
// Q8_0 block the signed sum Σ ±q_y (+ where the bit is set) is scaled by d_y, the four summed in
// float32 and scaled by the Q1_0 block's d, in ggml's float order.
func DotQ1_0Q8_0(n int, x, y []byte) float32 {
	nb := blocks("DotQ1_0Q8_0", n, QK1_0, BlockQ1_0Size, len(x), "x")
	blocks("DotQ1_0Q8_0", n, QK8_0, BlockQ8_0Size, len(y), "y")
	var sumf float32
	for i := range nb {
		bx := x[i*BlockQ1_0Size : (i+1)*BlockQ1_0Size]
		var sumi float32
		for k := range 4 {
			by := (*[BlockQ8_0Size]byte)(y[(4*i+k)*BlockQ8_0Size:])
			q := (*[QK8_0]byte)(by[2:])
			bits := getU32(bx[2+4*k:]) // element j of this Q8_0 block is bit j
			// Σ (bit ? q : −q) = 2·Σ_{bit set} q − Σ q.
			var all, set int32
			for j := range QK8_0 {
				v := int32(int8(q[j]))
				all += v
				set += v & -int32(bits>>j&1)
			}
			sumi += float32(f16le(by[0], by[1]) * float32(2*set-all))
		}
		sumf += float32(getF16(bx[0:2]) * sumi)
	}
	return sumf
}
