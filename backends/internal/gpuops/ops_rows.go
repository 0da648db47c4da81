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
	registerOp(core.OpGetRows, opImpl{supports: supportsGetRows, encode: (*Encoder).encodeGetRows})
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
	return t.Type == want && t.Ne == [4]int64{a.Ne[0], idx.Ne[0], idx.Ne[1], idx.Ne[2]} &&
		a.Ne[2] == idx.Ne[1] && a.Ne[3] == idx.Ne[2] && idx.Ne[3] == 1 &&
		stridesIn(a, elemTypes[a.Type].unit) && wholeBlocks(a) && stridesIn(t, 4)
}

const (
	getRowsPushSize = 21 * 4
	getRowsWG       = 256
)

func (e *Encoder) encodeGetRows(n *core.Tensor) error {
	a, idx := n.Src[0], n.Src[1]
	at := elemTypes[a.Type]
	p, err := e.pipeline("get_rows_"+at.name, 4, getRowsPushSize, getRowsWG)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, at.unit}, use{idx, 4})
	if err != nil {
		return err
	}
	st, err := e.addCheck(e.node, n)
	if err != nil {
		return err
	}
	oa, oi, od := ops[0], ops[1], ops[2]
	pc := e.push.Reset()
	for i := range 4 {
		pc.U32(u32(n.Ne[i]))
	}
	for i := range 4 {
		pc.U32(u32(n.Nb[i] / 4))
	}
	for i := range 4 {
		pc.U32(u32(a.Nb[i] / at.unit))
	}
	pc.U32(u32(a.Ne[1]))
	pc.U32(u32(idx.Nb[0]/4), u32(idx.Nb[1]/4), u32(idx.Nb[2]/4))
	pc.U32(oa.offs, oi.offs, od.offs, u32(n.NElements()), b2u(idx.Type == core.TypeI64))
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), getRowsWG, 0), 1, 1}, pc.Bytes(), oa.bind, oi.bind, od.bind, st)
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
