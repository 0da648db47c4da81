//go:build !amd64 || purego

package kern

import (
	"runtime"

	"github.com/klauspost/cpuid/v2"
)

// useASM and use512 are always false here: only the pure-Go twins are compiled in.
var (
	useASM   = false
	use512   = false
	gemm512  = false
	useVNNI  = false
	hasVBMI  = false
	detected = SetGeneric

	useAVXVNNI = false
	useBF16    = false
	gemmPairs  = false
	_          = capFromEnv() // an invalid TANDEM_CPU_KERNELS is still reported
)

// setRuns: only the pure-Go set is compiled in.
func setRuns(s KernelSet) bool { return s == SetGeneric }

const purego = runtime.GOARCH == "amd64" // on amd64 this file is only built with the tag

func cpuFeatures() []Feature {
	c := &cpuid.CPU
	if runtime.GOARCH == "arm64" {
		return []Feature{
			{"NEON", c.Supports(cpuid.ASIMD)},
			{"ARM_FMA", c.Supports(cpuid.ASIMD)},
			{"FP16_VA", c.Supports(cpuid.ASIMDHP)},
			{"DOTPROD", c.Supports(cpuid.ASIMDDP)},
			{"MATMUL_INT8", c.Supports(cpuid.I8MM)},
			{"SVE", c.Supports(cpuid.SVE)},
		}
	}
	return []Feature{
		{"SSE3", c.Supports(cpuid.SSE3)},
		{"SSSE3", c.Supports(cpuid.SSSE3)},
		{"AVX", c.Supports(cpuid.AVX)},
		{"AVX_VNNI", c.Supports(cpuid.AVXVNNI)},
		{"AVX2", c.Supports(cpuid.AVX2)},
		{"F16C", c.Supports(cpuid.F16C)},
		{"FMA", c.Supports(cpuid.FMA3)},
		{"BMI2", c.Supports(cpuid.BMI2)},
		{"AVX512F", c.Supports(cpuid.AVX512F)},
		{"AVX512BW", c.Supports(cpuid.AVX512BW)},
		{"AVX512_VBMI", c.Supports(cpuid.AVX512VBMI)},
		{"AVX512_VNNI", c.Supports(cpuid.AVX512VNNI)},
		{"AVX512_BF16", c.Supports(cpuid.AVX512BF16)},
		{"AMX_INT8", c.Supports(cpuid.AMXINT8)},
	}
}

func dotF32(x, y []float32) float32                     { return dotF32Go(x, y) }
func axpyF32(a float32, x, y []float32)                 { axpyF32Go(a, x, y) }
func scaleF32(a float32, x []float32)                   { scaleF32Go(a, x) }
func addF32(dst, a, b []float32)                        { addF32Go(dst, a, b) }
func mulF32(dst, a, b []float32)                        { mulF32Go(dst, a, b) }
func maxF32(x []float32) float32                        { return maxF32Go(x) }
func dotF16(x, y []uint16) float32                      { return dotF16Go(x, y) }
func dotF16F32(x []uint16, y []float32) float32         { return dotF16F32Go(x, y) }
func dotBF16(x, y []uint16) float32                     { return dotBF16Go(x, y) }
func f16ToF32Row(src []uint16, dst []float32)           { f16ToF32RowGo(src, dst) }
func f32ToF16Row(src []float32, dst []uint16)           { f32ToF16RowGo(src, dst) }
func quantizeRowQ8_0(x []float32, dst []byte)           { quantizeRowQ8_0Go(x, dst) }
func quantizeRowQ8_1(x []float32, dst []byte)           { quantizeRowQ8_1Go(x, dst) }
func dotQ8_0Q8_0(nb int, x, y []byte) float32           { return dotQ8_0Q8_0Go(nb, x, y) }
func dotQ4_0Q8_0(nb int, x, y []byte) float32           { return dotQ4_0Q8_0Go(nb, x, y) }
func dotQ4_1Q8_1(nb int, x, y []byte) float32           { return dotQ4_1Q8_1Go(nb, x, y) }
func expF32(dst, src []float32)                         { expF32Go(dst, src) }
func expSumF32(dst, src []float32, sub float32) float32 { return expSumF32Go(dst, src, sub) }
func siluF32(dst, src []float32)                        { siluF32Go(dst, src) }
func geluF32(dst, src []float32)                        { geluF32Go(dst, src) }

func kernel6x32(kb int, ap, bp, c []float32, ldc int, accum bool) bool { return false }

func kernel12x32(kb int, ap, bp []float32, bs int, c []float32, ldc int, accum bool) bool {
	return false
}

func kernel6x16(kb int, ap, bp, c []float32, ldc int, accum bool) {
	kernel6x16Go(kb, ap, bp, c, ldc, accum)
}
func packAFull(dst []float32, a aSource, off, kb int) int { return packAFullGo(dst, a, off, kb) }
func packBFull(dst []float32, b bSource, off, kb int) int { return packBFullGo(dst, b, off, kb) }

func dot4(a aSource, off, k int, x []float32, out *[4]float32) { dot4Go(a, off, k, x, out) }

// hasDot1F16 reports false: this build's f16 mat-vec dots four rows at a time.
func hasDot1F16() bool { return false }

// hasDot1BF16 reports false: this build's bf16 mat-vec dots four rows at a time.
func hasDot1BF16() bool { return false }

func dot1BF16(a, x []uint16) float32 { return dotBF16Go(a, x) }

// hasDot1F32 reports false: this build's f32 mat-vec dots four rows at a time.
func hasDot1F32() bool { return false }

func dot1F32(a, x []float32) float32 { return dotF32Go(a, x) }

func dot1F16(a []uint16, x []float32) float32 { return dotF16F32Go(a, x) }

// hasDot4x3 reports false: this build dots each activation row on its own.
func hasDot4x3() bool { return false }

func dot4x3(a aSource, off, k int, x []float32, ldx int, out *[12]float32) {
	dot4x3Go(a, off, k, x, ldx, out)
}

// dot4Next is dot4 (no prefetching in this build).
func dot4Next(a aSource, off, k int, x []float32, out *[4]float32, _ bool) {
	dot4Go(a, off, k, x, out)
}

func kernel12x32BF16(kp int, ap, bp []float32, bs int, c []float32, ldc int, accum bool) {
	kernel12x32BF16Go(kp, ap, bp, bs, c, ldc, accum)
}

func dot4BF16(a aSource, off, k int, x []uint16, out *[4]float32) { dot4BF16Go(a, off, k, x, out) }

func qprep(q4 bool, nb int, y []byte, dst []float32) {}

func qtile(q4 bool, rn, nb int, a []byte, lda int, b []byte, ldb int, prep []float32, ldp int, c []float32, ldc int) {
	qtileGo(q4, rn, nb, a, lda, b, ldb, c, ldc)
}

func dotQ4_0MatVec(nb int, x, y, prep []byte) float32 { return dotQ4_0Q8_0(nb, x, y) }

func f32ToBF16Row(src []float32, dst []uint16) { f32ToBF16RowGo(src, dst) }
func f16ToBF16Rows(src []uint16, ld, rows, kb int, dst []uint16, ldd int) {
	f16ToBF16RowsGo(src, ld, rows, kb, dst, ldd)
}

// hasDot4F16G3 reports false: Dot4F16Heads runs Dot4F16 per head in this build.
func hasDot4F16G3() bool { return false }

func dot4F16G3(a []uint16, lda, k, nquad int, q []float32, ldq int, out []float32, ldo int) {
	panic("kern: dot4F16G3 without a kernel")
}

func anyNonFinite(x []float32) bool { return anyNonFiniteGo(x) }
