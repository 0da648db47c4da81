// Package quant holds tandem's numeric storage formats: IEEE half floats (f16), bfloat16 (bf16),
// and ggml's legacy block-quantized formats Q4_0, Q4_1, Q8_0 and Q8_1, with the reference
// conversions to and from float32 and the reference block dot products.
//
// Every function here is bit-compatible with ggml's reference C code: the conversions in
// ggml-impl.h (f16, bf16), quantize_row_*_ref and dequantize_row_* in ggml-quants.c, and the
// generic (scalar) ggml_vec_dot_*_generic kernels of the CPU backend. Byte layouts are ggml's
// packed little-endian structs, so rows can be copied to and from GGUF files unchanged.
//
// Floating-point expressions are written with explicit float32 conversions wherever ggml rounds
// an intermediate result, so the Go compiler cannot fuse a multiply and an add into one FMA
// (which it may do on GOAMD64=v3 or arm64) and change the last bit.
//
// The row functions take their lengths from their slices and assume the caller (package core)
// has already validated them: a length that is not a whole number of blocks, or a destination
// that is too short, panics with a message naming the function and the lengths.
package quant

import (
	"fmt"
	"math"
)

// fp16Table maps every binary16 bit pattern to its float32 value (256 KiB), as ggml's
// ggml_table_f32_f16 does. It is filled once at package initialisation.
var fp16Table = func() *[1 << 16]float32 {
	var t [1 << 16]float32
	for i := range t {
		t[i] = fp16ToFP32Slow(uint16(i))
	}
	return &t
}()

// fp16ToFP32Slow decodes a binary16 value with integer arithmetic only. It is exact for every
// input; NaNs come back quiet (the float32 quiet bit set, payload shifted into the top of the
// mantissa), which is what x86 F16C (VCVTPH2PS) and ggml's table produce.
func fp16ToFP32Slow(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // inf or NaN
		if mant == 0 {
			return math.Float32frombits(sign | 0x7f800000)
		}
		return math.Float32frombits(sign | 0x7fc00000 | mant<<13)
	case exp != 0: // normal: rebias the exponent from 15 to 127
		return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
	case mant == 0: // signed zero
		return math.Float32frombits(sign)
	default: // subnormal half: a normal float32; shift the leading one up to the implicit bit
		e := uint32(113) // exponent of 2^-14, the subnormal scale, biased for float32
		for mant&0x400 == 0 {
			mant <<= 1
			e--
		}
		return math.Float32frombits(sign | e<<23 | (mant&0x3ff)<<13)
	}
}

// FP16ToFP32 returns the exact float32 value of the IEEE binary16 bit pattern h.
// Infinities and zeros keep their sign; a NaN stays a NaN with its sign and payload, made quiet
// (as x86 VCVTPH2PS does). It is a single lookup in a 65,536-entry table built at init.
func FP16ToFP32(h uint16) float32 {
	return fp16Table[h]
}

// FP32ToFP16 rounds f to the nearest IEEE binary16 value, ties to even, and returns its bits.
// Magnitudes that round beyond 65504 (that is, |f| >= 65520) become infinity; values below the
// smallest subnormal (2^-24) round to zero or to it, ties to even; signs are kept, zeros included.
// A NaN stays a NaN: sign kept, the quiet bit set and the top 9 payload bits kept. This matches
// x86 F16C VCVTPS2PH with rounding mode 0, which ggml uses on x86; ggml's portable fallback
// gives the same result for every non-NaN input (it returns 0x7E00 for every NaN).
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := b >> 23 & 0xff
	mant := b & 0x7fffff
	switch {
	case exp == 0xff: // inf or NaN
		if mant == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(mant>>13)
	case exp >= 143: // |f| >= 2^16: beyond every half, infinity
		return sign | 0x7c00
	case exp >= 113: // |f| >= 2^-14: a normal half, unless rounding carries into infinity
		h := uint16(exp-112)<<10 | uint16(mant>>13)
		rest := mant & 0x1fff
		if rest > 0x1000 || rest == 0x1000 && h&1 != 0 {
			h++ // a carry out of the mantissa bumps the exponent, 0x7bff+1 = inf
		}
		return sign | h
	case exp >= 102: // 2^-25 <= |f| < 2^-14: a subnormal half (or the smallest normal after rounding)
		m := mant | 0x800000    // the 24-bit significand; |f| = m * 2^(exp-150)
		shift := 126 - exp      // half subnormals count units of 2^-24: h = m >> (126-exp)
		h := uint16(m >> shift) // shift is 14..24
		rest := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rest > half || rest == half && h&1 != 0 {
			h++
		}
		return sign | h
	default: // |f| < 2^-25 (f32 subnormals included): rounds to a signed zero
		return sign
	}
}

// BF16ToFP32 returns the float32 value of the bfloat16 bit pattern h: its bits are the upper half
// of the float32, so the conversion is exact and keeps NaN payloads unchanged.
func BF16ToFP32(h uint16) float32 {
	return math.Float32frombits(uint32(h) << 16)
}

// FP32ToBF16 converts f to bfloat16 by ggml's rule (ggml_compute_fp32_to_bf16): a NaN keeps its
// sign and upper payload bits and is made quiet (bit 6 of the result set); everything else is
// rounded to nearest on the upper 16 bits, ties to even. Large finite values may round to
// infinity; subnormals are rounded, not flushed.
func FP32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7fff + (b >> 16 & 1)) >> 16)
}

// FP16ToFP32Row converts len(src) half floats into dst[:len(src)] with FP16ToFP32.
// dst must be at least as long as src (callers validate; a short dst panics).
func FP16ToFP32Row(src []uint16, dst []float32) {
	checkRow("FP16ToFP32Row", len(src), len(dst))
	dst = dst[:len(src)]
	t := fp16Table
	for i, h := range src {
		dst[i] = t[h]
	}
}

// FP32ToFP16Row converts len(src) float32 values into dst[:len(src)] with FP32ToFP16.
// dst must be at least as long as src (callers validate; a short dst panics).
func FP32ToFP16Row(src []float32, dst []uint16) {
	checkRow("FP32ToFP16Row", len(src), len(dst))
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = FP32ToFP16(f)
	}
}

// BF16ToFP32Row converts len(src) bfloat16 values into dst[:len(src)] with BF16ToFP32.
// dst must be at least as long as src (callers validate; a short dst panics).
func BF16ToFP32Row(src []uint16, dst []float32) {
	checkRow("BF16ToFP32Row", len(src), len(dst))
	dst = dst[:len(src)]
	for i, h := range src {
		dst[i] = math.Float32frombits(uint32(h) << 16)
	}
}

// FP32ToBF16Row converts len(src) float32 values into dst[:len(src)] with FP32ToBF16.
// dst must be at least as long as src (callers validate; a short dst panics).
func FP32ToBF16Row(src []float32, dst []uint16) {
	checkRow("FP32ToBF16Row", len(src), len(dst))
	dst = dst[:len(src)]
	for i, f := range src {
		dst[i] = FP32ToBF16(f)
	}
}

func checkRow(fn string, n, dst int) {
	if dst < n {
		panic(fmt.Sprintf("quant.%s: dst holds %d elements, src has %d", fn, dst, n))
	}
}
