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

// computeMulMatIDVec is the one-token path (mulMatIDVecOK holds): one barrier, the converted
// activation rows prepared by all workers (mulmat_vec_repacked.go), and the non-finite outputs
// fixed by the worker that computed them.
func computeMulMatIDVec(p *params, dst *core.Tensor) {
	as, b := dst.Src[0], dst.Src[1]
	raw, l, _ := repackedOf(as)
	k := as.Ne[0]
	vdt := as.Type.VecDotType()
	n := groupRows(dst)
	conv := core.AlignUp(n*vdt.RowSize(k), 64)
	work := f32s(p.work[conv:])
	prepGemvRows(p, l.rt, vdt, b, n, p.work[:conv], work)
	if p.ith == 0 {
		p.pool.chunk.Store(0)
	}
	p.barrier() // the activations are prepared and the counter is reset
	matVecTasks(p, dst, raw, l, work, &p.pool.chunk)
}

// mulMatIDJobs appends to jobs (allocating past its capacity) the mat-vec set's jobs of the
// one-token MUL_MAT_ID dst: one per (slot, token), in that order, its expert's slice, its
// activation row and its result row.
func mulMatIDJobs(dst *core.Tensor, jobs []kern.GemvJob) []kern.GemvJob {
	b, ids := dst.Src[1], dst.Src[2]
	di := ids.Data()
	nUsed := dst.Ne[1]
	if total := int(nUsed * dst.Ne[2]); total > cap(jobs) {
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
	return jobs
}
