package gpuops

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// CONCAT of types the copy shader cannot move as single elements: I64 and block-quantized
// tensors (whole blocks, as the CPU's ggml_compute_forward_concat_any). Each element (a block
// of a quantized type) of E bytes is E/w words of w = 4 bytes (2 where E or a stride is not a
// multiple of 4; 16-bit storage needed), copied bit for bit by eltwise_copy.comp's CONCAT mode:
//
//   - when dim 0 of a, b and dst is dense (nb0 == E, always so for quantized rows), dim 0 is
//     addressed as a run of words: ne0 / block size · E/w words at stride 1, so concatenating
//     along dim 0 puts a's words, then b's, in each dst row; one dispatch;
//   - otherwise (a permuted I64 tensor, say) one dispatch per word of an element, each copying
//     that word of every element at the elements' strides (at most concatMaxPasses).
//
// MXFP4's 17-byte blocks are neither, and stay on the CPU.

func init() {
	registerOp(core.OpConcat, opImpl{supports: supportsConcat, encode: (*Encoder).encodeConcat})
}

// concatMaxPasses bounds the word-per-dispatch form of a CONCAT with a strided dim 0.
const concatMaxPasses = 4

// concatWords is the word layout of a CONCAT outside eltCopyWidth's types.
type concatWords struct {
	width  string // eltwise_copy variant: b32 or b16
	unit   int64  // word bytes
	per    int64  // words per element (block)
	bs     int64  // elements per block (1 unless quantized)
	dense  bool   // dim 0 addressed as a run of words
	passes int64  // dispatches
}

func concatWordLayout(d *Device, t *core.Tensor) (concatWords, bool) {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || a.Type != t.Type || b.Type != t.Type {
		return concatWords{}, false
	}
	size, bs := t.Type.Size(), t.Type.BlockSize()
	ts := []*core.Tensor{a, b, t}
	w := concatWords{width: "b32", unit: 4, bs: bs, dense: true}
	for _, x := range ts {
		if size%4 != 0 || !eltAddressable(x, 4) {
			w.width, w.unit = "b16", 2
		}
		w.dense = w.dense && x.Nb[0] == size
	}
	if size <= 0 || size%w.unit != 0 || (w.unit == 2 && !d.Storage16Bit) {
		return concatWords{}, false
	}
	for _, x := range ts {
		if !eltAddressable(x, w.unit) || x.Ne[0]%bs != 0 {
			return concatWords{}, false
		}
	}
	w.per, w.passes = size/w.unit, 1
	if !w.dense {
		w.passes = w.per
	}
	if w.passes > concatMaxPasses || t.NElements()/bs*w.per >= maxShaderIndex {
		return concatWords{}, false
	}
	return w, true
}

// geom is x's shape and strides in words.
func (w concatWords) geom(x *core.Tensor) (ne, nb [4]int64) {
	ne, nb = x.Ne, x.Nb
	ne[0] /= w.bs
	for i := range nb {
		nb[i] /= w.unit
	}
	if w.dense {
		ne[0] *= w.per
		nb[0] = 1
	}
	return ne, nb
}

func supportsConcat(d *Device, t *core.Tensor) bool {
	if supportsEltCopy(d, t) || concatBytesOK(t) {
		return true
	}
	if t.Src[0] == nil || !t.Src[0].Type.IsQuantized() && t.Src[0].Type != core.TypeI64 {
		return false
	}
	if _, ok := concatWordLayout(d, t); !ok {
		return false
	}
	return concatShapeOK(t)
}

func (e *Encoder) encodeConcat(n *core.Tensor) error {
	if _, ok := eltCopyWidth(e.dev, n.Type); ok {
		return e.encodeEltCopy(n)
	}
	if concatBytesOK(n) {
		return e.encodeConcatBytes(n)
	}
	w, ok := concatWordLayout(e.dev, n)
	if !ok {
		return fmt.Errorf("CONCAT %v: no word layout for its type and strides", n)
	}
	a, b := n.Src[0], n.Src[1]
	p, err := e.pipeline("eltwise_copy_"+w.width, 3, eltCopyPushSize, eltWG, 1)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, w.unit)
	if err != nil {
		return err
	}
	var oa, ob operand
	var srcs []operand
	if !a.IsEmpty() {
		if oa, err = e.bindTensor(a, w.unit); err != nil {
			return err
		}
		srcs = append(srcs, oa)
	}
	if !b.IsEmpty() {
		if ob, err = e.bindTensor(b, w.unit); err != nil {
			return err
		}
		srcs = append(srcs, ob)
	}
	switch {
	case len(srcs) == 0:
		return nil
	case a.IsEmpty():
		oa = ob
	case b.IsEmpty():
		ob = oa
	}
	if err := e.sync(od, srcs...); err != nil {
		return err
	}
	ned, nbd := w.geom(n)
	nea, nba := w.geom(a)
	_, nbb := w.geom(b)
	if b.IsEmpty() {
		nbb = nba
	}
	count := ned[0] * ned[1] * ned[2] * ned[3]
	for pass := int64(0); pass < w.passes; pass++ {
		pc := e.push.Reset()
		pushShape(pc, ned)
		pushShape(pc, nea)
		pushShape(pc, nba)
		pushShape(pc, nbb)
		pushShape(pc, nbd)
		q := uint32(pass)
		pc.U32(oa.offs+q, ob.offs+q, od.offs+q, u32(count), uint32(core.ConcatDimOf(n)))
		if err := e.dispatch(p, [3]uint32{e.groups(count, eltWG, 0), 1, 1}, pc.Bytes(), oa.bind, ob.bind, od.bind); err != nil {
			return err
		}
	}
	return nil
}

// concatBytesOK reports whether CONCAT node t has 1-byte elements (i8) that eltwise_copy_b8
// copies: a dense result of fewer than 2^31 bytes, the sources of t's type and shapes, any strides.
func concatBytesOK(t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	if a == nil || b == nil || t.Type.Size() != 1 || t.Type.BlockSize() != 1 || t.Type.IsQuantized() ||
		a.Type != t.Type || b.Type != t.Type || !t.IsContiguous() || t.NBytes() >= maxShaderIndex ||
		a.NBytes() >= maxShaderIndex || b.NBytes() >= maxShaderIndex {
		return false
	}
	return concatShapeOK(t)
}

// encodeConcatBytes records CONCAT of 1-byte elements: eltwise_copy_b8 assembles each dst word
// from its bytes' sources (strides and offsets in bytes).
func (e *Encoder) encodeConcatBytes(n *core.Tensor) error {
	a, b := n.Src[0], n.Src[1]
	if n.IsEmpty() {
		return nil
	}
	p, err := e.pipeline("eltwise_copy_b8", 3, eltCopyPushSize+4, eltWG, 1)
	if err != nil {
		return err
	}
	od, err := e.bindTensor(n, 1)
	if err != nil {
		return err
	}
	oa, ob := od, od
	var srcs []operand
	if !a.IsEmpty() {
		if oa, err = e.bindTensor(a, 1); err != nil {
			return err
		}
		srcs = append(srcs, oa)
	}
	if !b.IsEmpty() {
		if ob, err = e.bindTensor(b, 1); err != nil {
			return err
		}
		srcs = append(srcs, ob)
	}
	if a.IsEmpty() {
		oa = ob
	}
	if b.IsEmpty() {
		ob = oa
	}
	if err := e.sync(od, srcs...); err != nil {
		return err
	}
	nbytes := n.NBytes()
	words := (int64(od.offs)+nbytes+3)/4 - int64(od.offs)/4
	pc := e.push.Reset()
	pushShape(pc, n.Ne)
	pushShape(pc, a.Ne)
	pushShape(pc, a.Nb)
	pushShape(pc, b.Nb)
	pushShape(pc, n.Nb)
	pc.U32(oa.offs, ob.offs, od.offs, u32(words), uint32(core.ConcatDimOf(n)), u32(nbytes))
	return e.dispatch(p, [3]uint32{e.groups(words, eltWG, 0), 1, 1}, pc.Bytes(), oa.bind, ob.bind, od.bind)
}

// concatShapeOK reports whether CONCAT node t's shape is a's and b's joined along its dimension.
func concatShapeOK(t *core.Tensor) bool {
	a, b := t.Src[0], t.Src[1]
	dim := core.ConcatDimOf(t)
	if dim < 0 || dim >= core.MaxDims {
		return false
	}
	for i := range core.MaxDims {
		want := a.Ne[i]
		if i == dim {
			want += b.Ne[i]
		} else if b.Ne[i] != a.Ne[i] {
			return false
		}
		if t.Ne[i] != want {
			return false
		}
	}
	return true
}
