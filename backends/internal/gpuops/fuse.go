package gpuops

import "github.com/tandem-ml/tandem/core"

// Node fusion: a pair of consecutive nodes recorded as one dispatch, which saves a dispatch and
// the barrier between the two (on a GPU each costs a pipeline drain, more than the work of a
// small node). The fused shader still writes both nodes' results, with the unfused shaders'
// float operations on the same values, so results are bit for bit the same and any other reader
// of the first node (a later node, a scheduler split) finds it.
//
// RMS_NORM + MUL: MUL(RMS_NORM(x), w) with w repeated over the rows, the weighted norm of every
// transformer layer (norm.comp's MUL variant), as the CPU backend fuses it.

// fusion is a node's part in a fused pair.
type fusion uint8

const (
	fuseNone   fusion = iota
	fuseInNext        // recorded with the next node
	fuseRMSMul        // MUL recording the RMS_NORM before it
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
	for i := 0; i+1 < len(nodes); i++ {
		if rmsMulFusable(e.dev, nodes[i], nodes[i+1]) {
			if len(fs) == 0 {
				fs = append(fs, make([]fusion, len(nodes))...)
				clear(fs)
			}
			fs[i], fs[i+1] = fuseInNext, fuseRMSMul
			i++
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

const rmsNormMulPushSize = 30 * 4

// encodeRMSNormMul records norm = RMS_NORM(x) and mul = MUL(norm, w) as one dispatch.
func (e *Encoder) encodeRMSNormMul(norm, mul *core.Tensor) error {
	x, w := norm.Src[0], mul.Src[1]
	p, err := e.pipeline("rms_norm_mul_f32", 4, rmsNormMulPushSize, e.dev.rowWG(norm.Ne[0]))
	if err != nil {
		return err
	}
	var ops [4]operand
	for i, t := range []*core.Tensor{x, w, norm, mul} {
		if ops[i], err = e.bindTensor(t, 4); err != nil {
			return err
		}
	}
	ox, ow, on, om := ops[0], ops[1], ops[2], ops[3]
	// Both results are written, MUL reads norm's values from registers, so the pair reads x and w.
	if err := e.syncWrites([]operand{on, om}, ox, ow); err != nil {
		return err
	}
	pc := e.push.Reset()
	pushRows(pc, norm, x, 4)
	pc.U32(ox.offs, on.offs)
	pc.F32(core.EpsOf(norm))
	pc.U32(u32(norm.NRows()))
	for i := range 4 {
		pc.U32(u32(w.Ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(w.Nb[i] / 4))
	}
	for i := range 4 {
		pc.U32(u32(mul.Nb[i] / 4))
	}
	pc.U32(ow.offs, om.offs)
	return e.dispatch(p, [3]uint32{e.groups(norm.NRows(), 1, 0), 1, 1}, pc.Bytes(), ox.bind, on.bind, ow.bind, om.bind)
}
