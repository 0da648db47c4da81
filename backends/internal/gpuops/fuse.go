package gpuops

import "github.com/tandem-ml/tandem/core"

// Node fusion: a pair of consecutive nodes recorded as one dispatch, which saves a dispatch and
// the barrier between the two (on a GPU each costs a pipeline drain, more than the work of a
// small node). The fused shader still writes both nodes' results, with the unfused shaders'
// float operations on the same values, so results are bit for bit the same and any other reader
// of the first node (a later node, a scheduler split) finds it.
//
// RMS_NORM + MUL: MUL(RMS_NORM(x), w) with w repeated over the rows, the weighted norm of every
// transformer layer (norm.comp's MUL variant), as the CPU backend fuses it. ADD + RMS_NORM + MUL:
// the same with x = ADD(a, b) just before it (the residual sum, then the next weighted norm; the
// ADD variant): three nodes, one dispatch. ROPE + SET_ROWS: the rotated keys of one token
// stored as a row of the KV cache (rope.comp's SET_ROWS variants, llama.cpp's rope/set_rows
// fusion); the views between the two (the reshape SET_ROWS reads) record nothing.

// fusion is a node's part in a fused pair.
type fusion uint8

const (
	fuseNone        fusion = iota
	fuseInNext             // recorded with the next node
	fuseRMSMul             // MUL recording the RMS_NORM before it
	fuseAddRMSMul          // MUL recording the ADD and the RMS_NORM before it
	fuseRopeSetRows        // SET_ROWS recording the ROPE whose result it stores
)

// UseFusion turns node fusion on (the default) or off, for tests that compare the two.
func (e *Encoder) UseFusion(on bool) { e.noFuse, e.gen = !on, e.gen+1 }

// planFusions marks the fusable pairs of nodes (nil when there is none or fusion is off),
// reusing the previous graph's marks' memory.
func (e *Encoder) planFusions(nodes []*core.Tensor) []fusion {
	if e.noFuse {
		return nil
	}
	fs := e.fused[:0]
	mark := func(i int, f ...fusion) {
		if len(fs) == 0 {
			fs = append(fs, make([]fusion, len(nodes))...)
			clear(fs)
		}
		copy(fs[i:], f)
	}
	for i := 0; i+1 < len(nodes); i++ {
		switch {
		case i+2 < len(nodes) && addRMSMulFusable(e.dev, nodes[i], nodes[i+1], nodes[i+2]):
			mark(i, fuseInNext, fuseInNext, fuseAddRMSMul)
			i += 2
		case rmsMulFusable(e.dev, nodes[i], nodes[i+1]):
			mark(i, fuseInNext, fuseRMSMul)
			i++
		case nodes[i].Op == core.OpRope:
			// the SET_ROWS after the views of the ROPE's result (nodes recording nothing)
			j := i + 1
			for j < len(nodes) && RecordsNothing(nodes[j]) {
				j++
			}
			if j < len(nodes) && ropeSetRowsFusable(e.dev, nodes[i], nodes[j]) {
				mark(i, fuseInNext)
				mark(j, fuseRopeSetRows)
				i = j
			}
		}
	}
	if len(fs) == 0 {
		return e.fused[:0]
	}
	return fs
}

// rmsMulFusable reports whether mul = MUL(norm, w) can be recorded with norm = RMS_NORM(x): all
// f32 with the shaders' strides, w repeating over MUL's shape.
func rmsMulFusable(d *Device, norm, mul *core.Tensor) bool {
	if norm.Op != core.OpRMSNorm || mul.Op != core.OpMul || mul.Src[0] != norm || norm.IsEmpty() {
		return false
	}
	w := mul.Src[1]
	if w == nil || w.Type != core.TypeF32 || mul.Type != core.TypeF32 || mul.Ne != norm.Ne {
		return false
	}
	return Supports(d, norm) && Supports(d, mul) && stridesIn(w, 4) && stridesIn(mul, 4) && core.CanRepeat(w, mul)
}

// addRMSMulFusable reports whether add = ADD(a, b), norm = RMS_NORM(add) and mul = MUL(norm, w)
// can be recorded as one dispatch: rmsMulFusable, and a, b and add f32 of one shape and one set of
// strides (the shader addresses them all with the source's).
func addRMSMulFusable(d *Device, add, norm, mul *core.Tensor) bool {
	if add.Op != core.OpAdd || norm.Src[0] != add || !rmsMulFusable(d, norm, mul) || !Supports(d, add) {
		return false
	}
	a, b := add.Src[0], add.Src[1]
	return a != nil && b != nil && a.Type == core.TypeF32 && b.Type == core.TypeF32 && add.Type == core.TypeF32 &&
		a.Ne == add.Ne && b.Ne == add.Ne && a.Nb == add.Nb && b.Nb == add.Nb && stridesIn(add, 4)
}

const rmsNormMulPushSize = 30 * 4
const addRMSNormMulPushSize = 32 * 4

// encodeRMSNormMul records norm = RMS_NORM(x) and mul = MUL(norm, w) as one dispatch; with add
// (x = ADD(a, b), nil otherwise) the ADD too.
func (e *Encoder) encodeRMSNormMul(add, norm, mul *core.Tensor) error {
	x, w := norm.Src[0], mul.Src[1]
	name, bindings, push, ts := "rms_norm_mul_f32", 4, uint32(rmsNormMulPushSize), []*core.Tensor{x, w, norm, mul}
	if add != nil {
		name, bindings, push = "add_rms_norm_mul_f32", 6, addRMSNormMulPushSize
		ts = []*core.Tensor{add.Src[0], w, norm, mul, add.Src[1], add}
	}
	p, err := e.pipeline(name, bindings, push, e.dev.rowWG(norm.Ne[0]))
	if err != nil {
		return err
	}
	var ops [6]operand
	for i, t := range ts {
		if ops[i], err = e.bindTensor(t, 4); err != nil {
			return err
		}
	}
	ox, ow, on, om := ops[0], ops[1], ops[2], ops[3]
	// The results are written, MUL reads norm's values from registers (and RMS_NORM the sum's), so
	// the dispatch reads x and w (a, b and w).
	if add == nil {
		err = e.syncWrites([]operand{on, om}, ox, ow)
	} else {
		err = e.syncWrites([]operand{ops[5], on, om}, ox, ops[4], ow)
	}
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pushRows(pc, norm, x, 4)
	pc.U32(ox.offs, on.offs)
	pc.F32(core.EpsOf(norm))
	pc.U32(u32(norm.NRows()))
	pushShape(pc, w.Ne)
	pushStrides(pc, w, 4)
	pushStrides(pc, mul, 4)
	pc.U32(ow.offs, om.offs)
	groups := [3]uint32{e.groups(norm.NRows(), 1, 0), 1, 1}
	if add == nil {
		return e.dispatch(p, groups, pc.Bytes(), ox.bind, on.bind, ow.bind, om.bind)
	}
	pc.U32(ops[4].offs, ops[5].offs)
	return e.dispatch(p, groups, pc.Bytes(), ox.bind, on.bind, ow.bind, om.bind, ops[4].bind, ops[5].bind)
}

// ropeSetRowsFusable reports whether set = SET_ROWS(cache, view of rope, idx) can be recorded
// with rope: a forward ROPE of one token (f32, NORMAL or NEOX: the fused push block has no
// sections) with a contiguous result, stored whole as one row (one index) of an f32, f16 or bf16
// cache.
func ropeSetRowsFusable(d *Device, rope, set *core.Tensor) bool {
	if set.Op != core.OpSetRows || RecordsNothing(rope) || RecordsNothing(set) || !supportsRope(d, rope) ||
		!supportsSetRows(d, set) {
		return false
	}
	src, idx := set.Src[1], set.Src[2]
	rp := core.RopeParamsOf(rope)
	switch {
	case rope.Type != core.TypeF32 || rp.Mode != core.RopeNormal && rp.Mode != core.RopeNeox:
		return false
	case !rope.IsContiguous() || rope.Ne[2] != 1 || rope.Ne[3] != 1:
		return false
	case src.ViewSrc != rope || src.Offset != rope.Offset || !src.IsContiguous() || src.NElements() != rope.NElements() ||
		src.Ne[1] != 1 || src.Ne[2] != 1 || src.Ne[3] != 1 || idx.NElements() != 1:
		return false
	}
	return set.Type.IsFloat()
}

// RecordsNothing reports whether a graph node records no work (a leaf's placeholder, a view, an
// empty tensor): the backends skip it rather than Encode it.
func RecordsNothing(n *core.Tensor) bool { return n.Op == core.OpNone || n.Op.IsView() || n.IsEmpty() }

// encodeRopeSetRows records rope and set = SET_ROWS(cache, view of rope, idx) as one dispatch.
func (e *Encoder) encodeRopeSetRows(rope, set *core.Tensor) error {
	dt := elemTypes[set.Type]
	p, err := e.pipeline("rope_set_rows_"+dt.name, 7, ropePushSize, copyWG)
	if err != nil {
		return err
	}
	oa, op, of, err := e.bindRopeSources(rope, 4)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(rope, 4)
	if err != nil {
		return err
	}
	oi, err := e.bindTensor(set.Src[2], 4)
	if err != nil {
		return err
	}
	oc, err := e.bindTensor(set, dt.unit)
	if err != nil {
		return err
	}
	if err := e.syncWrites([]operand{od, oc}, oa, op, of, oi); err != nil {
		return err
	}
	st, err := e.addCheck(e.node, set)
	if err != nil {
		return err
	}
	pc, items := e.pushRope(rope, oa, op, of, od, &ropeCache{
		offsI: oi.offs, offsC: oc.offs, nb1: u32(set.Nb[1] / dt.unit), rows: u32(set.Ne[1]),
		idx64: b2u(set.Src[2].Type == core.TypeI64), nb0: u32(set.Nb[0] / dt.unit)})
	return e.dispatch(p, [3]uint32{e.groups(items, copyWG, 0), 1, 1}, pc.Bytes(), oa.bind, op.bind, of.bind, od.bind,
		oi.bind, oc.bind, st)
}
