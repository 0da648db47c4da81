package gpuops

import (
	"github.com/tandem-ml/tandem/core"
)

// DUP, CONT and CPY (and Cast, a CPY without Src[1]) with ggml's dup semantics,
// as the CPU kernel (backends/cpu/ops_copy.go): the k-th element of src in
// row-major order becomes the k-th element of dst, any strides on either side.
//
//   - Same type: bits are copied unit by unit (cpy_u32 for 4-byte elements,
//     cpy_u16 for 2-byte elements and whole quantized blocks, cpy_mxfp4_raw for
//     MXFP4's 17-byte blocks, which share words with their neighbours: bytes,
//     the shared words' with atomics), exact for every type, NaN payloads included.
//   - f32/f16/bf16/i32/q4_0/q4_1/q8_0 and the Q5, K-quant, IQ4, FP4, Q1_0, TQ, Q2_0, IQ3, IQ2 and
//     IQ1 types ->
//     f32/f16/bf16/i32 (the pairs ggml allows):
//     element by element, with exact integer f16/bf16 conversions (round to
//     nearest even) and dequantization as core/quant.
//   - f32/f16/bf16 -> q4_0/q4_1/q8_0/q5_0/q5_1/iq4_nl/q2_K/q3_K/q4_K/q5_K/q6_K/iq4_xs/nvfp4/q1_0/tq1_0/tq2_0/q2_0/mxfp4:
//     one thread per dst block, as core/quant's reference quantizer (see shaders/rows.glsl;
//     MXFP4 blocks addressed in bytes, the words shared with a neighbour written with atomics).

func init() {
	for _, op := range []core.Op{core.OpDup, core.OpCont, core.OpCpy} {
		registerOp(op, opImpl{supports: supportsCopy, encode: (*Encoder).encodeCopy})
	}
}

// elemTypes are the types the row shaders address, with their shader name and
// the byte size of the unit their arrays use (32-bit words or 16-bit words).
var elemTypes = map[core.Type]struct {
	name string
	unit int64
}{
	core.TypeF32:  {"f32", 4},
	core.TypeI32:  {"i32", 4},
	core.TypeF16:  {"f16", 2},
	core.TypeBF16: {"bf16", 2},
	core.TypeQ4_0: {"q4_0", 2},
	core.TypeQ4_1: {"q4_1", 2},
	core.TypeQ8_0: {"q8_0", 2},
	// Q5, K-quant and IQ4 sources (shaders/kquants.glsl): dequantizing copies and GET_ROWS.
	core.TypeQ5_0:   {"q5_0", 2},
	core.TypeQ5_1:   {"q5_1", 2},
	core.TypeQ2_K:   {"q2_K", 2},
	core.TypeQ3_K:   {"q3_K", 2},
	core.TypeQ4_K:   {"q4_K", 2},
	core.TypeQ5_K:   {"q5_K", 2},
	core.TypeQ6_K:   {"q6_K", 2},
	core.TypeQ8_K:   {"q8_K", 2},
	core.TypeIQ4_NL: {"iq4_nl", 2},
	core.TypeIQ4_XS: {"iq4_xs", 2},
	// MXFP4, NVFP4, Q1_0, TQ1_0 and TQ2_0 sources (kquants.glsl too); MXFP4's 17-byte blocks are
	// addressed in bytes.
	core.TypeMXFP4: {"mxfp4", 1},
	core.TypeNVFP4: {"nvfp4", 2},
	core.TypeQ1_0:  {"q1_0", 2},
	core.TypeTQ1_0: {"tq1_0", 2},
	core.TypeTQ2_0: {"tq2_0", 2},
	// Q2_0, IQ3_XXS and IQ3_S sources (kquants.glsl).
	core.TypeQ2_0:    {"q2_0", 2},
	core.TypeIQ3_XXS: {"iq3_xxs", 2},
	core.TypeIQ3_S:   {"iq3_s", 2},
	// IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M sources (kquants.glsl; read only, as on the CPU).
	core.TypeIQ2_XXS: {"iq2_xxs", 2},
	core.TypeIQ2_XS:  {"iq2_xs", 2},
	core.TypeIQ2_S:   {"iq2_s", 2},
	core.TypeIQ1_S:   {"iq1_s", 2},
	core.TypeIQ1_M:   {"iq1_m", 2},
}

// copyConversions lists the converting element copies (cpy.comp) by source type.
var copyConversions = map[core.Type][]core.Type{
	core.TypeF32:  {core.TypeF16, core.TypeBF16, core.TypeI32},
	core.TypeF16:  {core.TypeF32, core.TypeBF16},
	core.TypeBF16: {core.TypeF32, core.TypeF16},
	core.TypeI32:  {core.TypeF32},
	core.TypeQ4_0: {core.TypeF32, core.TypeF16, core.TypeBF16},
	core.TypeQ4_1: {core.TypeF32, core.TypeF16, core.TypeBF16},
	core.TypeQ8_0: {core.TypeF32, core.TypeF16, core.TypeBF16},
}

func init() {
	for _, t := range []core.Type{core.TypeQ5_0, core.TypeQ5_1, core.TypeQ2_K, core.TypeQ3_K, core.TypeQ4_K, core.TypeQ5_K,
		core.TypeQ6_K, core.TypeQ8_K, core.TypeIQ4_NL, core.TypeIQ4_XS, core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0,
		core.TypeTQ1_0, core.TypeTQ2_0, core.TypeQ2_0, core.TypeIQ3_XXS, core.TypeIQ3_S, core.TypeIQ2_XXS, core.TypeIQ2_XS,
		core.TypeIQ2_S, core.TypeIQ1_S, core.TypeIQ1_M} {
		copyConversions[t] = []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16}
	}
}

// maxShaderIndex bounds the element (or unit) counts the row shaders index with
// 32-bit integers, grid-stride loops included.
const maxShaderIndex = 1 << 31

// stridesIn reports whether every stride of t, and its offset in the tensor it
// views, are multiples of unit bytes (so the shaders can address it in units).
func stridesIn(t *core.Tensor, unit int64) bool {
	if t.ViewOffs%unit != 0 {
		return false
	}
	for _, nb := range t.Nb {
		if nb%unit != 0 {
			return false
		}
	}
	return true
}

// typeOK reports whether the shaders handle type t on device d (2-byte units need
// 16-bit storage access).
func typeOK(d *Device, t core.Type) bool {
	et, ok := elemTypes[t]
	return ok && (et.unit == 4 || d.Storage16Bit)
}

// wholeBlocks reports whether the rows of t are whole blocks of its type.
func wholeBlocks(t *core.Tensor) bool { return t.Ne[0]%t.Type.BlockSize() == 0 }

// isQuantDst reports whether the row shaders quantize into t (rows.glsl's dst_store_block; the
// variants of shaders/internal/build's quantDsts).
func isQuantDst(t core.Type) bool {
	switch t {
	case core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0, core.TypeQ5_0, core.TypeQ5_1, core.TypeIQ4_NL, core.TypeQ4_K, core.TypeQ5_K, core.TypeQ6_K, core.TypeIQ4_XS,
		core.TypeNVFP4, core.TypeQ1_0, core.TypeTQ1_0, core.TypeTQ2_0, core.TypeQ2_0, core.TypeMXFP4, core.TypeQ2_K, core.TypeQ3_K:
		return true
	}
	return false
}

func supportsCopy(d *Device, t *core.Tensor) bool {
	src := t.Src[0]
	if src == nil || src.NElements() != t.NElements() || t.NElements() >= maxShaderIndex {
		return false
	}
	if src.Type == core.TypeI16 && t.Type == core.TypeI16 { // raw 16-bit moves (cpy_u16)
		return d.Storage16Bit && stridesIn(src, 2) && stridesIn(t, 2)
	}
	if !typeOK(d, src.Type) || !typeOK(d, t.Type) {
		return false
	}
	if !stridesIn(src, elemTypes[src.Type].unit) || !stridesIn(t, elemTypes[t.Type].unit) || !wholeBlocks(src) || !wholeBlocks(t) {
		return false
	}
	if src.Type == t.Type {
		return true // cpy_u32, cpy_u16 or, for MXFP4, cpy_mxfp4_raw
	}
	if isQuantDst(t.Type) {
		return (src.Type == core.TypeF32 || src.Type == core.TypeF16 || src.Type == core.TypeBF16) &&
			t.IsContiguousRows()
	}
	for _, to := range copyConversions[src.Type] {
		if to == t.Type {
			return true
		}
	}
	return false
}

const (
	copyPushSize  = 20 * 4
	copyWG        = 256
	quantPushSize = 19 * 4
	quantWG       = 64
)

func (e *Encoder) encodeCopy(n *core.Tensor) error {
	src := n.Src[0]
	st, dt := elemTypes[src.Type], elemTypes[n.Type]
	if n.Type == core.TypeI16 { // same-type only (supportsCopy): moved as 16-bit words
		st.unit, dt.unit = 2, 2
	}
	ops, err := e.bindNode(n, dt.unit, use{src, st.unit})
	if err != nil {
		return err
	}
	oa, od := ops[0], ops[1]
	pc := e.push.Reset()
	shape := func(t *core.Tensor, bs int64) {
		pc.U32(u32(t.Ne[0]/bs), u32(t.Ne[1]), u32(t.Ne[2]), u32(t.Ne[3]))
	}
	strides := func(t *core.Tensor, unit int64) {
		for i := range 4 {
			pc.U32(u32(t.Nb[i] / unit))
		}
	}

	if isQuantDst(n.Type) && src.Type != n.Type {
		p, err := e.pipeline("cpy_"+st.name+"_"+dt.name, 2, quantPushSize, quantWG)
		if err != nil {
			return err
		}
		nblocks := n.NElements() / n.Type.BlockSize()
		shape(n, 1)
		strides(n, dt.unit)
		shape(src, 1)
		strides(src, st.unit)
		pc.U32(oa.offs, od.offs, u32(nblocks))
		return e.dispatch(p, [3]uint32{e.groups(nblocks, quantWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
	}

	var name string
	bs, words, units := int64(1), uint32(0), n.NElements()
	switch {
	case src.Type == n.Type && st.unit == 4:
		name = "cpy_u32"
	case src.Type == n.Type && st.unit == 1:
		// MXFP4: whole 17-byte blocks, strides and offsets in bytes
		name = "cpy_mxfp4_raw"
		bs = n.Type.BlockSize()
		units /= bs
	case src.Type == n.Type:
		// whole blocks (or 2-byte elements) of words 16-bit words
		name = "cpy_u16"
		bs = n.Type.BlockSize()
		words = u32(n.Type.Size() / 2)
		units /= bs
	default:
		name = "cpy_" + st.name + "_" + dt.name
	}
	p, err := e.pipeline(name, 2, copyPushSize, copyWG)
	if err != nil {
		return err
	}
	shape(n, bs)
	strides(n, dt.unit)
	shape(src, bs)
	strides(src, st.unit)
	pc.U32(oa.offs, od.offs, u32(units), words)
	return e.dispatch(p, [3]uint32{e.groups(units, copyWG, 0), 1, 1}, pc.Bytes(), oa.bind, od.bind)
}
