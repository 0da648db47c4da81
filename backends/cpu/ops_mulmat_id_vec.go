package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// The one-token MUL_MAT_ID on repacked experts (a mixture-of-experts layer while generating):
// the expert passes of the general fast kernel would each convert the same activation, gather
// it, and split one small mat-vec over the team with four barriers around it. Here the
// activation rows are converted once, and every (slot, expert) product is one job of
// kern.GemvRepackedSet, whose tasks — 128 weight rows of one job — the workers claim from a
// shared counter: two barriers for the whole node, and no worker idles while another finishes
// an expert.

// mmidVecJobs is the number of jobs kept on the stack; a node with more allocates them.
const mmidVecJobs = 32

// mulMatIDVecOK reports whether the node takes the one-token path: a single token, experts
// stored repacked, and the mat-vec route planned for one row.
func mulMatIDVecOK(p *params, dst *core.Tensor) bool {
	if dst.Ne[2] != 1 || p.mulMatRoute(0) != routeRepacked {
		return false
	}
	_, _, ok := repackedOf(dst.Src[0])
	return ok
}

// mulMatIDVecWork is the work the one-token path needs: the converted activation rows, then
// the kernel's scratch.
func mulMatIDVecWork(dst *core.Tensor) int64 {
	as, b := dst.Src[0], dst.Src[1]
	rt, ok := repackTypeOf(as.Type)
	if !ok || dst.Ne[2] != 1 {
		return 0
	}
	n := b.Ne[1] * b.Ne[2]
	conv := core.AlignUp(n*as.Type.VecDotType().RowSize(b.Ne[0]), 64)
	return conv + 4*int64(kern.GemvRepackedSetWorkSize(rt, int(n), int(b.Ne[0]))) + 64
}

// computeMulMatIDVec is the one-token path (mulMatIDVecOK holds).
func computeMulMatIDVec(p *params, dst *core.Tensor) {
	as, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	raw, l, _ := repackedOf(as)
	db, di, dd := b.Data(), ids.Data(), dst.Data()
	k, m := as.Ne[0], as.Ne[1]
	nUsed := dst.Ne[1]
	vdt := as.Type.VecDotType()
	rs := vdt.RowSize(k)
	n := b.Ne[1] * b.Ne[2]
	conv := core.AlignUp(n*rs, 64)
	y := p.work[:n*rs]
	r0, r1 := rowRange(n, p.ith, p.nth)
	for r := r0; r < r1; r++ {
		i1, i2 := r%b.Ne[1], r/b.Ne[1]
		convertActivations(vdt, f32s(db[i1*b.Nb[1]+i2*b.Nb[2]:])[:k], y[r*rs:(r+1)*rs])
	}
	if p.ith == 0 {
		p.pool.chunk.Store(0)
	}
	p.barrier() // the activations are converted and the counter is reset

	var buf [mmidVecJobs]kern.GemvJob
	jobs := buf[:0]
	if total := int(nUsed * dst.Ne[2]); total > len(buf) {
		jobs = make([]kern.GemvJob, 0, total)
	}
	for t := int64(0); t < dst.Ne[2]; t++ {
		for s := int64(0); s < nUsed; s++ {
			jobs = append(jobs, kern.GemvJob{
				Slice: int(mulMatIDExpert(ids, di, s, t)),
				Row:   int(s%b.Ne[1] + t*b.Ne[1]),
				COff:  int((s*dst.Nb[1] + t*dst.Nb[2]) / 4),
			})
		}
	}
	work := f32s(p.work[conv:])
	kern.GemvRepackedSet(l.rt, p.ith, p.nth, p.barrier, &p.pool.chunk, work, int(m), int(k),
		raw, int(l.sliceBytes()), int(n), y, int(rs), jobs, f32s(dd))
	fixNonFiniteIDDots(p, dst)
}

// fixNonFiniteIDDots is fixNonFiniteDots for MUL_MAT_ID: each worker recomputes its share of
// the non-finite outputs as the float32 dot of the dequantized expert row and the activation.
func fixNonFiniteIDDots(p *params, dst *core.Tensor) {
	p.barrier() // every worker's outputs are written
	as, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	db, di, dd := b.Data(), ids.Data(), dst.Data()
	f := newNonFiniteFixer(as)
	r0, r1 := rowRange(dst.Ne[1]*dst.Ne[2], p.ith, p.nth)
	for r := r0; r < r1; r++ {
		s, t := r%dst.Ne[1], r/dst.Ne[1]
		row := f32s(dd[s*dst.Nb[1]+t*dst.Nb[2]:])[:dst.Ne[0]]
		f.fixRow(row, mulMatIDExpert(ids, di, s, t), 0, b, db, s%b.Ne[1], t, 0)
	}
}
