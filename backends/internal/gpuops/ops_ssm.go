package gpuops

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// State-space and linear-attention ops (shaders/ssm.comp, one MODE each): SSM_CONV, SSM_SCAN,
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7, SOLVE_TRI, GATED_DELTA_NET. Each invocation runs one
// independent recurrence (a state row or column through every token of its sequence) or one
// output element serially, in the CPU reference kernels' order; the running state lives in the
// result's state rows. All f32 (SSM_SCAN's ids i32), result contiguous; sources are addressed by
// element strides where the constructors allow views.

func init() {
	for _, op := range []core.Op{core.OpSSMConv, core.OpSSMScan, core.OpRWKVWKV6, core.OpGatedLinearAttn,
		core.OpRWKVWKV7, core.OpSolveTri, core.OpGatedDeltaNet} {
		registerOp(op, opImpl{supports: supportsSSM, encode: (*Encoder).encodeSSM})
	}
}

// Modes of ssm.comp.
var ssmModes = map[core.Op]uint32{
	core.OpSSMConv: 0, core.OpSSMScan: 1, core.OpRWKVWKV6: 2, core.OpGatedLinearAttn: 3, core.OpRWKVWKV7: 4,
	core.OpSolveTri: 5, core.OpGatedDeltaNet: 6,
}

const (
	ssmPushSize = 32 * 4
	ssmWG       = 64
)

// ssmSources is the number of sources of each op (ggml's order).
func ssmSources(op core.Op) int {
	switch op {
	case core.OpSSMConv, core.OpSolveTri:
		return 2
	case core.OpGatedLinearAttn:
		return 5
	case core.OpSSMScan, core.OpRWKVWKV7:
		return 7
	}
	return 6 // RWKV_WKV6, GATED_DELTA_NET
}

func supportsSSM(_ *Device, t *core.Tensor) bool {
	if t.Type != core.TypeF32 || !t.IsContiguous() || !eltAddressable(t, 4) || !core.StateSpaceNodeValid(t) {
		return false
	}
	for i, s := range t.Src[:ssmSources(t.Op)] {
		want := core.TypeF32
		if t.Op == core.OpSSMScan && i == 6 {
			want = core.TypeI32
		}
		if s == nil || s.Type != want || !eltAddressable(s, 4) {
			return false
		}
	}
	return true
}

func (e *Encoder) encodeSSM(n *core.Tensor) error {
	binds, _, err := e.bindF32Slots(n, ssmSources(n.Op), 8)
	if err != nil {
		return err
	}
	var prm [23]uint32
	var items int64
	st := func(t *core.Tensor, d int) uint32 { return u32(t.Nb[d] / 4) }
	switch n.Op {
	case core.OpSSMConv:
		sx, c := n.Src[0], n.Src[1]
		prm[0], prm[1], prm[2] = u32(c.Ne[0]), u32(n.Ne[0]), u32(n.Ne[1])
		prm[4], prm[5], prm[6], prm[7], prm[8] = st(sx, 0), st(sx, 1), st(sx, 2), st(c, 0), st(c, 1)
		items = n.NElements()
	case core.OpSSMScan:
		s, x, a, b, cm, ids := n.Src[0], n.Src[1], n.Src[3], n.Src[4], n.Src[5], n.Src[6]
		prm[0], prm[1], prm[2], prm[3] = u32(s.Ne[0]), u32(s.Ne[1]), u32(x.Ne[1]), u32(b.Ne[1])
		prm[4], prm[5], prm[6], prm[7] = u32(x.Ne[2]), u32(x.Ne[3]), uint32(core.SnapshotSlotsOf(n)), b2u(a.Ne[0] == 1)
		prm[8], prm[9], prm[10], prm[11], prm[12], prm[13] = st(x, 2), st(x, 3), st(b, 2), st(b, 3), st(cm, 2), st(cm, 3)
		prm[14], prm[15], prm[16] = st(ids, 0), u32(s.Ne[3]), u32(x.NElements())
		items = x.Ne[3] * x.Ne[1] * x.Ne[0]
	case core.OpRWKVWKV6, core.OpGatedLinearAttn, core.OpRWKVWKV7:
		ref, state := n.Src[1], n.Src[ssmSources(n.Op)-1]
		prm[0], prm[1], prm[2], prm[3] = u32(ref.Ne[0]), u32(ref.Ne[1]), u32(ref.Ne[2]), u32(state.Ne[1])
		prm[4] = math.Float32bits(core.GatedLinearAttnScaleOf(n))
		items = state.Ne[1] * ref.Ne[1] * ref.Ne[0]
	case core.OpSolveTri:
		b := n.Src[1]
		prm[0], prm[1] = u32(b.Ne[1]), u32(b.Ne[0])
		items = b.Ne[0] * b.Ne[2] * b.Ne[3]
	case core.OpGatedDeltaNet:
		q, k, v, g := n.Src[0], n.Src[1], n.Src[2], n.Src[3]
		S, H, nSeqs := v.Ne[0], v.Ne[1], v.Ne[3]
		prm[0], prm[1], prm[2], prm[3] = u32(S), u32(H), u32(v.Ne[2]), u32(nSeqs)
		prm[4], prm[5] = uint32(core.SnapshotSlotsOf(n)), u32(g.Ne[0])
		prm[6], prm[7], prm[8], prm[9], prm[10] = u32(q.Ne[1]), st(q, 1), st(q, 2), st(q, 3), u32(nSeqs/q.Ne[3])
		prm[11], prm[12], prm[13], prm[14], prm[15] = u32(k.Ne[1]), st(k, 1), st(k, 2), st(k, 3), u32(nSeqs/k.Ne[3])
		prm[16], prm[17], prm[18] = st(v, 1), st(v, 2), st(v, 3)
		prm[19] = math.Float32bits(1 / float32(math.Sqrt(float64(S))))
		items = nSeqs * H * S
	}
	if items == 0 {
		return nil
	}
	p, err := e.pipeline("ssm", 8, ssmPushSize, ssmWG, ssmModes[n.Op])
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pc.U32(u32(items))
	for _, b := range binds {
		pc.U32(b.offs)
	}
	pc.U32(prm[:]...)
	groups := e.groups(items, ssmWG, 0)
	if n.Op == core.OpSSMScan { // a workgroup per state row
		groups = e.groups(items, 1, 0)
	}
	return e.dispatch(p, [3]uint32{groups, 1, 1}, pc.Bytes(),
		binds[0].bind, binds[1].bind, binds[2].bind, binds[3].bind, binds[4].bind, binds[5].bind, binds[6].bind, binds[7].bind)
}
