package kern

import (
	"sync/atomic"
	"unsafe"
)

// GEMM for ggml's MUL_MAT layout, run by a team of workers.
//
// Both operands are row-major over k: A holds m weight rows (A[i*lda+p]), B holds n activation
// rows (B[j*ldb+p]), and C[j*ldc+i] = Σ_p A[i*lda+p]*B[j*ldb+p] (C has n rows of m).
//
// The packed path (n > gemmDotMaxN) lays A out in panels of 16 rows, p-major (ap[p*16+r]), and B
// in panels of 6 rows (bp[p*6+r]); a register-blocked FMA micro-kernel computes C tiles of 6
// activation rows x 16 weight rows (two panels of each at once in the 512-bit kernels), k block by
// k block, overwriting C in the first block and accumulating afterwards. Two schedules feed it:
//
//   - f32 and f16 weights (bf16 ones too where the CPU lacks AVX-512 BF16) run gemmOwnA
//     (sgemm_owna.go): B is packed once by the team, then every task packs its own block of
//     weight rows, so the team passes one barrier per product. Wide products skip the team's
//     packing of B: each task packs the B panels it walks itself, 16 at a time, just before
//     they meet its weight rows (ownFusedB), and there is no barrier. On the 512-bit kernels a
//     task's A block is up to own512MB weight rows x gemmKC512 (512 KiB, in L2; 2 MiB for wide
//     products, walked in sub-blocks of 256 rows) and each pair of B panels (12*kc floats, in
//     L1) meets all its A panel pairs in turn (tiles512). That replaced a
//     shared-panel schedule (the team packing each k block of A and B, one barrier per k block)
//     on Zen 5, three alternating rounds, two workers: TinyLlama's FFN up product over a 512-token
//     prompt with f16 weights (5632x512x2048) +22% (+26% on one worker), the others level.
//   - bf16 weights on the AVX-512 BF16 sets (the pair path, sgemm_bf16.go), and f16 weights
//     rounded to bf16 there (SgemmF16ABF16), share packed panels:
//     the team packs each k block of A and B into shared scratch and computes it, pipelined over
//     two buffers, one barrier per k block; tasks are gemmMC activation rows x gemmNCPairs weight
//     rows. Packing and computing are split into tasks claimed from the shared atomic counter;
//     phase t packs k block t and computes k block t-1.
//
// For n <= gemmSmallN (mat-vec), and for f32 and f16 weights on the 256-bit kernels up to
// gemmDotN256, there is no packing: each task computes dot products of 16 weight rows against
// the n activation rows (gemmDotMaxN). On the 512-bit sets an f16 mat-vec (n = 1) dots one
// weight row at a time instead (gemmDot1), one memory stream per worker, and so does a bf16
// one on the AVX-512 BF16 set.
const (
	gemmMR      = 6   // activation rows per micro tile
	gemmNR      = 16  // weight rows per micro tile
	gemmKC512   = 512 // k block of the 512-bit kernels (2048³ on Zen 5 ran 6-8% faster with two workers than with 256)
	gemmKCPairs = 512 // k block of the bf16 pair path (256 pair steps)
	gemmMC      = 48  // activation rows per compute task of the shared-panel schedule (multiple of gemmMR)
	gemmNCPairs = 512 // weight rows per compute task of the shared-panel schedule
	gemmPackA   = 8   // A panels per pack task
	gemmPackB   = 16  // B panels per pack task
	gemmSmallN  = 3   // n up to this uses the dot-product path
	gemmDotN256 = 32  // and up to this for f32 and f16 weights on the 256-bit kernels (gemmDotMaxN)
	gemmDotRow  = 16  // weight rows per task in the dot-product path
	// weight bytes per task of the one-row mat-vec (gemmDot1): 64 rows of 2048 halves;
	// 32 rows read 2% slower, 128 1% faster (Zen 5, two workers)
	gemmDot1Bytes = 256 << 10
	gemmAlign     = 16 // floats of slack for aligning the scratch to 64 bytes
)

// gemmPlan is the deterministic work split that every worker computes identically.
type gemmPlan struct {
	m, n, k    int
	kc, nblk   int // k block size (multiple of 8 unless it is all of k) and count
	apan, bpan int // number of 16-row A panels and 6-row B panels
	nbuf       int // scratch buffers (1 or 2)
	bufSize    int // floats per buffer for a full k block
	packTasks  int // per k block: A pack tasks then B pack tasks
	packATasks int
	mTasks     int // compute tasks along m (weight rows)
	nTasks     int // compute tasks along n (activation rows)
	mc, nc     int // activation rows and weight rows per compute task
}

// newGemmPlan plans the shared-panel schedule of the bf16 pair path (sgemm_bf16.go).
func newGemmPlan(m, n, k int) gemmPlan {
	pl := gemmPlan{m: m, n: n, k: k}
	pl.mc, pl.nc = gemmMC, gemmNCPairs
	pl.kc, pl.nblk = kBlocks(k, gemmKCPairs)
	pl.apan = (m + gemmNR - 1) / gemmNR
	pl.bpan = (n + gemmMR - 1) / gemmMR
	pl.nbuf = 2
	if pl.nblk == 1 {
		pl.nbuf = 1
	}
	pl.bufSize = pl.pairBufSize()
	pl.packATasks = (pl.apan + gemmPackA - 1) / gemmPackA
	pl.packTasks = pl.packATasks + (pl.bpan+gemmPackB-1)/gemmPackB
	pl.mTasks = (m + pl.nc - 1) / pl.nc
	pl.nTasks = (n + pl.mc - 1) / pl.mc
	return pl
}

// kBlocks cuts k into nblk blocks of at most kcMax, equal up to rounding: kc is a multiple of 8
// unless one block holds all of k.
func kBlocks(k, kcMax int) (kc, nblk int) {
	nblk = (k + kcMax - 1) / kcMax
	kc = (k + nblk - 1) / nblk
	if nblk > 1 {
		kc = (kc + 7) &^ 7
		nblk = (k + kc - 1) / kc
	}
	return kc, nblk
}

// clearTeamRows is worker ith's share (every nth row) of zeroing the n rows of m results in c:
// the product of an empty k.
func clearTeamRows(ith, nth, n, m int, c []float32, ldc int) {
	for j := ith; j < n; j += nth {
		clear(c[j*ldc : j*ldc+m])
	}
}

// alignOff is the number of float32s to skip from work[0] to a 64-byte boundary (the same in
// every worker of a team: the work sizes reserve gemmAlign floats for it).
func alignOff(work []float32) int {
	// Only the address is read; the slice keeps its memory alive.
	if r := uintptr(unsafe.Pointer(&work[0])) & 63; r != 0 {
		return int(64-r) / 4
	}
	return 0
}

// bStride is the size of one packed B panel: 6 floats per k step plus 2 floats of slack that
// the assembly packer's overlapping 32-byte stores may write.
func bStride(kc int) int { return gemmMR*kc + 2 }

// SgemmWorkSize returns the number of float32 elements of shared scratch that Sgemm,
// SgemmF16A and SgemmBF16 need for these sizes on a team of nth workers. It is 0 for the
// mat-vec path (n <= 3) and for empty products (the scratch of a packed product otherwise,
// also where the weights' type takes the dot-product path for a few more rows).
func SgemmWorkSize(m, n, k, nth int) int {
	if m <= 0 || n <= 0 || k <= 0 || n <= gemmSmallN {
		return 0
	}
	size := ownWorkSize(m, n, k, nth)
	if gemmPairs {
		// The same scratch must do for the bf16 pair path (the size knows no types).
		pp := newGemmPlan(m, n, k)
		size = max(size, pp.nbuf*pp.bufSize)
	}
	return size + gemmAlign
}

// aSource is the weight operand: float32, IEEE half or bfloat16 rows (exactly one is set).
type aSource struct {
	f32  []float32
	f16  []uint16
	bf16 []uint16
	lda  int
	// inBF16 lets the pair path take f16 weights and f32 activations, rounding both to bf16
	// while packing (SgemmF16ABF16).
	inBF16 bool
}

// bSource is the activation operand: float32 or bfloat16 rows (exactly one is set).
type bSource struct {
	f32  []float32
	bf16 []uint16
	ldb  int
}

// Sgemm computes C[j*ldc+i] = Σ_{p<k} A[i*lda+p] * B[j*ldb+p] for i < m, j < n: MUL_MAT with
// A the m weight rows and B the n activation rows, both row-major over k. C is overwritten
// (k == 0 gives zeros).
//
// It is meant to be called by every worker of a team of nth (ggml style), each with its own
// ith in [0, nth), all with the same arguments otherwise. Calling protocol:
//
//   - Before the first worker enters Sgemm, *counter must be 0 (the caller stores 0 before it
//     starts the team, or worker 0 stores it and the team passes a barrier). Workers claim
//     packing and compute tasks with counter.Add(1), so the work is balanced dynamically.
//     While the team is inside Sgemm nobody else may touch the counter; when all workers have
//     returned its value is unspecified and it must be reset before it is used again.
//   - barrier() must block until all nth workers have called it (a reusable team barrier).
//     Every worker calls it the same number of times: once per product for f32 and f16
//     weights, once per k block on the bf16 pair path, never for a wide product of f32 or f16
//     weights (n >= 1536: each task packs its own activation rows), when n <= 3 (n <= 32 for
//     f32 and f16 weights on the 256-bit kernels: the dot-product path), when m, n or k is 0,
//     or when nth == 1; it may be nil when nth == 1.
//   - Work is claimed dynamically, so a worker that starts late simply finds less work left;
//     ith picks the worker's private part of the scratch, so the workers' ith must differ.
//   - work is scratch shared by the team (the same slice for every worker) of at least
//     SgemmWorkSize(m, n, k, nth) floats; its contents on entry do not matter.
//   - Sgemm does not end with a barrier: C is complete once all nth workers have returned.
//     To run several products back to back (e.g. one per batch of a 3-D MUL_MAT), give
//     each its own counter, or pass a barrier and reset the counter between them.
//
// Requirements (checked, panic otherwise, in every worker alike): lda, ldb >= k; ldc >= m;
// len(a) >= (m-1)*lda+k, len(b) >= (n-1)*ldb+k, len(c) >= (n-1)*ldc+m. C must not overlap A,
// B or the scratch. Results do not depend on nth or on which worker ran which task.
func Sgemm(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkGemm("Sgemm", nth, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	gemm(ith, nth, barrier, counter, work, m, n, k, aSource{f32: a, lda: lda}, bSource{f32: b, ldb: ldb}, c, ldc)
}

// SgemmF16A is Sgemm with the weights A given as IEEE halves (A[i*lda+p] bits); they are
// converted to float32 while packing (VCVTPH2PS), so the arithmetic is exactly Sgemm's on the
// converted values. Same protocol, scratch size and requirements as Sgemm.
func SgemmF16A(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []uint16, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkGemm("SgemmF16A", nth, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	gemm(ith, nth, barrier, counter, work, m, n, k, aSource{f16: a, lda: lda}, bSource{f32: b, ldb: ldb}, c, ldc)
}

// SgemmF16ABF16 is SgemmF16A at bf16 precision for the products where that is faster: on the
// pair path (AVX-512 BF16 with full-width 512-bit units, HasBF16Pairs) and n > 3, both operands
// are rounded to bf16 (to nearest even, as F32ToBF16Row) while packing and multiplied as
// SgemmBF16 multiplies them, about 1.6 times the f32 kernel's speed; each product then carries
// up to 2^-8 of relative rounding error instead of SgemmF16A's exact products. Elsewhere it is
// exactly SgemmF16A. Same protocol, scratch size and requirements as Sgemm.
func SgemmF16ABF16(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []uint16, lda int, b []float32, ldb int, c []float32, ldc int) {
	checkGemm("SgemmF16ABF16", nth, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	gemm(ith, nth, barrier, counter, work, m, n, k, aSource{f16: a, lda: lda, inBF16: true}, bSource{f32: b, ldb: ldb}, c, ldc)
}

// HasBF16Pairs reports whether the packed GEMM has the bf16 pair path (VDPBF16PS) on this CPU:
// where it does, SgemmBF16 and SgemmF16ABF16 multiply bf16 pairs.
func HasBF16Pairs() bool { return gemmPairs }

// SgemmBF16 is Sgemm with both operands in bfloat16 (the top 16 bits of a float32), as ggml
// runs MUL_MAT of BF16 weights: the activations are first rounded to bf16 (its vec-dot type).
// Where the CPU has AVX-512 BF16 (with full-width 512-bit units) the packed path keeps bf16
// pairs and multiplies them with VDPBF16PS (sgemm_bf16.go), about twice the f32 kernel's speed;
// elsewhere both operands are widened to float32 while packing (exact), so the packed path is
// Sgemm's arithmetic on the widened values. For n <= 3 (mat-vec) the rows are dotted directly,
// with VDPBF16PS where present. VDPBF16PS adds each pair of products with two f32 roundings and
// treats bf16 subnormals as zero (a difference within float32 rounding of the sum). Same
// protocol, scratch size and requirements as Sgemm.
func SgemmBF16(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []uint16, lda int, b []uint16, ldb int, c []float32, ldc int) {
	checkGemm("SgemmBF16", nth, m, n, k, len(a), lda, len(b), ldb, len(c), ldc)
	gemm(ith, nth, barrier, counter, work, m, n, k, aSource{bf16: a, lda: lda}, bSource{bf16: b, ldb: ldb}, c, ldc)
}

func checkGemm(op string, nth, m, n, k, la, lda, lb, ldb, lc, ldc int) {
	switch {
	case nth < 1:
		panic("kern." + op + ": nth < 1")
	case m < 0 || n < 0 || k < 0:
		panic("kern." + op + ": negative size")
	case m == 0 || n == 0:
		return
	case lda < k || ldb < k || ldc < m:
		panic("kern." + op + ": leading dimension too small")
	case la < (m-1)*lda+k || lb < (n-1)*ldb+k || lc < (n-1)*ldc+m:
		panic("kern." + op + ": operand too short")
	}
}

func gemm(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a aSource, b bSource, c []float32, ldc int) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		clearTeamRows(ith, nth, n, m, c, ldc)
		return
	}
	if n == 1 && (a.f16 != nil && hasDot1F16() || a.bf16 != nil && hasDot1BF16() || a.f32 != nil && hasDot1F32()) {
		gemmDot1(nth, counter, m, k, a, b, c)
		return
	}
	if n <= gemmDotMaxN(a) {
		gemmDots(counter, m, n, k, a, b, c, ldc)
		return
	}
	if !gemmPairs || a.bf16 == nil && !a.inBF16 {
		gemmOwnA(ith, nth, barrier, counter, work, m, n, k, a, b, c, ldc)
		return
	}
	pl := newGemmPlan(m, n, k)
	if len(work) < pl.nbuf*pl.bufSize+gemmAlign {
		panic("kern.Sgemm: work shorter than SgemmWorkSize")
	}
	off := alignOff(work)
	var bufs [2][]float32
	for i := 0; i < pl.nbuf; i++ {
		bufs[i] = work[off+i*pl.bufSize : off+(i+1)*pl.bufSize]
	}

	var base int64
	ncomp := pl.mTasks * pl.nTasks
	for t := 0; t <= pl.nblk; t++ {
		npack := 0
		if t < pl.nblk {
			npack = pl.packTasks
		}
		nc := 0
		if t > 0 {
			nc = ncomp
		}
		total := int64(npack + nc)
		for {
			id := counter.Add(1) - 1 - base
			if id >= total {
				break
			}
			if int(id) < npack {
				pl.packPairBlock(t, int(id), bufs[t%2], a, b)
			} else {
				pl.computePairs(t-1, int(id)-npack, bufs[(t-1)%2], c, ldc)
			}
		}
		// Every worker made exactly one failing Add in this phase.
		base += total + int64(nth)
		if t < pl.nblk && nth > 1 {
			barrier()
		}
	}
}

// block returns the start and size of k block t.
func (pl *gemmPlan) block(t int) (p0, kb int) {
	p0 = t * pl.kc
	return p0, min(pl.kc, pl.k-p0)
}

// packA packs rows [i0, i0+rows) of A, columns [p0, p0+kb), into a 16-row panel
// (dst[p*16+r]), zero-filling rows past the end.
func packA(dst []float32, a aSource, i0, rows, p0, kb int) {
	lda := a.lda
	k8 := 0
	if rows == gemmNR {
		k8 = packAFull(dst, a, i0*lda+p0, kb)
	}
	p := k8 * 8
	if p == kb {
		return
	}
	for r := 0; r < gemmNR; r++ {
		if r >= rows {
			for q := p; q < kb; q++ {
				dst[q*gemmNR+r] = 0
			}
			continue
		}
		o := (i0+r)*lda + p0
		switch {
		case a.f16 != nil:
			row := a.f16[o : o+kb]
			for q := p; q < kb; q++ {
				dst[q*gemmNR+r] = f16ToF32Go(row[q])
			}
		case a.bf16 != nil:
			row := a.bf16[o : o+kb]
			for q := p; q < kb; q++ {
				dst[q*gemmNR+r] = bf16ToF32(row[q])
			}
		default:
			row := a.f32[o : o+kb]
			for q := p; q < kb; q++ {
				dst[q*gemmNR+r] = row[q]
			}
		}
	}
}

// packB packs rows of b (rows <= 6 starting at element off, kb columns) into a 6-row panel
// (dst[p*6+r]), zero-filling rows past the end.
func packB(dst []float32, b bSource, off, rows, kb int) {
	k8 := 0
	if rows == gemmMR {
		k8 = packBFull(dst, b, off, kb)
	}
	p := k8 * 8
	if p == kb {
		return
	}
	for r := 0; r < gemmMR; r++ {
		if r >= rows {
			for q := p; q < kb; q++ {
				dst[q*gemmMR+r] = 0
			}
			continue
		}
		o := off + r*b.ldb
		if b.bf16 != nil {
			row := b.bf16[o : o+kb]
			for q := p; q < kb; q++ {
				dst[q*gemmMR+r] = bf16ToF32(row[q])
			}
			continue
		}
		row := b.f32[o : o+kb]
		for q := p; q < kb; q++ {
			dst[q*gemmMR+r] = row[q]
		}
	}
}

// tiles512 runs the 512-bit micro-kernels over A panels ip0..ip1-1 (16 weight rows each, kb k
// steps, consecutive in ap from ip0's) and B panels jp0..jp1-1 (6 activation rows each, panel jp
// at bp[jp*bs]): each pair of B panels stays in L1 while the A panel pairs stream past it, and C
// is set, or added to with accum. Pairs cut by the panels' ends or C's edges take the 6x32 kernel
// or single 6x16 tiles.
func tiles512(kb int, ap []float32, ip0, ip1 int, bp []float32, bs, jp0, jp1, m, n int, c []float32, ldc int, accum bool) {
	var tmp [gemmMR * gemmNR]float32
	var wide [2 * gemmMR * 2 * gemmNR]float32 // a 12x32 tile cut by C's last rows
	panel := func(ip int) []float32 { return ap[(ip-ip0)*gemmNR*kb : (ip-ip0+1)*gemmNR*kb] }
	tile := func(ip, jp int) {
		gemmTile(kb, panel(ip), bp[jp*bs:jp*bs+gemmMR*kb], c, ldc, ip*gemmNR, jp*gemmMR, m, n, accum, &tmp)
	}
	for jp := jp0; jp < jp1; jp += 2 {
		for ip := ip0; ip < ip1; ip += 2 {
			i0, j0 := ip*gemmNR, jp*gemmMR
			aPair := ip+1 < ip1 && m-i0 >= 2*gemmNR
			var pair []float32
			if aPair {
				pair = ap[(ip-ip0)*gemmNR*kb : (ip-ip0+2)*gemmNR*kb]
			}
			if aPair && jp+1 < jp1 {
				// Packed B rows past n are zeros: a pair cut by C's last rows runs the full
				// kernel into wide and keeps its rows below n (the same sums, element by element).
				bq := bp[jp*bs : (jp+1)*bs+gemmMR*kb]
				if n-j0 >= 2*gemmMR && kernel12x32(kb, pair, bq, bs, c[j0*ldc+i0:], ldc, accum) {
					continue
				}
				if n-j0 < 2*gemmMR && kernel12x32(kb, pair, bq, bs, wide[:], 2*gemmNR, false) {
					addRows(c[j0*ldc+i0:], ldc, wide[:], 2*gemmNR, n-j0, accum)
					continue
				}
			}
			for q := jp; q < min(jp+2, jp1); q++ {
				jq := q * gemmMR
				if aPair && n-jq >= gemmMR && kernel6x32(kb, pair, bp[q*bs:q*bs+gemmMR*kb], c[jq*ldc+i0:], ldc, accum) {
					continue
				}
				if aPair && n-jq < gemmMR && kernel6x32(kb, pair, bp[q*bs:q*bs+gemmMR*kb], wide[:], 2*gemmNR, false) {
					addRows(c[jq*ldc+i0:], ldc, wide[:], 2*gemmNR, n-jq, accum)
					continue
				}
				tile(ip, q)
				if ip+1 < ip1 {
					tile(ip+1, q)
				}
			}
		}
	}
}

// addRows stores (or, with accum, adds) the first rows rows of the 32-column tile t (row stride
// ldt) into c (row stride ldc).
func addRows(c []float32, ldc int, t []float32, ldt, rows int, accum bool) {
	for r := 0; r < rows; r++ {
		dst, src := c[r*ldc:r*ldc+2*gemmNR], t[r*ldt:r*ldt+2*gemmNR]
		if !accum {
			copy(dst, src)
			continue
		}
		for q := range dst {
			dst[q] += src[q]
		}
	}
}

// gemmDotMaxN is the largest n that takes the dot-product path for weights a. Packing costs a
// pass over the weights (f16 ones widened) before the first product, which a few activation
// rows do not earn back, and dot4x3 reads four weight rows once for three activation rows. On
// Zen 3 (AVX2; f16 weights from DRAM, one worker, medians of 6 alternations) the dots against
// the packed path: m=5632 k=2048 n=4 3.0 vs 6.3 ms, n=8 3.8 vs 7.7, n=16 5.9 vs 8.4, n=32 11.0
// vs 13.1, level from n=48 (f32 weights from n=40); m=2048 k=5632 n=32 10.1 vs 13.5; m=1024
// k=14336 n=32 13.3 vs 18.3; two workers n=8 2.4 vs 4.9 ms, n=32 6.2 vs 8.5 (f32 7.8 vs 9.1).
// bf16 dots on AVX2 lose from n=4 on, and the 512-bit kernels' crossover is unmeasured: both
// keep gemmSmallN.
func gemmDotMaxN(a aSource) int {
	if a.bf16 != nil || gemm512 {
		return gemmSmallN
	}
	return gemmDotN256
}

// gemmDots is the dot-product path: tasks of gemmDotRow weight rows; four weight rows at a time
// are dotted with the n (<= gemmDotMaxN) activation rows (four concurrent memory streams),
// three activation rows per pass over them where the kernel set has dot4x3 (f32 and f16
// weights), one otherwise and for the rest.
func gemmDots(counter *atomic.Int64, m, n, k int, a aSource, b bSource, c []float32, ldc int) {
	ldb := b.ldb
	ntasks := int64((m + gemmDotRow - 1) / gemmDotRow)
	var out [4]float32
	var out3 [12]float32
	x3 := hasDot4x3() && b.f32 != nil && a.bf16 == nil // three activation rows per pass over the weights
	for {
		t := counter.Add(1) - 1
		if t >= ntasks {
			return
		}
		i0 := int(t) * gemmDotRow
		i1 := min(m, i0+gemmDotRow)
		i := i0
		for ; i+4 <= i1; i += 4 {
			j := 0
			if x3 {
				for ; j+3 <= n; j += 3 {
					dot4x3(a, i*a.lda, k, b.f32[j*ldb:], ldb, &out3)
					for q := 0; q < 3; q++ {
						copy(c[(j+q)*ldc+i:(j+q)*ldc+i+4], out3[4*q:4*q+4])
					}
				}
			}
			for ; j < n; j++ {
				if b.bf16 != nil {
					dot4BF16(a, i*a.lda, k, b.bf16[j*ldb:j*ldb+k], &out)
				} else {
					// rows i+4..i+7 are prefetched only when this task reads them next
					dot4Next(a, i*a.lda, k, b.f32[j*ldb:j*ldb+k], &out, i+8 <= i1)
				}
				copy(c[j*ldc+i:j*ldc+i+4], out[:])
			}
		}
		for ; i < i1; i++ {
			o := i * a.lda
			for j := 0; j < n; j++ {
				switch {
				case a.bf16 != nil:
					c[j*ldc+i] = dotBF16(a.bf16[o:o+k], b.bf16[j*ldb:j*ldb+k])
				case a.f16 != nil:
					c[j*ldc+i] = dotF16F32(a.f16[o:o+k], b.f32[j*ldb:j*ldb+k])
				default:
					c[j*ldc+i] = dotF32(a.f32[o:o+k], b.f32[j*ldb:j*ldb+k])
				}
			}
		}
	}
}

// gemmDot1 is the mat-vec where the kernel set dots one weight row at a time (hasDot1F32,
// hasDot1F16, hasDot1BF16): tasks of dot1Rows consecutive rows, each read as one stream.
func gemmDot1(nth int, counter *atomic.Int64, m, k int, a aSource, b bSource, c []float32) {
	es := 2 // bytes per weight
	if a.f32 != nil {
		es = 4
	}
	rows := dot1Rows(m, k*es, nth)
	ntasks := int64((m + rows - 1) / rows)
	for {
		t := counter.Add(1) - 1
		if t >= ntasks {
			return
		}
		i1 := min(m, (int(t)+1)*rows)
		for i := int(t) * rows; i < i1; i++ {
			o := i * a.lda
			switch {
			case a.f32 != nil:
				c[i] = dot1F32(a.f32[o:o+k], b.f32[:k])
			case a.f16 != nil:
				c[i] = dot1F16(a.f16[o:o+k], b.f32[:k])
			default:
				c[i] = dot1BF16(a.bf16[o:o+k], b.bf16[:k])
			}
		}
	}
}

// dot1Rows is the rows of a gemmDot1 task, rows of rowBytes: about gemmDot1Bytes of weights
// (at least 16 rows), fewer where m would give under four tasks per worker.
func dot1Rows(m, rowBytes, nth int) int {
	rows := max(16, gemmDot1Bytes/rowBytes)
	if per := (m + 4*nth - 1) / (4 * nth); per < rows {
		rows = max(4, per)
	}
	return rows
}

// dot4Go is the pure-Go dot4: out[r] = Σ_{p<k} A[off+r*lda+p]*x[p] for r < 4.
func dot4Go(a aSource, off, k int, x []float32, out *[4]float32) {
	x = x[:k]
	for r := 0; r < 4; r++ {
		o := off + r*a.lda
		if a.f16 != nil {
			out[r] = dotF16F32Go(a.f16[o:o+k], x)
		} else {
			out[r] = dotF32Go(a.f32[o:o+k], x)
		}
	}
}

// dot4x3Go is the pure-Go dot4x3: out[4j+r] = Σ_{p<k} A[off+r*lda+p]*x[j*ldx+p] for r < 4,
// j < 3.
func dot4x3Go(a aSource, off, k int, x []float32, ldx int, out *[12]float32) {
	var o [4]float32
	for j := 0; j < 3; j++ {
		dot4Go(a, off, k, x[j*ldx:j*ldx+k], &o)
		copy(out[4*j:4*j+4], o[:])
	}
}

// dot4BF16Go is the pure-Go dot4BF16: out[r] = Σ_{p<k} A[off+r*lda+p]*x[p] for r < 4, both
// in bf16.
func dot4BF16Go(a aSource, off, k int, x []uint16, out *[4]float32) {
	x = x[:k]
	for r := 0; r < 4; r++ {
		o := off + r*a.lda
		out[r] = dotBF16Go(a.bf16[o:o+k], x)
	}
}

// kernel6x16Go is the pure-Go micro-kernel: the 6x16 C tile at c (row stride ldc) is set
// (or, with accum, incremented) to Σ_p bp[p*6+r]*ap[p*16+q].
func kernel6x16Go(kb int, ap, bp, c []float32, ldc int, accum bool) {
	var acc [gemmMR][gemmNR]float32
	ap = ap[:kb*gemmNR]
	bp = bp[:kb*gemmMR]
	for p := 0; p < kb; p++ {
		av := (*[gemmNR]float32)(ap[p*gemmNR:])
		bv := (*[gemmMR]float32)(bp[p*gemmMR:])
		for r := 0; r < gemmMR; r++ {
			br := bv[r]
			row := &acc[r]
			for q := 0; q < gemmNR; q++ {
				row[q] += br * av[q]
			}
		}
	}
	for r := 0; r < gemmMR; r++ {
		dst := (*[gemmNR]float32)(c[r*ldc:])
		if accum {
			for q := 0; q < gemmNR; q++ {
				dst[q] += acc[r][q]
			}
		} else {
			*dst = acc[r]
		}
	}
}

// packAFullGo packs 16 full rows (row stride a.lda, starting at element off) for the first
// 8*(kb/8) columns and returns kb/8, like the assembly packer; packA does the rest.
func packAFullGo(dst []float32, a aSource, off, kb int) int {
	k8 := kb / 8
	n := k8 * 8
	for r := 0; r < gemmNR; r++ {
		o := off + r*a.lda
		switch {
		case a.f16 != nil:
			row := a.f16[o : o+n]
			for q, h := range row {
				dst[q*gemmNR+r] = f16ToF32Go(h)
			}
		case a.bf16 != nil:
			row := a.bf16[o : o+n]
			for q, h := range row {
				dst[q*gemmNR+r] = bf16ToF32(h)
			}
		default:
			row := a.f32[o : o+n]
			for q, v := range row {
				dst[q*gemmNR+r] = v
			}
		}
	}
	return k8
}

// packBFullGo is packAFullGo for a full 6-row B panel.
func packBFullGo(dst []float32, b bSource, off, kb int) int {
	k8 := kb / 8
	n := k8 * 8
	for r := 0; r < gemmMR; r++ {
		o := off + r*b.ldb
		if b.bf16 != nil {
			for q, h := range b.bf16[o : o+n] {
				dst[q*gemmMR+r] = bf16ToF32(h)
			}
			continue
		}
		for q, v := range b.f32[o : o+n] {
			dst[q*gemmMR+r] = v
		}
	}
	return k8
}

// Dot4F16 sets out[r] = Σ_{p<k} f32(a[off+r*lda+p])·x[p] for r < 4: four half-precision rows lda
// apart against one float32 vector, the rows converted in registers (attention scores of four
// keys). It panics when a row or x is shorter than k, or k < 1.
func Dot4F16(a []uint16, off, lda, k int, x []float32, out *[4]float32) {
	if k < 1 || off < 0 || lda < 0 || len(x) < k || off+3*lda+k > len(a) {
		panic("kern.Dot4F16: bad sizes")
	}
	dot4(aSource{f16: a, lda: lda}, off, k, x, out)
}

// Dot4F16Heads sets out[h*ldo+i] = Σ_{p<k} f32(a[off+i*lda+p])·q[h*ldq+p] for i < 4·nquad, h < nh:
// Dot4F16 over nquad groups of four rows (a block of keys) against nh vectors ldq apart (the
// query heads that share the keys), each sum bit for bit Dot4F16's. Where the kernel set has it,
// three heads at a time share one conversion of the key rows. It panics when a row or a vector
// is shorter than k, k < 1, nh or nquad < 0, ldo < 4·nquad, or out is too short.
func Dot4F16Heads(a []uint16, off, lda, k, nquad int, q []float32, ldq, nh int, out []float32, ldo int) {
	if k < 1 || off < 0 || lda < 0 || nh < 0 || nquad < 0 || ldq < k || ldo < 4*nquad {
		panic("kern.Dot4F16Heads: bad sizes")
	}
	if nh == 0 || nquad == 0 {
		return
	}
	if off+(4*nquad-1)*lda+k > len(a) || len(q) < (nh-1)*ldq+k || len(out) < (nh-1)*ldo+4*nquad {
		panic("kern.Dot4F16Heads: operand too short")
	}
	h := 0
	if hasDot4F16G3() && k%32 == 0 {
		for ; h+3 <= nh; h += 3 {
			dot4F16G3(a[off:], lda, k, nquad, q[h*ldq:], ldq, out[h*ldo:], ldo)
		}
	}
	for ; h < nh; h++ {
		for qd := range nquad {
			var d4 [4]float32
			dot4(aSource{f16: a, lda: lda}, off+4*qd*lda, k, q[h*ldq:h*ldq+k], &d4)
			copy(out[h*ldo+4*qd:h*ldo+4*qd+4], d4[:])
		}
	}
}

// Dot4F32 is Dot4F16 for float32 rows.
func Dot4F32(a []float32, off, lda, k int, x []float32, out *[4]float32) {
	if k < 1 || off < 0 || lda < 0 || len(x) < k || off+3*lda+k > len(a) {
		panic("kern.Dot4F32: bad sizes")
	}
	dot4(aSource{f32: a, lda: lda}, off, k, x, out)
}
