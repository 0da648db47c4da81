package gpuops

import (
	"math"
	"strings"

	"github.com/tandem-ml/tandem/core"
)

// NORM, RMS_NORM, SOFT_MAX, DIAG_MASK_INF and ROPE, after the CPU kernels
// (backends/cpu/ops_norm.go, ops_softmax.go, ops_rope.go). Every shader reads an
// element before writing it from the same thread (row ops after their
// reductions), so each works in place (dst sharing src0's memory and layout).
// The CPU sums in float64; the shaders use float32 tree reductions, well inside
// ggml's NMSE limits for rows of thousands of elements.

func init() {
	registerOp(core.OpNorm, opImpl{supports: supportsNorm, encode: (*Encoder).encodeNorm})
	registerOp(core.OpRMSNorm, opImpl{supports: supportsNorm, encode: (*Encoder).encodeNorm})
	registerOp(core.OpSoftMax, opImpl{supports: supportsSoftMax, encode: (*Encoder).encodeSoftMax})
	registerOp(core.OpDiagMaskInf, opImpl{supports: supportsNorm, encode: (*Encoder).encodeDiagMaskInf})
	registerOp(core.OpRope, opImpl{supports: supportsRope, encode: (*Encoder).encodeRope})
}

// supportsNorm: f32 in, f32 out of the same shape, any 4-byte strides (NORM,
// RMS_NORM, DIAG_MASK_INF).
func supportsNorm(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	return a != nil && a.Type == core.TypeF32 && t.Type == core.TypeF32 && a.Ne == t.Ne &&
		stridesIn(a, 4) && stridesIn(t, 4) && t.NElements() < maxShaderIndex
}

// rowWG picks the workgroup size of a one-workgroup-per-row shader: a power of
// two from 32 to 256 (within the device limits) near the row length.
func (d *Device) rowWG(ne0 int64) uint32 {
	maxWG := min(uint32(256), d.MaxComputeWorkGroupInvocations, d.MaxComputeWorkGroupSize[0])
	wg := uint32(32)
	for int64(wg) < ne0 && wg*2 <= maxWG {
		wg *= 2
	}
	return min(wg, maxWG)
}

// pushRows appends the shape of t and the strides (in units of unit bytes) of a and t.
func pushRows(pc *Push, t, a *core.Tensor, unit int64) {
	pushShape(pc, t.Ne)
	pushStrides(pc, a, unit)
	pushStrides(pc, t, unit)
}

const normPushSize = 16 * 4

func (e *Encoder) encodeNorm(n *core.Tensor) error {
	a := n.Src[0]
	name := "norm_f32"
	if n.Op == core.OpRMSNorm {
		name = "rms_norm_f32"
	}
	p, err := e.pipeline(name, 2, normPushSize, e.dev.rowWG(n.Ne[0]))
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	pc := e.push.Reset()
	pushRows(pc, n, a, 4)
	pc.U32(oa.offs, od.offs)
	pc.F32(core.EpsOf(n))
	pc.U32(u32(n.NRows()))
	return e.dispatch(p, [3]uint32{e.groups(n.NRows(), 1, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

const diagMaskPushSize = 16 * 4

func (e *Encoder) encodeDiagMaskInf(n *core.Tensor) error {
	a := n.Src[0]
	name := "diag_mask_inf_f32"
	if n.Op == core.OpDiagMaskZero {
		name = "diag_mask_zero_f32"
	}
	p, err := e.pipeline(name, 2, diagMaskPushSize, copyWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	pc := e.push.Reset()
	pushRows(pc, n, a, 4)
	pc.U32(oa.offs, od.offs)
	pc.I32(int32(core.NPastOf(n)))
	pc.U32(u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), copyWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

func supportsSoftMax(d *Device, t *core.Tensor) bool {
	a, m, sk := t.Src[0], t.Src[1], t.Src[2]
	if !supportsNorm(d, t) {
		return false
	}
	if sk != nil && (sk.Type != core.TypeF32 || sk.Ne[0] != a.Ne[2] || !stridesIn(sk, 4)) {
		return false
	}
	if m == nil {
		return core.SoftMaxParamsOf(t).MaxBias <= 0
	}
	if !(m.Type == core.TypeF32 || (m.Type == core.TypeF16 && d.Storage16Bit)) {
		return false
	}
	return m.Ne[0] == a.Ne[0] && m.Ne[1] >= a.Ne[1] && m.Ne[2] > 0 && m.Ne[3] > 0 &&
		a.Ne[2]%m.Ne[2] == 0 && a.Ne[3]%m.Ne[3] == 0 && m.IsContiguousRows() && stridesIn(m, m.Type.Size())
}

const softMaxPushSize = 30 * 4

func (e *Encoder) encodeSoftMax(n *core.Tensor) error {
	a, m, sk := n.Src[0], n.Src[1], n.Src[2]
	name := "soft_max_f32"
	munit := int64(4)
	if m != nil && m.Type == core.TypeF16 {
		name, munit = "soft_max_f32_mask_f16", 2
	}
	p, err := e.pipeline(name, 4, softMaxPushSize, e.dev.rowWG(n.Ne[0]))
	if err != nil {
		return err
	}
	oa, err := e.bindTensor(a, 4)
	if err != nil {
		return err
	}
	om := oa // no mask: bind src again (never read)
	if m != nil {
		if om, err = e.bindTensor(m, munit); err != nil {
			return err
		}
	}
	od, err := e.bindTensor(n, 4)
	if err != nil {
		return err
	}
	ok := oa // no sinks: bind src again (never read)
	if sk != nil {
		if ok, err = e.bindTensor(sk, 4); err != nil {
			return err
		}
	}
	if err := e.sync(od, oa, om, ok); err != nil {
		return err
	}
	sp := core.SoftMaxParamsOf(n)
	scale, maxBias := sp.Scale, sp.MaxBias
	pc := e.push.Reset()
	pushRows(pc, n, a, 4)
	if m != nil {
		pc.U32(u32(m.Nb[1]/munit), u32(m.Nb[2]/munit), u32(m.Nb[3]/munit), u32(m.Ne[2]), u32(m.Ne[3]))
	} else {
		pc.U32(0, 0, 0, 1, 1)
	}
	pc.U32(oa.offs, om.offs, od.offs)
	pc.F32(scale)
	pc.U32(b2u(m != nil), b2u(m != nil && maxBias > 0))
	// ALiBi (core.AlibiSlope with n_head = ne2): slope = 2^(e0*(h+1)) for h < nLog2,
	// else 2^(e1*(2(h-nLog2)+1)).
	var e0, e1 float32
	nLog2 := int64(1)
	if maxBias > 0 {
		nLog2 = int64(1) << uint(math.Floor(math.Log2(float64(n.Ne[2]))))
		e0 = float32(-float64(maxBias) / float64(nLog2))
		e1 = float32(-float64(maxBias) / 2 / float64(nLog2))
	}
	pc.F32(e0, e1)
	pc.U32(u32(nLog2), u32(n.NRows()))
	if sk != nil {
		pc.U32(1, ok.offs, u32(sk.Nb[0]/4))
	} else {
		pc.U32(0, 0, 0)
	}
	return e.dispatch(p, [3]uint32{e.groups(n.NRows(), 1, 0), 1, 1}, pc.Bytes(), oa.bind, om.bind, od.bind, ok.bind)
}

func supportsRope(d *Device, t *core.Tensor) bool {
	a, pos, ff := t.Src[0], t.Src[1], t.Src[2]
	if a == nil || pos == nil {
		return false
	}
	rp := core.RopeParamsOf(t)
	multi := core.RopeIsMulti(rp.Mode)
	sec := rp.Sections
	nPos := a.Ne[2]
	if multi {
		nPos *= 4
	}
	switch {
	case a.Type != core.TypeF32 && !(a.Type == core.TypeF16 && d.Storage16Bit):
		return false
	case t.Type != a.Type || t.Ne != a.Ne || !stridesIn(a, a.Type.Size()) || !stridesIn(t, t.Type.Size()):
		return false
	case pos.Type != core.TypeI32 || pos.Ne[0] < nPos || !stridesIn(pos, 4):
		return false
	case rp.Mode != core.RopeNormal && rp.Mode != core.RopeNeox && rp.Mode != core.RopeMrope &&
		rp.Mode != core.RopeVision && rp.Mode != core.RopeImrope:
		return false
	case rp.NDims <= 0 || rp.NDims%2 != 0 || int64(rp.NDims) > a.Ne[0]:
		return false
	case multi && (sec[0] < 0 || sec[1] < 0 || sec[2] < 0 || sec[3] < 0 || sec[0]+sec[1]+sec[2] <= 0 ||
		sec[0] > 0xffff || sec[1] > 0xffff || sec[2] > 0xffff || sec[3] > 0xffff):
		return false // the shader packs each section in 16 bits
	case rp.Mode == core.RopeVision && (int64(rp.NDims) != a.Ne[0]/2 || rp.NOffs != 0):
		return false
	case rp.NOffs < 0 || rp.NOffs%2 != 0 || int64(rp.NOffs)+int64(rp.NDims) > a.Ne[0]:
		return false
	case ff != nil && (ff.Type != core.TypeF32 || ff.Ne[0] < ropeGPUPairs(rp) || !stridesIn(ff, 4)):
		return false
	}
	return t.NElements() < maxShaderIndex
}

// ropeGPUPairs is the number of rotated pairs per row: n_dims/2, n_dims for VISION.
func ropeGPUPairs(rp core.RopeParams) int64 {
	if rp.Mode == core.RopeVision {
		return int64(rp.NDims)
	}
	return int64(rp.NDims / 2)
}

const ropePushSize = 32 * 4

func (e *Encoder) encodeRope(n *core.Tensor) error {
	a := n.Src[0]
	name, unit := "rope_f32", int64(4)
	if a.Type == core.TypeF16 {
		name, unit = "rope_f16", 2
	}
	if n.Op == core.OpRopeBack {
		name = strings.Replace(name, "rope_", "rope_back_", 1)
	}
	p, err := e.pipeline(name, 4, ropePushSize, copyWG)
	if err != nil {
		return err
	}
	oa, op, of, err := e.bindRopeSources(n, unit)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, unit)
	if err != nil {
		return err
	}
	if err := e.sync(od, oa, op, of); err != nil {
		return err
	}
	pc, items := e.pushRope(n, oa, op, of, od, nil)
	return e.dispatch(p, [3]uint32{e.groups(items, copyWG, 0), 1, 1}, pc.Bytes(), oa.bind, op.bind, of.bind, od.bind)
}

// bindRopeSources binds ROPE node n's input (in units of unit bytes), positions and frequency
// factors (the positions again when there are none: never read).
func (e *Encoder) bindRopeSources(n *core.Tensor, unit int64) (oa, op, of operand, err error) {
	if oa, err = e.bindTensor(n.Src[0], unit); err != nil {
		return
	}
	if op, err = e.bindTensor(n.Src[1], 4); err != nil {
		return
	}
	of = op
	if ff := n.Src[2]; ff != nil {
		of, err = e.bindTensor(ff, 4)
	}
	return
}

// ropeCache is the KV cache row of rope.comp's SET_ROWS variants: the index and cache view
// offsets, the cache's row stride, rows and element stride (units), and whether the index is i64.
type ropeCache struct {
	offsI, offsC, nb1, rows, idx64, nb0 uint32
}

// pushRope packs rope.comp's push constants for ROPE node n (its sources bound at oa, op and of,
// dst at od) and returns them with the work items; with c, the SET_ROWS variants' block (the
// cache's parameters in place of dst's strides and the sections).
func (e *Encoder) pushRope(n *core.Tensor, oa, op, of, od operand, c *ropeCache) (*Push, int64) {
	a, pos, ff := n.Src[0], n.Src[1], n.Src[2]
	rp := core.RopeParamsOf(n)
	nDims := int64(rp.NDims)
	pairs := ropeGPUPairs(rp)
	items := n.NRows() * (pairs + n.Ne[0] - 2*pairs)
	lo, hi := ropeCorrDims(rp.NDims, rp.NCtxOrig, rp.FreqBase, rp.BetaFast, rp.BetaSlow)
	mscale := float64(rp.AttnFactor)
	if rp.ExtFactor != 0 {
		mscale *= 1 + 0.1*math.Log(1/float64(rp.FreqScale))
	}
	var ffStride int64
	if ff != nil {
		ffStride = ff.Nb[0] / 4
	}
	var sec [4]uint32
	if core.RopeIsMulti(rp.Mode) {
		for i, s := range rp.Sections {
			sec[i] = uint32(s)
		}
	}
	unit := n.Type.Size()
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, a, unit)
	if c == nil {
		pushStrides(pc, n, unit)
	} else {
		pc.U32(c.offsI, c.offsC, c.nb1, c.rows)
	}
	pc.U32(u32(pos.Nb[0]/4), u32(ffStride))
	pc.U32(oa.offs, op.offs, of.offs, od.offs)
	pc.U32(u32(nDims), uint32(rp.Mode), b2u(ff != nil))
	// theta_scale in float64 as in the CPU kernel, passed as a double-float (hi, lo).
	ts := math.Pow(float64(rp.FreqBase), -2/float64(rp.NDims))
	tsHi := float32(ts)
	pc.F32(tsHi, float32(ts-float64(tsHi)), rp.FreqScale, rp.ExtFactor, float32(mscale), float32(lo), float32(hi))
	pc.U32(u32(items), uint32(rp.NOffs))
	if c == nil {
		pc.U32(sec[0]|sec[1]<<16, sec[2]|sec[3]<<16)
	} else {
		pc.U32(c.idx64, c.nb0)
	}
	return pc, items
}

// ropeCorrDims returns YaRN's [lo, hi] correction range (ggml_rope_yarn_corr_dims),
// as the CPU kernel computes it.
func ropeCorrDims(nDims, nCtxOrig int, base, betaFast, betaSlow float32) (float64, float64) {
	dim := func(nRot float32) float64 {
		return float64(nDims) * math.Log(float64(nCtxOrig)/(float64(nRot)*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	lo := math.Max(0, math.Floor(dim(betaFast)))
	hi := math.Min(float64(nDims-1), math.Ceil(dim(betaSlow)))
	return lo, hi
}
