// Package quant holds tandem's numeric storage formats: IEEE half floats (f16), bfloat16 (bf16),
// ggml's legacy block-quantized formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0 and Q8_1, the K-quants
// Q2_K … Q6_K and Q8_K (super-blocks of 256) and the non-linear IQ4_NL and IQ4_XS, with the
// reference conversions to and from float32 and the reference block dot products (without an
// importance matrix). testdata/ holds golden outputs of ggml's C code that the tests compare with.
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
// gives the same result for every non-NaN input (for a NaN it returns 0x7E00 with the sign).
func FP32ToFP16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	if a-0x38800000 < 0x47800000-0x38800000 {
		// 2^-14 <= |f| < 2^16, the common case: a normal half, or infinity once rounding
		// carries past 65504. Round to nearest even on the 13 dropped bits, branch-free (the
		// carry ripples into the exponent), then rebias the exponent from 127 to 15.
		return sign | uint16((a+0x0fff+(a>>13&1))>>13-112<<10)
	}
	return sign | fp32ToFP16Rare(a)
}

// fp32ToFP16Rare converts the magnitude bits a of a float32 outside [2^-14, 2^16): NaN, infinity
// and overflow, half subnormals, and values that round to zero.
func fp32ToFP16Rare(a uint32) uint16 {
	switch {
	case a > 0x7f800000: // NaN: quiet, keep the top 9 payload bits
		return 0x7e00 | uint16(a>>13&0x3ff)
	case a >= 0x47800000: // |f| >= 2^16 or infinity
		return 0x7c00
	case a >= 0x33000000: // 2^-25 <= |f| < 2^-14: a subnormal half (or 2^-14 after rounding)
		exp := a >> 23
		m := a&0x7fffff | 0x800000 // the 24-bit significand; |f| = m * 2^(exp-150)
		shift := 126 - exp         // half subnormals count units of 2^-24; shift is 14..24
		return uint16((m + (1<<(shift-1) - 1) + (m >> shift & 1)) >> shift)
	default: // |f| < 2^-25, float32 subnormals included: rounds to zero
		return 0
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
