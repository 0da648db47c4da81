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
	if t.Op == core.OpNone || t.Op.IsView() {
		return true
	}
	splits := Implemented(t.Op) && opTable[t.Op].splits
	if !layoutOK(t) || !d.fitsBinding(t) && !splits {
		return false
	}
	for i, s := range t.Src {
		if s != nil && (!d.fitsBinding(s) && !(splits && i == 0) || !layoutOK(s)) {
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
	// scratch (optional) is the scratch bytes encode will use for n (scratch.go).
	scratch func(e *Encoder, n *core.Tensor) uint64
	// splits is true when encode splits a result or first source larger than one storage
	// binding over several dispatches (supports then says which such tensors it takes).
	splits bool
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

// binaryTypeCode is the binary shader's code for a float type (TYPED variants), and false for the
// other types.
func binaryTypeCode(t core.Type) (uint32, bool) {
	switch t {
	case core.TypeF32:
		return 0, true
	case core.TypeF16:
		return 1, true
	case core.TypeBF16:
		return 2, true
	}
	return 0, false
}

// supportsBinary: any mix of f32, f16 and bf16 operands and result (the CPU backend's rule; ggml's
// CPU runs the subset src1 = src0 or f32, dst = src0 or f32), elements addressed by whole strides.
func supportsBinary(d *Device, t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	for _, x := range []*core.Tensor{a, b, t} {
		if _, ok := binaryTypeCode(x.Type); !ok {
			return false
		}
		if x.Type != core.TypeF32 && !d.Storage16Bit {
			return false
		}
		sz := x.Type.Size()
		if x.Nb[0]%sz != 0 || x.Nb[1]%sz != 0 || x.Nb[2]%sz != 0 || x.Nb[3]%sz != 0 {
			return false
		}
	}
	return core.CanRepeat(b, a) && t.Ne == a.Ne
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

var binaryShaders = map[core.Op]string{core.OpAdd: "add", core.OpSub: "sub", core.OpMul: "mul", core.OpDiv: "div"}

// encodeBinary records ADD, SUB, MUL or DIV: the f32 variant when all three tensors are f32, the
// typed one (types as specialization constants) otherwise.
func (e *Encoder) encodeBinary(n *core.Tensor) error {
	x, y := n.Src[0], n.Src[1]
	var p Pipeline
	var err error
	if x.Type == core.TypeF32 && y.Type == core.TypeF32 && n.Type == core.TypeF32 {
		p, err = e.pipeline(binaryShaders[n.Op]+"_f32", 3, binaryPushSize, binaryWG)
	} else {
		ta, _ := binaryTypeCode(x.Type)
		tb, _ := binaryTypeCode(y.Type)
		td, _ := binaryTypeCode(n.Type)
		p, err = e.pipeline(binaryShaders[n.Op]+"_typed", 3, binaryPushSize, binaryWG, ta, tb, td)
	}
	if err != nil {
		return err
	}
	ux, uy, ud := x.Type.Size(), y.Type.Size(), n.Type.Size()
	ops, err := e.bindNode(n, ud, use{x, ux}, use{y, uy})
	if err != nil {
		return err
	}
	ox, oy, od := ops[0], ops[1], ops[2]
	pc := e.push.Reset()
	for i := range 4 {
		pc.U32(u32(n.Ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(x.Nb[i] / ux))
	}
	for i := range 4 {
		pc.U32(u32(y.Ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(y.Nb[i] / uy))
	}
	for i := range 4 {
		pc.U32(u32(n.Nb[i] / ud))
	}
	pc.U32(ox.offs, oy.offs, od.offs, u32(n.NElements()))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), binaryWG, 0), 1, 1}, pc.Bytes(), ox.bind, oy.bind, od.bind)
}
