package cpu

import (
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// The mat-vec on repacked weights (one generated token's MUL_MAT, and the one-token MUL_MAT_ID
// in ops_mulmat_id_vec.go) in one barrier: every worker converts a share of the activation
// row's blocks to the weights' vec-dot type and prepares them for the micro-kernels
// (kern.GemvPrepBlocks), the team passes one barrier, and the workers claim tasks of weight
// rows (kern.GemvRepackedSet); each worker fixes the non-finite outputs of the tasks
// it finished (mulmat_nonfinite.go's rule) while they are in its cache, so no barrier comes
// before the node's own. Results are bit for bit those of kern.GemmRepacked.

// prepGemvRows converts and prepares the n activation rows of b that a mat-vec set reads (row r
// is b's row (r mod ne1, r / ne1), f32 or already of type vdt) into y (the converted rows,
// unused when b is of type vdt) and the kernel's scratch work. The rows' blocks are split
// evenly over the workers, whatever n is. The caller passes a barrier before the rows are read.
func prepGemvRows(p *params, rt kern.RepackType, vdt core.Type, b *core.Tensor, n int64, y []byte, work []float32) {
	k := b.Ne[0]
	bs, ys := vdt.BlockSize(), vdt.Size()
	nb := k / bs
	if nb == 0 {
		return // empty rows: nothing to prepare
	}
	rs := vdt.RowSize(k)
	db := b.Data()
	f0, f1 := rowRange(n*nb, p.ith, p.nth)
	for r := f0 / nb; r*nb < f1; r++ {
		b0, b1 := max(f0-r*nb, 0), min(f1-r*nb, nb)
		off := (r%b.Ne[1])*b.Nb[1] + (r/b.Ne[1])*b.Nb[2]
		row := db[off:]
		if b.Type != vdt {
			row = y[r*rs : (r+1)*rs]
			convertActivations(vdt, f32s(db[off:])[b0*bs:b1*bs], row[b0*ys:b1*ys])
		}
		kern.GemvPrepBlocks(rt, work, int(n), int(k), int(r), row[:rs], int(b0), int(b1))
	}
}

// computeMulMatVecRepacked is MUL_MAT of one activation row on repacked weights (route
// routeRepacked, b.NRows() == 1), its non-finite outputs fixed.
func computeMulMatVecRepacked(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	raw, l, _ := repackedOf(a)
	conv := convBytes(dst, routeRepacked)
	work := teamScratch(p, conv)
	prepGemvRows(p, l.rt, a.Type.VecDotType(), b, 1, p.work[:conv], work)
	if p.ith == 0 {
		p.pool.chunk.Store(0) // nobody claims from it before the barrier
	}
	p.barrier() // the row is prepared
	matVecTasks(p, dst, raw, l, work, &p.pool.chunk)
}

// matVecTasks claims and computes tasks of dst's mat-vec set (its weights raw in layout l,
// repackedOf; a one-row MUL_MAT is one job, a one-token MUL_MAT_ID one per slot) from counter,
// on the prepared rows in work, until none is left.
func matVecTasks(p *params, dst *core.Tensor, raw []byte, l repackLayout, work []float32, counter *atomic.Int64) {
	var buf [mmidVecJobs]kern.GemvJob
	p.nf = newNonFiniteHook(dst)
	kern.GemvRepackedSet(l.rt, p.nth, counter, work, l.m, l.k, raw, int(l.sliceBytes()), int(groupRows(dst)),
		matVecJobs(dst, buf[:0]), f32s(p.nf.dd), &p.nf)
}

// matVecJobs appends to jobs (allocating past its capacity) the jobs of dst's mat-vec set: a
// MUL_MAT's one (slice 0, row 0, results from 0), a one-token MUL_MAT_ID's one per slot
// (mulMatIDJobs).
func matVecJobs(dst *core.Tensor, jobs []kern.GemvJob) []kern.GemvJob {
	if dst.Op == core.OpMulMatID {
		return mulMatIDJobs(dst, jobs)
	}
	return append(jobs, kern.GemvJob{})
}

// nonFiniteHook fixes the non-finite outputs of a mat-vec set's finished tasks (kern.RowsDone)
// in the worker that computed them: job j of a MUL_MAT node is its only output row, of a
// MUL_MAT_ID node (id) the row of slot j mod n_used and token j / n_used.
type nonFiniteHook struct {
	dst   *core.Tensor
	dd    []byte // dst's bytes (read once per node, not per task)
	id    bool
	fixer *nonFiniteFixer // made at the first non-finite output of the node
}

// newNonFiniteHook is the hook of dst's mat-vec set.
func newNonFiniteHook(dst *core.Tensor) nonFiniteHook {
	return nonFiniteHook{dst: dst, dd: dst.Data(), id: dst.Op == core.OpMulMatID}
}

// rowOff is the byte offset in dst of job j's result row.
func (h *nonFiniteHook) rowOff(j int) int64 {
	if !h.id {
		return 0
	}
	d := h.dst
	return int64(j)%d.Ne[1]*d.Nb[1] + int64(j)/d.Ne[1]*d.Nb[2]
}

// RowsDone fixes the non-finite outputs among rows [i0, i1) of job j.
func (h *nonFiniteHook) RowsDone(j, i0, i1 int) {
	dst := h.dst
	if !h.id {
		fixNonFiniteChunk(&h.fixer, dst, h.dd, int64(i0), int64(i1), 0, 1) // the node's one row
		return
	}
	s, t := int64(j)%dst.Ne[1], int64(j)/dst.Ne[1]
	row := f32s(h.dd[h.rowOff(j):])[i0:i1]
	if allFinite(row) {
		return
	}
	a, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	if h.fixer == nil {
		h.fixer = newNonFiniteFixer(a)
	}
	h.fixer.fixRow(row, int64(i0), mulMatIDExpert(ids, ids.Data(), s, t), 0, b, b.Data(), s%b.Ne[1], t, 0)
}

// allFinite reports whether every value of v is finite (the scan runs over every output of every
// quantized MUL_MAT: kern.AnyNonFinite's vector kernel).
func allFinite(v []float32) bool { return !kern.AnyNonFinite(v) }
