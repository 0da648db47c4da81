//go:build amd64 && !purego

package kern

// q4kStdKernelFunc is the micro-kernel's signature: nb super-blocks of the repacked group at w,
// weight rows 8h..8h+7, times the Q8_K activation rows y+j*ldy with their prepared pairs
// p+j*ldp (j < 4); c[j*ldc+r] for r < 8 are written (added to when accum != 0). Lengths are
// checked by q4kStdR4.
type q4kStdKernelFunc func(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

//go:noescape
func q4kStdR4AVX2(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// q4kStdKernel is the active set's micro-kernel: the AVX2 one for the avx2 set; the VNNI sets
// keep their K-quant tile kernels (nil here).
func q4kStdKernel() q4kStdKernelFunc {
	if useASM && !useAVXVNNI && !useVNNI {
		return q4kStdR4AVX2
	}
	return nil
}
