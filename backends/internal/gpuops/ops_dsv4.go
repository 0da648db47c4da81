package gpuops

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// DeepSeek V4's hyper-connection ops (core.Dsv4HcComb, Dsv4HcPre, Dsv4HcPost; shaders/dsv4_hc.comp,
// one MODE each): an invocation per token (COMB) or per result element (PRE, POST), in the CPU
// kernels' float32 order, every source read at its strides; bit for bit as the CPU (COMB's
// reciprocals and exp correctly rounded, as the CPU's float64-based float32 results).

func init() {
	for _, op := range []core.Op{core.OpDsv4HcComb, core.OpDsv4HcPre, core.OpDsv4HcPost} {
		registerOp(op, opImpl{supports: supportsDsv4, encode: (*Encoder).encodeDsv4})
	}
}

// dsv4Modes are dsv4_hc.comp's MODE per op.
var dsv4Modes = map[core.Op]uint32{core.OpDsv4HcComb: 0, core.OpDsv4HcPre: 1, core.OpDsv4HcPost: 2}

// dsv4Sources is the number of sources of op.
func dsv4Sources(op core.Op) int {
	switch op {
	case core.OpDsv4HcComb:
		return 3
	case core.OpDsv4HcPre:
		return 2
	}
	return 4
}

// dsv4Loops bounds the iterations of any one loop of dsv4_hc.comp an invocation runs on a
// software device (llvmpipe ends a loop after 65,535, counted over all its entries in an
// invocation).
const dsv4Loops = 60000

// supportsDsv4: a node as core's constructors build it (all f32), every tensor addressable in
// floats; on a software device, loops within llvmpipe's limit (DSV4_HC_COMB's inner loops run
// 16 times a round: n_iter up to 3750 for an invocation's one token).
func supportsDsv4(d *Device, t *core.Tensor) bool {
	if !core.Dsv4NodeValid(t) || !eltAddressable(t, 4) || t.NElements() >= maxShaderIndex {
		return false
	}
	if d.Software {
		items := t.NElements()
		perItem := t.Src[1].Ne[0] // PRE's and POST's hc (weights [hc, n_tokens], residual [n, hc, n_tokens])
		switch t.Op {
		case core.OpDsv4HcComb:
			_, nIter := core.Dsv4HcCombParamsOf(t)
			items, perItem = t.Ne[2], 16*int64(nIter)
		case core.OpDsv4HcPost:
			perItem = t.Src[1].Ne[1]
		}
		perInvocation := (items + dsv4WG*int64(d.MaxComputeWorkGroupCount[0]) - 1) / (dsv4WG * int64(d.MaxComputeWorkGroupCount[0]))
		if perInvocation*max(perItem, 1) > dsv4Loops {
			return false
		}
	}
	for _, s := range t.Src[:dsv4Sources(t.Op)] {
		if s == nil || !eltAddressable(s, 4) || s.NElements() >= maxShaderIndex {
			return false
		}
	}
	return true
}

const (
	dsv4PushSize = 22 * 4
	dsv4WG       = 64
)

func (e *Encoder) encodeDsv4(n *core.Tensor) error {
	binds, od, err := e.bindF32Slots(n, dsv4Sources(n.Op), 4)
	if err != nil {
		return err
	}
	st := func(t *core.Tensor, d int) uint32 { return u32(t.Nb[d] / 4) }
	var prm [16]uint32
	var items int64
	switch n.Op {
	case core.OpDsv4HcComb:
		mixes, scale, base := n.Src[0], n.Src[1], n.Src[2]
		eps, nIter := core.Dsv4HcCombParamsOf(n)
		prm[0], prm[1], prm[2], prm[3] = st(mixes, 0), st(mixes, 1), st(scale, 0), st(base, 0)
		prm[4], prm[5], prm[6] = st(n, 0), st(n, 1), st(n, 2)
		prm[7], prm[8] = math.Float32bits(eps), uint32(nIter)
		items = n.Ne[2]
	case core.OpDsv4HcPre:
		x, w := n.Src[0], n.Src[1]
		prm[0], prm[1] = u32(x.Ne[0]), u32(x.Ne[1])
		prm[2], prm[3], prm[4], prm[5], prm[6] = st(x, 0), st(x, 1), st(x, 2), st(w, 0), st(w, 1)
		prm[7], prm[8] = st(n, 0), st(n, 1)
		items = n.NElements()
	case core.OpDsv4HcPost:
		x, res, post, comb := n.Src[0], n.Src[1], n.Src[2], n.Src[3]
		prm[0], prm[1] = u32(n.Ne[0]), u32(n.Ne[1])
		prm[2], prm[3], prm[4], prm[5], prm[6] = st(x, 0), st(x, 1), st(res, 0), st(res, 1), st(res, 2)
		prm[7], prm[8], prm[9], prm[10], prm[11] = st(post, 0), st(post, 1), st(comb, 0), st(comb, 1), st(comb, 2)
		prm[12], prm[13], prm[14] = st(n, 0), st(n, 1), st(n, 2)
		items = n.NElements()
	}
	if items == 0 {
		return nil
	}
	p, err := e.pipeline("dsv4_hc", 5, dsv4PushSize, dsv4WG, dsv4Modes[n.Op])
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pc.U32(u32(items))
	for _, b := range binds {
		pc.U32(b.offs)
	}
	pc.U32(od.offs)
	pc.U32(prm[:]...)
	return e.dispatch(p, [3]uint32{e.groups(items, dsv4WG, 0), 1, 1}, pc.Bytes(),
		binds[0].bind, binds[1].bind, binds[2].bind, binds[3].bind, od.bind)
}
