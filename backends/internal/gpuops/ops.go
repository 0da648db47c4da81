package gpuops

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

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

// Supports reports whether the encoders compute t on device d (false for a nil t, and for a
// hand-built node that lacks a source its op needs). Views and leafs cost nothing and are
// supported.
func Supports(d *Device, t *core.Tensor) (ok bool) {
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
	case !d.fitsBinding(t) || !layoutOK(t):
		return false
	}
	for _, s := range t.Src {
		if s != nil && (!d.fitsBinding(s) || !layoutOK(s)) {
			return false
		}
	}
	if !Implemented(t.Op) {
		return false
	}
	return opTable[t.Op].supports(d, t)
}

// Implemented reports whether op has an encoder (whatever its types).
func Implemented(op core.Op) bool { return op >= 0 && op < core.OpCount && opTable[op].encode != nil }

// opImpl is one op's implementation: whether a device runs a node, and how to record it.
type opImpl struct {
	supports func(d *Device, t *core.Tensor) bool
	encode   func(e *Encoder, n *core.Tensor) error
}

var opTable [core.OpCount]opImpl

// registerOp installs an op's implementation; each op family's file calls it from init.
func registerOp(op core.Op, impl opImpl) {
	if opTable[op].encode != nil {
		panic(fmt.Sprintf("gpuops: op %v registered twice", op))
	}
	opTable[op] = impl
}

func init() {
	for _, op := range []core.Op{core.OpAdd, core.OpSub, core.OpMul, core.OpDiv} {
		registerOp(op, opImpl{supports: supportsBinary, encode: (*Encoder).encodeBinary})
	}
}

func supportsBinary(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	return a.Type == core.TypeF32 && b.Type == core.TypeF32 && t.Type == core.TypeF32 &&
		core.CanRepeat(b, a) && t.Ne == a.Ne
}

// srcTypes lists the types of n's sources and then n's own.
func srcTypes(n *core.Tensor) []core.Type {
	var ts []core.Type
	for _, s := range n.Src {
		if s != nil {
			ts = append(ts, s.Type)
		}
	}
	return append(ts, n.Type)
}

const (
	binaryPushSize = 24 * 4
	binaryWG       = 256
)

var binaryShaders = map[core.Op]string{core.OpAdd: "add_f32", core.OpSub: "sub_f32", core.OpMul: "mul_f32", core.OpDiv: "div_f32"}

func (e *Encoder) encodeBinary(n *core.Tensor) error {
	p, err := e.pipeline(binaryShaders[n.Op], 3, binaryPushSize, binaryWG)
	if err != nil {
		return err
	}
	x, y := n.Src[0], n.Src[1]
	ops, err := e.bindNode(n, 4, use{x, 4}, use{y, 4})
	if err != nil {
		return err
	}
	ox, oy, od := ops[0], ops[1], ops[2]
	pc := e.push.Reset()
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
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), binaryWG, 0), 1, 1}, pc.Bytes(), ox.bind, oy.bind, od.bind)
}
