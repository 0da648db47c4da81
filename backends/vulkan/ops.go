//go:build cgo && !novulkan

package vulkan

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/shaders"
)

// pipelineFor returns vd's cached pipeline for the shader variant name.
func pipelineFor(vd *vkrt.Device, name string, bindings int, push uint32, spec ...uint32) (*vkrt.Pipeline, error) {
	spv, err := shaders.Get(name)
	if err != nil {
		return nil, err
	}
	return vd.Pipeline(vkrt.PipelineDesc{Name: name, SPIRV: spv, Bindings: bindings, PushSize: push, Spec: spec})
}

// fitsBinding reports whether t can be bound as one storage buffer (its span
// plus the worst-case misalignment within maxStorageBufferRange).
func fitsBinding(d *device, t *core.Tensor) bool {
	l := d.info.Limits
	return t.NBytes()+int64(l.MinStorageBufferOffsetAlignment) <= int64(l.MaxStorageBufferRange)
}

// layoutOK reports whether t's shape and strides are non-negative, so every element the shaders
// address lies in the t.NBytes() bytes bound from its offset.
func layoutOK(t *core.Tensor) bool {
	for i := range core.MaxDims {
		if t.Ne[i] < 0 || t.Nb[i] < 0 {
			return false
		}
	}
	return t.Offset >= 0
}

// supportsOp reports whether the kernels of this package compute t (false for a nil t, and for a
// hand-built node that lacks a source its op needs).
func supportsOp(d *device, t *core.Tensor) (ok bool) {
	if t == nil {
		return false
	}
	// The per-op checks read the sources an op has when built by core's constructors; a node
	// assembled by hand without them must not crash the caller: it is simply not supported.
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	switch {
	case t.Op == core.OpNone || t.Op.IsView():
		return true
	case !fitsBinding(d, t) || !layoutOK(t):
		return false
	}
	for _, s := range t.Src {
		if s != nil && (!fitsBinding(d, s) || !layoutOK(s)) {
			return false
		}
	}
	if t.Op < 0 || t.Op >= core.OpCount || vkOps[t.Op].encode == nil {
		return false
	}
	return vkOps[t.Op].supports(d, t)
}

// vkOp is one op's Vulkan implementation: whether the device runs a node, and how to record it.
type vkOp struct {
	supports func(d *device, t *core.Tensor) bool
	encode   func(b *Backend, c *vkrt.Commands, n *core.Tensor) error
}

var vkOps [core.OpCount]vkOp

// registerOp installs an op's implementation; each op family's file calls it from init.
func registerOp(op core.Op, impl vkOp) {
	if vkOps[op].encode != nil {
		panic(fmt.Sprintf("vulkan: op %v registered twice", op))
	}
	vkOps[op] = impl
}

func init() {
	for _, op := range []core.Op{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv} {
		registerOp(op, vkOp{supports: supportsBinary, encode: (*Backend).encodeBinary})
	}
	registerOp(core.OpMulMat, vkOp{supports: supportsMulMat, encode: (*Backend).mulMatDispatch})
}

func supportsBinary(d *device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return a.Type == core.TypeF32 && b.Type == core.TypeF32 && t.Type == core.TypeF32 &&
		core.CanRepeat(b, a) && t.Ne == a.Ne
}

func supportsMulMat(d *device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if _, ok := mulMatTypes[a.Type]; !ok || b.Type != core.TypeF32 || t.Type != core.TypeF32 {
		return false
	}
	if a.Type != core.TypeF32 && !d.info.Features.StorageBuffer16BitAccess {
		return false
	}
	return a.Nb[0] == a.Type.Size() && b.Nb[0] == 4 && t.Nb[0] == 4 &&
		a.Ne[0]%a.Type.BlockSize() == 0 && b.Ne[2]%a.Ne[2] == 0 && b.Ne[3]%a.Ne[3] == 0
}

// mulMatTypes maps the weight types of MUL_MAT to their shader name part and
// the unit (bytes) the shader addresses them in.
var mulMatTypes = map[core.Type]struct {
	name string
	unit int64
}{
	core.TypeF32:  {"f32", 4},
	core.TypeF16:  {"f16", 2},
	core.TypeQ4_0: {"q4_0", 2},
	core.TypeQ4_1: {"q4_1", 2},
	core.TypeQ8_0: {"q8_0", 2},
	// Q5, K-quant and IQ4 weights, dequantized by shaders/kquants.glsl.
	core.TypeQ5_0:   {"q5_0", 2},
	core.TypeQ5_1:   {"q5_1", 2},
	core.TypeQ2_K:   {"q2_K", 2},
	core.TypeQ3_K:   {"q3_K", 2},
	core.TypeQ4_K:   {"q4_K", 2},
	core.TypeQ5_K:   {"q5_K", 2},
	core.TypeQ6_K:   {"q6_K", 2},
	core.TypeIQ4_NL: {"iq4_nl", 2},
	core.TypeIQ4_XS: {"iq4_xs", 2},
}

func (b *Backend) encode(c *vkrt.Commands, n *core.Tensor) error {
	if !supportsOp(b.dev, n) {
		return fmt.Errorf("op %v with types %v not supported by the Vulkan backend", n.Op, srcTypes(n))
	}
	return vkOps[n.Op].encode(b, c, n)
}

func srcTypes(n *core.Tensor) []core.Type {
	var ts []core.Type
	for _, s := range n.Src {
		if s != nil {
			ts = append(ts, s.Type)
		}
	}
	return append(ts, n.Type)
}

// u32 converts a size known to fit (supportsOp bounds every tensor by
// maxStorageBufferRange) to uint32.
func u32(v int64) uint32 { return uint32(v) }

// groups returns the workgroup count for n items of per items each, capped by
// the device limit of dimension dim (shaders loop over the rest).
func (b *Backend) groups(n, per int64, dim int) uint32 {
	g := (n + per - 1) / per
	return uint32(min(g, int64(b.vd.Info().Limits.MaxComputeWorkGroupCount[dim])))
}

const (
	binaryPushSize = 24 * 4
	binaryWG       = 256
)

var binaryShaders = map[core.Op]string{core.OpAdd: "add_f32", core.OpSub: "sub_f32", core.OpMul: "mul_f32", core.OpDiv: "div_f32"}

func (b *Backend) encodeBinary(c *vkrt.Commands, n *core.Tensor) error {
	p, err := b.pipeline(binaryShaders[n.Op], 3, binaryPushSize, binaryWG)
	if err != nil {
		return err
	}
	x, y := n.Src[0], n.Src[1]
	ops, err := b.bindNode(c, n, 4, use{x, 4}, use{y, 4})
	if err != nil {
		return err
	}
	ox, oy, od := ops[0], ops[1], ops[2]
	pc := b.push.Reset()
	for i := range 4 {
		pc.U32(u32(n.Ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(x.Nb[i] / 4))
	}
	for i := range 4 {
		pc.U32(u32(y.Ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(y.Nb[i] / 4))
	}
	for i := range 4 {
		pc.U32(u32(n.Nb[i] / 4))
	}
	pc.U32(ox.offs, oy.offs, od.offs, u32(n.NElements()))
	return c.Dispatch(p, [3]uint32{b.groups(n.NElements(), binaryWG, 0), 1, 1}, pc.Bytes(), ox.bind, oy.bind, od.bind)
}

const mulMatVecPushSize = 19 * 4

func (b *Backend) encodeMulMat(c *vkrt.Commands, n *core.Tensor) error {
	a, x := n.Src[0], n.Src[1]
	mt := mulMatTypes[a.Type]
	name := "mul_mat_vec_" + mt.name + "_f32"
	info := b.vd.Info()
	wg := min(max(info.Subgroup.Size, 32), 128)
	rowsPerGroup := int64(1)
	switch {
	case info.Type == vkrt.DeviceTypeCPU:
		// llvmpipe: one invocation per row and no workgroup reduction. Measured on 4096²:
		// f32 0.64 → 1.63 GFLOPS, q4_0 0.88 → 1.81 (32 rows per workgroup beat 8, 16 and 64).
		name = "mul_mat_vec_rows_" + mt.name + "_f32"
		wg = max(info.Subgroup.Size, 32)
		rowsPerGroup = int64(wg)
	case info.Subgroup.Operations&vkrt.SubgroupArithmetic != 0 && info.Subgroup.Stages&0x20 != 0:
		name += "_subgroup"
	}
	p, err := b.pipeline(name, 3, mulMatVecPushSize, wg)
	if err != nil {
		return err
	}
	ops, err := b.bindNode(c, n, 4, use{a, mt.unit}, use{x, 4})
	if err != nil {
		return err
	}
	oa, ox, od := ops[0], ops[1], ops[2]
	// A strides in units of the shader's array (floats, halves or 16-bit words).
	au := mt.unit
	nbatch := x.Ne[2] * x.Ne[3]
	pc := b.push.Reset()
	pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), u32(x.Ne[1]), u32(nbatch))
	pc.U32(oa.offs, ox.offs, od.offs)
	pc.U32(u32(a.Nb[1]/au), u32(a.Nb[2]/au), u32(a.Nb[3]/au))
	pc.U32(u32(x.Nb[1]/4), u32(x.Nb[2]/4), u32(x.Nb[3]/4))
	pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4), u32(n.Nb[3]/4))
	pc.U32(u32(x.Ne[2]), u32(x.Ne[2]/a.Ne[2]), u32(x.Ne[3]/a.Ne[3]))
	grid := [3]uint32{b.groups(a.Ne[1], rowsPerGroup, 0), b.groups(x.Ne[1], 1, 1), b.groups(nbatch, 1, 2)}
	return c.Dispatch(p, grid, pc.Bytes(), oa.bind, ox.bind, od.bind)
}
