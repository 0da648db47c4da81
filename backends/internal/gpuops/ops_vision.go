package gpuops

import (
	"github.com/tandem-ml/tandem/core"
)

// GROUP_NORM (shaders/group_norm.comp, a workgroup per group and i3, f32 tree reductions),
// UPSCALE (upscale.comp, every mode and flag, the CPU's scale factors from the host), WIN_PART,
// WIN_UNPART and ADD_REL_POS (win.comp, one MODE each) and GET_REL_POS (get_rel_pos.comp, f16,
// needs 16-bit storage), after the CPU kernels (backends/cpu/ops_vision.go). Sources are addressed
// by element strides; GROUP_NORM and ADD_REL_POS work in place. The custom ops (MAP_CUSTOM1..3,
// CUSTOM) are not registered: a Go function cannot run on the device, so the scheduler keeps them
// on the CPU.

func init() {
	registerOp(core.OpGroupNorm, opImpl{supports: supportsGroupNorm, encode: (*Encoder).encodeGroupNorm})
	registerOp(core.OpUpscale, opImpl{supports: supportsUpscale, encode: (*Encoder).encodeUpscale})
	for _, op := range []core.Op{core.OpWinPart, core.OpWinUnpart, core.OpAddRelPos} {
		registerOp(op, opImpl{supports: supportsWin, encode: (*Encoder).encodeWin})
	}
	registerOp(core.OpGetRelPos, opImpl{supports: supportsGetRelPos, encode: (*Encoder).encodeGetRelPos})
}

// f32Elems reports whether t is f32 and addressable in 4-byte elements within the shader index
// range.
func f32Elems(t *core.Tensor) bool {
	return t != nil && t.Type == core.TypeF32 && stridesIn(t, 4) && t.NElements() < maxShaderIndex
}

func supportsGroupNorm(_ *Device, t *core.Tensor) bool {
	a := t.Src[0]
	g, _ := core.GroupNormParamsOf(t)
	return f32Elems(a) && f32Elems(t) && a.Ne == t.Ne && g >= 1
}

const groupNormPushSize = 17 * 4

func (e *Encoder) encodeGroupNorm(n *core.Tensor) error {
	a := n.Src[0]
	p, err := e.pipeline("group_norm_f32", 2, groupNormPushSize, e.dev.rowWG(n.Ne[0]*n.Ne[1]))
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	groups, eps := core.GroupNormParamsOf(n)
	per := (n.Ne[2] + int64(groups) - 1) / int64(groups)
	pc := e.push.Reset()
	pushRows(pc, n, a, 4)
	pc.U32(oa.offs, od.offs)
	pc.F32(eps)
	pc.U32(u32(int64(groups)), u32(per))
	tasks := int64(groups) * n.Ne[3]
	return e.dispatch(p, [3]uint32{e.groups(tasks, 1, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

func supportsUpscale(_ *Device, t *core.Tensor) bool {
	a := t.Src[0]
	m := core.ScaleModeOf(t)
	return f32Elems(a) && !a.IsEmpty() && f32Elems(t) && t.IsContiguous() && m.Mode() <= core.ScaleBicubic &&
		(m&core.ScaleAntialias == 0 || m.Mode() == core.ScaleBilinear)
}

const upscalePushSize = 25 * 4

func (e *Encoder) encodeUpscale(n *core.Tensor) error {
	a := n.Src[0]
	p, err := e.pipeline("upscale_f32", 2, upscalePushSize, eltWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	m := core.ScaleModeOf(n)
	// The CPU's scale factors and pixel offset (ggml_compute_forward_upscale_f32).
	var sf [4]float32
	for i := range sf {
		sf[i] = float32(n.Ne[i]) / float32(a.Ne[i])
	}
	po := float32(0.5)
	if m&core.ScaleAlignCorners != 0 {
		po = 0
		for i := range 2 {
			if n.Ne[i] > 1 && a.Ne[i] > 1 {
				sf[i] = float32(n.Ne[i]-1) / float32(a.Ne[i]-1)
			}
		}
	}
	mode := uint32(m.Mode())
	if m&core.ScaleAntialias != 0 {
		mode = 3
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushShape(pc, a.Ne)
	pushStrides(pc, a, 4)
	pushStrides(pc, n, 4)
	pc.U32(oa.offs, od.offs)
	pc.F32(sf[0], sf[1], sf[2], sf[3], po)
	pc.U32(mode, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

// Modes of win.comp.
const (
	winPart uint32 = iota
	winUnpart
	winAddRelPos
)

func supportsWin(_ *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if !f32Elems(a) || !f32Elems(t) || !t.IsContiguous() {
		return false
	}
	switch t.Op {
	case core.OpAddRelPos:
		pw, ph := t.Src[1], t.Src[2]
		return f32Elems(pw) && f32Elems(ph) && a.IsContiguous() && pw.IsContiguous() && ph.IsContiguous() &&
			pw.Ne == ph.Ne && pw.Ne[0]*pw.Ne[0] == a.Ne[0] && a.Ne == t.Ne && pw.Ne[1]*pw.Ne[2]*pw.Ne[3] <= a.NRows()
	default:
		return core.WinShapesAgree(t)
	}
}

const winPushSize = 23 * 4

func (e *Encoder) encodeWin(n *core.Tensor) error {
	a := n.Src[0]
	var mode, prm0, prm1 uint32
	srcs := []use{{a, 4}}
	switch n.Op {
	case core.OpWinPart, core.OpWinUnpart:
		npx, _, w := core.WinParams(n)
		mode, prm0, prm1 = winPart, uint32(npx), uint32(w)
		if n.Op == core.OpWinUnpart {
			mode = winUnpart
		}
	case core.OpAddRelPos:
		pw := n.Src[1]
		mode, prm0, prm1 = winAddRelPos, u32(pw.Ne[0]), u32(pw.Ne[1]*pw.Ne[2]*pw.Ne[3])
		srcs = append(srcs, use{pw, 4}, use{n.Src[2], 4})
	}
	p, err := e.pipeline("win_f32", 4, winPushSize, eltWG, mode)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, srcs...)
	if err != nil {
		return err
	}
	od := ops[len(ops)-1]
	ow, oh := ops[0], ops[0] // unused slots: any buffer
	if len(ops) == 4 {
		ow, oh = ops[1], ops[2]
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushShape(pc, a.Ne)
	pushStrides(pc, a, 4)
	pushStrides(pc, n, 4)
	pc.U32(ops[0].offs, ow.offs, oh.offs, od.offs, prm0, prm1, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), ops[0].bind, ow.bind, oh.bind, od.bind)
}

func supportsGetRelPos(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	return d.Storage16Bit && a != nil && a.Type == core.TypeF16 && t.Type == core.TypeF16 && stridesIn(a, 2) &&
		stridesIn(t, 2) && t.NElements() < maxShaderIndex && a.Ne[0] == t.Ne[0] && a.Ne[1] >= 2*t.Ne[1]-1 &&
		t.Ne[1] == t.Ne[2]
}

const getRelPosPushSize = 13 * 4

func (e *Encoder) encodeGetRelPos(n *core.Tensor) error {
	a := n.Src[0]
	p, err := e.pipeline("get_rel_pos_f16", 2, getRelPosPushSize, eltWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 2, use{a, 2})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, n, 2)
	pc.U32(u32(a.Nb[0]/2), u32(a.Nb[1]/2), oa.offs, od.offs, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}
