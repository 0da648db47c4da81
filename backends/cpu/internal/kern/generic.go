package kern

import (
	"encoding/binary"
	"github.com/tandem-ml/tandem/core/quant"
	"math"
)

// This file holds the pure-Go twins of every kernel. They are always compiled: the
// dispatchers in kern_amd64.go fall back to them, kern_generic.go uses nothing else, and the
// tests compare the assembly against them.

var negInf = float32(math.Inf(-1))

func dotF32Go(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyF32Go(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

func scaleF32Go(a float32, x []float32) {
	for i := range x {
		x[i] *= a
	}
}

func addF32Go(dst, a, b []float32) {
	a = a[:len(dst)]
	b = b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func mulF32Go(dst, a, b []float32) {
	a = a[:len(dst)]
	b = b[:len(dst)]
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func maxF32Go(x []float32) float32 {
	m := negInf
	for _, v := range x {
		if v > m {
			m = v
		}
	}
	return m
}

func dotF16Go(x, y []uint16) float32 {
	y = y[:len(x)]
	var s0, s1 float32
	i := 0
	for ; i+2 <= len(x); i += 2 {
		s0 += f16ToF32Go(x[i]) * f16ToF32Go(y[i])
		s1 += f16ToF32Go(x[i+1]) * f16ToF32Go(y[i+1])
	}
	for ; i < len(x); i++ {
		s0 += f16ToF32Go(x[i]) * f16ToF32Go(y[i])
	}
	return s0 + s1
}

// dotF16F32Go is the dot product of a half row and a float32 row (SgemmF16A's mat-vec path).
func dotF16F32Go(x []uint16, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1 float32
	i := 0
	for ; i+2 <= len(x); i += 2 {
		s0 += f16ToF32Go(x[i]) * y[i]
		s1 += f16ToF32Go(x[i+1]) * y[i+1]
	}
	for ; i < len(x); i++ {
		s0 += f16ToF32Go(x[i]) * y[i]
	}
	return s0 + s1
}

func dotBF16Go(x, y []uint16) float32 {
	y = y[:len(x)]
	var s0, s1 float32
	i := 0
	for ; i+2 <= len(x); i += 2 {
		s0 += bf16ToF32(x[i]) * bf16ToF32(y[i])
		s1 += bf16ToF32(x[i+1]) * bf16ToF32(y[i+1])
	}
	for ; i < len(x); i++ {
		s0 += bf16ToF32(x[i]) * bf16ToF32(y[i])
	}
	return s0 + s1
}

// The half-float twins are core/quant's conversions, the reference (table lookup for f16 to f32,
// round to nearest even back; NaNs quiet with their payload kept, as VCVTPH2PS/VCVTPS2PH do).
func f16ToF32Go(h uint16) float32 { return quant.FP16ToFP32(h) }
func f32ToF16Go(f float32) uint16 { return quant.FP32ToFP16(f) }
func bf16ToF32(h uint16) float32  { return quant.BF16ToFP32(h) }

func f16ToF32RowGo(src []uint16, dst []float32) { quant.FP16ToFP32Row(src, dst[:len(src)]) }

func f32ToF16RowGo(src []float32, dst []uint16) { quant.FP32ToFP16Row(src, dst[:len(src)]) }

// The quantization and dot twins are core/quant's reference code, which is ggml's.
// anyNonFiniteGo reports whether x holds a NaN or an infinity (anyNonFinite's twin).
func anyNonFiniteGo(x []float32) bool {
	for _, v := range x {
		if math.Float32bits(v)&0x7f800000 == 0x7f800000 {
			return true
		}
	}
	return false
}

func quantizeRowQ8_0Go(x []float32, dst []byte) {
	nb := len(x) / QK
	quant.QuantizeRowQ8_0(x[:nb*QK], dst[:nb*BlockQ8_0Size])
}

func quantizeRowQ8_1Go(x []float32, dst []byte) {
	nb := len(x) / QK
	quant.QuantizeRowQ8_1(x[:nb*QK], dst[:nb*BlockQ8_1Size])
}

func halfAt(b []byte, off int) float32 {
	return f16ToF32Go(binary.LittleEndian.Uint16(b[off:]))
}

func dotQ8_0Q8_0Go(nb int, x, y []byte) float32 { return quant.DotQ8_0Q8_0(nb*QK, x, y) }

func dotQ4_0Q8_0Go(nb int, x, y []byte) float32 { return quant.DotQ4_0Q8_0(nb*QK, x, y) }

func dotQ4_1Q8_1Go(nb int, x, y []byte) float32 { return quant.DotQ4_1Q8_1(nb*QK, x, y) }

// exp: Cody-Waite reduction x = n*ln2 + r, |r| <= ln2/2, and SLEEF's expf polynomial
// (1 ulp); 2^n is applied as two factors so that subnormal results round only once.
const (
	expLog2e = 1.44269504088896341
	expLn2Hi = 0.693145751953125
	expLn2Lo = 1.428606765330187045e-06
	expC0    = 0.000198527617612853646278381
	expC1    = 0.00139304355252534151077271
	expC2    = 0.00833336077630519866943359
	expC3    = 0.0416664853692054748535156
	expC4    = 0.166666671633720397949219
	expC5    = 0.5
	expHi    = 89.0
	expLo    = -104.0
)

func expf(x float32) float32 {
	if x != x {
		return x
	}
	if x > expHi {
		x = expHi
	}
	if x < expLo {
		x = expLo
	}
	n := float32(math.RoundToEven(float64(x * expLog2e)))
	r := x - n*expLn2Hi
	r = r - n*expLn2Lo
	u := float32(expC0)
	u = u*r + expC1
	u = u*r + expC2
	u = u*r + expC3
	u = u*r + expC4
	u = u*r + expC5
	u = 1 + (r*r*u + r)
	ni := int32(n)
	e1 := ni >> 1
	e2 := ni - e1
	s1 := math.Float32frombits(uint32(e1+127) << 23)
	s2 := math.Float32frombits(uint32(e2+127) << 23)
	return u * s1 * s2
}

func expF32Go(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = expf(x)
	}
}

func expSumF32Go(dst, src []float32, sub float32) float32 {
	dst = dst[:len(src)]
	var s float32
	for i, x := range src {
		e := expf(x - sub)
		dst[i] = e
		s += e
	}
	return s
}

func siluF32Go(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = x / (1 + expf(-x))
	}
}

const (
	geluC1 = -1.5957691216057308            // -2*sqrt(2/pi)
	geluC2 = -1.5957691216057308 * 0.044715 // -2*sqrt(2/pi)*0.044715
)

func geluF32Go(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		z := x * (geluC1 + geluC2*(x*x))
		dst[i] = x / (1 + expf(z))
	}
}
