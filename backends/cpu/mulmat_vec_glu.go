package cpu

import (
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// A feed-forward's GLU computed by the group of its gate and up products. Alone, the GLU is a
// small node on worker 0 that reads the rows every worker wrote: each of the other workers'
// cache lines crosses between the cores (a MoE token's GLU took 3.2 µs a layer on one Zen 5
// die, most of it those lines, twice that across two dies). In the group, each task computes
// the same weight rows of the gate and of the up product (kern.GemvRepackedPair) and then the
// GLU of those rows in the worker that wrote them. The products' results are still written, and
// the GLU's are those of its own kernel on every element (computeGLU's row function on the
// task's span: each output depends only on the inputs at its index).

// gluFusion is the GLU a matVecGroup computes: the node, its exec index, and the group's members
// it reads as its first (x) and second (g) source.
type gluFusion struct {
	node  *core.Tensor
	index int
	x, g  int
}

// planGroupGLU gives g (the group ending at exec index last) the GLU that is the next node that
// computes after it, when the two can run fused, and marks the GLU in fs.
func planGroupGLU(exec []*core.Tensor, g *matVecGroup, last int, fs []fusion) {
	for j := last + 1; j < len(exec); j++ {
		if skipNode(exec[j]) {
			continue
		}
		if x, y, ok := gluFusable(exec[j], g); ok && fs[j] == fuseNone {
			g.glu = &gluFusion{node: exec[j], index: j, x: x, g: y}
			fs[j] = fuseInPrev
		}
		return
	}
}

// gluFusable reports whether n is a GLU of two members of g that the group can compute: both
// products of one weight type and shape, their results and n's f32 rows of the same shape and
// strides, and n's result apart from everything the group reads or writes, or exactly one of the
// two products' results (computed in place: a task writes the GLU only over rows it has read).
// It returns the members n reads as its first and second source.
func gluFusable(n *core.Tensor, g *matVecGroup) (x, y int, ok bool) {
	if n.Op != core.OpGLU || n.Src[0] == nil || n.Src[1] == nil || n.Type != core.TypeF32 || n.Nb[0] != 4 {
		return 0, 0, false
	}
	x, y = -1, -1
	for i, m := range g.nodes {
		if m == n.Src[0] {
			x = i
		}
		if m == n.Src[1] {
			y = i
		}
	}
	if x < 0 || y < 0 || x == y {
		return 0, 0, false
	}
	a, b := g.nodes[x], g.nodes[y]
	// both members are repacked (matVecMember): one type and shape is one layout
	wa, wb := a.Src[0], b.Src[0]
	if wa.Type != wb.Type || wa.Ne != wb.Ne ||
		a.Type != core.TypeF32 || b.Type != core.TypeF32 || a.Ne != b.Ne || a.Nb != b.Nb || n.Ne != a.Ne || n.Nb != a.Nb {
		return 0, 0, false
	}
	out := n.Data()
	for i, m := range g.nodes {
		if overlaps(out, m.Data()) && !((i == x || i == y) && sameBytes(out, m.Data())) {
			return 0, 0, false
		}
		for _, s := range m.Src {
			if s != nil && overlaps(out, s.Data()) {
				return 0, 0, false
			}
		}
	}
	return x, y, true
}

// sameBytes reports whether two byte slices are the same memory.
func sameBytes(x, y []byte) bool {
	return len(x) == len(y) && (len(x) == 0 || uintptrOf(x) == uintptrOf(y))
}

// gluValid reports whether g's planned GLU (if any) is still at its place and fusable.
func (g *matVecGroup) gluValid(exec []*core.Tensor) bool {
	f := g.glu
	if f == nil {
		return true
	}
	if f.index >= len(exec) || exec[f.index] != f.node {
		return false
	}
	x, y, ok := gluFusable(f.node, g)
	return ok && x == f.x && y == f.g
}

// gluPairTasks claims and computes tasks of g's GLU pair (both products and the GLU over each
// task's rows) from counter, on the prepared rows in work, until none is left.
func gluPairTasks(p *params, g *matVecGroup, work []float32, counter *atomic.Int64) {
	f := g.glu
	xd, yd := g.nodes[f.x], g.nodes[f.g]
	rawX, l, _ := repackedOf(xd.Src[0])
	rawY, _, _ := repackedOf(yd.Src[0])
	h := &p.glu
	*h = gluPairHook{x: newNonFiniteHook(xd), y: newNonFiniteHook(yd), gp: core.GLUParamsOf(f.node),
		dd: f.node.Data(), ref: p.ref}
	var buf [mmidVecJobs]kern.GemvJob
	kern.GemvRepackedPair(l.rt, p.nth, counter, work, l.m, l.k, rawX, rawY, int(l.sliceBytes()), int(groupRows(xd)),
		matVecJobs(xd, buf[:0]), f32s(h.x.dd), f32s(h.y.dd), h)
}

// gluPairHook hears of a GLU pair's finished tasks: it fixes both products' non-finite outputs
// (as each product alone does), then computes the GLU over the task's rows.
type gluPairHook struct {
	x, y nonFiniteHook
	gp   core.GLUParams
	dd   []byte // the GLU's bytes (its rows laid out as the products')
	ref  bool
}

// RowsDone fixes rows [i0, i1) of job j of both products and computes the GLU of them.
func (h *gluPairHook) RowsDone(j, i0, i1 int) {
	h.x.RowsDone(j, i0, i1)
	h.y.RowsDone(j, i0, i1)
	off := h.x.rowOff(j)
	x := f32s(h.x.dd[off:])[i0:i1]
	gate := f32s(h.y.dd[off:])[i0:i1]
	if h.gp.Swapped {
		x, gate = gate, x
	}
	gluRow(h.ref, h.gp, f32s(h.dd[off:])[i0:i1], x, gate)
}
