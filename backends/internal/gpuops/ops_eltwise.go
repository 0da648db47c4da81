package gpuops

import (
	"math/bits"

	"github.com/tandem-ml/tandem/core"
)

// The elementwise family (shaders/eltwise_*.comp): ADD1, SCALE, SQR, SQRT, LOG, SIN, COS, CLAMP,
// LEAKY_RELU and UNARY through one strided unary shader whose function is a specialization
// constant; GLU; SUM, SUM_ROWS and MEAN; ARGMAX; ARGSORT; REPEAT and CONCAT. Every shader
// addresses its tensors by element strides, so views and permutations of any layout work; the
// unary shader reads each element before writing it, so dst may share src0's memory.
//
// Float ops run on F32, F16 and BF16 (the 16-bit types need 16-bit storage access), with dst of
// the source's type as the constructors make them; REPEAT and CONCAT copy any 4- or 2-byte type
// (CONCAT of I64 and of quantized blocks as words: ops_concat.go).

func init() {
	for _, op := range []core.Op{core.OpAdd1, core.OpScale, core.OpSqr, core.OpSqrt, core.OpLog, core.OpSin,
		core.OpCos, core.OpClamp, core.OpLeakyRelu, core.OpUnary} {
		registerOp(op, opImpl{supports: supportsEltUnary, encode: (*Encoder).encodeEltUnary})
	}
	registerOp(core.OpGLU, opImpl{supports: supportsGLU, encode: (*Encoder).encodeGLU})
	for _, op := range []core.Op{core.OpSum, core.OpSumRows, core.OpMean} {
		registerOp(op, opImpl{supports: supportsReduce, encode: (*Encoder).encodeReduce})
	}
	registerOp(core.OpArgmax, opImpl{supports: supportsArgmax, encode: (*Encoder).encodeArgmax})
	registerOp(core.OpArgsort, opImpl{supports: supportsArgsort, encode: (*Encoder).encodeArgsort})
	registerOp(core.OpRepeat, opImpl{supports: supportsEltCopy, encode: (*Encoder).encodeEltCopy})
}

const eltWG = 256

// eltFloatType returns the shader name part and element size of a float type the family's
// float shaders handle on d.
func eltFloatType(d *Device, t core.Type) (string, int64, bool) {
	switch t {
	case core.TypeF32:
		return "f32", 4, true
	case core.TypeF16:
		return "f16", 2, d.Storage16Bit
	case core.TypeBF16:
		return "bf16", 2, d.Storage16Bit
	}
	return "", 0, false
}

// eltAddressable reports whether every stride and the view offset of t are whole elements of
// unit bytes, so the shaders can address t in those units.
func eltAddressable(t *core.Tensor, unit int64) bool {
	for _, nb := range t.Nb {
		if nb < 0 || nb%unit != 0 {
			return false
		}
	}
	return t.ViewSrc == nil || t.ViewOffs%unit == 0
}

// eltUnaryCode is the function code of eltwise_unary.comp for n (its OP_* constants).
func eltUnaryCode(n *core.Tensor) uint32 {
	switch n.Op {
	case core.OpAdd1:
		return 0
	case core.OpScale:
		return 1
	case core.OpSqr:
		return 2
	case core.OpSqrt:
		return 3
	case core.OpLog:
		return 4
	case core.OpSin:
		return 5
	case core.OpCos:
		return 6
	case core.OpClamp:
		return 7
	case core.OpLeakyRelu:
		return 8
	}
	return 16 + uint32(core.UnaryOpOf(n)) // UNARY
}

func supportsEltUnary(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != t.Type || a.Ne != t.Ne {
		return false
	}
	_, unit, ok := eltFloatType(d, a.Type)
	if !ok || !eltAddressable(a, unit) || !eltAddressable(t, unit) {
		return false
	}
	switch t.Op {
	case core.OpAdd1:
		b := t.Src[1]
		return b != nil && b.Type == a.Type && b.NElements() == 1 && eltAddressable(b, unit)
	case core.OpUnary:
		u := core.UnaryOpOf(t)
		return u >= 0 && u < core.UnaryCount
	}
	return true
}

// pushShape appends the four sizes of ne.
func pushShape(pc *Push, ne [4]int64) {
	pc.U32(u32(ne[0]), u32(ne[1]), u32(ne[2]), u32(ne[3]))
}

// pushStrides appends the four strides of t in units of unit bytes.
func pushStrides(pc *Push, t *core.Tensor, unit int64) {
	pc.U32(u32(t.Nb[0]/unit), u32(t.Nb[1]/unit), u32(t.Nb[2]/unit), u32(t.Nb[3]/unit))
}

const eltUnaryPushSize = 20 * 4

func (e *Encoder) encodeEltUnary(n *core.Tensor) error {
	a := n.Src[0]
	tn, unit, _ := eltFloatType(e.dev, a.Type)
	p, err := e.pipeline("eltwise_unary_"+tn, 3, eltUnaryPushSize, eltWG, eltUnaryCode(n))
	if err != nil {
		return err
	}
	oa, err := e.bindTensor(a, unit)
	if err != nil {
		return err
	}
	ob := oa // not read
	srcs := []operand{oa}
	if n.Op == core.OpAdd1 {
		if ob, err = e.bindTensor(n.Src[1], unit); err != nil {
			return err
		}
		srcs = append(srcs, ob)
	}
	od, err := e.bindTensor(n, unit)
	if err != nil {
		return err
	}
	if err := e.sync(od, srcs...); err != nil {
		return err
	}
	ep := core.ElementwiseParamsOf(n)
	prm := [4]float32{ep.A, ep.B}
	if core.UnaryOpOf(n) == core.UnaryXielu {
		xp := core.XieluParamsOf(n)
		prm = [4]float32{xp.AlphaN, xp.AlphaP, xp.Beta, xp.Eps}
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, a, unit)
	pushStrides(pc, n, unit)
	pc.U32(oa.offs, ob.offs, od.offs, u32(n.NElements()))
	pc.F32(prm[:]...)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind, ob.bind)
}

func supportsGLU(d *Device, t *core.Tensor) bool {
	a, g := t.Src[0], t.Src[1]
	op := core.GLUParamsOf(t).Op
	if a == nil || a.Type != t.Type || op < 0 || op >= core.GLUCount {
		return false
	}
	_, unit, ok := eltFloatType(d, a.Type)
	if !ok || !eltAddressable(a, unit) || !eltAddressable(t, unit) {
		return false
	}
	if g == nil { // halves of ne0/2: an odd row's last element is not read
		return a.Ne[0]/2 == t.Ne[0] && a.Ne[1] == t.Ne[1] && a.Ne[2] == t.Ne[2] && a.Ne[3] == t.Ne[3]
	}
	return g.Type == a.Type && a.Ne == t.Ne && g.Ne == t.Ne && eltAddressable(g, unit)
}

const gluPushSize = 22 * 4

func (e *Encoder) encodeGLU(n *core.Tensor) error {
	a, g := n.Src[0], n.Src[1]
	tn, unit, _ := eltFloatType(e.dev, a.Type)
	gp := core.GLUParamsOf(n)
	p, err := e.pipeline("eltwise_glu_"+tn, 3, gluPushSize, eltWG, uint32(gp.Op))
	if err != nil {
		return err
	}
	swapped := gp.Swapped
	oa, err := e.bindTensor(a, unit)
	if err != nil {
		return err
	}
	// x and g: operand, its strides' tensor and the element offset of element 0.
	ox, og := oa, oa
	tx, tg := a, a
	offx, offg := oa.offs, oa.offs
	srcs := []operand{oa}
	if g == nil {
		half := u32(n.Ne[0] * a.Nb[0] / unit)
		if swapped {
			offx += half
		} else {
			offg += half
		}
	} else {
		if og, err = e.bindTensor(g, unit); err != nil {
			return err
		}
		srcs = append(srcs, og)
		tg, offg = g, og.offs
		if swapped {
			ox, og = og, ox
			tx, tg = tg, tx
			offx, offg = offg, offx
		}
	}
	od, err := e.bindTensor(n, unit)
	if err != nil {
		return err
	}
	if err := e.sync(od, srcs...); err != nil {
		return err
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushStrides(pc, tx, unit)
	pushStrides(pc, tg, unit)
	pushStrides(pc, n, unit)
	pc.U32(offx, offg, od.offs, u32(n.NElements()))
	pc.F32(gp.Alpha, gp.Limit)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), ox.bind, og.bind, od.bind)
}

func supportsReduce(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != t.Type {
		return false
	}
	_, unit, ok := eltFloatType(d, a.Type)
	if !ok || !eltAddressable(a, unit) || !eltAddressable(t, unit) {
		return false
	}
	switch t.Op {
	case core.OpSum:
		return t.NElements() == 1
	case core.OpMean:
		// An empty row's mean is 0/0; leave that to the CPU.
		if a.Ne[0] == 0 {
			return false
		}
	}
	return t.Ne == [4]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}
}

// eltReduceWG is the workgroup size for reductions of m elements: a power of two in [32, 256].
func eltReduceWG(m int64) uint32 {
	wg := uint32(32)
	for int64(wg) < m && wg < eltWG {
		wg *= 2
	}
	return wg
}

const reducePushSize = 17 * 4

func (e *Encoder) encodeReduce(n *core.Tensor) error {
	a := n.Src[0]
	tn, unit, _ := eltFloatType(e.dev, a.Type)
	m, nout := a.Ne[0], a.NRows()
	if n.Op == core.OpSum {
		m, nout = a.NElements(), 1
	}
	var mean uint32
	if n.Op == core.OpMean {
		mean = 1
	}
	wg := eltReduceWG(m)
	p, err := e.pipeline("eltwise_reduce_"+tn, 2, reducePushSize, wg, mean)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, unit)
	if err != nil {
		return err
	}
	oa := od // an empty source is never read (its sums are 0)
	if !a.IsEmpty() {
		if oa, err = e.bindTensor(a, unit); err != nil {
			return err
		}
	}
	if err := e.sync(od, oa); err != nil {
		return err
	}
	pc := e.push.Reset()
	pushShape(pc, a.Ne)
	pushStrides(pc, a, unit)
	pc.U32(u32(n.Ne[1]), u32(n.Ne[2])) // SUM: 1, 1
	pc.U32(u32(n.Nb[1]/unit), u32(n.Nb[2]/unit), u32(n.Nb[3]/unit))
	pc.U32(u32(m), u32(nout), oa.offs, od.offs)
	return e.dispatch(p, [3]uint32{e.groups(nout, 1, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

func supportsArgmax(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	return a != nil && a.Type == core.TypeF32 && t.Type == core.TypeI32 && a.Ne[2] == 1 && a.Ne[3] == 1 &&
		t.Ne == [4]int64{a.Ne[1], 1, 1, 1} && eltAddressable(a, 4) && eltAddressable(t, 4)
}

const argmaxPushSize = 7 * 4

func (e *Encoder) encodeArgmax(n *core.Tensor) error {
	a := n.Src[0]
	wg := eltReduceWG(a.Ne[0])
	p, err := e.pipeline("eltwise_argmax_f32", 2, argmaxPushSize, wg)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, 4)
	if err != nil {
		return err
	}
	oa := od // an empty row is never read (its argmax is 0)
	if !a.IsEmpty() {
		if oa, err = e.bindTensor(a, 4); err != nil {
			return err
		}
	}
	if err := e.sync(od, oa); err != nil {
		return err
	}
	pc := e.push.Reset()
	pc.U32(u32(a.Ne[0]), u32(a.Ne[1]), u32(a.Nb[0]/4), u32(a.Nb[1]/4), u32(n.Nb[0]/4), oa.offs, od.offs)
	return e.dispatch(p, [3]uint32{e.groups(a.Ne[1], 1, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

// argsortSize returns the padded row length (a power of two, at least 2) and workgroup size
// for rows of ne0 elements, and whether the row fits in shared memory.
func argsortSize(d *Device, ne0 int64) (n, wg uint32, ok bool) {
	if ne0 < 1 || ne0 > 1<<20 {
		return 0, 0, false
	}
	n = uint32(2)
	if ne0 > 2 {
		n = 1 << bits.Len64(uint64(ne0-1))
	}
	wg = min(n/2, eltWG, d.MaxComputeWorkGroupInvocations, d.MaxComputeWorkGroupSize[0])
	return n, wg, uint64(n)*8 <= uint64(d.MaxComputeSharedMemorySize)
}

func supportsArgsort(d *Device, t *core.Tensor) bool {
	a := t.Src[0]
	if a == nil || a.Type != core.TypeF32 || t.Type != core.TypeI32 || t.Ne != a.Ne ||
		!eltAddressable(a, 4) || !eltAddressable(t, 4) {
		return false
	}
	order := core.SortOrderOf(t)
	if order != core.SortAsc && order != core.SortDesc {
		return false
	}
	if _, _, ok := argsortSize(d, a.Ne[0]); ok {
		return true
	}
	_, _, ok := argsortLongSize(d, a.Ne[0])
	return ok
}

// argsortLongSize returns, for ARGSORT rows of ne0 elements too long for one workgroup's shared
// memory, the chunk each workgroup sorts in shared memory (a power of two) and the workgroup
// size of the multi-pass sort (eltwise_argsort.comp's LONG variant), and whether it applies.
func argsortLongSize(d *Device, ne0 int64) (chunk, wg uint32, ok bool) {
	if ne0 < 2 || ne0 >= maxShaderIndex/2 {
		return 0, 0, false
	}
	chunk = 4096
	for chunk > 2 && uint64(chunk)*8 > uint64(d.MaxComputeSharedMemorySize) {
		chunk /= 2
	}
	wg = min(chunk/2, eltWG, d.MaxComputeWorkGroupInvocations, d.MaxComputeWorkGroupSize[0])
	return chunk, wg, uint64(chunk)*8 <= uint64(d.MaxComputeSharedMemorySize) && int64(chunk) < ne0
}

const (
	argsortPushSize     = 18 * 4
	argsortLongPushSize = 22 * 4
)

func (e *Encoder) encodeArgsort(n *core.Tensor) error {
	a := n.Src[0]
	size, wg, ok := argsortSize(e.dev, a.Ne[0])
	if !ok {
		return e.encodeArgsortLong(n)
	}
	p, err := e.pipeline("eltwise_argsort_f32", 2, argsortPushSize, wg, size)
	if err != nil {
		return err
	}
	ops, err := e.bindNode(n, 4, use{a, 4})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	var desc uint32
	if core.SortOrderOf(n) == core.SortDesc || n.Op == core.OpTopK {
		desc = 1
	}
	pc := e.push.Reset()
	pushShape(pc, a.Ne)
	pushStrides(pc, a, 4)
	pushStrides(pc, n, 4)
	pc.U32(oa.offs, od.offs, u32(a.NRows()), desc, u32(n.Ne[0]), b2u(n.Op == core.OpTopK))
	return e.dispatch(p, [3]uint32{e.groups(a.NRows(), 1, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}

// encodeArgsortLong records ARGSORT or TOP_K of rows longer than shared memory holds as the
// passes of eltwise_argsort.comp's LONG variant: for TOP_K first the selection of each row's k
// indices into dst (mode 3); then the chunks of dst sorted in shared memory, and for each block
// size above the chunk the compare-exchange steps of distance k/2 .. chunk over global memory and
// one merge of the rest inside each chunk, dst holding the indices in between (its nout positions
// padded to a power of two with virtual keys that sort last).
func (e *Encoder) encodeArgsortLong(n *core.Tensor) error {
	a := n.Src[0]
	topk := n.Op == core.OpTopK
	chunk, wg, _ := argsortLongSize(e.dev, a.Ne[0])
	p, err := e.pipeline("eltwise_argsort_long_f32", 2, argsortLongPushSize, wg, chunk)
	if err != nil {
		return err
	}
	oa, err := e.bindTensor(a, 4)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, 4)
	if err != nil {
		return err
	}
	var desc uint32
	if core.SortOrderOf(n) == core.SortDesc || topk {
		desc = 1
	}
	nout := n.Ne[0]
	npad := max(int64(1)<<bits.Len64(uint64(nout-1)), int64(chunk))
	rows := a.NRows()
	pass := func(mode uint32, k, j int64, last bool) error {
		if err := e.sync(od, oa); err != nil { // each pass reads what the one before wrote
			return err
		}
		var flag uint32 // the shader's topk word: 2 on TOP_K's last pass (swap the first two)
		if topk {
			flag = 1 + b2u(last)
		}
		pc := e.push.Reset()
		pushShape(pc, a.Ne)
		pushStrides(pc, a, 4)
		pushStrides(pc, n, 4)
		pc.U32(oa.offs, od.offs, u32(rows), desc, u32(nout), flag)
		pc.U32(mode, u32(k), u32(j), u32(npad))
		var x uint32
		switch mode {
		case 1:
			x = e.groups(npad/2, int64(wg), 0)
		case 3:
			x = 1
		default:
			x = e.groups(npad/int64(chunk), 1, 0)
		}
		return e.dispatch(p, [3]uint32{x, e.groups(rows, 1, 1), 1}, pc.Bytes(), oa.bind, od.bind)
	}
	if topk {
		if err := pass(3, 0, 0, false); err != nil {
			return err
		}
	}
	if err := pass(0, 0, 0, npad == int64(chunk)); err != nil {
		return err
	}
	for k := 2 * int64(chunk); k <= npad; k *= 2 {
		for j := k / 2; j >= int64(chunk); j /= 2 {
			if err := pass(1, k, j, false); err != nil {
				return err
			}
		}
		if err := pass(2, k, 0, k == npad); err != nil {
			return err
		}
	}
	return nil
}

// eltCopyWidth returns the shader name part for copying elements of type t bit for bit.
func eltCopyWidth(d *Device, t core.Type) (string, bool) {
	if t.IsQuantized() || t.BlockSize() != 1 {
		return "", false
	}
	switch t.Size() {
	case 4:
		return "b32", true
	case 2:
		return "b16", d.Storage16Bit
	}
	return "", false
}

func supportsEltCopy(d *Device, t *core.Tensor) bool {
	a, bt := t.Src[0], t.Src[1]
	if a == nil || a.Type != t.Type {
		return false
	}
	if _, ok := eltCopyWidth(d, a.Type); !ok {
		return false
	}
	unit := a.Type.Size()
	if !eltAddressable(a, unit) || !eltAddressable(t, unit) {
		return false
	}
	if t.Op == core.OpRepeat {
		for i := range core.MaxDims {
			if a.Ne[i] <= 0 || t.Ne[i]%a.Ne[i] != 0 {
				return false
			}
		}
		return true
	}
	dim := core.ConcatDimOf(t)
	if bt == nil || bt.Type != a.Type || !eltAddressable(bt, unit) || dim < 0 || dim >= core.MaxDims {
		return false
	}
	for i := range core.MaxDims {
		want := a.Ne[i]
		if i == dim {
			want += bt.Ne[i]
		} else if bt.Ne[i] != a.Ne[i] {
			return false
		}
		if t.Ne[i] != want {
			return false
		}
	}
	return true
}

const eltCopyPushSize = 25 * 4

func (e *Encoder) encodeEltCopy(n *core.Tensor) error {
	a, bt := n.Src[0], n.Src[1]
	width, _ := eltCopyWidth(e.dev, a.Type)
	unit := a.Type.Size()
	var mode, dim uint32
	if n.Op == core.OpConcat {
		mode, dim = 1, uint32(core.ConcatDimOf(n))
	}
	p, err := e.pipeline("eltwise_copy_"+width, 3, eltCopyPushSize, eltWG, mode)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, unit)
	if err != nil {
		return err
	}
	// An empty operand of CONCAT is never read: bind the other one in its place.
	var oa, ob operand
	var srcs []operand
	if !a.IsEmpty() {
		if oa, err = e.bindTensor(a, unit); err != nil {
			return err
		}
		srcs = append(srcs, oa)
	}
	if mode == 1 && !bt.IsEmpty() {
		if ob, err = e.bindTensor(bt, unit); err != nil {
			return err
		}
		srcs = append(srcs, ob)
	}
	switch {
	case len(srcs) == 0:
		return nil // dst is empty too (the backend skips it before)
	case a.IsEmpty():
		oa = ob
	case mode == 0 || bt.IsEmpty():
		ob = oa
	}
	if err := e.sync(od, srcs...); err != nil {
		return err
	}
	strideSrc := a
	if mode == 1 && !bt.IsEmpty() {
		strideSrc = bt
	}
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushShape(pc, a.Ne)
	pushStrides(pc, a, unit)
	pushStrides(pc, strideSrc, unit)
	pushStrides(pc, n, unit)
	pc.U32(oa.offs, ob.offs, od.offs, u32(n.NElements()), dim)
	return e.dispatch(p, [3]uint32{e.groups(n.NElements(), eltWG, 0), 1, 1}, pc.Bytes(), oa.bind, ob.bind, od.bind)
}
