//go:build amd64 && !purego

package kern

// AVX-512 mat-vec kernels (dot512_amd64.s) and the bf16 packers (sgemm_amd64.s). Slices are
// passed as pointers and their extents are checked by the Go callers.

//go:noescape
func dot4F32AVX512(k int, a *float32, lda int, x *float32, out *float32)

//go:noescape
func dot4F16F32AVX512(k int, a *uint16, lda int, x *float32, out *float32)

//go:noescape
func dot1F16F32AVX512(k int, a *uint16, x *float32) float32

//go:noescape
func dot4BF16AVX512BF16(k int, a *uint16, lda int, x *uint16, out *float32)

//go:noescape
func dotBF16AVX512BF16(x, y []uint16) float32

//go:noescape
func dot4F16G3AVX512(k int, a *uint16, lda int, q *float32, ldq int, out *float32, ldo, nquad int)

//go:noescape
func packA16BF16AVX2(k8 int, a *uint16, lda int, dst *float32)

//go:noescape
func packB6BF16AVX2(k8 int, b *uint16, ldb int, dst *float32)

// dot4BF16 sets out[r] = Σ_{p<k} A[off+r*lda+p]*x[p] for r < 4 (k >= 1), weights and x in
// bf16: four rows at once with VDPBF16PS where the CPU has AVX-512 BF16, else one row at a time.
func dot4BF16(a aSource, off, k int, x []uint16, out *[4]float32) {
	if !useBF16 {
		for r := 0; r < 4; r++ {
			o := off + r*a.lda
			out[r] = dotBF16(a.bf16[o:o+k], x[:k])
		}
		return
	}
	// Bounds checks standing in for the assembly's unchecked accesses.
	_ = x[k-1]
	_ = a.bf16[off+3*a.lda+k-1]
	dot4BF16AVX512BF16(k, &a.bf16[off], a.lda, &x[0], &out[0])
}

//go:noescape
func sgemm12x32BF16AVX512(kp int, a, b *float32, bs int, c *float32, ldc int, accum int)

// kernel12x32BF16 runs the VDPBF16PS micro-kernel (sgemmbf16_amd64.s) on a 12x32 tile of c
// from two adjacent A pair panels (32*kp slots) and two B pair panels (the second bs slots
// after the first); kernel12x32BF16Go is its twin. Only the pair path (gemmPairs) calls it.
func kernel12x32BF16(kp int, ap, bp []float32, bs int, c []float32, ldc int, accum bool) {
	// Bounds checks standing in for the assembly's unchecked accesses.
	_ = ap[2*kp*gemmNR-1]
	_ = bp[bs+kp*gemmMR-1]
	_ = c[(2*gemmMR-1)*ldc+2*gemmNR-1]
	acc := 0
	if accum {
		acc = 1
	}
	sgemm12x32BF16AVX512(kp, &ap[0], &bp[0], bs, &c[0], ldc, acc)
}

//go:noescape
func f32ToBF16RowAVX512(src []float32, dst []uint16)

//go:noescape
func f16ToBF16RowsAVX512(src *uint16, ld, rows, kb int, dst *uint16, ldd int)

// f16ToBF16Rows rounds rows x kb halves of src (row stride ld) to bf16 rows of dst (stride ldd):
// the 16-element part of each row by AVX-512 (which also prefetches the rows 16 on), the rest
// in Go.
func f16ToBF16Rows(src []uint16, ld, rows, kb int, dst []uint16, ldd int) {
	k16 := kb &^ 15
	if !use512 || rows == 0 || k16 == 0 {
		f16ToBF16RowsGo(src, ld, rows, kb, dst, ldd)
		return
	}
	_ = src[(rows-1)*ld+kb-1]
	_ = dst[(rows-1)*ldd+kb-1]
	// In bounds by the two checks above; the prefetches past src's end read nothing.
	f16ToBF16RowsAVX512(&src[0], ld, rows, k16, &dst[0], ldd)
	if k16 < kb {
		f16ToBF16RowsGo(src[k16:], ld, rows, kb-k16, dst[k16:], ldd)
	}
}

func f32ToBF16Row(src []float32, dst []uint16) {
	if use512 {
		f32ToBF16RowAVX512(src, dst)
		return
	}
	f32ToBF16RowGo(src, dst)
}
