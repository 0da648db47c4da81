package cpu

import (
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// Sibling mat-vecs: the products of a generated token that read the same activation row (Q, K
// and V; a feed-forward's gate and up; a mixture-of-experts layer's gate and up experts) run as
// one node. Alone, each would prepare the row, pass a barrier, claim its weight rows' tasks and
// pass the node's barrier, the last of its tasks leaving one worker idle while another
// finishes. Together the row is prepared once per repacked type, one barrier passes, and each
// worker claims the tasks of the first product, then of the next without waiting (each product
// has its own counter): two barriers and one tail for the group. Every product's results are
// those it computes alone, bit for bit (the same kernels over the same tasks), its non-finite
// outputs fixed by the same rule.
//
// A group is consecutive nodes of the graph (views between them compute nothing), all MUL_MAT
// of one activation row or all one-token MUL_MAT_ID with the same expert ids, on the repacked
// mat-vec route, on every worker, with the same activation tensor, their results apart in
// memory. The graph builder puts siblings next to each other (llm builds Q, K and V before
// their RoPE and cache stores, as llama.cpp expands them).

// maxMatVecGroup is the most products a group holds.
const maxMatVecGroup = 4

// matVecGroup is a planned group: its products in graph order and their exec indices.
type matVecGroup struct {
	nodes []*core.Tensor
	index []int
	glu   *gluFusion // the GLU of two members the group computes too (mulmat_vec_glu.go), or nil
}

// groupCounter is a task counter of its own cache line.
type groupCounter struct {
	atomic.Int64
	_ [56]byte
}

// matVecMember reports whether exec node i may belong to a group on a team of threads workers.
func matVecMember(pl *plan, exec []*core.Tensor, i, threads int) bool {
	n := exec[i]
	if threads < 2 || pl.tasks[i] != threads || pl.routes == nil || len(pl.routes[i]) == 0 || pl.routes[i][0] != routeRepacked {
		return false
	}
	if _, _, ok := repackedOf(n.Src[0]); !ok {
		return false
	}
	switch n.Op {
	case core.OpMulMat:
		return n.Src[1].NRows() == 1
	case core.OpMulMatID:
		return n.Ne[2] == 1
	}
	return false
}

// siblings reports whether b may join a group that a starts: the same op and activation (and
// expert ids), and results that do not overlap.
func siblings(a, b *core.Tensor) bool {
	if a.Op != b.Op || a.Src[1] != b.Src[1] || a.Op == core.OpMulMatID && (a.Src[2] != b.Src[2] || a.Ne[1] != b.Ne[1]) {
		return false
	}
	return !overlaps(a.Data(), b.Data())
}

// overlaps reports whether two byte slices share memory.
func overlaps(x, y []byte) bool {
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	x0, y0 := uintptrOf(x), uintptrOf(y)
	return x0 < y0+uintptr(len(y)) && y0 < x0+uintptr(len(x))
}

// planMatVecGroups marks the groups of exec in fs (made when nil; returned) and returns them at
// the index of their last node (nil when there is none).
func planMatVecGroups(pl *plan, exec []*core.Tensor, threads int, fs []fusion) ([]fusion, []*matVecGroup) {
	var groups []*matVecGroup
	for i := 0; i < len(exec); i++ {
		if skipNode(exec[i]) || fs != nil && fs[i] != fuseNone || !matVecMember(pl, exec, i, threads) {
			continue
		}
		members := []int{i}
		for j := i + 1; j < len(exec) && len(members) < maxMatVecGroup; j++ {
			if skipNode(exec[j]) {
				continue
			}
			if fs != nil && fs[j] != fuseNone || !matVecMember(pl, exec, j, threads) {
				break
			}
			ok := true
			for _, m := range members {
				ok = ok && siblings(exec[m], exec[j])
			}
			if !ok {
				break
			}
			members = append(members, j)
		}
		if len(members) < 2 {
			continue
		}
		if fs == nil {
			fs = make([]fusion, len(exec))
		}
		if groups == nil {
			groups = make([]*matVecGroup, len(exec))
		}
		g := &matVecGroup{}
		for _, m := range members {
			fs[m] = fuseInNext
			g.nodes = append(g.nodes, exec[m])
			g.index = append(g.index, m)
		}
		last := members[len(members)-1]
		fs[last] = fuseMatVecGroup
		groups[last] = g
		planGroupGLU(exec, g, last, fs)
		i = last
	}
	return fs, groups
}

// groupsValid reports whether every planned group still qualifies: its nodes at their places,
// each a member, siblings of each other. (A group that could now grow stays as planned.)
func (pl *plan) groupsValid(exec []*core.Tensor) bool {
	for _, g := range pl.groups {
		if g == nil {
			continue
		}
		if !g.gluValid(exec) {
			return false
		}
		for j, i := range g.index {
			if i >= len(exec) || exec[i] != g.nodes[j] || !matVecMember(pl, exec, i, pl.threads) {
				return false
			}
			for _, prev := range g.nodes[:j] {
				if !siblings(prev, g.nodes[j]) {
					return false
				}
			}
		}
	}
	return true
}

// matVecGroupWork is the work buffer a group needs: per product, its converted activation and
// the kernel's prepared row, each from a 64-byte boundary (products of one repacked type share
// theirs, but the bound does not count on it).
func matVecGroupWork(g *matVecGroup) int64 {
	var n int64
	for _, dst := range g.nodes {
		n += core.AlignUp(groupConvBytes(dst), 64) + groupPrepBytes(dst) + 128
	}
	return n + 64
}

// groupConvBytes is the bytes of dst's activation rows converted to its weights' vec-dot type
// (0 when they are of that type).
func groupConvBytes(dst *core.Tensor) int64 {
	a, b := dst.Src[0], dst.Src[1]
	vdt := a.Type.VecDotType()
	if b.Type == vdt {
		return 0
	}
	return vdt.RowSize(b.Ne[0]) * groupRows(dst)
}

// groupRows is the number of activation rows dst's kernel prepares.
func groupRows(dst *core.Tensor) int64 {
	if dst.Op == core.OpMulMatID {
		b := dst.Src[1]
		return b.Ne[1] * b.Ne[2]
	}
	return 1
}

// groupPrepBytes is the bytes of dst's prepared rows (kern.GemvRepackedSetWorkSize).
func groupPrepBytes(dst *core.Tensor) int64 {
	a := dst.Src[0]
	rt, ok := repackTypeOf(a.Type)
	if !ok {
		return 0
	}
	return 4 * int64(kern.GemvRepackedSetWorkSize(rt, int(groupRows(dst)), int(a.Ne[0])))
}

// computeMatVecGroup computes a planned group on every worker of the team.
func computeMatVecGroup(p *params, g *matVecGroup) {
	for i, dst := range g.nodes {
		if dst.Op != core.OpMulMatID {
			continue
		}
		if err := mulMatIDCheckIDs(dst); err != nil {
			// as the product alone would: its error, and the run stops there (the products
			// before it in the group are not computed)
			if p.ith == 0 {
				p.node = g.index[i]
				p.fail(err)
			}
			return
		}
	}
	// The activation rows, converted and prepared once per weight type (the preparation depends
	// on the repacked type and the vec-dot type, both the weights' type's).
	var types [maxMatVecGroup]core.Type
	var works [maxMatVecGroup][]float32
	var use [maxMatVecGroup]int // the prepared rows each product reads
	np := 0
	off := int64(0)
	for i, dst := range g.nodes {
		a := dst.Src[0]
		use[i] = -1
		for j := range np {
			if types[j] == a.Type {
				use[i] = j
			}
		}
		if use[i] >= 0 {
			continue
		}
		_, l, _ := repackedOf(a)
		conv := groupConvBytes(dst)
		y := p.work[off : off+conv]
		off = core.AlignUp(off+conv, 64)
		work := teamScratch(p, off)
		prepGemvRows(p, l.rt, a.Type.VecDotType(), dst.Src[1], groupRows(dst), y, work)
		off = core.AlignUp(off+groupPrepBytes(dst)+64, 64)
		types[np], works[np], use[i] = a.Type, work, np
		np++
	}
	counters := &p.pool.group
	if p.ith == 0 {
		for i := range g.nodes {
			counters[i].Store(0)
		}
	}
	p.barrier() // the rows are prepared and the counters reset
	for i, dst := range g.nodes {
		if f := g.glu; f != nil && (i == f.x || i == f.g) {
			if i == min(f.x, f.g) {
				gluPairTasks(p, g, works[use[i]], &counters[i].Int64)
			}
			continue
		}
		raw, l, _ := repackedOf(dst.Src[0])
		matVecTasks(p, dst, raw, l, works[use[i]], &counters[i].Int64)
	}
}
