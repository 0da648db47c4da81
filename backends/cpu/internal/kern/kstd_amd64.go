//go:build amd64 && !purego

package kern

//go:noescape
func q4kStdR4AVX2(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

//go:noescape
func q6kStdR4AVX2(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// kstdAVX2 reports whether the repacked K-quant GEMMs run their AVX2 kernels: on every set
// with assembly. On the VNNI sets they beat the K-quant tile kernels too (Zen 5, 2 threads,
// TinyLlama Q4_K_M pp512: 239 t/s against 219 for the AVX-512 VNNI tiles and 162 for the
// AVX-VNNI ones; tg64 level), so their q4_K weights are stored repacked as well; the AVX-512
// VNNI sets run full quads on the 16-row kernels below instead (492 t/s there).
func kstdAVX2() bool { return useASM }

// q4kStdKernel is the active set's Q4_K micro-kernel, or nil.
func q4kStdKernel() kstdKernelFunc {
	if kstdAVX2() {
		return q4kStdR4AVX2
	}
	return nil
}

//go:noescape
func q4kStdR4x16VNNI(nb int, w *byte, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// q4kStd16Kernel is the active set's 16-row Q4_K micro-kernel, or nil: the AVX-512 VNNI one on
// the sets that have it.
func q4kStd16Kernel() kstd16KernelFunc {
	if useVNNI {
		return q4kStdR4x16VNNI
	}
	return nil
}

//go:noescape
func q6kStdR4x16VNNI(nb int, w *byte, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// q6kStd16Kernel is q4kStd16Kernel for Q6_K.
func q6kStd16Kernel() kstd16KernelFunc {
	if useVNNI {
		return q6kStdR4x16VNNI
	}
	return nil
}

// q6kStdKernel is the active set's Q6_K micro-kernel, or nil.
func q6kStdKernel() kstdKernelFunc {
	if kstdAVX2() {
		return q6kStdR4AVX2
	}
	return nil
}

//go:noescape
func q4kRepR1x2AVX2(nb int, w, y *byte, ys int, p *byte, ps int, c *float32, accum int)

//go:noescape
func q4kRepR1VNNI(nb int, w, y *byte, ys int, p *byte, ps int, c *float32, accum int)

// q4kRep1Kernel is the active set's one-row kernel of repacked Q4_K weights, or nil.
func q4kRep1Kernel() func(nb int, w, y *byte, ys int, p *byte, ps int, c *float32, accum int) {
	if useVNNI {
		return q4kRepR1VNNI
	}
	if kstdAVX2() {
		return q4kRepR1x2AVX2
	}
	return nil
}
