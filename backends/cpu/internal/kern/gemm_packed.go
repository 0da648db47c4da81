package kern

import "fmt"

// Products on operands packed once and used many times (the tiled attention's keys and values,
// met by every query tile): the packed layouts and micro-kernels of Sgemm's single-worker path,
// without its packing per call. A is packed into panels of PackedARows rows, B into panels of
// PackedBRows rows, each over all k at once (one k block: k is a head's width or a key block,
// at most a few hundred).

// PackedARows and PackedBRows are the rows of an A and a B panel.
const (
	PackedARows = gemmNR
	PackedBRows = gemmMR
)

// PackedASize returns the floats of m rows of A packed over k (PackA).
func PackedASize(m, k int) int { return (m + gemmNR - 1) / gemmNR * gemmNR * k }

// PackedBSize returns the floats of n rows of B packed over k (PackB).
func PackedBSize(n, k int) int { return (n + gemmMR - 1) / gemmMR * bStride(k) }

// PackA packs m rows of A over k (f32 rows lda apart) for GemmPacked; rows past m in the last
// panel are zeros. It panics on operands that do not fit (programmer errors).
func PackA(dst []float32, a []float32, lda, m, k int) {
	packedA(dst, aSource{f32: a, lda: lda}, m, k)
}

// PackAF16 is PackA for f16 rows of A, widened to float32.
func PackAF16(dst []float32, a []uint16, lda, m, k int) {
	packedA(dst, aSource{f16: a, lda: lda}, m, k)
}

func packedA(dst []float32, a aSource, m, k int) {
	la := len(a.f32) + len(a.f16)
	if m < 0 || k < 0 || (m > 0 && k > 0 && (a.lda < k || la < (m-1)*a.lda+k)) || len(dst) < PackedASize(m, k) {
		panic(fmt.Sprintf("kern.PackA: %d rows of %d (lda %d) from %d elements into %d floats", m, k, a.lda, la, len(dst)))
	}
	for ip := 0; ip*gemmNR < m; ip++ {
		i0 := ip * gemmNR
		packA(dst[ip*gemmNR*k:(ip+1)*gemmNR*k], a, i0, min(gemmNR, m-i0), 0, k)
	}
}

// PackB packs n rows of B over k (f32 rows ldb apart) for GemmPacked; rows past n in the last
// panel are zeros. It panics on operands that do not fit (programmer errors).
func PackB(dst []float32, b []float32, ldb, n, k int) {
	if n < 0 || k < 0 || (n > 0 && k > 0 && (ldb < k || len(b) < (n-1)*ldb+k)) || len(dst) < PackedBSize(n, k) {
		panic(fmt.Sprintf("kern.PackB: %d rows of %d (ldb %d) from %d elements into %d floats", n, k, ldb, len(b), len(dst)))
	}
	bs := bStride(k)
	for jp := 0; jp*gemmMR < n; jp++ {
		j0 := jp * gemmMR
		packB(dst[jp*bs:jp*bs+bs], bSource{f32: b, ldb: ldb}, j0*ldb, min(gemmMR, n-j0), k)
	}
}

// GemmPacked computes C[j*ldc+i] = Σ_{p<k} A[i][p]·B[j][p] for i < m, j < n from A packed by
// PackA (m rows over k) and B packed by PackB (n rows over k), on the calling goroutine: C is
// overwritten, or added to with accum. Without accum it is bit for bit Sgemm's single-worker
// product on the packed paths (k within one of its k blocks). It panics on operands that do not
// fit (programmer errors).
func GemmPacked(m, n, k int, ap, bp, c []float32, ldc int, accum bool) {
	if m < 0 || n < 0 || k < 0 || len(ap) < PackedASize(m, k) || len(bp) < PackedBSize(n, k) ||
		(m > 0 && n > 0 && (ldc < m || len(c) < (n-1)*ldc+m)) {
		panic(fmt.Sprintf("kern.GemmPacked: %dx%dx%d from %d and %d packed floats into %d (ldc %d)", m, n, k, len(ap), len(bp), len(c), ldc))
	}
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !accum {
			for j := 0; j < n; j++ {
				clear(c[j*ldc : j*ldc+m])
			}
		}
		return
	}
	apan, bpan, bs := (m+gemmNR-1)/gemmNR, (n+gemmMR-1)/gemmMR, bStride(k)
	if gemm512 {
		tiles512(k, ap, 0, apan, bp, bs, 0, bpan, m, n, c, ldc, accum)
		return
	}
	var tmp [gemmMR * gemmNR]float32
	for ip := 0; ip < apan; ip++ {
		a := ap[ip*gemmNR*k : (ip+1)*gemmNR*k]
		for jp := 0; jp < bpan; jp++ {
			gemmTile(k, a, bp[jp*bs:jp*bs+gemmMR*k], c, ldc, ip*gemmNR, jp*gemmMR, m, n, accum, &tmp)
		}
	}
}
