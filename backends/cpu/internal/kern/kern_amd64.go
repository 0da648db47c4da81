//go:build amd64 && !purego

package kern

import (
	"github.com/klauspost/cpuid/v2"

	"github.com/tandem-ml/tandem/core/quant"
)

// setFeatures are the CPU features each kernel set needs (besides those of SetAVX2 for all
// the assembly sets).
var setFeatures = [...][]cpuid.FeatureID{
	SetAVX2:       {cpuid.AVX, cpuid.AVX2, cpuid.FMA3, cpuid.F16C},
	SetAVXVNNI:    {cpuid.AVXVNNI},
	SetAVX512:     {cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512DQ},
	SetAVX512VNNI: {cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512DQ, cpuid.AVX512VNNI},
	SetAVX512BF16: {cpuid.AVX512F, cpuid.AVX512BW, cpuid.AVX512VL, cpuid.AVX512DQ, cpuid.AVX512VNNI, cpuid.AVX512BF16},
}

// setRuns reports whether this CPU has every feature set s needs.
func setRuns(s KernelSet) bool {
	if s == SetGeneric {
		return true
	}
	if s < 0 || int(s) >= len(setFeatures) {
		return false
	}
	c := &cpuid.CPU
	return c.Supports(setFeatures[SetAVX2]...) && c.Supports(setFeatures[s]...)
}

// detected is the widest kernel set the CPU runs.
var detected = widestRunnable(KernelSet(len(setNames) - 1))

// useASM selects the AVX2/FMA/F16C assembly kernels and use512 the AVX-512 float ones. They are
// variables only so that tests can exercise every set's paths on the same machine.
var (
	active = widestRunnable(min(detected, capFromEnv()))
	useASM = active >= SetAVX2
	// useAVXVNNI selects the VEX-encoded 256-bit int8 dot kernels (AVX-VNNI); sets above it use
	// them only where the CPU has the feature.
	useAVXVNNI = active >= SetAVXVNNI && cpuid.CPU.Supports(cpuid.AVXVNNI)
	use512     = active >= SetAVX512
	// gemm512 selects the 512-bit SGEMM micro-kernels. They pay only where a 512-bit FMA does twice
	// the work of a 256-bit one: measured on AMD Zen 4 (family 0x19), which splits 512-bit
	// operations in two, they ran at 0.89x the AVX2 kernel (2048³: 169 vs 189 GFLOPS, 2 threads), so
	// there the AVX2 kernel stays; Zen 5 (family 0x1A and later) and Intel's AVX-512 cores are
	// full width.
	gemm512 = use512 && wide512(&cpuid.CPU)
	// useVNNI selects the AVX-512 VNNI integer kernels; hasVBMI adds the byte permutes the Q4_0
	// mat-vec kernel needs.
	useVNNI = active >= SetAVX512VNNI
	hasVBMI = cpuid.CPU.Supports(cpuid.AVX512VBMI)
	// useBF16 selects the vdpbf16ps kernels for bf16 weights.
	useBF16 = active >= SetAVX512BF16
	// gemmPairs selects the bf16 pair path of the packed GEMM (sgemm_bf16.go) for bf16 weights.
	gemmPairs = useBF16 && gemm512
)

const purego = false

func cpuFeatures() []Feature {
	c := &cpuid.CPU
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

// Assembly kernels (kern_amd64.s, quant_amd64.s, sgemm_amd64.s, exp_amd64.s). Slices are
// passed whole and their lengths are trusted: the callers have already checked them.

//go:noescape
func dotF32AVX2(x, y []float32) float32

//go:noescape
func axpyF32AVX2(a float32, x, y []float32)

//go:noescape
func scaleF32AVX2(a float32, x []float32)

//go:noescape
func addF32AVX2(dst, a, b []float32)

//go:noescape
func mulF32AVX2(dst, a, b []float32)

//go:noescape
func maxF32AVX2(x []float32) float32

//go:noescape
func dotF16AVX2(x, y []uint16) float32

//go:noescape
func dot1F32AVX2(k int, a, x *float32) float32

//go:noescape
func dot1BF16AVX2(k int, a, x *uint16) float32

//go:noescape
func dot1F16F32AVX2(k int, a *uint16, x *float32) float32

//go:noescape
func dotF16F32AVX2(x []uint16, y []float32) float32

//go:noescape
func dotBF16AVX2(x, y []uint16) float32

//go:noescape
func f16ToF32RowAVX2(src []uint16, dst []float32)

//go:noescape
func f32ToF16RowAVX2(src []float32, dst []uint16)

//go:noescape
func quantizeRowQ8_0AVX2(x []float32, dst []byte)

//go:noescape
func anyNonFiniteAVX2(x *float32, n int) bool

//go:noescape
func quantizeRowQ8_0AVX512(x []float32, dst []byte)

//go:noescape
func quantizeRowQ8_1AVX2(x []float32, dst []byte)

//go:noescape
func dotQ8_0Q8_0AVX2(nb int, x, y *byte) float32

//go:noescape
func dotQ4_0Q8_0AVX2(nb int, x, y *byte) float32

//go:noescape
func dotQ4_1Q8_1AVX2(nb int, x, y *byte) float32

//go:noescape
func expF32AVX2(dst, src []float32)

//go:noescape
func expSumF32AVX2(dst, src []float32, sub float32) float32

//go:noescape
func expSumF32AVX512(dst, src []float32, sub float32) float32

//go:noescape
func siluF32AVX2(dst, src []float32)

//go:noescape
func geluF32AVX2(dst, src []float32)

func dotF32(x, y []float32) float32 {
	if useASM {
		return dotF32AVX2(x, y)
	}
	return dotF32Go(x, y)
}

func axpyF32(a float32, x, y []float32) {
	if useASM {
		axpyF32AVX2(a, x, y)
		return
	}
	axpyF32Go(a, x, y)
}

func scaleF32(a float32, x []float32) {
	if useASM {
		scaleF32AVX2(a, x)
		return
	}
	scaleF32Go(a, x)
}

func addF32(dst, a, b []float32) {
	if useASM {
		addF32AVX2(dst, a, b)
		return
	}
	addF32Go(dst, a, b)
}

func mulF32(dst, a, b []float32) {
	if useASM {
		mulF32AVX2(dst, a, b)
		return
	}
	mulF32Go(dst, a, b)
}

func maxF32(x []float32) float32 {
	if useASM {
		return maxF32AVX2(x)
	}
	return maxF32Go(x)
}

func dotF16(x, y []uint16) float32 {
	if useASM {
		return dotF16AVX2(x, y)
	}
	return dotF16Go(x, y)
}

func dotF16F32(x []uint16, y []float32) float32 {
	if useASM {
		return dotF16F32AVX2(x, y)
	}
	return dotF16F32Go(x, y)
}

func dotBF16(x, y []uint16) float32 {
	if useBF16 {
		return dotBF16AVX512BF16(x, y)
	}
	if useASM {
		return dotBF16AVX2(x, y)
	}
	return dotBF16Go(x, y)
}

func f16ToF32Row(src []uint16, dst []float32) {
	if useASM {
		f16ToF32RowAVX2(src, dst)
		return
	}
	f16ToF32RowGo(src, dst)
}

func f32ToF16Row(src []float32, dst []uint16) {
	if useASM {
		f32ToF16RowAVX2(src, dst)
		return
	}
	f32ToF16RowGo(src, dst)
}

func quantizeRowQ8_0(x []float32, dst []byte) {
	if useASM {
		if use512 {
			quantizeRowQ8_0AVX512(x, dst)
		} else {
			quantizeRowQ8_0AVX2(x, dst)
		}
		if anyNonFinite(x) {
			quant.FixNonFiniteQ8(x, dst, false) // NaN/Inf blocks by core/quant's rule, as the twin
		}
		return
	}
	quantizeRowQ8_0Go(x, dst)
}

func quantizeRowQ8_1(x []float32, dst []byte) {
	if useASM {
		quantizeRowQ8_1AVX2(x, dst)
		if anyNonFinite(x) {
			quant.FixNonFiniteQ8(x, dst, true)
		}
		return
	}
	quantizeRowQ8_1Go(x, dst)
}

// anyNonFinite reports whether x holds a NaN or an infinity: the AVX2 scan over whole vectors of
// 8 (a row of activations costs a fraction of its quantization; core/quant's per-block check in
// Go took 4% of a prompt's time), the rest in Go.
func anyNonFinite(x []float32) bool {
	if !useASM {
		return anyNonFiniteGo(x)
	}
	n := len(x) &^ 7
	if n > 0 && anyNonFiniteAVX2(&x[0], n) {
		return true
	}
	return anyNonFiniteGo(x[n:])
}

func dotQ8_0Q8_0(nb int, x, y []byte) float32 {
	if useASM {
		return dotQ8_0Q8_0AVX2(nb, &x[0], &y[0])
	}
	return dotQ8_0Q8_0Go(nb, x, y)
}

func dotQ4_0Q8_0(nb int, x, y []byte) float32 {
	if useASM {
		return dotQ4_0Q8_0AVX2(nb, &x[0], &y[0])
	}
	return dotQ4_0Q8_0Go(nb, x, y)
}

func dotQ4_1Q8_1(nb int, x, y []byte) float32 {
	if useASM {
		return dotQ4_1Q8_1AVX2(nb, &x[0], &y[0])
	}
	return dotQ4_1Q8_1Go(nb, x, y)
}

func expF32(dst, src []float32) {
	if useASM {
		expF32AVX2(dst, src)
		return
	}
	expF32Go(dst, src)
}

func expSumF32(dst, src []float32, sub float32) float32 {
	if use512 {
		return expSumF32AVX512(dst, src, sub)
	}
	if useASM {
		return expSumF32AVX2(dst, src, sub)
	}
	return expSumF32Go(dst, src, sub)
}

func siluF32(dst, src []float32) {
	if useASM {
		siluF32AVX2(dst, src)
		return
	}
	siluF32Go(dst, src)
}

func geluF32(dst, src []float32) {
	if useASM {
		geluF32AVX2(dst, src)
		return
	}
	geluF32Go(dst, src)
}

//go:noescape
func sgemm6x16AVX2(k int, a, b, c *float32, ldc int, accum int)

//go:noescape
func packA16AVX2(k8 int, a *float32, lda int, dst *float32)

//go:noescape
func packA16F16AVX2(k8 int, a *uint16, lda int, dst *float32)

//go:noescape
func packB6AVX2(k8 int, b *float32, ldb int, dst *float32)

//go:noescape
func sgemm6x32AVX512(k int, a, b, c *float32, ldc int, accum int)

// kernel6x32 runs the AVX-512 micro-kernel on a 6x32 tile of c (row stride ldc) from two
// adjacent packed A panels (ap holds 32*kb floats) and reports whether it did; without AVX-512
// the caller runs kernel6x16 on each panel.
func kernel6x32(kb int, ap, bp, c []float32, ldc int, accum bool) bool {
	if !gemm512 {
		return false
	}
	// Bounds checks standing in for the assembly's unchecked accesses.
	_ = ap[2*kb*gemmNR-1]
	_ = bp[kb*gemmMR-1]
	_ = c[(gemmMR-1)*ldc+2*gemmNR-1]
	acc := 0
	if accum {
		acc = 1
	}
	sgemm6x32AVX512(kb, &ap[0], &bp[0], &c[0], ldc, acc)
	return true
}

//go:noescape
func sgemm12x32AVX512(k int, a, b *float32, bs int, c *float32, ldc int, accum int)

// kernel12x32 is kernel6x32 over two adjacent packed B panels (the second bs floats after the
// first): a 12x32 tile of c.
func kernel12x32(kb int, ap, bp []float32, bs int, c []float32, ldc int, accum bool) bool {
	if !gemm512 {
		return false
	}
	_ = ap[2*kb*gemmNR-1]
	_ = bp[bs+kb*gemmMR-1]
	_ = c[(2*gemmMR-1)*ldc+2*gemmNR-1]
	acc := 0
	if accum {
		acc = 1
	}
	sgemm12x32AVX512(kb, &ap[0], &bp[0], bs, &c[0], ldc, acc)
	return true
}

// kernel6x16 runs the micro-kernel on a 6x16 tile of c (row stride ldc).
func kernel6x16(kb int, ap, bp, c []float32, ldc int, accum bool) {
	if useASM {
		// Bounds checks standing in for the assembly's unchecked accesses.
		_ = ap[kb*gemmNR-1]
		_ = bp[kb*gemmMR-1]
		_ = c[(gemmMR-1)*ldc+gemmNR-1]
		acc := 0
		if accum {
			acc = 1
		}
		sgemm6x16AVX2(kb, &ap[0], &bp[0], &c[0], ldc, acc)
		return
	}
	kernel6x16Go(kb, ap, bp, c, ldc, accum)
}

// packAFull packs 8*(kb/8) columns of 16 full A rows and returns kb/8.
func packAFull(dst []float32, a aSource, off, kb int) int {
	k8 := kb / 8
	if !useASM || k8 == 0 {
		return packAFullGo(dst, a, off, kb)
	}
	_ = dst[k8*8*gemmNR-1]
	last := off + (gemmNR-1)*a.lda + k8*8 - 1
	switch {
	case a.f16 != nil:
		_ = a.f16[last]
		packA16F16AVX2(k8, &a.f16[off], a.lda, &dst[0])
	case a.bf16 != nil:
		_ = a.bf16[last]
		packA16BF16AVX2(k8, &a.bf16[off], a.lda, &dst[0])
	default:
		_ = a.f32[last]
		packA16AVX2(k8, &a.f32[off], a.lda, &dst[0])
	}
	return k8
}

// packBFull packs 8*(kb/8) columns of 6 full B rows (from element off) and returns kb/8.
func packBFull(dst []float32, b bSource, off, kb int) int {
	k8 := kb / 8
	if !useASM || k8 == 0 {
		return packBFullGo(dst, b, off, kb)
	}
	_ = dst[k8*8*gemmMR+1] // the 2 floats of slack
	last := off + (gemmMR-1)*b.ldb + k8*8 - 1
	if b.bf16 != nil {
		_ = b.bf16[last]
		packB6BF16AVX2(k8, &b.bf16[off], b.ldb, &dst[0])
		return k8
	}
	_ = b.f32[last]
	packB6AVX2(k8, &b.f32[off], b.ldb, &dst[0])
	return k8
}

//go:noescape
func dot4F32AVX2(k int, a *float32, lda int, x *float32, out *float32)

//go:noescape
func dot4F16F32AVX2(k8 int, a *uint16, lda int, x *float32, out *float32, next int)

//go:noescape
func dot4x3F16F32AVX2(k8 int, a *uint16, lda int, x *float32, ldx int, out *float32)

//go:noescape
func dot4x3F32AVX2(k8 int, a *float32, lda int, x *float32, ldx int, out *float32)

// hasDot1F16 reports whether the f16 mat-vec (one activation row) dots its weight rows one at a
// time, one memory stream per worker: on every assembly set. On Zen 5 (2 workers, TinyLlama's
// seven f16 products per layer, rows of 2048 and 5632 halves, from DRAM) that read 44-46 GB/s
// against 33-35 for four rows per call (four streams, each row a page of 4 KiB: a row's
// prefetches land in rows the same call is reading). The AVX2 sets kept four rows per call
// (tuned on Zen 3 before this kernel existed) until their own one-row kernel: TinyLlama F16
// generation with the AVX2 set on Zen 5 (TANDEM_CPU_KERNELS=avx2, two rounds) went from
// 17.2-17.5 to 21.3-21.8 tokens/s, the weights read at 87-92% of the memory's read rate instead
// of 71-73% (llama.cpp built for AVX2 alone: 19.3). Not yet measured on an AVX2-only CPU.
func hasDot1F16() bool { return useASM }

// hasDot1BF16 reports whether the bf16 mat-vec dots one weight row at a time (dot1BF16, one
// memory stream per worker, as hasDot1F16's f16 one): on every assembly set. The AVX-512 BF16
// set's kernel reads the weights 32 bytes at a time (see PFD1 in dot512_amd64.s); TinyLlama BF16
// generation on Zen 5: one thread 14.8-14.9 t/s with four rows per call, 17.0-17.1 one; two
// threads 19.0 and 20.2-20.4 (llama.cpp 13.1-13.8 and 19.8-19.9 beside them). The other sets
// run dot1BF16AVX2: two threads on Zen 5 with the AVX2 set 18.1-18.2 -> 21.6-22.2 t/s
// (llama.cpp built for AVX2 alone, beside them: 20.0-20.6), with the AVX-512 set 17.9-18.7 ->
// 22.3-24.1.
func hasDot1BF16() bool { return useASM }

// hasDot1F32 reports whether the f32 mat-vec dots one weight row at a time (dot1F32): on the
// 256-bit sets. TinyLlama F32 generation with the AVX2 set on Zen 5 (two threads, alternating):
// 13.15 -> 15.76 tokens/s with the host's memory in its fast state (65 GB/s read), level at 48
// GB/s (10.4-10.6). The 512-bit sets' four-row kernel reads at 95% of the fast state already.
func hasDot1F32() bool { return useASM && !use512 }

// dot1F32 is the f32 dot of one weight row of a mat-vec (hasDot1F32): dot1F32AVX2, which
// prefetches the row ahead, over whole steps of 32.
func dot1F32(a, x []float32) float32 {
	if !useASM {
		return dotF32(a, x)
	}
	return dot1Steps(a, x, dot1F32AVX2, dotF32)
}

// dot1Steps is a·x (x at least as long as a) by a one-row kernel over its whole steps of 32
// elements and dot over the rest.
func dot1Steps[A, X uint16 | float32](a []A, x []X, kern func(k int, a *A, x *X) float32, dot func(a []A, x []X) float32) float32 {
	k32 := len(a) &^ 31
	if k32 == 0 {
		return dot(a, x)
	}
	_ = x[len(a)-1]
	sum := kern(k32, &a[0], &x[0])
	if k32 < len(a) {
		sum += dot(a[k32:], x[k32:])
	}
	return sum
}

// dot1BF16 is dotBF16 for one weight row of a mat-vec (hasDot1BF16): the AVX-512 BF16 dot, or
// on the other assembly sets a one-row kernel that prefetches the row ahead (dot1BF16AVX2).
func dot1BF16(a, x []uint16) float32 {
	if useBF16 || !useASM {
		return dotBF16(a, x)
	}
	return dot1Steps(a, x, dot1BF16AVX2, dotBF16)
}

// dot1F16 is Σ f32(a[p])·x[p] over len(a) (≥ 1) elements; x is at least as long.
func dot1F16(a []uint16, x []float32) float32 {
	if !use512 {
		if !useASM {
			return dotF16F32(a, x)
		}
		return dot1Steps(a, x, dot1F16F32AVX2, dotF16F32)
	}
	_ = x[len(a)-1]
	return dot1F16F32AVX512(len(a), &a[0], &x[0])
}

// hasDot4F16G3 reports whether dot4F16G3 runs the three-head kernel, which matches dot4's
// 512-bit kernel bit for bit (the AVX2 ones sum in another order).
func hasDot4F16G3() bool { return use512 }

// dot4F16G3 is Dot4F16Heads for three heads (k a multiple of 32, nquad >= 1; a from the first
// row's start, holding (4·nquad-1)·lda+k halves; q 2·ldq+k floats; out 2·ldo+4·nquad).
func dot4F16G3(a []uint16, lda, k, nquad int, q []float32, ldq int, out []float32, ldo int) {
	_ = a[(4*nquad-1)*lda+k-1]
	_ = q[2*ldq+k-1]
	_ = out[2*ldo+4*nquad-1]
	dot4F16G3AVX512(k, &a[0], lda, &q[0], ldq, &out[0], ldo, nquad)
}

// hasDot4x3 reports whether dot4x3 has a kernel that reads the four weight rows once for the
// three activation rows (the AVX2 sets; the 512-bit ones keep dot4 per row).
func hasDot4x3() bool { return useASM && !use512 }

// dot4x3 sets out[4j+r] = Σ_{p<k} A[off+r*lda+p]*x[j*ldx+p] for r < 4, j < 3 (k >= 1; f32 or
// f16 weights).
func dot4x3(a aSource, off, k int, x []float32, ldx int, out *[12]float32) {
	if !hasDot4x3() {
		dot4x3Go(a, off, k, x, ldx, out)
		return
	}
	_ = x[2*ldx+k-1]
	k8 := k / 8
	*out = [12]float32{}
	last := off + 3*a.lda + k - 1
	if a.f16 == nil {
		_ = a.f32[last]
		if k8 > 0 {
			dot4x3F32AVX2(k8, &a.f32[off], a.lda, &x[0], ldx, &out[0])
		}
	} else {
		_ = a.f16[last]
		if k8 > 0 {
			dot4x3F16F32AVX2(k8, &a.f16[off], a.lda, &x[0], ldx, &out[0])
		}
	}
	for p := k8 * 8; p < k; p++ {
		for r := 0; r < 4; r++ {
			var w float32
			if a.f16 != nil {
				w = f16ToF32Go(a.f16[off+r*a.lda+p])
			} else {
				w = a.f32[off+r*a.lda+p]
			}
			for j := 0; j < 3; j++ {
				out[4*j+r] += w * x[j*ldx+p]
			}
		}
	}
}

// dot4 sets out[r] = Σ_{p<k} A[off+r*lda+p]*x[p] for r < 4 (k >= 1).
func dot4(a aSource, off, k int, x []float32, out *[4]float32) { dot4Next(a, off, k, x, out, false) }

// dot4Next is dot4 that, with next, may prefetch the four rows after these (the caller's next
// call reads them).
func dot4Next(a aSource, off, k int, x []float32, out *[4]float32, next bool) {
	if !useASM {
		dot4Go(a, off, k, x, out)
		return
	}
	_ = x[k-1]
	last := off + 3*a.lda + k - 1
	if a.f16 == nil {
		_ = a.f32[last]
		if use512 {
			dot4F32AVX512(k, &a.f32[off], a.lda, &x[0], &out[0])
			return
		}
		dot4F32AVX2(k, &a.f32[off], a.lda, &x[0], &out[0])
		return
	}
	_ = a.f16[last]
	if use512 {
		dot4F16F32AVX512(k, &a.f16[off], a.lda, &x[0], &out[0])
		return
	}
	k8 := k / 8
	*out = [4]float32{}
	if k8 > 0 {
		nx := 0
		if next {
			nx = 1
		}
		dot4F16F32AVX2(k8, &a.f16[off], a.lda, &x[0], &out[0], nx)
	}
	for r := 0; r < 4; r++ {
		row := a.f16[off+r*a.lda : off+r*a.lda+k]
		for p := k8 * 8; p < k; p++ {
			out[r] += f16ToF32Go(row[p]) * x[p]
		}
	}
}

//go:noescape
func qgemm4x1Q40(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)

//go:noescape
func qgemm4x2Q40(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)

//go:noescape
func qgemm4x3Q40(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)

//go:noescape
func qgemm4x1Q80(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)

//go:noescape
func qgemm4x2Q80(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)

//go:noescape
func qgemm4x3Q80(nb int, x *byte, lda int, y *byte, ldb int, prep *float32, ldp int, c *float32, ldc int)

//go:noescape
func qprepQ4(nb int, y *byte, dst *float32)

//go:noescape
func qprepQ8(nb int, y *byte, dst *float32)

// qprep fills the prepared data of one Q8_0 activation row (see qgemm.go); only the asm
// tiles read it.
func qprep(q4 bool, nb int, y []byte, dst []float32) {
	if !useASM {
		return
	}
	_ = y[nb*BlockQ8_0Size-1]
	if q4 {
		_ = dst[nb*qprepBlock-1]
		qprepQ4(nb, &y[0], &dst[0])
	} else {
		_ = dst[nb-1]
		qprepQ8(nb, &y[0], &dst[0])
	}
}

// qtile computes a tile of 4 weight rows x rn (1..3) activation rows (nb >= 1 blocks).
func qtile(q4 bool, rn, nb int, a []byte, lda int, b []byte, ldb int, prep []float32, ldp int, c []float32, ldc int) {
	if !useASM {
		qtileGo(q4, rn, nb, a, lda, b, ldb, c, ldc)
		return
	}
	xs := BlockQ8_0Size
	if q4 {
		xs = BlockQ4_0Size
	}
	// Bounds checks standing in for the assembly's unchecked accesses.
	_ = a[3*lda+nb*xs-1]
	_ = b[(rn-1)*ldb+nb*BlockQ8_0Size-1]
	if q4 {
		_ = prep[(rn-1)*ldp+nb*qprepBlock-1]
	} else {
		_ = prep[(rn-1)*ldp+nb-1]
	}
	_ = c[(rn-1)*ldc+3]
	x, y, p, cc, ldpb := &a[0], &b[0], &prep[0], &c[0], ldp*4
	switch {
	case q4 && rn == 3:
		qgemm4x3Q40(nb, x, lda, y, ldb, p, ldpb, cc, ldc)
	case q4 && rn == 2:
		qgemm4x2Q40(nb, x, lda, y, ldb, p, ldpb, cc, ldc)
	case q4:
		qgemm4x1Q40(nb, x, lda, y, ldb, p, ldpb, cc, ldc)
	case rn == 3:
		qgemm4x3Q80(nb, x, lda, y, ldb, p, ldpb, cc, ldc)
	case rn == 2:
		qgemm4x2Q80(nb, x, lda, y, ldb, p, ldpb, cc, ldc)
	default:
		qgemm4x1Q80(nb, x, lda, y, ldb, p, ldpb, cc, ldc)
	}
}

//go:noescape
func dotQ4_0Q4x4VNNI(ng int, x *byte, prep *byte) float32

// dotQ4_0MatVec is dotQ4_0Q8_0 for one weight row against an activation row y that prepQ4x4
// has prepared into prep: the full groups of four blocks by the VNNI kernel, the rest by the
// AVX2 dot. Only called when useVNNI.
func dotQ4_0MatVec(nb int, x, y, prep []byte) float32 {
	ng := nb / 4
	var s float32
	if ng > 0 {
		_ = x[ng*4*BlockQ4_0Size-1]
		_ = prep[ng*prepQ4x4Group-1]
		s = dotQ4_0Q4x4VNNI(ng, &x[0], &prep[0])
	}
	if r := nb - 4*ng; r > 0 {
		s += dotQ4_0Q8_0(r, x[4*ng*BlockQ4_0Size:], y[4*ng*BlockQ8_0Size:])
	}
	return s
}

// wide512 reports whether the CPU executes 512-bit FMAs at full width (see gemm512).
func wide512(c *cpuid.CPUInfo) bool {
	switch c.VendorID {
	case cpuid.AMD, cpuid.Hygon:
		return c.Family >= 0x1A
	}
	return true
}
