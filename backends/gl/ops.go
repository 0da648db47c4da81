//go:build gl && cgo

package gl

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

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
	if t.Op < 0 || t.Op >= core.OpCount || glOps[t.Op].encode == nil {
		return false
	}
	return glOps[t.Op].supports(d, t)
}

// glOp is one op's OpenGL implementation: whether the device runs a node, and how to dispatch it.
type glOp struct {
	supports func(d *device, t *core.Tensor) bool
	encode   func(b *Backend, c *commands, n *core.Tensor) error
}

var glOps [core.OpCount]glOp

// registerOp installs an op's implementation; each op family's file calls it from init.
func registerOp(op core.Op, impl glOp) {
	if glOps[op].encode != nil {
		panic(fmt.Sprintf("gl: op %v registered twice", op))
	}
	glOps[op] = impl
}

func init() {
	for _, op := range []core.Op{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv} {
		registerOp(op, glOp{supports: supportsBinary, encode: (*Backend).encodeBinary})
	}
}

func supportsBinary(d *device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return a.Type == core.TypeF32 && b.Type == core.TypeF32 && t.Type == core.TypeF32 &&
		core.CanRepeat(b, a) && t.Ne == a.Ne
}

func (b *Backend) encode(c *commands, n *core.Tensor) error {
	if !supportsOp(b.dev, n) {
		return fmt.Errorf("op %v with types %v not supported by the OpenGL backend", n.Op, srcTypes(n))
	}
	return glOps[n.Op].encode(b, c, n)
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

func (b *Backend) encodeBinary(c *commands, n *core.Tensor) error {
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
