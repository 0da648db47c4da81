package kern

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// GemmQ4_KStd: MUL_MAT of Q4_K weights in the standard layout by Q8_K activations, the weights
// repacked on the fly into groups of 16 interleaved rows so that one 256-bit register holds a
// 4-byte slice of 8 rows and every activation broadcast feeds 8 weight rows (the K-quant tile
// kernels unpack one row at a time for 4 activation rows).
//
// A repacked group holds, per super-block of 256 elements, kstdSuper bytes:
//
//	0    d[16]     f16 super-block scales, row r at 2r
//	32   dmin[16]  f16 super-block min scales
//	64   sc[8][16] 6-bit sub-block scales, sub-block s of row r at 64+16s+r
//	192  mn[4][16] pairs of sub-block mins: (mn[2q], mn[2q+1]) of row r at 192+32q+2r
//	320  qs        4 pairs of sub-blocks x 8 slices: row r's qs[32p+4c:32p+4c+4] at
//	               320+64(8p+c)+4r (low nibbles: sub-block 2p, high nibbles: sub-block 2p+1)
//
// Per 32 elements of a sub-block the micro-kernel sums the VPMADDUBSW pair products of 8 slices
// in int16 (exact: |15·128·2·8| < 2^15), multiplies by the sub-block scale with VPMADDWD, and
// adds the int32 results of a super-block; the mins meet the activations' sub-block sums
// (prepared once per activation row, kstdPairs) in one VPMADDWD per pair of sub-blocks. Per
// super-block the row results are d·isum − dmin·Σmin·bsum in float32, scaled by the activation's
// d and added to C.

const (
	kstdSuper = 2368 // bytes of a repacked Q4_K super-block of 16 rows
	kstdPairs = 16   // bytes per activation row and super-block of prepared sub-block sum pairs
	kstdKC    = 16   // super-blocks per chunk of k: 4 activation rows of 16 Q8_K blocks (18.7 KB) stay in L1
	kstdTaskM = 8    // groups of 16 weight rows per task (Q4_K; 4 for Q6_K's larger repacked blocks)
)

// kstdKernelFunc is a micro-kernel's signature: nb super-blocks of the repacked group at w,
// weight rows 8h..8h+7, times the Q8_K activation rows y+j*ldy with their prepared pairs
// p+j*ldp (j < 4; Q4_K only); c[j*ldc+r] for r < 8 are written (added to when accum != 0).
type kstdKernelFunc func(nb int, w *byte, h int, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// kstd16KernelFunc is a micro-kernel over all 16 rows of a repacked group (both halves of
// kstdKernelFunc in one call): c[j*ldc+r] for j < 4, r < 16.
type kstd16KernelFunc func(nb int, w *byte, y *byte, ldy int, p *byte, ldp int, c *float32, ldc, accum int)

// kstdSpec is one weight type of the on-the-fly repacked K-quant GEMM.
type kstdSpec struct {
	op     string
	xb     int  // bytes of a standard weight block
	super  int  // bytes of a repacked super-block of 16 rows
	taskM  int  // groups per task: the task's repacked chunk (taskM·kstdKC·super) stays in L2
	pairs  bool // the kernel reads prepared sub-block sum pairs (kstdPrepPairs)
	repack func(dst, a []byte, lda, rows, kb, kn int)
	kernel func() kstdKernelFunc // the active set's assembly kernel, or nil
	// kernel16, where not nil, returns the active set's 16-row kernel, or nil: it takes the place
	// of kernel's two halves on full quads.
	kernel16 func() kstd16KernelFunc
	twin     func(nb int, w []byte, h int, y []byte, ldy int, p []byte, ldp int, c []float32, ldc int, accum bool)
}

var (
	q4kStd = &kstdSpec{op: "GemmQ4_KStd", xb: blockQ4_K, super: kstdSuper, taskM: kstdTaskM, pairs: true,
		repack: repackQ4KGroup, kernel: q4kStdKernel, kernel16: q4kStd16Kernel, twin: q4kStdR4Go}
	q6kStd = &kstdSpec{op: "GemmQ6_KStd", xb: blockQ6_K, super: kstd6Super, taskM: 4,
		repack: repackQ6KGroup, kernel: q6kStdKernel, kernel16: q6kStd16Kernel, twin: q6kStdR4Go}
)

// HasQ4_KStd reports whether the active kernel set runs GemmQ4_KStd in assembly (every set from
// avx2: the AVX2 micro-kernel, or on the AVX-512 VNNI sets the 16-row VNNI one on full quads).
func HasQ4_KStd() bool { return q4kStdKernel() != nil }

// HasQ6_KStd reports whether the active kernel set runs GemmQ6_KStd in assembly (as HasQ4_KStd).
func HasQ6_KStd() bool { return q6kStdKernel() != nil }

// wscrBytes is the repacked weights of a task's chunk (or of one group over all of k) in one
// worker's scratch: none when the weights are stored repacked (run's stored).
func (s *kstdSpec) wscrBytes(nb int, stored bool) int {
	if stored {
		return 0
	}
	return max(s.taskM*min(kstdKC, nb), nb) * s.super
}

// threadBytes is one worker's scratch: wscrBytes and a 4x16 result tile for edges.
func (s *kstdSpec) threadBytes(nb int, stored bool) int {
	return (s.wscrBytes(nb, stored) + 4*RepackRows*4 + 63) &^ 63
}

// workSize is the float32 scratch of run (stored: the weights stored repacked).
func (s *kstdSpec) workSize(m, n, k, nth int, stored bool) int {
	if m <= 0 || n <= 0 || k <= 0 || nth <= 0 {
		return 0
	}
	nb := k / qkK
	pp := 0
	if s.pairs {
		pp = (n*nb*kstdPairs + 63) &^ 63
	}
	return (pp+nth*s.threadBytes(nb, stored))/4 + gemmAlign
}

// GemmQ4_KStdWorkSize returns the float32 elements of shared scratch GemmQ4_KStd needs for m
// weight rows, n activation rows of k elements and nth workers.
func GemmQ4_KStdWorkSize(m, n, k, nth int) int { return q4kStd.workSize(m, n, k, nth, false) }

// GemmQ6_KStdWorkSize returns the float32 elements of shared scratch GemmQ6_KStd needs.
func GemmQ6_KStdWorkSize(m, n, k, nth int) int { return q6kStd.workSize(m, n, k, nth, false) }

// GemmQ4_KStd computes C[j*ldc+i] = dot(weight row i, activation row j) for i < m, j < n over k
// elements (a multiple of 256): a holds m rows of Q4_K blocks lda bytes apart, b n rows of Q8_K
// blocks ldb bytes apart. The result equals DotQ4_KQ8_K's up to float32 rounding (the integer
// sums of each super-block are exact). The team protocol is GemmStd's: every worker of nth calls
// it with its ith and the same other arguments; *counter is 0 before the first worker enters;
// barrier() is called exactly once by every worker when nth > 1 and m, n, k are positive; work
// is shared scratch of GemmQ4_KStdWorkSize floats. It panics on sizes or slices that do not fit
// (programmer errors).
func GemmQ4_KStd(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	q4kStd.gemm(ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc)
}

// GemmQ6_KStd is GemmQ4_KStd for Q6_K weights (DotQ6_KQ8_K's results up to float32 rounding),
// with work of GemmQ6_KStdWorkSize floats.
func GemmQ6_KStd(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	q6kStd.gemm(ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc)
}

func (s *kstdSpec) gemm(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	nb := k / qkK
	switch {
	case nth < 1 || ith < 0 || ith >= nth:
		panic("kern." + s.op + ": bad worker index")
	case m < 0 || n < 0 || k < 0 || k%qkK != 0:
		panic("kern." + s.op + ": bad sizes")
	case m == 0 || n == 0:
		return
	case lda < nb*s.xb || ldb < nb*blockQ8_K || ldc < m:
		panic("kern." + s.op + ": leading dimension too small")
	case len(a) < (m-1)*lda+nb*s.xb || len(b) < (n-1)*ldb+nb*blockQ8_K || len(c) < (n-1)*ldc+m:
		panic("kern." + s.op + ": operand too short")
	}
	if k == 0 {
		clearTeamRows(ith, nth, n, m, c, ldc)
		return
	}
	s.run(ith, nth, barrier, counter, work, m, n, k, a, lda, false, b, ldb, c, ldc)
}

// run is the GEMM of validated operands: a holds the standard rows lda bytes apart, or, when
// stored, the repacked slice of m rows (RepackQ4_K, groups of nb super-blocks, padding rows
// zero), which the tasks then read in place instead of repacking a chunk.
func (s *kstdSpec) run(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, stored bool, b []byte, ldb int, c []float32, ldc int) {
	nb := k / qkK
	if len(work) < s.workSize(m, n, k, nth, stored) {
		panic("kern." + s.op + ": work shorter than its work size")
	}
	off := alignOff(work)
	// Viewing the float32 scratch as bytes is safe: the slice stays live for the whole call,
	// and bytes have no alignment requirement.
	wb := unsafe.Slice((*byte)(unsafe.Pointer(&work[off])), (len(work)-off)*4)
	ldp := 0
	if s.pairs {
		ldp = nb * kstdPairs
	}
	pp := wb[:max(n*ldp, 1)] // one byte the kernels never read when there are no pairs
	per := s.threadBytes(nb, stored)
	mine := wb[(n*ldp+63)&^63+ith*per:][:per]
	wsize := s.wscrBytes(nb, stored)
	wscr := mine[:wsize]
	// The edge tile: per is a multiple of 64 and wsize of 4, so it is 4-byte aligned inside the
	// live, 64-byte aligned scratch.
	edge := unsafe.Slice((*float32)(unsafe.Pointer(&mine[wsize])), 4*RepackRows)

	// Phase 1: the activations' sub-block sum pairs, 16 rows per task.
	const prepRows = 16
	nprep := int64((n + prepRows - 1) / prepRows)
	if !s.pairs {
		nprep = 0
	}
	for {
		t := counter.Add(1) - 1
		if t >= nprep {
			break
		}
		for j := int(t) * prepRows; j < min(n, int(t+1)*prepRows); j++ {
			kstdPrepPairs(nb, b[j*ldb:], pp[j*ldp:(j+1)*ldp])
		}
	}
	base := nprep + int64(nth)
	if nth > 1 {
		barrier()
	}

	// Phase 2: tasks of tm groups x tn quads of activation rows.
	ngroups := (m + RepackRows - 1) / RepackRows
	nquads := (n + 3) / 4
	tm, tn := stdSplit(ngroups, nquads, nth)
	tm = min(tm, s.taskM)
	mt := (ngroups + tm - 1) / tm
	nt := (nquads + tn - 1) / tn
	ntasks := int64(mt * nt)
	for {
		t := counter.Add(1) - 1 - base
		if t >= ntasks {
			return
		}
		g0 := int(t) / nt * tm
		q0 := int(t) % nt * tn
		g1, q1 := min(ngroups, g0+tm), min(nquads, q0+tn)
		gf := min(g1, m/RepackRows) // groups below gf are full
		for kb := 0; gf > g0 && kb < nb; kb += kstdKC {
			kn := min(kstdKC, nb-kb)
			gs := kn * s.super
			for g := g0; !stored && g < gf; g++ {
				s.repack(wscr[(g-g0)*gs:(g-g0+1)*gs], a[g*RepackRows*lda:], lda, RepackRows, kb, kn)
			}
			for q := q0; q < q1; q++ {
				for g := g0; g < gf; g++ {
					var w []byte
					if stored {
						w = a[(g*nb+kb)*s.super : (g*nb+kb)*s.super+gs]
					} else {
						w = wscr[(g-g0)*gs : (g-g0+1)*gs]
					}
					s.quad(kn, w, b, ldb, pp, ldp, kb, q, n, c, ldc, g*RepackRows, RepackRows, edge, kb > 0)
				}
			}
		}
		if gf < g1 { // the partial group: over all of k
			g := gf
			var w []byte
			if stored {
				w = a[g*nb*s.super : (g+1)*nb*s.super]
			} else {
				w = wscr[:nb*s.super]
				s.repack(w, a[g*RepackRows*lda:], lda, m-g*RepackRows, 0, nb)
			}
			for q := q0; q < q1; q++ {
				s.quad(nb, w, b, ldb, pp, ldp, 0, q, n, c, ldc, g*RepackRows, m-g*RepackRows, edge, false)
			}
		}
	}
}

// quad runs the micro-kernel on activation rows 4q..4q+3 (those below n) and the 16 weight
// rows of the repacked group w (kn super-blocks from kb), writing the results for weight rows
// i0..i0+rows-1 into C (added when accum). A quad of fewer than 4 rows, or a group of fewer than
// 16, goes row by row through the edge tile (4x16 floats), by Q4_K's one-row kernel
// (q4kRepTile1) or, for Q6_K, by the 4-row kernel reading the row four times.
func (s *kstdSpec) quad(kn int, w, b []byte, ldb int, pp []byte, ldp, kb, q, n int, c []float32, ldc, i0, rows int, edge []float32, accum bool) {
	j0 := 4 * q
	pk := 0
	if s.pairs {
		pk = kb * kstdPairs
	}
	if j0+4 <= n && rows == RepackRows {
		y := b[j0*ldb+kb*blockQ8_K:]
		p := pp[j0*ldp+pk:]
		if s.r16(kn, w, y, ldb, p, ldp, c[j0*ldc+i0:], ldc, accum) {
			return
		}
		for h := 0; h < 2; h++ {
			s.r4(kn, w, h, y, ldb, p, ldp, c[j0*ldc+i0+8*h:], ldc, accum)
		}
		return
	}
	for j := j0; j < min(n, j0+4); j++ {
		// one row at a time: the kernel's four rows all read row j (strides 0) and write the
		// edge tile's four rows; row 0 is kept
		y := b[j*ldb+kb*blockQ8_K:]
		p := pp[j*ldp+pk:]
		if s.pairs {
			// Q4_K: the one-row kernel (the same arithmetic per row, a quarter of the work)
			q4kRepTile1(kn, w, y, blockQ8_K, p, kstdPairs, edge[:RepackRows], false)
		} else {
			for h := 0; h < 2; h++ {
				s.r4(kn, w, h, y, 0, p, 0, edge[8*h:], RepackRows, false)
			}
		}
		dst := c[j*ldc+i0 : j*ldc+i0+rows]
		if !accum {
			copy(dst, edge[:rows])
			continue
		}
		for i := range dst {
			dst[i] += edge[i]
		}
	}
}

// r4 runs the active micro-kernel (or its Go twin): weight rows 8h..8h+7 of the repacked group
// w times activation rows y, y+ldy, y+2ldy, y+3ldy (Q8_K, nb blocks) with their prepared pairs
// p (ldp apart, Q4_K): c[j*ldc+r] (+)= the dots, r < 8.
func (s *kstdSpec) r4(nb int, w []byte, h int, y []byte, ldy int, p []byte, ldp int, c []float32, ldc int, accum bool) {
	s.checkOperands(nb, w, y, ldy, p, ldp, c, ldc, 8)
	if k := s.kernel(); k != nil {
		acc := 0
		if accum {
			acc = 1
		}
		k(nb, &w[0], h, &y[0], ldy, &p[0], ldp, &c[0], ldc, acc)
		return
	}
	s.twin(nb, w, h, y, ldy, p, ldp, c, ldc, accum)
}

// r16 runs the active set's 16-row micro-kernel where it has one (the operands as r4's for both
// halves at once) and reports whether it did.
func (s *kstdSpec) r16(nb int, w []byte, y []byte, ldy int, p []byte, ldp int, c []float32, ldc int, accum bool) bool {
	if s.kernel16 == nil {
		return false
	}
	k := s.kernel16()
	if k == nil {
		return false
	}
	s.checkOperands(nb, w, y, ldy, p, ldp, c, ldc, 16)
	acc := 0
	if accum {
		acc = 1
	}
	k(nb, &w[0], &y[0], ldy, &p[0], ldp, &c[0], ldc, acc)
	return true
}

// checkOperands stands in for the assembly's unchecked accesses: nb super-blocks of w, four
// activation rows (and their pairs), and cols results in each of four rows of c.
func (s *kstdSpec) checkOperands(nb int, w, y []byte, ldy int, p []byte, ldp int, c []float32, ldc, cols int) {
	_ = w[nb*s.super-1]
	_ = y[3*ldy+nb*blockQ8_K-1]
	if s.pairs {
		_ = p[3*ldp+nb*kstdPairs-1]
	}
	_ = c[3*ldc+cols-1]
}

// q4kStdR4Go is the micro-kernel's pure-Go twin, the same integer sums and float operations.
func q4kStdR4Go(nb int, w []byte, h int, y []byte, ldy int, p []byte, ldp int, c []float32, ldc int, accum bool) {
	if !accum {
		for j := 0; j < 4; j++ {
			clear(c[j*ldc : j*ldc+8])
		}
	}
	for sb := 0; sb < nb; sb++ {
		ws := w[sb*kstdSuper : (sb+1)*kstdSuper]
		for j := 0; j < 4; j++ {
			ys := y[j*ldy+sb*blockQ8_K:]
			ps := p[j*ldp+sb*kstdPairs:]
			dy := kQ8KD(ys)
			for r8 := 0; r8 < 8; r8++ {
				r := 8*h + r8
				isum, msum := q4kSuperSums(ws, r, ys, ps)
				d := kF16(ws[2*r:])
				dmin := kF16(ws[32+2*r:])
				v := float32(float32(isum)*d) - float32(dmin*float32(msum))
				c[j*ldc+r8] += v * dy
			}
		}
	}
}

// q4kSuperSums returns the integer sums of one super-block of row r of the repacked group
// super-block ws with the Q8_K block ys and its prepared pairs ps: Σ sc·(sub-block dot) and
// Σ min·(sub-block sum), as the micro-kernels compute them.
func q4kSuperSums(ws []byte, r int, ys, ps []byte) (isum, msum int32) {
	for s := 0; s < 8; s++ {
		pr, hi := s/2, s%2
		var sumi int32
		for ch := 0; ch < 8; ch++ {
			x := ws[320+64*(8*pr+ch)+4*r:]
			for t := 0; t < 4; t++ {
				v := int32(x[t] & 15)
				if hi == 1 {
					v = int32(x[t] >> 4)
				}
				sumi += v * int32(int8(ys[4+32*s+4*ch+t]))
			}
		}
		isum += int32(ws[64+16*s+r]) * sumi
	}
	for q := 0; q < 4; q++ {
		b0 := int32(int16(binary.LittleEndian.Uint16(ps[4*q:])))
		b1 := int32(int16(binary.LittleEndian.Uint16(ps[4*q+2:])))
		msum += int32(ws[192+32*q+2*r])*b0 + int32(ws[192+32*q+2*r+1])*b1
	}
	return isum, msum
}

// kstdPrepPairs writes the prepared pairs of one Q8_K activation row (nb blocks): per block,
// the int16 sums of its eight 32-element sub-blocks (bsums[2s]+bsums[2s+1]) in order.
func kstdPrepPairs(nb int, y, pp []byte) {
	_ = pp[nb*kstdPairs-1]
	for sb := 0; sb < nb; sb++ {
		bs := y[sb*blockQ8_K+260 : sb*blockQ8_K+292]
		d := pp[sb*kstdPairs : (sb+1)*kstdPairs]
		for s := 0; s < 8; s++ {
			v := int16(binary.LittleEndian.Uint16(bs[4*s:])) + int16(binary.LittleEndian.Uint16(bs[4*s+2:]))
			binary.LittleEndian.PutUint16(d[2*s:], uint16(v))
		}
	}
}

// repackQ4KGroup writes super-blocks kb..kb+kn-1 of the Q4_K rows a[r*lda:] (r < rows ≤ 16) as kn
// repacked super-blocks of one group (dst: kn*kstdSuper bytes); rows from rows to 15 are zero.
func repackQ4KGroup(dst, a []byte, lda, rows, kb, kn int) {
	_ = dst[kn*kstdSuper-1]
	if rows < RepackRows {
		clear(dst[:kn*kstdSuper])
	}
	for r := 0; r < rows; r++ {
		row := a[r*lda+kb*blockQ4_K : r*lda+(kb+kn)*blockQ4_K]
		for sb := 0; sb < kn; sb++ {
			putQ4KBlock((*[kstdSuper]byte)(dst[sb*kstdSuper:]), r, (*[blockQ4_K]byte)(row[sb*blockQ4_K:]))
		}
	}
}
