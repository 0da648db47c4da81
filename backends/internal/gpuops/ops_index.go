package gpuops

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// Generators, fills and index ops (shaders/eltwise_index.comp, one MODE each): ADD_ID, FILL, TRI,
// DIAG, ROLL, PAD, PAD_REFLECT_1D, ARANGE, TIMESTEP_EMBEDDING, SET (a copy then a scatter),
// CUMSUM and L2_NORM (a workgroup per row), COUNT_EQUAL (one workgroup); TOP_K runs
// on the ARGSORT shader (rows too long for shared memory: a radix select of the k indices, then
// the LONG variant's sort of them in dst). Every op takes f32 (SET also i32, COUNT_EQUAL i32; FILL f32 only) and
// writes a contiguous result; sources are addressed by element strides, so views work where the constructors allow
// them.

func init() {
	for _, op := range []core.Op{core.OpAddID, core.OpFill, core.OpTri, core.OpDiag, core.OpRoll, core.OpPad,
		core.OpPadReflect1D, core.OpArange, core.OpTimestepEmbedding, core.OpSet, core.OpCumsum, core.OpL2Norm,
		core.OpCountEqual} {
		registerOp(op, opImpl{supports: supportsIndex, encode: (*Encoder).encodeIndex})
	}
	registerOp(core.OpTopK, opImpl{supports: supportsTopK, encode: (*Encoder).encodeArgsort})
}

// Modes of eltwise_index.comp.
const (
	ixAddID uint32 = iota
	ixFill
	ixTri
	ixDiag
	ixRoll
	ixPad
	ixPadReflect
	ixArange
	ixTimestep
	ixCopy
	ixSet
	ixCumsum
	ixL2Norm
	ixCountEqual
)

var ixModes = map[core.Op]uint32{
	core.OpAddID: ixAddID, core.OpFill: ixFill, core.OpTri: ixTri, core.OpDiag: ixDiag, core.OpRoll: ixRoll,
	core.OpPad: ixPad, core.OpPadReflect1D: ixPadReflect, core.OpArange: ixArange,
	core.OpTimestepEmbedding: ixTimestep, core.OpSet: ixSet, core.OpCumsum: ixCumsum, core.OpL2Norm: ixL2Norm,
	core.OpCountEqual: ixCountEqual,
}

const ixPushSize = 32 * 4

// ix4 reports whether t is addressable in 4-byte elements.
func ix4(t *core.Tensor) bool {
	return t != nil && t.Type.Size() == 4 && t.Type.BlockSize() == 1 && eltAddressable(t, 4)
}

func supportsIndex(_ *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if !t.IsContiguous() || !eltAddressable(t, 4) || !ix4(t) && t.Op != core.OpCountEqual {
		return false
	}
	f32 := func(x *core.Tensor) bool { return x != nil && x.Type == core.TypeF32 && ix4(x) }
	switch t.Op {
	case core.OpArange:
		return t.Type == core.TypeF32
	case core.OpFill:
		return t.Type == core.TypeF32
	case core.OpAddID:
		ids := t.Src[2]
		return f32(a) && f32(b) && ids != nil && ids.Type == core.TypeI32 && ix4(ids) && a.Ne == t.Ne && a.Ne[0] == b.Ne[0]
	case core.OpCountEqual:
		return a != nil && b != nil && a.Type == core.TypeI32 && b.Type == core.TypeI32 && ix4(a) && ix4(b) &&
			a.Ne == b.Ne && t.Type == core.TypeI64
	case core.OpSet:
		return setWindowOK(t)
	case core.OpTimestepEmbedding:
		dim, _ := core.TimestepParamsOf(t)
		return f32(a) && t.Type == core.TypeF32 && t.Ne == [4]int64{dim, a.Ne[0], 1, 1}
	case core.OpTri, core.OpRoll, core.OpCumsum, core.OpL2Norm:
		return f32(a) && t.Type == core.TypeF32 && a.Ne == t.Ne
	}
	return f32(a) && t.Type == core.TypeF32 // DIAG, PAD, PAD_REFLECT_1D: shapes checked by the constructors
}

// setWindowOK reports whether a SET node's window is word-aligned and never writes one element
// twice (each dimension's stride steps past the extent of the ones below it), so the scatter's
// invocations write disjoint words.
func setWindowOK(t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || !ix4(a) || !ix4(b) || a.Type != t.Type || b.Type != t.Type || a.Ne != t.Ne || !a.IsContiguous() {
		return false
	}
	sp := core.SetParamsOf(t)
	nb := [4]int64{4, sp.Nb1, sp.Nb2, sp.Nb3}
	if sp.Offset%4 != 0 {
		return false
	}
	ext := int64(4)
	for i := range nb {
		if nb[i]%4 != 0 {
			return false
		}
		if b.Ne[i] > 1 {
			if nb[i] < ext {
				return false
			}
			ext = nb[i]*(b.Ne[i]-1) + ext
		}
	}
	return sp.Offset+ext <= t.NBytes()
}

func supportsTopK(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != core.TypeF32 || t.Type != core.TypeI32 || !eltAddressable(a, 4) || !eltAddressable(t, 4) ||
		t.Ne[0] < 1 || t.Ne[0] > a.Ne[0] || t.Ne[1] != a.Ne[1] || t.Ne[2] != a.Ne[2] || t.Ne[3] != a.Ne[3] {
		return false
	}
	if _, _, ok := argsortSize(d, a.Ne[0]); ok {
		return true
	}
	return topKLongOK(d, a.Ne[0])
}

// topKLongOK reports whether TOP_K rows of ne0 elements too long for shared memory run on the
// LONG argsort passes: the chunk must hold mode 3's histogram, per-invocation counts and three
// words, and each invocation's passes over the row (six, of ne0/wg elements each) must stay well
// under llvmpipe's 65,535 loop iterations.
func topKLongOK(d *Device, ne0 int64) bool {
	chunk, wg, ok := argsortLongSize(d, ne0)
	return ok && chunk >= 256+wg+3 && ne0 <= 4096*int64(wg)
}

func (e *Encoder) encodeIndex(n *core.Tensor) error {
	mode := ixModes[n.Op]
	a, b := n.Src[0], n.Src[1]
	// SET copies a into dst first, unless dst is a's memory (in place).
	skipCopy := n.Op == core.OpSet && (core.SetParamsOf(n).Inplace || a.Buffer == n.Buffer && a.Offset == n.Offset)
	var srcs []use
	var slots []int
	for i, s := range n.Src[:3] {
		if s != nil && !(skipCopy && i == 0) {
			srcs = append(srcs, use{s, 4})
			slots = append(slots, i)
		}
	}
	ops, err := e.bindNode(n, 4, srcs...)
	if err != nil {
		return err
	}
	od := ops[len(ops)-1]
	binds := [3]operand{od, od, od}
	var bound [3]*core.Tensor
	for i, k := range slots {
		binds[k], bound[k] = ops[i], srcs[i].t
	}
	var prm [7]uint32
	work, items := n.Ne, n.NElements()
	switch n.Op {
	case core.OpAddID:
		ids := n.Src[2]
		prm[0], prm[1] = u32(ids.Nb[0]/4), u32(ids.Nb[1]/4)
	case core.OpFill:
		prm[0] = math.Float32bits(core.FillValueOf(n))
	case core.OpTri:
		prm[0] = uint32(core.TriTypeOf(n))
	case core.OpRoll:
		for i, s := range core.RollShiftsOf(n) {
			prm[i] = uint32(int32(s))
		}
	case core.OpPad:
		pp := core.PadParamsOf(n)
		for i := range 4 {
			prm[i] = uint32(int32(pp.Left[i]))
		}
		prm[4] = b2u(pp.Circular)
	case core.OpPadReflect1D:
		p0, _ := core.PadReflectOf(n)
		prm[0] = u32(p0)
	case core.OpArange:
		start, stop, step := core.ArangeParamsOf(n)
		prm[0], prm[1], prm[2] = math.Float32bits(start), math.Float32bits(stop), math.Float32bits(step)
	case core.OpTimestepEmbedding:
		dim, period := core.TimestepParamsOf(n)
		prm[0], prm[1] = u32(dim), math.Float32bits(float32(math.Log(float64(period))))
	case core.OpCumsum:
		items = a.NRows()
	case core.OpL2Norm:
		prm[0] = math.Float32bits(core.EpsOf(n))
		items = a.NRows()
	case core.OpCountEqual:
		items = a.NElements()
	case core.OpSet:
		if !skipCopy {
			if err := e.ixDispatch(ixCopy, n.Ne, n.NElements(), 0, prm, bound, binds, od); err != nil {
				return err
			}
			if err := e.sync(od, binds[1], od); err != nil { // the scatter waits for the copy
				return err
			}
		}
		if b.IsEmpty() {
			return nil
		}
		sp := core.SetParamsOf(n)
		mode, work, items = ixSet, b.Ne, b.NElements()
		prm[0], prm[1], prm[2], prm[3] = u32(sp.Nb1), u32(sp.Nb2), u32(sp.Nb3), u32(sp.Offset)
	}
	groups := uint32(0)
	switch mode {
	case ixCountEqual:
		groups = 1
	case ixCumsum, ixL2Norm: // a workgroup per row
		groups = e.groups(items, 1, 0)
	}
	return e.ixDispatch(mode, work, items, groups, prm, bound, binds, od)
}

// ixDispatch records one dispatch of eltwise_index in mode over items work items (shape work),
// on groups workgroups (0: enough for one item per invocation, up to the device limit).
// bound are the tensors bound to slots a, b and ids (nil where the slot is unused), binds
// their operands.
func (e *Encoder) ixDispatch(mode uint32, work [4]int64, items int64, groups uint32, prm [7]uint32,
	bound [3]*core.Tensor, binds [3]operand, od operand) error {
	p, err := e.pipeline("eltwise_index", 4, ixPushSize, eltWG, mode)
	if err != nil {
		return err
	}
	if groups == 0 {
		groups = e.groups(items, eltWG, 0)
	}
	pc := e.push.Reset()
	pushShape(pc, work)
	for _, t := range bound[:2] {
		if t == nil {
			pc.U32(1, 1, 1, 1, 0, 0, 0, 0)
			continue
		}
		pushShape(pc, t.Ne)
		pushStrides(pc, t, 4)
	}
	pc.U32(binds[0].offs, binds[1].offs, binds[2].offs, od.offs, u32(items))
	pc.U32(prm[:]...)
	return e.dispatch(p, [3]uint32{groups, 1, 1}, pc.Bytes(), binds[0].bind, binds[1].bind, binds[2].bind, od.bind)
}
