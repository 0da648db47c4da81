package gpuops

import (
	"github.com/tandem-ml/tandem/core"
)

// The training ops, after the CPU kernels: SILU_BACK (silu_back.comp), RMS_NORM_BACK and
// SOFT_MAX_BACK (norm_back.comp), ROPE_BACK (rope.comp with BACK), GET_ROWS_BACK and REPEAT_BACK
// (one thread per result element, adding in the CPU's order), DIAG_MASK_ZERO (diag_mask_inf.comp
// with ZERO), CROSS_ENTROPY_LOSS and its gradient (cross_entropy.comp) and the optimizer steps
// OPT_STEP_ADAMW and OPT_STEP_SGD (opt_step.comp), which update the parameter (and AdamW's moments)
// in place. All work on f32 (ROPE_BACK also f16).

func init() {
	registerOp(core.OpSiluBack, opImpl{supports: supportsSiluBack, encode: (*Encoder).encodeSiluBack})
	registerOp(core.OpRMSNormBack, opImpl{supports: supportsNormBack, encode: (*Encoder).encodeNormBack})
	registerOp(core.OpSoftMaxBack, opImpl{supports: supportsNormBack, encode: (*Encoder).encodeNormBack})
	registerOp(core.OpRopeBack, opImpl{supports: supportsRope, encode: (*Encoder).encodeRope})
	registerOp(core.OpGetRowsBack, opImpl{supports: supportsGetRowsBack, encode: (*Encoder).encodeGetRowsBack})
	registerOp(core.OpRepeatBack, opImpl{supports: supportsRepeatBack, encode: (*Encoder).encodeRepeatBack})
	registerOp(core.OpDiagMaskZero, opImpl{supports: supportsNorm, encode: (*Encoder).encodeDiagMaskInf})
	registerOp(core.OpCrossEntropyLoss, opImpl{supports: supportsCrossEntropy, encode: (*Encoder).encodeCrossEntropy})
	registerOp(core.OpCrossEntropyLossBack, opImpl{supports: supportsCrossEntropy, encode: (*Encoder).encodeCrossEntropy})
	registerOp(core.OpOptStepAdamW, opImpl{supports: supportsOptStep, encode: (*Encoder).encodeOptStep})
	registerOp(core.OpOptStepSGD, opImpl{supports: supportsOptStep, encode: (*Encoder).encodeOptStep})
}

// allF32 reports whether every tensor is f32, addressable in floats, and small enough for 32-bit
// shader indices.
func allF32(ts ...*core.Tensor) bool {
	for _, t := range ts {
		if t == nil || t.Type != core.TypeF32 || !stridesIn(t, 4) || t.NElements() >= maxShaderIndex {
			return false
		}
	}
	return true
}

func supportsSiluBack(d *Device, t *core.Tensor) bool {
	g, x := t.Src[0], t.Src[1]
	return allF32(t, g, x) && g.Ne == t.Ne && x.Ne == t.Ne
}

const siluBackPushSize = 20 * 4

func (e *Encoder) encodeSiluBack(n *core.Tensor) error {
	g, x := n.Src[0], n.Src[1]
	p, err := e.pipeline("silu_back_f32", 3, siluBackPushSize, eltWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{g, 4}, use{x, 4})
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, g, 4)
	pushStrides(pc, x, 4)
	pushStrides(pc, n, 4)
	pc.U32(ops[0].offs, ops[1].offs, ops[2].offs, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), ops[0].bind, ops[1].bind, ops[2].bind)
}

func supportsNormBack(d *Device, t *core.Tensor) bool {
	a, bt := t.Src[0], t.Src[1]
	return allF32(t, a, bt) && a.Ne == t.Ne && bt.Ne == t.Ne
}

const normBackPushSize = 21 * 4

func (e *Encoder) encodeNormBack(n *core.Tensor) error {
	a, bt := n.Src[0], n.Src[1]
	name := "rms_norm_back_f32"
	if n.Op == core.OpSoftMaxBack {
		name = "soft_max_back_f32"
	}
	p, err := e.pipeline(name, 3, normBackPushSize, e.dev.rowWG(n.Ne[0]))
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4}, use{bt, 4})
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, a, 4)
	pushStrides(pc, bt, 4)
	pushStrides(pc, n, 4)
	pc.U32(ops[0].offs, ops[1].offs, ops[2].offs)
	pc.F32(n.ParamF32(0)) // eps, or the softmax scale
	pc.U32(u32(n.NRows()))
	return e.dispatch(p, [3]uint32{e.groups(n.NRows(), 1, 0), 1, 1}, pc.Bytes(), ops[0].bind, ops[1].bind, ops[2].bind)
}

func supportsGetRowsBack(d *Device, t *core.Tensor) bool {
	g, idx := t.Src[0], t.Src[1]
	gradOK := allF32(t, g) || g != nil && g.Type == core.TypeF16 && d.Storage16Bit && allF32(t) && stridesIn(g, 2) && g.NElements() < maxShaderIndex
	return gradOK && idx != nil && idx.Type == core.TypeI32 && stridesIn(idx, 4) &&
		g.Ne[0] == t.Ne[0] && g.Ne[2] == t.Ne[2] && g.Ne[3] == t.Ne[3] &&
		idx.Ne[0] <= g.Ne[1] && idx.Ne[1] == g.Ne[2] && idx.Ne[2] == g.Ne[3] && idx.Ne[3] == 1
}

const getRowsBackPushSize = 20 * 4

func (e *Encoder) encodeGetRowsBack(n *core.Tensor) error {
	g, idx := n.Src[0], n.Src[1]
	name, gu := "get_rows_back_f32", int64(4)
	if g.Type == core.TypeF16 {
		name, gu = "get_rows_back_f16", 2
	}
	p, err := e.pipeline(name, 3, getRowsBackPushSize, eltWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{g, gu}, use{idx, 4})
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, n, 4)
	pushStrides(pc, g, gu)
	pc.U32(u32(idx.Nb[0]/4), u32(idx.Nb[1]/4), u32(idx.Nb[2]/4), u32(idx.Ne[0]))
	pc.U32(ops[0].offs, ops[1].offs, ops[2].offs, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), ops[0].bind, ops[1].bind, ops[2].bind)
}

func supportsRepeatBack(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if !allF32(t, a) {
		return false
	}
	for i := range core.MaxDims {
		if t.Ne[i] <= 0 || a.Ne[i]%t.Ne[i] != 0 {
			return false
		}
	}
	return true
}

const repeatBackPushSize = 19 * 4

func (e *Encoder) encodeRepeatBack(n *core.Tensor) error {
	a := n.Src[0]
	p, err := e.pipeline("repeat_back_f32", 2, repeatBackPushSize, eltWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4})
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, n, 4)
	pushStrides(pc, a, 4)
	pc.U32(u32(a.Ne[0]/n.Ne[0]), u32(a.Ne[1]/n.Ne[1]), u32(a.Ne[2]/n.Ne[2]), u32(a.Ne[3]/n.Ne[3]))
	pc.U32(ops[0].offs, ops[1].offs, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), ops[0].bind, ops[1].bind)
}

func supportsCrossEntropy(d *Device, t *core.Tensor) bool {
	logits, labels := t.Src[0], t.Src[1]
	if t.Op == core.OpCrossEntropyLossBack {
		g := t.Src[0]
		logits, labels = t.Src[1], t.Src[2]
		if !allF32(g, t) || g.NElements() != 1 || t.Nb[0] != 4 {
			return false
		}
	}
	return allF32(t, logits, labels) && logits.Ne == labels.Ne && logits.Nb[0] == 4 && labels.Nb[0] == 4
}

const crossEntropyPushSize = 17 * 4

func (e *Encoder) encodeCrossEntropy(n *core.Tensor) error {
	back := n.Op == core.OpCrossEntropyLossBack
	logits, labels := n.Src[0], n.Src[1]
	name, wg := "cross_entropy_loss_f32", uint32(eltWG)
	if back {
		logits, labels = n.Src[1], n.Src[2]
		name, wg = "cross_entropy_loss_back_f32", 64
	}
	p, err := e.pipeline(name, 4, crossEntropyPushSize, wg)
	if err != nil {
		return err
	}
	srcs := []use{{logits, 4}, {labels, 4}}
	if back {
		srcs = append(srcs, use{n.Src[0], 4})
	}
	ops, err := e.bindNode(n, 4, srcs...)
	if err != nil {
		return err
	}
	ol, oy := ops[0], ops[1]
	od := ops[len(ops)-1]
	og := od // the loss binds its own dst there (never read)
	if back {
		og = ops[2]
	}
	pc := e.push.Reset()
	pc.U32(u32(logits.Ne[0]), u32(logits.Ne[1]), u32(logits.Ne[2]))
	pc.U32(u32(logits.Nb[1]/4), u32(logits.Nb[2]/4), u32(logits.Nb[3]/4))
	pc.U32(u32(labels.Nb[1]/4), u32(labels.Nb[2]/4), u32(labels.Nb[3]/4))
	pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4), u32(n.Nb[3]/4))
	pc.U32(ol.offs, oy.offs, od.offs, og.offs, u32(logits.NRows()))
	groups := uint32(1)
	if back { // a workgroup per row
		groups = e.groups(logits.NRows(), 1, 0)
	}
	return e.dispatch(p, [3]uint32{groups, 1, 1}, pc.Bytes(), ol.bind, oy.bind, od.bind, og.bind)
}

func supportsOptStep(d *Device, t *core.Tensor) bool {
	w, g := t.Src[0], t.Src[1]
	if !allF32(w, g) || !w.IsContiguous() || !g.IsContiguous() || g.Ne != w.Ne {
		return false
	}
	if t.Op == core.OpOptStepSGD {
		params := t.Src[2]
		return allF32(params) && params.IsContiguous() && params.NElements() == core.SGDNParams
	}
	m, v, params := t.Src[2], t.Src[3], t.Src[4]
	return allF32(m, v, params) && m.IsContiguous() && v.IsContiguous() && m.Ne == w.Ne && v.Ne == w.Ne &&
		params.IsContiguous() && params.NElements() == core.AdamWNParams
}

const optStepPushSize = 6 * 4

func (e *Encoder) encodeOptStep(n *core.Tensor) error {
	w, g := n.Src[0], n.Src[1]
	sgd := n.Op == core.OpOptStepSGD
	name := "opt_step_adamw_f32"
	params := n.Src[4]
	if sgd {
		name, params = "opt_step_sgd_f32", n.Src[2]
	}
	p, err := e.pipeline(name, 5, optStepPushSize, eltWG)
	if err != nil {
		return err
	}
	ow, err := e.bindTensor(n, 4) // the step is a view of w: w's memory
	if err != nil {
		return err
	}
	og, err := e.bindTensor(g, 4)
	if err != nil {
		return err
	}
	op, err := e.bindTensor(params, 4)
	if err != nil {
		return err
	}
	om, ov := ow, ow // SGD: never read
	writes := []operand{ow}
	if !sgd {
		if om, err = e.bindTensor(n.Src[2], 4); err != nil {
			return err
		}
		if ov, err = e.bindTensor(n.Src[3], 4); err != nil {
			return err
		}
		writes = append(writes, om, ov)
	}
	if err := e.syncWrites(writes, og, op); err != nil {
		return err
	}
	pc := e.push.Reset()
	pc.U32(ow.offs, og.offs, op.offs, om.offs, ov.offs, u32(w.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(w.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), ow.bind, og.bind, op.bind, om.bind, ov.bind)
}
