package gpuops

import "github.com/tandem-ml/tandem/core"

// MUL_MAT_ID (mul_mat_id.comp): expert weights of a MUL_MAT weight type (typelist.MatMulWeights)
// with contiguous rows, f32 activations and i32 ids with any strides that are whole elements, f32
// dst. Each (slot, token) reads its expert's matrix; a bad expert id is reported through the
// node's status word (status.go) in the CPU backend's words. Weights larger than one storage
// binding are bound a range of experts at a time, one dispatch each.

func init() {
	registerOp(core.OpMulMatID, opImpl{supports: supportsMulMatID, encode: (*Encoder).encodeMulMatID, splits: true})
}

const (
	mulMatIDPushSize = 20 * 4
	mulMatIDWG       = 32
)

func supportsMulMatID(d *Device, t *core.Tensor) bool {
	as, b, ids := t.Src[0], t.Src[1], t.Src[2]
	if as == nil || b == nil || ids == nil {
		return false
	}
	mt, ok := mulMatTypes[as.Type]
	if !ok || b.Type != core.TypeF32 || ids.Type != core.TypeI32 || t.Type != core.TypeF32 {
		return false
	}
	if as.Type != core.TypeF32 && !d.Storage16Bit {
		return false
	}
	return as.Nb[0] == as.Type.Size() && as.Ne[0]%as.Type.BlockSize() == 0 && as.Nb[1]%mt.unit == 0 &&
		as.Nb[2]%mt.unit == 0 && as.Ne[3] == 1 && b.Nb[0] == 4 && floatStrides(b) && b.Ne[3] == 1 &&
		floatStrides(ids) && ids.Ne[2] == 1 && ids.Ne[3] == 1 && t.Nb[0] == 4 && floatStrides(t) &&
		b.Ne[1] > 0 && t.Ne == [4]int64{as.Ne[1], ids.Ne[0], ids.Ne[1], 1} && t.Ne[1]%b.Ne[1] == 0 &&
		b.Ne[2] == t.Ne[2] && as.Ne[0] == b.Ne[0] &&
		// the result must fit one binding; weights larger than one are bound a range of experts
		// at a time (encodeMulMatID), so one expert's matrix must fit
		d.fitsBinding(t) && (d.fitsBinding(as) || planesBytes(as, 1) <= int64(d.MaxStorageBufferRange)-int64(d.MinStorageBufferOffsetAlignment))
}

func (e *Encoder) encodeMulMatID(n *core.Tensor) error {
	as, b, ids := n.Src[0], n.Src[1], n.Src[2]
	mt := mulMatTypes[as.Type]
	p, err := e.pipeline("mul_mat_id_"+mt.name+"_f32", 5, mulMatIDPushSize, mulMatIDWG)
	if err != nil {
		return err
	}
	au := mt.unit
	grid := [3]uint32{e.groups(as.Ne[1], mulMatIDWG, 0), e.groups(n.Ne[1], 1, 1), e.groups(n.Ne[2], 1, 2)}
	push := func(offa, offb, offi, offd uint32, e0, e1 int64) []byte {
		pc := e.push.Reset()
		pc.U32(u32(as.Ne[0]), u32(as.Ne[1]), u32(n.Ne[1]), u32(n.Ne[2]), u32(as.Ne[2]), u32(b.Ne[1]))
		pc.U32(offa, offb, offi, offd)
		pc.U32(u32(as.Nb[1]/au), u32(as.Nb[2]/au))
		pc.U32(u32(b.Nb[1]/4), u32(b.Nb[2]/4))
		pc.U32(u32(ids.Nb[0]/4), u32(ids.Nb[1]/4))
		pc.U32(u32(n.Nb[1]/4), u32(n.Nb[2]/4))
		pc.U32(u32(e0), u32(e1))
		return pc.Bytes()
	}
	if e.dev.fitsBinding(as) {
		ops, err := e.bindNode(n, 4, use{as, mt.unit}, use{b, 4}, use{ids, 4})
		if err != nil {
			return err
		}
		st, err := e.addCheck(e.node, n)
		if err != nil {
			return err
		}
		oa, ob, oi, od := ops[0], ops[1], ops[2], ops[3]
		return e.dispatch(p, grid, push(oa.offs, ob.offs, oi.offs, od.offs, 0, as.Ne[2]), oa.bind, ob.bind, oi.bind, od.bind, st)
	}
	// Weights larger than one binding: one dispatch per range of experts whose matrices fit one.
	asp, err := e.tensorSpan(as)
	if err != nil {
		return err
	}
	ob, err := e.bindTensor(b, 4)
	if err != nil {
		return err
	}
	oi, err := e.bindTensor(ids, 4)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, 4)
	if err != nil {
		return err
	}
	if err := e.sync(od, operand{t: as, sp: asp}, ob, oi); err != nil {
		return err
	}
	st, err := e.addCheck(e.node, n)
	if err != nil {
		return err
	}
	align := e.dev.MinStorageBufferOffsetAlignment
	room := int64(e.dev.MaxStorageBufferRange) - int64(align)
	per := int64(1) // experts a dispatch binds (>= 1: supportsMulMatID)
	if as.Nb[2] > 0 {
		per = (room-planesBytes(as, 1))/as.Nb[2] + 1
	}
	for e0 := int64(0); e0 < as.Ne[2]; e0 += per {
		k := min(per, as.Ne[2]-e0)
		from := asp.from + uint64(e0*as.Nb[2])
		base := from / align * align
		size := from - base + uint64(planesBytes(as, k))
		if au == 1 {
			size = (size + 3) &^ 3 // bytes are read through 16-bit words: the whole last word
		}
		ab := Binding{Buf: asp.buf, Off: base, Size: size}
		pc := push(uint32((from-base)/uint64(au)), ob.offs, oi.offs, od.offs, e0, e0+k)
		if err := e.dispatch(p, grid, pc, ab, ob.bind, oi.bind, od.bind, st); err != nil {
			return err
		}
	}
	return nil
}
