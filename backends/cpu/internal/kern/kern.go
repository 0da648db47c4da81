// Package kern holds the CPU backend's hot kernels: f32/f16/bf16 dot products and
// elementwise ops, half-float row conversions, ggml-compatible Q8_0/Q8_1 quantization and
// the quantized dot products MUL_MAT uses, vectorized exp/silu/gelu, a multi-threaded packed
// SGEMM for ggml's MUL_MAT layout (Sgemm, SgemmF16A) and tiled quantized GEMMs with Q8_0
// activations (GemmQ4_0Q8_0, GemmQ8_0Q8_0), all run by a ggml-style team of workers, and the
// Q4_K, Q5_K, Q6_K, IQ4_XS (against Q8_K) and IQ4_NL (against Q8_0) dot products, whose integer
// parts also have AVX-512 VNNI forms (kquant.go).
//
// On amd64 every kernel has a hand-written Go assembly version (AVX2 + FMA + F16C, selected at
// run time with github.com/klauspost/cpuid) and a pure-Go twin with the same semantics. The
// twins are used on other architectures, on amd64 CPUs without those extensions, and in
// builds with the `purego` tag. Features reports which path is in use.
//
// Conventions shared by all functions:
//   - Lengths come from the first operand; the others must be at least as long (a shorter
//     one panics with "kern.<Func>: operand shorter than the first"; nothing is read or
//     written out of bounds).
//   - Quantized rows are byte slices in ggml's packed little-endian block layouts; n is the
//     element count and must be a multiple of 32 (QK).
//   - Results of asm and twin agree to float32 rounding of differently ordered sums; every
//     integer part (quantized block dot products, quantization itself) is bit-identical.
package kern

import "github.com/tandem-ml/tandem/core/quant"

// QK is the number of elements in one block of Q4_0, Q4_1, Q8_0 and Q8_1.
const QK = quant.QK8_0

// Block sizes in bytes of the quantized layouts: core/quant's (ggml's block_q4_0, block_q4_1,
// block_q8_0, block_q8_1).
const (
	BlockQ4_0Size = quant.BlockQ4_0Size
	BlockQ4_1Size = quant.BlockQ4_1Size
	BlockQ8_0Size = quant.BlockQ8_0Size
	BlockQ8_1Size = quant.BlockQ8_1Size
)

// Feature is one CPU capability as reported by Features.
type Feature struct {
	Name    string
	Enabled bool
}

// Features lists the CPU features this package looks at, like ggml_backend_cpu_get_features:
// the instruction-set extensions of the running CPU (amd64: SSE3, SSSE3, AVX, AVX_VNNI, AVX2,
// F16C, FMA, BMI2, AVX512F, AVX512BW, AVX512_VBMI, AVX512_VNNI, AVX512_BF16, AMX_INT8;
// arm64: NEON, ARM_FMA, FP16_VA, DOTPROD, MATMUL_INT8, SVE), then "ASM", which is enabled when
// the assembly kernels are in use (amd64 with AVX2, FMA and F16C, and no `purego` tag), and
// "PUREGO", enabled in builds with the purego tag.
func Features() []Feature {
	f := cpuFeatures()
	f = append(f, Feature{"ASM", useASM}, Feature{"PUREGO", purego})
	return f
}

// HasASM reports whether the assembly kernels are in use.
func HasASM() bool { return useASM }

// checkLen panics with a clear message when a second operand is shorter than the first.
func checkLen(op string, n, m int) {
	if m < n {
		panic("kern." + op + ": operand shorter than the first")
	}
}

// DotF32 returns Σ x[i]*y[i] over len(x) elements, accumulated in float32 (several partial
// sums, FMA).
func DotF32(x, y []float32) float32 {
	checkLen("DotF32", len(x), len(y))
	if len(x) == 0 {
		return 0
	}
	return dotF32(x, y[:len(x)])
}

// AxpyF32 computes y[i] += a*x[i] for i < len(x) (fused multiply-add in the asm path).
func AxpyF32(a float32, x, y []float32) {
	checkLen("AxpyF32", len(x), len(y))
	if len(x) == 0 {
		return
	}
	axpyF32(a, x, y[:len(x)])
}

// ScaleF32 computes x[i] *= a.
func ScaleF32(a float32, x []float32) {
	if len(x) == 0 {
		return
	}
	scaleF32(a, x)
}

// AddF32 computes dst[i] = a[i] + b[i] for i < len(dst). dst may alias a or b exactly.
func AddF32(dst, a, b []float32) {
	checkLen("AddF32", len(dst), len(a))
	checkLen("AddF32", len(dst), len(b))
	if len(dst) == 0 {
		return
	}
	addF32(dst, a[:len(dst)], b[:len(dst)])
}

// MulF32 computes dst[i] = a[i] * b[i] for i < len(dst). dst may alias a or b exactly.
func MulF32(dst, a, b []float32) {
	checkLen("MulF32", len(dst), len(a))
	checkLen("MulF32", len(dst), len(b))
	if len(dst) == 0 {
		return
	}
	mulF32(dst, a[:len(dst)], b[:len(dst)])
}

// MaxF32 returns the largest element of x, or -Inf for an empty x. The result for an x
// holding NaNs is unspecified.
func MaxF32(x []float32) float32 {
	if len(x) == 0 {
		return negInf
	}
	return maxF32(x)
}

// DotF16 returns Σ x[i]*y[i] over len(x) IEEE binary16 values (bits in uint16), converting
// to float32 and accumulating in float32.
func DotF16(x, y []uint16) float32 {
	checkLen("DotF16", len(x), len(y))
	if len(x) == 0 {
		return 0
	}
	return dotF16(x, y[:len(x)])
}

// DotBF16 returns Σ x[i]*y[i] over len(x) bfloat16 values (the top 16 bits of a float32),
// accumulated in float32.
func DotBF16(x, y []uint16) float32 {
	checkLen("DotBF16", len(x), len(y))
	if len(x) == 0 {
		return 0
	}
	return dotBF16(x, y[:len(x)])
}

// F16ToF32Row converts len(src) IEEE halves to float32 (exact; subnormals kept; a NaN keeps
// its sign and payload and comes out quiet, as VCVTPH2PS does).
func F16ToF32Row(src []uint16, dst []float32) {
	checkLen("F16ToF32Row", len(src), len(dst))
	if len(src) == 0 {
		return
	}
	f16ToF32Row(src, dst[:len(src)])
}

// F32ToF16Row converts len(src) float32 to IEEE halves with round-to-nearest-even,
// overflow to ±Inf, gradual underflow to half subnormals and ±0; a NaN keeps its sign and the
// top 10 bits of its payload and comes out quiet (as VCVTPS2PH with imm 0 does).
func F32ToF16Row(src []float32, dst []uint16) {
	checkLen("F32ToF16Row", len(src), len(dst))
	if len(src) == 0 {
		return
	}
	f32ToF16Row(src, dst[:len(src)])
}

// F16ToF32 converts one IEEE half to float32 (same rules as F16ToF32Row).
func F16ToF32(h uint16) float32 { return f16ToF32Go(h) }

func checkQ(op string, n int, x []byte, xs int, y []byte, ys int) {
	if n < 0 || n%QK != 0 {
		panic("kern." + op + ": n must be a non-negative multiple of 32")
	}
	nb := n / QK
	if len(x) < nb*xs || len(y) < nb*ys {
		panic("kern." + op + ": row shorter than n elements")
	}
}

// AnyNonFinite reports whether x holds a NaN or an infinity.
func AnyNonFinite(x []float32) bool { return anyNonFinite(x) }

// QuantizeRowQ8_0 quantizes len(x) floats (a multiple of 32) into Q8_0 blocks in dst
// (34 bytes per block), bit-identical to ggml's quantize_row_q8_0_ref: per block
// d = amax/127, id = 1/d (0 when d == 0), q = (int8)roundf(x*id) in float32 arithmetic
// (half away from zero; a non-finite or out-of-range product converts as x86 cvttss2si does,
// i.e. to the low byte of 0x80000000 = 0), d stored as f16 (round to nearest even).
// Blocks holding NaN or ±Inf follow core/quant's rule (quant.FixNonFiniteQ8): a NaN makes the
// block's d NaN, so every dot product with the row is NaN.
func QuantizeRowQ8_0(x []float32, dst []byte) {
	checkQ("QuantizeRowQ8_0", len(x), dst, BlockQ8_0Size, nil, 0)
	if len(x) == 0 {
		return
	}
	quantizeRowQ8_0(x, dst[:len(x)/QK*BlockQ8_0Size])
}

// QuantizeRowQ8_1 quantizes like QuantizeRowQ8_0 into Q8_1 blocks (36 bytes) and stores
// s = f16(float32(sum of the block's int8 values) * d), with the float32 d (not the f16
// rounded one), exactly as ggml's quantize_row_q8_1_ref; non-finite blocks as QuantizeRowQ8_0.
func QuantizeRowQ8_1(x []float32, dst []byte) {
	checkQ("QuantizeRowQ8_1", len(x), dst, BlockQ8_1Size, nil, 0)
	if len(x) == 0 {
		return
	}
	quantizeRowQ8_1(x, dst[:len(x)/QK*BlockQ8_1Size])
}

// DotQ8_0Q8_0 returns the dot product of n elements of two Q8_0 rows:
// Σ_blocks f32(dx)*f32(dy) * Σ_j qx[j]*qy[j]. The per-block integer sums are exact; the
// float accumulation order differs between asm and twin. Quants must lie in [-127, 127]
// (as QuantizeRowQ8_0 produces): like ggml's AVX2 kernel, the asm path uses sign-folding
// and a -128 in x meeting a -128 in y gives a wrong sign.
func DotQ8_0Q8_0(n int, x, y []byte) float32 {
	checkQ("DotQ8_0Q8_0", n, x, BlockQ8_0Size, y, BlockQ8_0Size)
	if n == 0 {
		return 0
	}
	return dotQ8_0Q8_0(n/QK, x, y)
}

// DotQ4_0Q8_0 returns the dot product of n elements of a Q4_0 row x and a Q8_0 row y:
// Σ_blocks f32(dx)*f32(dy) * Σ_j (nib_j-8)*qy[j] (low nibble of byte j is element j, high
// nibble element j+16).
func DotQ4_0Q8_0(n int, x, y []byte) float32 {
	checkQ("DotQ4_0Q8_0", n, x, BlockQ4_0Size, y, BlockQ8_0Size)
	if n == 0 {
		return 0
	}
	return dotQ4_0Q8_0(n/QK, x, y)
}

// DotQ4_1Q8_1 returns the dot product of n elements of a Q4_1 row x and a Q8_1 row y:
// Σ_blocks f32(dx)*f32(dy) * Σ_j nib_j*qy[j] + f32(mx)*f32(sy).
func DotQ4_1Q8_1(n int, x, y []byte) float32 {
	checkQ("DotQ4_1Q8_1", n, x, BlockQ4_1Size, y, BlockQ8_1Size)
	if n == 0 {
		return 0
	}
	return dotQ4_1Q8_1(n/QK, x, y)
}

// ExpF32 computes dst[i] = exp(src[i]) for i < len(src). The relative error against math.Exp
// is below 1e-7 (under 1 ulp; 7.9e-8 measured over [-87.3, 88.7] in steps of 2^-12, see
// TestExpAccuracy), subnormal results are within 1 subnormal ulp; overflow gives +Inf,
// results below the smallest subnormal give 0, NaN stays NaN. dst may alias src exactly.
func ExpF32(dst, src []float32) {
	checkLen("ExpF32", len(src), len(dst))
	if len(src) == 0 {
		return
	}
	expF32(dst[:len(src)], src)
}

// ExpSumF32 computes dst[i] = exp(src[i] - sub) and returns Σ dst[i] (float32 partial sums):
// the inner step of soft_max with sub = max(src). dst may alias src exactly.
func ExpSumF32(dst, src []float32, sub float32) float32 {
	checkLen("ExpSumF32", len(src), len(dst))
	if len(src) == 0 {
		return 0
	}
	return expSumF32(dst[:len(src)], src, sub)
}

// SiluF32 computes dst[i] = x/(1+exp(-x)) for x = src[i]. dst may alias src exactly. For
// x < -88.7 (exact results under 3e-37 in magnitude) the result is -0.
func SiluF32(dst, src []float32) {
	checkLen("SiluF32", len(src), len(dst))
	if len(src) == 0 {
		return
	}
	siluF32(dst[:len(src)], src)
}

// GeluF32 computes ggml's tanh-approximated GELU,
// dst[i] = 0.5*x*(1+tanh(sqrt(2/pi)*x*(1+0.044715*x²))), evaluated in the equivalent and
// cancellation-free form x/(1+exp(-2*sqrt(2/pi)*x*(1+0.044715*x²))). (ggml's CPU backend by
// default reads GELU from an f16 table; this is its exact-formula variant.) For x below
// about -10 (exact results under 3e-38 in magnitude) the result is -0.
func GeluF32(dst, src []float32) {
	checkLen("GeluF32", len(src), len(dst))
	if len(src) == 0 {
		return
	}
	geluF32(dst[:len(src)], src)
}
