package cpu

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// MUL_MAT_ID (mixture of experts): dst[:, e, t] = as[:, :, ids[e, t]] · b[:, e % ne11, t].
//
// The reference kernel walks dst row by row: it converts the activation row to the weights'
// vec-dot type and dots it with every row of the selected expert, as the reference MUL_MAT does.
//
// The fast kernel groups the (slot, token) rows by expert (a counting sort into the work buffer),
// then, expert after expert, gathers that expert's activation rows into a dense f32 matrix, runs
// the fast MUL_MAT machinery on it (mulMatPaths: activation conversion, then the route MUL_MAT
// would take for that expert and that many rows, planned per row count by mulMatIDPlan) into a
// dense result, and scatters the result rows back to dst. Each step
// splits its rows over the team, with barriers between them; an expert with more than
// mulMatIDMaxRows rows is done in several passes so the scratch stays bounded.
//
// Expert ids outside [0, n_expert) are a run-time error: every worker checks all ids before
// reading anything, and worker 0 reports the first bad one.

func init() {
	register(core.OpMulMatID, opImpl{compute: computeMulMatID, plan: mulMatIDPlan, supports: mulMatIDSupports})
}

// mulMatIDMaxRows bounds the activation rows of one expert pass of the fast kernel.
const mulMatIDMaxRows = 256

func mulMatIDSupports(dst *core.Tensor) bool {
	as, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	return as != nil && b != nil && ids != nil && refVecDot(as.Type) != nil && b.Type == core.TypeF32 &&
		ids.Type == core.TypeI32 && as.Nb[0] == as.Type.Size() && b.Nb[0] == 4 && dst.Nb[0] == 4 &&
		as.Ne[3] == 1 && b.Ne[3] == 1 && dst.Ne[3] == 1 && ids.Ne[2] == 1 && ids.Ne[3] == 1 &&
		ids.Ne[0] == dst.Ne[1] && ids.Ne[1] == dst.Ne[2] && b.Ne[2] == dst.Ne[2] && b.Ne[1] > 0 &&
		dst.Ne[1]%b.Ne[1] == 0 && as.Ne[0] == b.Ne[0] && as.Ne[1] == dst.Ne[0]
}

// mmidLayout is where the fast kernel keeps its state in the work buffer: the expert row counts
// and offsets, the rows sorted by expert, the gathered activations, the expert's result, and from
// sub on the work of the MUL_MAT it runs per expert (the rest of the buffer).
type mmidLayout struct {
	rows                         int64 // rows per pass
	counts, order, act, out, sub int64 // byte offsets
}

func mulMatIDLayout(dst *core.Tensor) mmidLayout {
	as := dst.Src[0]
	k, m := as.Ne[0], as.Ne[1]
	total := dst.Ne[1] * dst.Ne[2]
	var l mmidLayout
	l.rows = max(1, min(total, mulMatIDMaxRows))
	l.order = core.AlignUp(4*(as.Ne[2]+1), 64)
	l.act = core.AlignUp(l.order+4*total, 64)
	l.out = core.AlignUp(l.act+4*k*l.rows, 64)
	l.sub = core.AlignUp(l.out+4*m*l.rows, 64)
	return l
}

// mulMatIDPlan plans the node: for the reference kernel no routes and its per-worker rows; for
// the fast kernel the route of the per-expert MUL_MAT for every row count n of a pass (at index
// n-1: the route depends on the row count, not on the expert, whose weights share one type and
// layout) and the fast kernel's layout with the largest work those routes take.
func mulMatIDPlan(dst *core.Tensor, nTasks int, ref bool, ks mmKernels) ([]mmRoute, int64) {
	as := dst.Src[0]
	if ref {
		return nil, int64(nTasks) * core.AlignUp(as.Type.VecDotType().RowSize(as.Ne[0]), 64)
	}
	l := mulMatIDLayout(dst)
	routes := make([]mmRoute, l.rows)
	_, bE, cE := mulMatIDOperands(dst, 0, 1)
	var sub int64
	for n := int64(1); n <= l.rows; n++ {
		bE.Ne[1], bE.Nb[2], bE.Nb[3] = n, bE.Nb[1]*n, bE.Nb[1]*n
		cE.Ne[1], cE.Nb[2], cE.Nb[3] = n, cE.Nb[1]*n, cE.Nb[1]*n
		routes[n-1] = mulMatRouteOf(cE, false, ks)
		sub = max(sub, mulMatRouteWork(cE, routes[n-1], nTasks))
	}
	// 64: slack for the sub-MUL_MAT's own alignment
	return routes, max(l.sub+sub+64, mulMatIDVecWork(dst))
}

// mulMatIDOperands builds the MUL_MAT node the fast kernel runs for expert e over n gathered
// rows: src0 the expert's [k, m] matrix (in as's memory, repacked or not), src1 an f32 [k, n]
// matrix and the result an f32 [m, n] matrix, the last two without memory yet.
func mulMatIDOperands(dst *core.Tensor, e, n int64) (aE, bE, cE *core.Tensor) {
	as := dst.Src[0]
	k, m := as.Ne[0], as.Ne[1]
	aE = new(core.Tensor)
	*aE = *as
	aE.Ne[2], aE.Ne[3] = 1, 1
	if _, l, ok := repackedOf(as); ok {
		aE.Offset += e * l.sliceBytes()
	} else {
		aE.Offset += e * as.Nb[2]
	}
	aE.Op, aE.Src = core.OpNone, [core.MaxSrc]*core.Tensor{}
	bE = &core.Tensor{Type: core.TypeF32, Ne: [4]int64{k, n, 1, 1}, Nb: [4]int64{4, 4 * k, 4 * k * n, 4 * k * n}}
	cE = &core.Tensor{Type: core.TypeF32, Op: core.OpMulMat, Ne: [4]int64{m, n, 1, 1}, Nb: [4]int64{4, 4 * m, 4 * m * n, 4 * m * n}}
	cE.Src[0], cE.Src[1] = aE, bE
	return aE, bE, cE
}

// mulMatIDCheckIDs returns an error for the first expert id outside [0, nExpert).
func mulMatIDCheckIDs(dst *core.Tensor) error {
	as, ids := dst.Src[0], dst.Src[2]
	di := ids.Data()
	for t := int64(0); t < ids.Ne[1]; t++ {
		for e := int64(0); e < ids.Ne[0]; e++ {
			if id := int64(i32s(di[e*ids.Nb[0]+t*ids.Nb[1]:])[0]); id < 0 || id >= as.Ne[2] {
				return fmt.Errorf("MUL_MAT_ID: expert id %d at slot %d of token %d in %v is out of range: %v has %d experts",
					id, e, t, ids, as, as.Ne[2])
			}
		}
	}
	return nil
}

func mulMatIDExpert(ids *core.Tensor, di []byte, e, t int64) int64 {
	return int64(i32s(di[e*ids.Nb[0]+t*ids.Nb[1]:])[0])
}

func computeMulMatID(p *params, dst *core.Tensor) {
	if err := mulMatIDCheckIDs(dst); err != nil {
		if p.ith == 0 {
			p.fail(err)
		}
		return
	}
	if p.ref {
		computeMulMatIDRef(p, dst)
		return
	}
	computeMulMatIDFast(p, dst)
}

// computeMulMatIDRef is the reference kernel: workers take whole dst rows.
func computeMulMatIDRef(p *params, dst *core.Tensor) {
	as, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	da, db, di, dd := as.Data(), b.Data(), ids.Data(), dst.Data()
	k, m := as.Ne[0], as.Ne[1]
	vdt := as.Type.VecDotType()
	rs := vdt.RowSize(k)
	stride := core.AlignUp(rs, 64)
	y := p.work[int64(p.ith)*stride : int64(p.ith)*stride+rs]
	dot := refVecDot(as.Type)
	var w []float32
	r0, r1 := rowRange(dst.Ne[1]*dst.Ne[2], p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		e, t := ir%dst.Ne[1], ir/dst.Ne[1]
		id := mulMatIDExpert(ids, di, e, t)
		brow := f32s(db[(e%b.Ne[1])*b.Nb[1]+t*b.Nb[2]:])[:k]
		fromF32(vdt, brow, y)
		out := f32s(dd[e*dst.Nb[1]+t*dst.Nb[2]:])[:m]
		for i := int64(0); i < m; i++ {
			v := dot(int(k), da[i*as.Nb[1]+id*as.Nb[2]:], y)
			if v-v != 0 && as.Type != core.TypeF32 {
				// mulmat_nonfinite.go's rule: the f32 dot of the dequantized weights.
				if w == nil {
					w = make([]float32, k)
				}
				loadRow(as, da, i, id, 0, w)
				var s float32
				for j := range w {
					s += w[j] * brow[j]
				}
				v = s
			}
			out[i] = v
		}
	}
}

// computeMulMatIDFast is the grouped kernel; every worker of the pool runs it.
func computeMulMatIDFast(p *params, dst *core.Tensor) {
	if mulMatIDVecOK(p, dst) {
		computeMulMatIDVec(p, dst) // ops_mulmat_id_vec.go
		return
	}
	as, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	db, di, dd := b.Data(), ids.Data(), dst.Data()
	k, m := as.Ne[0], as.Ne[1]
	nUsed, nExp := dst.Ne[1], as.Ne[2]
	total := nUsed * dst.Ne[2]
	l := mulMatIDLayout(dst)
	// Counting sort: counts[e] ends as the first sorted row of expert e, counts[nExp] = total;
	// order holds the flat rows slot + token*nUsed, expert by expert, in increasing order.
	counts := i32s(p.work[l.counts:])[:nExp+1]
	order := i32s(p.work[l.order:])[:total]
	if p.ith == 0 {
		clear(counts)
		for r := int64(0); r < total; r++ {
			counts[mulMatIDExpert(ids, di, r%nUsed, r/nUsed)]++
		}
		for e := int64(1); e <= nExp; e++ {
			counts[e] += counts[e-1]
		}
		for r := total - 1; r >= 0; r-- {
			id := mulMatIDExpert(ids, di, r%nUsed, r/nUsed)
			counts[id]--
			order[counts[id]] = int32(r)
		}
	}
	p.barrier()

	wb := &workBuffer{data: p.work}
	sp := *p
	sp.work = p.work[l.sub:]
	for e := int64(0); e < nExp; e++ {
		first, end := int64(counts[e]), int64(counts[e+1])
		for s := first; s < end; s += l.rows {
			n := min(l.rows, end-s)
			_, bE, cE := mulMatIDOperands(dst, e, n)
			bE.Buffer, bE.Offset = wb, l.act
			cE.Buffer, cE.Offset = wb, l.out
			act, out := f32s(p.work[l.act:])[:k*n], f32s(p.work[l.out:])[:m*n]

			r0, r1 := rowRange(n, p.ith, p.nth)
			for j := r0; j < r1; j++ {
				r := int64(order[s+j])
				slot, t := r%nUsed, r/nUsed
				copy(act[j*k:(j+1)*k], f32s(db[(slot%b.Ne[1])*b.Nb[1]+t*b.Nb[2]:])[:k])
			}
			p.barrier() // the gathered rows are complete
			if mulMatPaths(&sp, cE, p.mulMatRoute(int(n-1))) {
				fixNonFiniteDots(&sp, cE)
			}
			p.barrier() // the expert's results are complete
			for j := r0; j < r1; j++ {
				r := int64(order[s+j])
				slot, t := r%nUsed, r/nUsed
				copy(f32s(dd[slot*dst.Nb[1]+t*dst.Nb[2]:])[:m], out[j*m:(j+1)*m])
			}
			// The next pass's gather writes only act (nobody reads it any more); its barrier
			// comes before anyone writes out again.
		}
	}
}

// workBuffer presents the work buffer as host memory, so that the fast MUL_MAT_ID can hand the
// MUL_MAT machinery operand tensors living in it. Only kernels use it, and they only read Bytes.
type workBuffer struct {
	data  []byte
	usage core.BufferUsage
}

func (w *workBuffer) Type() core.BufferType                       { return core.HostBufferType() }
func (w *workBuffer) Size() int64                                 { return int64(len(w.data)) }
func (w *workBuffer) Usage() core.BufferUsage                     { return w.usage }
func (w *workBuffer) SetUsage(u core.BufferUsage)                 { w.usage = u }
func (w *workBuffer) Bytes() []byte                               { return w.data }
func (w *workBuffer) Free() error                                 { return nil }
func (w *workBuffer) Clear(v byte) error                          { return errWorkBuffer }
func (w *workBuffer) SetTensor(*core.Tensor, []byte, int64) error { return errWorkBuffer }
func (w *workBuffer) GetTensor(*core.Tensor, []byte, int64) error { return errWorkBuffer }
func (w *workBuffer) MemsetTensor(*core.Tensor, byte, int64, int64) error {
	return errWorkBuffer
}

var errWorkBuffer = fmt.Errorf("tandem: cpu: the work buffer of a running node cannot be accessed")
