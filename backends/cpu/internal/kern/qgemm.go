package kern

import (
	"sync/atomic"
	"unsafe"
)

// Quantized GEMM for MUL_MAT with Q4_0 or Q8_0 weights and Q8_0 activations (ggml's
// vec_dot_type for both): C[j*ldc+i] = dot(weight row i, activation row j) over k elements,
// the same value DotQ4_0Q8_0 / DotQ8_0Q8_0 compute for that pair (up to float32 rounding of
// the block sums, as between the asm and twin dots).
//
// Phase 1 (tasks of qgemmPrepRows activation rows): each Q8_0 activation block gets prepared
// data in the scratch: its scale as f32 and, for Q4_0 weights, 8 int32 lane sums 8*Σy that
// turn Σ nib*y into Σ (nib-8)*y without sign folding (36 bytes; 4 for Q8_0). Barrier.
// Phase 2 (tasks of qgemmTaskM weight rows x qgemmTaskN activation rows, claimed from the
// counter): for each group of 4 weight rows (kept in L1/L2), tiles of 3 activation rows
// (streamed from L2) computed over all of k by one assembly call each, which reuses every
// loaded weight block 3 times and every activation block 4 times and converts each weight
// scale once per block and row.
var (
	qgemmTaskM = 64 // weight rows per task (multiple of 4)
	qgemmTaskN = 12 // activation rows per task (multiple of 3)
)

const (
	qgemmPrepRows = 8
	qprepBlock    = 9 // float32 elements of prepared data per activation block (Q4_0)
)

// QgemmWorkSize returns the float32 elements of shared scratch GemmQ4_0Q8_0 and GemmQ8_0Q8_0
// need for n activation rows of k elements (nth is accepted for symmetry and unused).
func QgemmWorkSize(m, n, k, nth int) int {
	if m <= 0 || n <= 0 || k <= 0 {
		return 0
	}
	if n == 1 { // room for the mat-vec preparation of the avx512vnni set (64 bytes per block)
		return (k/QK)*max(qprepBlock, prepQ4x4Group/16) + gemmAlign
	}
	return n*(k/QK)*qprepBlock + gemmAlign
}

// GemmQ4_0Q8_0 computes C[j*ldc+i] = Σ over the k elements of weight row i (Q4_0, rows lda
// bytes apart in a) times activation row j (Q8_0, rows ldb bytes apart in b), for i < m,
// j < n. k must be a multiple of 32. The team protocol is Sgemm's: every worker of nth calls
// it with its ith and the same other arguments; *counter is 0 before the first worker enters
// and unspecified after all return; barrier() is called exactly once by every worker (never
// when nth == 1, where it may be nil); work is shared scratch of QgemmWorkSize floats; C is
// complete once all workers have returned. Quants must lie in the ranges QuantizeRowQ8_0
// produces ([-127, 127]).
func GemmQ4_0Q8_0(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	qgemm(ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc, true)
}

// GemmQ8_0Q8_0 is GemmQ4_0Q8_0 for Q8_0 weights (34-byte blocks).
func GemmQ8_0Q8_0(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	qgemm(ith, nth, barrier, counter, work, m, n, k, a, lda, b, ldb, c, ldc, false)
}

func qgemm(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, n, k int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int, q4 bool) {
	op := "GemmQ8_0Q8_0"
	xs := BlockQ8_0Size
	if q4 {
		op, xs = "GemmQ4_0Q8_0", BlockQ4_0Size
	}
	nb := k / QK
	switch {
	case nth < 1:
		panic("kern." + op + ": nth < 1")
	case m < 0 || n < 0 || k < 0 || k%QK != 0:
		panic("kern." + op + ": bad sizes")
	case m == 0 || n == 0:
		return
	case lda < nb*xs || ldb < nb*BlockQ8_0Size || ldc < m:
		panic("kern." + op + ": leading dimension too small")
	case len(a) < (m-1)*lda+nb*xs || len(b) < (n-1)*ldb+nb*BlockQ8_0Size || len(c) < (n-1)*ldc+m:
		panic("kern." + op + ": operand too short")
	}
	if k == 0 {
		clearTeamRows(ith, nth, n, m, c, ldc)
		return
	}
	if len(work) < QgemmWorkSize(m, n, k, nth) {
		panic("kern." + op + ": work shorter than QgemmWorkSize")
	}
	off := alignOff(work)
	if q4 && n == 1 && useVNNI && hasVBMI {
		qmatvecQ4(ith, nth, barrier, counter, work[off:], m, nb, a, lda, b, c)
		return
	}
	ldp := nb // prepared row stride in floats
	if q4 {
		ldp = nb * qprepBlock
	}
	prep := work[off : off+n*ldp]

	// Phase 1: prepare the activation blocks.
	nprep := int64((n + qgemmPrepRows - 1) / qgemmPrepRows)
	for {
		t := counter.Add(1) - 1
		if t >= nprep {
			break
		}
		for j := int(t) * qgemmPrepRows; j < min(n, int(t+1)*qgemmPrepRows); j++ {
			qprep(q4, nb, b[j*ldb:j*ldb+nb*BlockQ8_0Size], prep[j*ldp:(j+1)*ldp])
		}
	}
	base := nprep + int64(nth)
	if nth > 1 {
		barrier()
	}

	// Phase 2: tiles.
	mt := (m + qgemmTaskM - 1) / qgemmTaskM
	nt := (n + qgemmTaskN - 1) / qgemmTaskN
	ntasks := int64(mt * nt)
	for {
		t := counter.Add(1) - 1 - base
		if t >= ntasks {
			return
		}
		i0 := int(t) / nt * qgemmTaskM
		j0 := int(t) % nt * qgemmTaskN
		i1, j1 := min(m, i0+qgemmTaskM), min(n, j0+qgemmTaskN)
		i := i0
		for ; i+4 <= i1; i += 4 {
			for j := j0; j < j1; j += 3 {
				rn := min(3, j1-j)
				qtile(q4, rn, nb, a[i*lda:], lda, b[j*ldb:], ldb, prep[j*ldp:], ldp, c[j*ldc+i:], ldc)
			}
		}
		for ; i < i1; i++ { // leftover weight rows: single dots
			x := a[i*lda : i*lda+nb*xs]
			for j := j0; j < j1; j++ {
				y := b[j*ldb : j*ldb+nb*BlockQ8_0Size]
				if q4 {
					c[j*ldc+i] = dotQ4_0Q8_0(nb, x, y)
				} else {
					c[j*ldc+i] = dotQ8_0Q8_0(nb, x, y)
				}
			}
		}
	}
}

// qtileGo is the pure-Go tile: C[j*ldc+r] for r < 4, j < rn, by the twin dots.
func qtileGo(q4 bool, rn, nb int, a []byte, lda int, b []byte, ldb int, c []float32, ldc int) {
	xs := BlockQ8_0Size
	if q4 {
		xs = BlockQ4_0Size
	}
	for j := 0; j < rn; j++ {
		y := b[j*ldb : j*ldb+nb*BlockQ8_0Size]
		for r := 0; r < 4; r++ {
			x := a[r*lda : r*lda+nb*xs]
			if q4 {
				c[j*ldc+r] = dotQ4_0Q8_0Go(nb, x, y)
			} else {
				c[j*ldc+r] = dotQ8_0Q8_0Go(nb, x, y)
			}
		}
	}
}

// qmatvecQ4 is the Q4_0 mat-vec (one activation row) of the avx512vnni set: worker 0 prepares
// the activation row in work (barrier), then tasks of qgemmTaskM weight rows are dotted against
// it, four blocks per VNNI step.
func qmatvecQ4(ith, nth int, barrier func(), counter *atomic.Int64, work []float32, m, nb int, a []byte, lda int, b []byte, c []float32) {
	// The scratch holds at least 16 floats (64 bytes) per block (see QgemmWorkSize). Viewing it as
	// bytes is safe: the float32 slice is live for the whole call and bytes have no alignment needs.
	prep := unsafe.Slice((*byte)(unsafe.Pointer(&work[0])), len(work)*4)[:prepQ4x4Size(nb)]
	y := b[:nb*BlockQ8_0Size]
	if ith == 0 {
		prepQ4x4(nb, y, prep)
	}
	if nth > 1 {
		barrier()
	}
	ntasks := int64((m + qgemmTaskM - 1) / qgemmTaskM)
	for {
		t := counter.Add(1) - 1
		if t >= ntasks {
			return
		}
		for i := int(t) * qgemmTaskM; i < min(m, int(t+1)*qgemmTaskM); i++ {
			c[i] = dotQ4_0MatVec(nb, a[i*lda:i*lda+nb*BlockQ4_0Size], y, prep)
		}
	}
}
