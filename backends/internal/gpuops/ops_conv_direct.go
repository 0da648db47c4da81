package gpuops

import (
	"github.com/tandem-ml/tandem/core"
)

// CONV_2D, CONV_3D, CONV_2D_DW, CONV_TRANSPOSE_1D/2D, IM2COL_3D and COL2IM_1D on
// conv_direct.comp: one invocation per dst element, kernels and inputs read at their strides.
// Only nodes their constructor would build are supported (core.ConvNodeValid).

func init() {
	registerOp(core.OpConv2D, opImpl{supports: supportsConvDirect, encode: (*Encoder).encodeConvDirect})
	registerOp(core.OpConv3D, opImpl{supports: supportsConvDirect, encode: (*Encoder).encodeConvDirect})
	registerOp(core.OpConv2DDw, opImpl{supports: supportsConvDirect, encode: (*Encoder).encodeConvDirect})
	registerOp(core.OpConvTranspose1D, opImpl{supports: supportsConvTranspose, encode: (*Encoder).encodeConvTranspose})
	registerOp(core.OpConvTranspose2D, opImpl{supports: supportsConvTranspose, encode: (*Encoder).encodeConvTranspose})
	registerOp(core.OpIm2Col3D, opImpl{supports: supportsIm2Col3D, encode: (*Encoder).encodeIm2Col3D})
	registerOp(core.OpCol2Im1D, opImpl{supports: supportsCol2Im1D, encode: (*Encoder).encodeCol2Im1D})
}

const (
	convDirectPushSize = 32 * 4
	convTPushSize      = 21 * 4
	im2col3DPushSize   = 25 * 4
	col2imPushSize     = 9 * 4
)

// elemStrides reports whether t's strides are whole elements of its type.
func elemStrides(t *core.Tensor) bool {
	es := t.Type.Size()
	return t.Nb[0]%es == 0 && t.Nb[1]%es == 0 && t.Nb[2]%es == 0 && t.Nb[3]%es == 0
}

// convKernelOK: an f32 kernel, or an f16 one where 16-bit storage is there, at element strides.
func convKernelOK(d *Device, a *core.Tensor) bool {
	switch a.Type {
	case core.TypeF32:
	case core.TypeF16:
		if !d.Storage16Bit {
			return false
		}
	default:
		return false
	}
	return elemStrides(a)
}

// packable reports whether strides and dilations fit the shader's 16-bit fields.
func packable(vs ...int) bool {
	for _, v := range vs {
		if v < 0 || v > 0xffff {
			return false
		}
	}
	return true
}

// cwhnResult reports whether t (a CONV_2D_DW result) is laid out channels densest, as the
// constructor does for a CWHN input.
func cwhnResult(t *core.Tensor) bool {
	return t.Nb[2] == 4 && t.Nb[0] == t.Ne[2]*4 && t.Nb[1] == t.Ne[0]*t.Nb[0] && t.Nb[3] == t.Ne[1]*t.Nb[1]
}

func supportsConvDirect(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if !core.ConvNodeValid(t) || a == nil || b == nil || b.Type != core.TypeF32 || t.Type != core.TypeF32 || !floatStrides(b) || !convKernelOK(d, a) {
		return false
	}
	if !t.IsContiguous() && !(t.Op == core.OpConv2DDw && cwhnResult(t)) {
		return false
	}
	if t.Op == core.OpConv3D {
		p := core.Conv3DParamsOf(t)
		return packable(p.S0, p.S1, p.S2, p.D0, p.D1, p.D2)
	}
	p := core.Conv2DParamsOf(t)
	return packable(p.S0, p.S1, p.D0, p.D1)
}

// sdWords packs strides and dilations as the shader reads them.
func sdWords(s0, s1, s2, d0, d1, d2 int) (uint32, uint32, uint32) {
	return uint32(s0) | uint32(s1)<<16, uint32(s2) | uint32(d0)<<16, uint32(d1) | uint32(d2)<<16
}

// convOps is a bound convolution node (kernel a = Src[0], input b = Src[1], f32 result): its
// pipeline, operands, and the element strides of b and a.
type convOps struct {
	p          Pipeline
	ob, oa, od operand
	bs, as     func(i int) uint32
}

// convOperands picks shader base+"_f32" or base+"_f16" by the kernel's type and binds the node's
// input, kernel and result.
func (e *Encoder) convOperands(n *core.Tensor, base string, pushSize uint32) (convOps, error) {
	a, b := n.Src[0], n.Src[1]
	name, ku := base+"_f32", int64(4)
	if a.Type == core.TypeF16 {
		name, ku = base+"_f16", 2
	}
	p, err := e.pipeline(name, 3, pushSize, convWG)
	if err != nil {
		return convOps{}, err
	}
	ops, err := e.bindNode(n, 4, use{b, 4}, use{a, ku})
	if err != nil {
		return convOps{}, err
	}
	return convOps{p: p, ob: ops[0], oa: ops[1], od: ops[2],
		bs: func(i int) uint32 { return u32(b.Nb[i] / 4) },
		as: func(i int) uint32 { return u32(a.Nb[i] / ku) }}, nil
}

func (e *Encoder) encodeConvDirect(n *core.Tensor) error {
	a, b := n.Src[0], n.Src[1]
	co, err := e.convOperands(n, "conv_direct", convDirectPushSize)
	if err != nil {
		return err
	}
	p, ob, oa, od, bs, as := co.p, co.ob, co.oa, co.od, co.bs, co.as
	pc := e.push.Reset()
	var flags uint32
	switch n.Op {
	case core.OpConv3D:
		ic, nb, oc := uint32(n.Params[9]), uint32(n.Params[10]), uint32(n.Params[11])
		pr := core.Conv3DParamsOf(n)
		sd0, sd1, sd2 := sdWords(pr.S0, pr.S1, pr.S2, pr.D0, pr.D1, pr.D2)
		pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(n.Ne[2]), oc, nb)
		pc.U32(u32(b.Ne[0]), u32(b.Ne[1]), u32(b.Ne[2]), ic)
		pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), u32(a.Ne[2]))
		pc.U32(sd0, sd1, sd2)
		pc.I32(int32(pr.P0), int32(pr.P1), int32(pr.P2))
		// input channel c of batch n at n·IC + c; kernel channel c of output o at o·IC + c
		pc.U32(bs(0), bs(1), bs(2), bs(3), ic*bs(3))
		pc.U32(as(0), as(1), as(2), as(3), ic*as(3))
	default: // CONV_2D, CONV_2D_DW: depth 1
		pr := core.Conv2DParamsOf(n)
		sd0, sd1, sd2 := sdWords(pr.S0, pr.S1, 1, pr.D0, pr.D1, 1)
		pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), 1, u32(n.Ne[2]), u32(n.Ne[3]))
		pc.U32(u32(b.Ne[0]), u32(b.Ne[1]), 1, u32(b.Ne[2]))
		pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), 1)
		pc.U32(sd0, sd1, sd2)
		pc.I32(int32(pr.P0), int32(pr.P1), 0)
		pc.U32(bs(0), bs(1), 0, bs(2), bs(3))
		// CONV_2D: kernel [KW, KH, IC, OC]; CONV_2D_DW: [KW, KH, 1, C], channel c at nb3.
		pc.U32(as(0), as(1), 0, as(2), as(3))
		if n.Op == core.OpConv2DDw {
			flags |= 1
			if !n.IsContiguous() {
				flags |= 2
			}
		}
	}
	pc.U32(ob.offs, oa.offs, od.offs, flags)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), convWG, 0), 1, 1}, pc.Bytes(), ob.bind, oa.bind, od.bind)
}

func supportsConvTranspose(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return core.ConvNodeValid(t) && a != nil && b != nil && b.Type == core.TypeF32 && t.Type == core.TypeF32 &&
		floatStrides(b) && convKernelOK(d, a) && t.IsContiguous()
}

func (e *Encoder) encodeConvTranspose(n *core.Tensor) error {
	a, b := n.Src[0], n.Src[1]
	co, err := e.convOperands(n, "conv_transpose", convTPushSize)
	if err != nil {
		return err
	}
	p, ob, oa, od, bs, as := co.p, co.ob, co.oa, co.od, co.bs, co.as
	pc := e.push.Reset()
	if n.Op == core.OpConvTranspose1D {
		// dst [OL, Cout], input [L, Cin], kernel [K, Cout, Cin]: H = KH = 1
		pc.U32(u32(n.Ne[0]), 1, u32(n.Ne[1]), 1)
		pc.U32(u32(b.Ne[0]), 1, u32(b.Ne[1]))
		pc.U32(u32(a.Ne[0]), 1, uint32(n.Params[0]))
		pc.U32(bs(0), 0, bs(1), 0)
		pc.U32(as(0), 0, as(1), as(2))
	} else {
		pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(n.Ne[2]), u32(n.Ne[3]))
		pc.U32(u32(b.Ne[0]), u32(b.Ne[1]), u32(b.Ne[2]))
		pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), uint32(n.Params[0]))
		pc.U32(bs(0), bs(1), bs(2), bs(3))
		pc.U32(as(0), as(1), as(2), as(3))
	}
	pc.U32(ob.offs, oa.offs, od.offs)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), convWG, 0), 1, 1}, pc.Bytes(), ob.bind, oa.bind, od.bind)
}

func supportsIm2Col3D(d *Device, t *core.Tensor) bool {
	b := t.Src[1]
	if !core.ConvNodeValid(t) || b == nil || b.Type != core.TypeF32 || !floatStrides(b) || !t.IsContiguous() {
		return false
	}
	pr := core.Conv3DParamsOf(t)
	if !packable(pr.S0, pr.S1, pr.S2, pr.D0, pr.D1, pr.D2) {
		return false
	}
	return t.Type == core.TypeF32 || t.Type == core.TypeF16 && d.Storage16Bit
}

func (e *Encoder) encodeIm2Col3D(n *core.Tensor) error {
	a, b := n.Src[0], n.Src[1]
	if n.NElements() == 0 || b.Ne[3] < int64(n.Params[9]) {
		return nil // no batch of IC channels: an empty result
	}
	name, du := "im2col_3d_f32", int64(4)
	if n.Type == core.TypeF16 {
		name, du = "im2col_3d_f16", 2
	}
	p, err := e.pipeline(name, 2, im2col3DPushSize, convWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, du, use{b, 4})
	if err != nil {
		return err
	}
	ob, od := ops[0], ops[1]
	pr := core.Conv3DParamsOf(n)
	ic := int64(n.Params[9])
	sd0, sd1, sd2 := sdWords(pr.S0, pr.S1, pr.S2, pr.D0, pr.D1, pr.D2)
	bs := func(i int) uint32 { return u32(b.Nb[i] / 4) }
	pc := e.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(n.Ne[1]), u32(n.Ne[2]), u32(n.Ne[3]/(b.Ne[3]/ic)))
	pc.U32(u32(b.Ne[0]), u32(b.Ne[1]), u32(b.Ne[2]))
	pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), u32(a.Ne[2]), u32(ic))
	pc.U32(sd0, sd1, sd2)
	pc.I32(int32(pr.P0), int32(pr.P1), int32(pr.P2))
	pc.U32(bs(0), bs(1), bs(2), bs(3), u32(ic)*bs(3))
	pc.U32(ob.offs, od.offs, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), convWG, 0), 1, 1}, pc.Bytes(), ob.bind, od.bind)
}

func supportsCol2Im1D(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if !core.ConvNodeValid(t) || a == nil || t.Type != a.Type || !a.IsContiguous() || !t.IsContiguous() {
		return false
	}
	switch a.Type {
	case core.TypeF32:
		return true
	case core.TypeF16, core.TypeBF16:
		return d.Storage16Bit
	}
	return false
}

func (e *Encoder) encodeCol2Im1D(n *core.Tensor) error {
	a := n.Src[0]
	names := map[core.Type]string{core.TypeF32: "col2im_1d_f32", core.TypeF16: "col2im_1d_f16", core.TypeBF16: "col2im_1d_bf16"}
	es := a.Type.Size()
	p, err := e.pipeline(names[a.Type], 2, col2imPushSize, convWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, es, use{a, es})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	oc := int64(n.Params[1])
	pc := e.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(oc), u32(a.Ne[1]), u32(a.Ne[0]/oc), uint32(n.Params[0]), uint32(n.Params[2]))
	pc.U32(u32(n.NElements()), oa.offs, od.offs)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), convWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}
