package gpuops

import (
	"github.com/tandem-ml/tandem/core"
)

// GET_ROWS and SET_ROWS, as the CPU kernels (backends/cpu/ops_rows.go). An index
// outside the rows of the gathered (or written) tensor, negative ones included, is
// an error as on the CPU: the shaders never follow it (GET_ROWS writes a NaN
// element there, SET_ROWS skips the row) and record it in the node's status word,
// which GraphCompute turns into the CPU's error (status.go).
//
//   - GET_ROWS: f32, f16, bf16, q4_0, q4_1, q8_0, q5_0, q5_1, q2_K ... q6_K, q8_K,
//     iq4_nl, iq4_xs, mxfp4, nvfp4, q1_0, tq1_0, tq2_0, q2_0, iq3_xxs, iq3_s, iq2_xxs, iq2_xs,
//     iq2_s, iq1_s, iq1_m rows into f32 (i32 into i32), i32
//     or i64 indices, any strides.
//   - SET_ROWS: f32 rows into f32, f16, bf16, q4_0, q4_1, q8_0, q5_0, q5_1, iq4_nl, q2_K ... q6_K, iq4_xs,
//     nvfp4, q1_0, tq1_0, tq2_0, q2_0 or mxfp4 (quantized bit for
//     bit as core/quant), i32 or i64 indices broadcast over dims 2 and 3. When
//     indices repeat, the last source row wins, as in the CPU's sequential loop.

func init() {
	registerOp(core.OpGetRows, opImpl{supports: supportsGetRows, encode: (*Encoder).encodeGetRows, splits: true})
	registerOp(core.OpSetRows, opImpl{supports: supportsSetRows, encode: (*Encoder).encodeSetRows})
}

// indexOK reports whether idx is an i32 or i64 tensor the shaders can address (in
// 32-bit words).
func indexOK(idx *core.Tensor) bool {
	return (idx.Type == core.TypeI32 || idx.Type == core.TypeI64) && stridesIn(idx, 4)
}

func supportsGetRows(d *Device, t *core.Tensor) bool {
	a, idx := t.Src[0], t.Src[1]
	if a == nil || idx == nil || !indexOK(idx) || !typeOK(d, a.Type) || t.NElements() >= maxShaderIndex {
		return false
	}
	want := core.TypeF32
	if a.Type == core.TypeI32 {
		want = core.TypeI32
	}
	if t.Type != want || t.Ne != [4]int64{a.Ne[0], idx.Ne[0], idx.Ne[1], idx.Ne[2]} ||
		a.Ne[2] != idx.Ne[1] || a.Ne[3] != idx.Ne[2] || idx.Ne[3] != 1 ||
		!stridesIn(a, elemTypes[a.Type].unit) || !wholeBlocks(a) || !stridesIn(t, 4) {
		return false
	}
	if d.fitsBinding(t) && d.fitsBinding(a) {
		return true
	}
	// A result or source too large for one binding is computed in parts (encodeGetRows), which
	// needs a contiguous result whose row fits one binding and a source whose plane does.
	room := int64(d.MaxStorageBufferRange) - int64(d.MinStorageBufferOffsetAlignment)
	return t.IsContiguous() && t.Nb[1] <= room && planesBytes(a, 1) <= room
}

// planesBytes is the span in bytes of k consecutive planes (dimension 2) of t.
func planesBytes(t *core.Tensor, k int64) int64 {
	ne := [4]int64{t.Ne[0] / t.Type.BlockSize(), t.Ne[1], k, 1}
	n := t.Type.Size()
	for i, v := range ne {
		if v == 0 {
			return 0
		}
		n += (v - 1) * t.Nb[i]
	}
	return n
}

const (
	getRowsPushSize = 22 * 4
	getRowsWG       = 256
)

// encodeGetRows records GET_ROWS node n: one dispatch, or, when n or its source is larger than
// one storage binding, one per part that fits: whole planes (i11) of one i12, or rows of one
// plane, the result's part and the source's planes bound on their own (the source whole when it
// fits), with the index offset of the part's first row and that row's position (for the index
// check's report).
func (e *Encoder) encodeGetRows(n *core.Tensor) error {
	a, idx := n.Src[0], n.Src[1]
	at := elemTypes[a.Type]
	p, err := e.pipeline("get_rows_"+at.name, 4, getRowsPushSize, getRowsWG)
	if err != nil {
		return err
	}
	srcFits := e.dev.fitsBinding(a)
	if srcFits && e.dev.fitsBinding(n) {
		ops, err := e.bindNode(n, 4, use{a, at.unit}, use{idx, 4})
		if err != nil {
			return err
		}
		st, err := e.addCheck(e.node, n)
		if err != nil {
			return err
		}
		oa, oi, od := ops[0], ops[1], ops[2]
		e.pushGetRows(n, n.Ne, oa.offs, oi.offs, od.offs, 0)
		return e.dispatch(p, [3]uint32{e.groups(n.NElements(), getRowsWG, 0), 1, 1}, e.push.Bytes(), oa.bind, oi.bind, od.bind, st)
	}
	var oa operand
	if srcFits {
		if oa, err = e.bindTensor(a, at.unit); err != nil {
			return err
		}
	} else {
		asp, err := e.tensorSpan(a)
		if err != nil {
			return err
		}
		oa = operand{t: a, sp: asp}
	}
	oi, err := e.bindTensor(idx, 4)
	if err != nil {
		return err
	}
	sp, err := e.tensorSpan(n)
	if err != nil {
		return err
	}
	if err := e.sync(operand{t: n, sp: sp}, oa, oi); err != nil {
		return err
	}
	st, err := e.addCheck(e.node, n)
	if err != nil {
		return err
	}
	align := e.dev.MinStorageBufferOffsetAlignment
	room := int64(e.dev.MaxStorageBufferRange) - int64(align) // bytes a part's binding may span
	rowsPer := room / n.Nb[1]                                 // >= 1 (supportsGetRows)
	planes := rowsPer / n.Ne[1]                               // result planes a part may hold
	if !srcFits {
		srcPlanes := int64(1) // >= 1 (supportsGetRows)
		if a.Nb[2] > 0 {
			srcPlanes = (room-planesBytes(a, 1))/a.Nb[2] + 1
		}
		planes = min(max(planes, 1), srcPlanes)
	}
	part := func(i11, i12, r0 int64, ne [4]int64) error {
		from := sp.from + uint64(r0*n.Nb[1]+i11*n.Nb[2]+i12*n.Nb[3])
		base := from / align * align
		od := Binding{Buf: sp.buf, Off: base, Size: from - base + uint64(ne[1]*ne[2]*n.Nb[1])}
		offi := int64(oi.offs) + (r0*idx.Nb[0]+i11*idx.Nb[1]+i12*idx.Nb[2])/4
		ab, offa := oa.bind, int64(oa.offs)+(i11*a.Nb[2]+i12*a.Nb[3])/at.unit
		if !srcFits { // bind the part's source planes
			af := oa.sp.from + uint64(i11*a.Nb[2]+i12*a.Nb[3])
			abase := af / align * align
			size := af - abase + uint64(planesBytes(a, ne[2]))
			if at.unit == 1 {
				size = (size + 3) &^ 3 // bytes are read through 16-bit words: the whole last word
			}
			ab, offa = Binding{Buf: oa.sp.buf, Off: abase, Size: size}, int64(af-abase)/at.unit
		}
		pos0 := (i12*n.Ne[2]+i11)*n.Ne[1] + r0
		e.pushGetRows(n, ne, u32(offa), u32(offi), uint32((from-base)/4), u32(pos0))
		nel := ne[0] * ne[1] * ne[2]
		return e.dispatch(p, [3]uint32{e.groups(nel, getRowsWG, 0), 1, 1}, e.push.Bytes(), ab, oi.bind, od, st)
	}
	for i12 := range n.Ne[3] {
		if planes >= 1 && rowsPer >= n.Ne[1] { // whole planes at a time
			for i11 := int64(0); i11 < n.Ne[2]; i11 += planes {
				if err := part(i11, i12, 0, [4]int64{n.Ne[0], n.Ne[1], min(planes, n.Ne[2]-i11), 1}); err != nil {
					return err
				}
			}
			continue
		}
		for i11 := range n.Ne[2] { // rows of a plane at a time
			for r0 := int64(0); r0 < n.Ne[1]; r0 += rowsPer {
				if err := part(i11, i12, r0, [4]int64{n.Ne[0], min(rowsPer, n.Ne[1]-r0), 1, 1}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// pushGetRows sets the push constants of get_rows.comp for the part of GET_ROWS node n of shape
// ne (n's strides, its index's and source's), the given offsets and the part's first row position.
func (e *Encoder) pushGetRows(n *core.Tensor, ne [4]int64, offa, offi, offd, pos0 uint32) {
	a, idx := n.Src[0], n.Src[1]
	unit := elemTypes[a.Type].unit
	pc := e.push.Reset()
	for i := range 4 {
		pc.U32(u32(ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(n.Nb[i] / 4))
	}
	for i := range 4 {
		pc.U32(u32(a.Nb[i] / unit))
	}
	pc.U32(u32(a.Ne[1]))
	pc.U32(u32(idx.Nb[0]/4), u32(idx.Nb[1]/4), u32(idx.Nb[2]/4))
	pc.U32(offa, offi, offd, u32(ne[0]*ne[1]*ne[2]*ne[3]), b2u(idx.Type == core.TypeI64), pos0)
}

func supportsSetRows(d *Device, t *core.Tensor) bool {
	a, src, idx := t.Src[0], t.Src[1], t.Src[2]
	if a == nil || src == nil || idx == nil || !indexOK(idx) {
		return false
	}
	if !(src.Type == core.TypeF32 || (src.Type == core.TypeF16 && d.Storage16Bit)) || !stridesIn(src, src.Type.Size()) {
		return false
	}
	if t.Type != core.TypeF32 && t.Type != core.TypeF16 && t.Type != core.TypeBF16 && !isQuantDst(t.Type) {
		return false
	}
	if !typeOK(d, t.Type) || !stridesIn(t, elemTypes[t.Type].unit) || !wholeBlocks(t) || (t.Type.IsQuantized() && !t.IsContiguousRows()) {
		return false
	}
	return t.Ne[0] == src.Ne[0] && t.Ne[2] == src.Ne[2] && t.Ne[3] == src.Ne[3] && idx.Ne[0] == src.Ne[1] &&
		idx.Ne[1] > 0 && idx.Ne[2] > 0 && src.Ne[2]%idx.Ne[1] == 0 && src.Ne[3]%idx.Ne[2] == 0 && idx.Ne[3] == 1 &&
		src.NRows() < maxShaderIndex
}

const (
	setRowsPushSize = 23 * 4
	setRowsWG       = 64
)

func (e *Encoder) encodeSetRows(n *core.Tensor) error {
	src, idx := n.Src[1], n.Src[2]
	dt := elemTypes[n.Type]
	name, su := "set_rows_"+dt.name, int64(4)
	if src.Type == core.TypeF16 {
		name, su = "set_rows_src_f16_"+dt.name, 2
	}
	p, err := e.pipeline(name, 4, setRowsPushSize, setRowsWG)
	if err != nil {
		return err
	}
	osrc, err := e.bindTensor(src, su)
	if err != nil {
		return err
	}
	oi, err := e.bindTensor(idx, 4)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, dt.unit)
	if err != nil {
		return err
	}
	// dst is a view of Src[0]: its span covers exactly what the shader may write.
	if err := e.sync(od, osrc, oi); err != nil {
		return err
	}
	st, err := e.addCheck(e.node, n)
	if err != nil {
		return err
	}
	pc := e.push.Reset()
	pc.U32(u32(n.Ne[0]), u32(src.Ne[1]), u32(src.Ne[2]), u32(src.Ne[3]))
	for i := range 4 {
		pc.U32(u32(src.Nb[i] / su))
	}
	pc.U32(u32(idx.Ne[1]), u32(idx.Ne[2]))
	pc.U32(u32(idx.Nb[0]/4), u32(idx.Nb[1]/4), u32(idx.Nb[2]/4))
	for i := range 4 {
		pc.U32(u32(n.Nb[i] / dt.unit))
	}
	pc.U32(u32(n.Ne[1]), osrc.offs, oi.offs, od.offs, u32(src.NRows()), b2u(idx.Type == core.TypeI64))
	return e.dispatch(p, [3]uint32{e.groups(src.NRows(), 1, 0), 1, 1}, pc.Bytes(), osrc.bind, oi.bind, od.bind, st)
}
