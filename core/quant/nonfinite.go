package quant

import (
	"encoding/binary"
	"math"
)

// Non-finite values in Q8 blocks. ggml leaves the quants of a block holding NaN or ±Inf
// unspecified, so a NaN activation could vanish when MUL_MAT quantizes its activations to Q8 (the
// dot came out finite), where a backend computing in float gives NaN. tandem's rule, which every
// Q8_0/Q8_1 quantizer here and in the CPU kernels follows:
//
//   - a block holding a NaN gets d = NaN (and s = NaN for Q8_1) and zero quants: every dot
//     product with it is NaN;
//   - otherwise a block holding ±Inf gets d = +Inf, quants ±127 where the values are ±Inf and 0
//     elsewhere (s = f16(d·Σq) for Q8_1): a dot product with a weight block is then
//     d_w·Inf·Σ(q_w·±127), which is ±Inf with the sign IEEE gives w·x for the infinite element,
//     NaN where that weight is 0 — as float arithmetic on the dequantized weights gives;
//   - blocks of finite values are untouched (bit for bit ggml's).
//
// Q4_0 and Q4_1 blocks cannot hold an infinity next to finite values, so any NaN or ±Inf makes
// the whole block NaN (d = NaN, and m = NaN for Q4_1; quants 8 for Q4_0, 0 for Q4_1): the weights
// dequantize to NaN instead of finite garbage. The Vulkan quantizers (shaders/rows.glsl) follow
// the same rules bit for bit.

const (
	f16NaN = 0x7e00
	f16Inf = 0x7c00
)

// anyNonFinite reports whether xb holds a NaN or an infinity (exponent bits all ones): branch-free,
// as it runs on every block MUL_MAT quantizes. Adding 1 to an all-ones exponent field carries into
// the sign bit; no other exponent does.
func anyNonFinite(xb *[QK8_0]float32) bool {
	var a0, a1, a2, a3 uint32 // independent chains
	for j := 0; j < QK8_0; j += 4 {
		a0 |= math.Float32bits(xb[j])&0x7f800000 + 0x00800000
		a1 |= math.Float32bits(xb[j+1])&0x7f800000 + 0x00800000
		a2 |= math.Float32bits(xb[j+2])&0x7f800000 + 0x00800000
		a3 |= math.Float32bits(xb[j+3])&0x7f800000 + 0x00800000
	}
	return (a0|a1|a2|a3)&0x80000000 != 0
}

// nonFinite reports whether xb holds a NaN, and whether it holds an infinity.
func nonFinite(xb []float32) (hasNaN, hasInf bool) {
	for _, v := range xb {
		if v-v != 0 { // NaN or ±Inf
			if v != v {
				return true, hasInf
			}
			hasInf = true
		}
	}
	return false, hasInf
}

// FixNonFiniteQ8 rewrites, by the rule above, the blocks of dst (Q8_0 when q81 is false, Q8_1
// otherwise) quantized from x whose values include NaN or ±Inf. len(x) must be a multiple of 32
// and dst must hold its blocks; otherwise it panics.
func FixNonFiniteQ8(x []float32, dst []byte, q81 bool) {
	size, qs := BlockQ8_0Size, 2
	if q81 {
		size, qs = BlockQ8_1Size, 4
	}
	nb := blocks("FixNonFiniteQ8", len(x), QK8_0, size, len(dst), "dst")
	for i := range nb {
		xb := x[i*QK8_0 : (i+1)*QK8_0]
		if !anyNonFinite((*[QK8_0]float32)(xb)) {
			continue
		}
		hasNaN, _ := nonFinite(xb)
		blk := dst[i*size : (i+1)*size]
		var sum int32
		for j, v := range xb {
			var q int8
			switch {
			case hasNaN:
			case math.IsInf(float64(v), 1):
				q = 127
			case math.IsInf(float64(v), -1):
				q = -127
			}
			blk[qs+j] = uint8(q)
			sum += int32(q)
		}
		d := uint16(f16Inf)
		if hasNaN {
			d = f16NaN
		}
		binary.LittleEndian.PutUint16(blk[0:2], d)
		if q81 {
			s := uint16(f16NaN)
			if !hasNaN {
				s = FP32ToFP16(float32(sum) * float32(math.Inf(1)))
			}
			binary.LittleEndian.PutUint16(blk[2:4], s)
		}
	}
}

// FixNonFiniteQ4 rewrites, by the rule above, the blocks of dst (Q4_0 when q41 is false, Q4_1
// otherwise) quantized from x whose values include NaN or ±Inf. len(x) must be a multiple of 32
// and dst must hold its blocks; otherwise it panics.
func FixNonFiniteQ4(x []float32, dst []byte, q41 bool) {
	size, qs, fill := BlockQ4_0Size, 2, byte(0x88)
	if q41 {
		size, qs, fill = BlockQ4_1Size, 4, 0
	}
	nb := blocks("FixNonFiniteQ4", len(x), QK4_0, size, len(dst), "dst")
	for i := range nb {
		if !anyNonFinite((*[QK4_0]float32)(x[i*QK4_0:])) {
			continue
		}
		blk := dst[i*size : (i+1)*size]
		for j := 0; j < qs; j += 2 {
			binary.LittleEndian.PutUint16(blk[j:], f16NaN)
		}
		for j := qs; j < size; j++ {
			blk[j] = fill
		}
	}
}
