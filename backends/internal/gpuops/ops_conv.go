package gpuops

import (
	"github.com/tandem-ml/tandem/core"
)

// IM2COL (im2col.comp), POOL_1D and POOL_2D (pool.comp). CONV_1D and CONV_2D
// are composites of IM2COL, MUL_MAT and CONT built by core.

func init() {
	registerOp(core.OpIm2Col, opImpl{supports: supportsIm2Col, encode: (*Encoder).encodeIm2Col})
	registerOp(core.OpPool1D, opImpl{supports: supportsPool, encode: (*Encoder).encodePool})
	registerOp(core.OpPool2D, opImpl{supports: supportsPool, encode: (*Encoder).encodePool})
}

const (
	im2colPushSize = 20 * 4
	poolPushSize   = 19 * 4
	convWG         = 256
)

// supportsIm2Col: f32 input with any float-multiple strides, contiguous f32
// or f16 dst (f16 needs 16-bit storage access).
func supportsIm2Col(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || b.Type != core.TypeF32 || !floatStrides(b) || !t.IsContiguous() {
		return false
	}
	switch t.Type {
	case core.TypeF32:
		return true
	case core.TypeF16:
		return d.Storage16Bit
	}
	return false
}

func (e *Encoder) encodeIm2Col(n *core.Tensor) error {
	a, x := n.Src[0], n.Src[1]
	name, du := "im2col_f32", int64(4)
	if n.Type == core.TypeF16 {
		name, du = "im2col_f16", 2
	}
	p, err := e.pipeline(name, 2, im2colPushSize, convWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, du, use{x, 4})
	if err != nil {
		return err
	}
	ox, od := ops[0], ops[1]
	pr := core.Im2ColParamsOf(n)
	// 1-D is 2-D with one input row, one kernel row and one output row.
	oh, ih, kh := int64(1), int64(1), int64(1)
	nbh, nbc, nbn := int64(0), x.Nb[1], x.Nb[2]
	if pr.Is2D {
		oh, ih, kh = n.Ne[2], x.Ne[1], a.Ne[1]
		nbh, nbc, nbn = x.Nb[1], x.Nb[2], x.Nb[3]
	}
	pc := e.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(oh), u32(n.NElements()))
	pc.U32(u32(x.Ne[0]), u32(ih), u32(a.Ne[0]), u32(kh))
	pc.I32(int32(pr.S0), int32(pr.S1), int32(pr.P0), int32(pr.P1), int32(pr.D0), int32(pr.D1))
	pc.U32(u32(x.Nb[0]/4), u32(nbh/4), u32(nbc/4), u32(nbn/4))
	pc.U32(ox.offs, od.offs)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), convWG, 0), 1, 1}, pc.Bytes(), ox.bind, od.bind)
}

// supportsPool: f32 or f16 source (f16 needs 16-bit storage access) with
// element-multiple strides, contiguous f32 dst, max or avg.
func supportsPool(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if a == nil || t.Type != core.TypeF32 || !t.IsContiguous() {
		return false
	}
	if op := core.PoolParamsOf(t).Op; op != core.PoolMax && op != core.PoolAvg {
		return false
	}
	es := a.Type.Size()
	if a.Nb[0]%es != 0 || a.Nb[1]%es != 0 || a.Nb[2]%es != 0 || a.Nb[3]%es != 0 {
		return false
	}
	switch a.Type {
	case core.TypeF32:
		return true
	case core.TypeF16:
		return d.Storage16Bit
	}
	return false
}

func (e *Encoder) encodePool(n *core.Tensor) error {
	a := n.Src[0]
	name := "pool_max_"
	if core.PoolParamsOf(n).Op == core.PoolAvg {
		name = "pool_avg_"
	}
	es := a.Type.Size()
	if a.Type == core.TypeF16 {
		name += "f16"
	} else {
		name += "f32"
	}
	p, err := e.pipeline(name, 2, poolPushSize, convWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, es})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	// POOL_1D is POOL_2D with k1 = s1 = 1 and p1 = 0: every input row is
	// pooled into the output row of the same index.
	pp := core.PoolParamsOf(n)
	k0, k1, s0, s1, p0, p1 := int32(pp.K0), int32(pp.K1), int32(pp.S0), int32(pp.S1), int32(pp.P0), int32(pp.P1)
	pc := e.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(n.Ne[2]), u32(n.NElements()))
	pc.U32(u32(a.Ne[0]), u32(a.Ne[1]))
	pc.I32(k0, k1, s0, s1, p0, p1)
	pc.U32(u32(a.Nb[0]/es), u32(a.Nb[1]/es), u32(a.Nb[2]/es), u32(a.Nb[3]/es))
	pc.U32(oa.offs, od.offs)
	// Average pooling in 1-D divides by the in-bounds positions of the window, in 2-D by k0*k1
	// (ggml's CPU rule for each).
	countIn := uint32(0)
	if n.Op == core.OpPool1D {
		countIn = 1
	}
	pc.U32(countIn)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), convWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}
