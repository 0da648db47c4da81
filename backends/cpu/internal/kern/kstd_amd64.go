//go:build amd64 && !purego

package kern

//go:noescape
func q4kStdR4AVX2(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

//go:noescape
func q6kStdR4AVX2(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// kstdAVX2 reports whether the on-the-fly repacked K-quant GEMMs run their AVX2 kernels: the
// avx2 set; the VNNI sets keep their K-quant tile kernels.
func kstdAVX2() bool { return useASM && !useAVXVNNI && !useVNNI }

// q4kStdKernel is the active set's Q4_K micro-kernel, or nil.
func q4kStdKernel() kstdKernelFunc {
	if kstdAVX2() {
		return q4kStdR4AVX2
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

// q4kRep1Kernel is the active set's one-row kernel of repacked Q4_K weights, or nil.
func q4kRep1Kernel() func(nb int, w, y *byte, ys int, p *byte, ps int, c *float32, accum int) {
	if kstdAVX2() {
		return q4kRepR1x2AVX2
	}
	return nil
}
