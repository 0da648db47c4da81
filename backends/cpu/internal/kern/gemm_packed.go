package kern

import "fmt"

// Products on operands packed once and used many times (the tiled attention's keys and values,
// met by every query tile): the packed layouts and micro-kernels of Sgemm's single-worker path,
// without its packing per call. A is packed into panels of 16 rows, B into panels of 6, each over
// all k at once (one k block: k is a head's width or a key block, at most a few hundred); callers
// size them with PackedASize and PackedBSize and read or change them only through this file.

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

// PackAT packs for GemmPacked the m x k matrix A whose columns are stored as rows: A[i][p] is
// v[p*ldv+i] (k rows of m values, such as attention's value rows, whose transpose is the A of
// their weighted sum). Its bytes are PackA's of the transposed matrix; rows past m in the last
// panel are zeros. It panics on operands that do not fit (programmer errors).
func PackAT(dst []float32, v []float32, ldv, m, k int) {
	packAT(dst, v, ldv, m, k, func(src, d []float32) { copy(d, src) })
}

// PackATF16 is PackAT for f16 rows, widened to float32.
func PackATF16(dst []float32, v []uint16, ldv, m, k int) {
	packAT(dst, v, ldv, m, k, F16ToF32Row)
}

// packAT is PackAT with the row pieces (one panel's lanes of one source row) widened by put.
func packAT[T float32 | uint16](dst []float32, v []T, ldv, m, k int, put func(src []T, d []float32)) {
	if m < 0 || k < 0 || (m > 0 && k > 0 && (ldv < m || len(v) < (k-1)*ldv+m)) || len(dst) < PackedASize(m, k) {
		panic(fmt.Sprintf("kern.PackAT: %d rows of %d (ldv %d) from %d elements into %d floats", k, m, ldv, len(v), len(dst)))
	}
	for p := 0; p < k; p++ {
		row := v[p*ldv : p*ldv+m]
		for i0 := 0; i0 < m; i0 += gemmNR {
			i1 := min(m, i0+gemmNR)
			d := dst[i0*k+p*gemmNR : i0*k+(p+1)*gemmNR]
			put(row[i0:i1], d[:i1-i0])
			clear(d[i1-i0:])
		}
	}
}

// ZeroPackedACol sets column p of the m x k matrix A packed by PackA or PackAT to zero.
func ZeroPackedACol(ap []float32, m, k, p int) {
	if p < 0 || p >= k || len(ap) < PackedASize(m, k) {
		panic(fmt.Sprintf("kern.ZeroPackedACol: column %d of %dx%d in %d floats", p, m, k, len(ap)))
	}
	for i0 := 0; i0 < m; i0 += gemmNR {
		clear(ap[i0*k+p*gemmNR : i0*k+(p+1)*gemmNR])
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
