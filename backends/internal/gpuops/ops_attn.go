package gpuops

import "github.com/tandem-ml/tandem/core"

// FLASH_ATTN_EXT, after the CPU kernel (backends/cpu/ops_attn.go): flash_attn_ext.comp runs one
// workgroup per query row with an online softmax over tiles of keys; a node with few query rows
// and many keys splits its keys over workgroups instead (ops_attn_split.go). It takes keys and
// values of f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, q1_0 and q2_0, and of the
// K-quants, IQ4_XS, MXFP4, NVFP4 and the IQ3/IQ2/IQ1 types (K and V of one type), in the pairs of
// faPair (all but f32 need 16-bit storage), an f16 or f32 mask, ALiBi, the
// logit soft cap and sinks, key head sizes up to faMaxDK and value ones up to faMaxD (DeepSeek's
// MLA: 576 and 512), and k/v views with any strides that are whole
// units. The query is rounded to f16 for f16 keys and to bf16 for bf16 keys as the CPU does; for
// the block types it stays f32 (the CPU quantizes it to K's vec-dot type: q8_0, q8_1 or q8_K),
// more precise than the CPU and well inside ggml's 5e-4 bound for the op.

func init() {
	registerOp(core.OpFlashAttnExt, opImpl{supports: supportsFlashAttn, encode: (*Encoder).encodeFlashAttn, scratch: scratchFlashAttn})
}

// faMaxD is the largest value head size of the shaders (MAX_D: their accumulators) and faMaxDK
// the largest key head size (flash_attn_ext.comp's MAX_DK, the query row in shared memory; the
// split shader holds G query rows of up to faSplitMaxGK floats).
const (
	faMaxD  = 512
	faMaxDK = 1024
)

// faPushSize is the shader's push-constant block: 32 words.
const faPushSize = 32 * 4

// faTypeName is the shader's name of a K/V type and the unit (bytes) it addresses it in; ok is
// false for a type it does not read.
func faTypeName(d *Device, t core.Type) (name string, unit int64, ok bool) {
	switch {
	case t == core.TypeF32:
		return "f32", 4, true
	case t == core.TypeMXFP4 && d.Storage16Bit:
		return "mxfp4", 1, true // 17-byte blocks: addressed in bytes (still read as 16-bit words)
	case faTypes16[t] && d.Storage16Bit:
		return t.String(), 2, true
	}
	return "", 0, false
}

// faTypes16 are the K/V types the shaders read as 16-bit words (fa_kv.glsl); variants exist for
// the pairs of faPair only.
var faTypes16 = map[core.Type]bool{core.TypeF16: true, core.TypeBF16: true, core.TypeQ8_0: true,
	core.TypeQ4_0: true, core.TypeQ4_1: true, core.TypeQ5_0: true, core.TypeQ5_1: true,
	core.TypeIQ4_NL: true, core.TypeQ1_0: true, core.TypeQ2_0: true,
	// decoded by kquants.glsl's loaders, K and V of the same type
	core.TypeQ2_K: true, core.TypeQ3_K: true, core.TypeQ4_K: true, core.TypeQ5_K: true, core.TypeQ6_K: true,
	core.TypeIQ4_XS: true, core.TypeNVFP4: true, core.TypeIQ3_XXS: true, core.TypeIQ3_S: true,
	core.TypeIQ2_XXS: true, core.TypeIQ2_XS: true, core.TypeIQ2_S: true, core.TypeIQ1_S: true, core.TypeIQ1_M: true}

// faMixed are the pairs of different K and V types beyond those of f32, f16 and q8_0 that ggml's
// test-backend-ops runs: q8_0/q4_0, q4_0 with f16 and q8_0, and q1_0 and q2_0 with q4_0 and f16.
var faMixed = map[[2]core.Type]bool{
	{core.TypeQ8_0, core.TypeQ4_0}: true, {core.TypeQ4_0, core.TypeQ8_0}: true,
	{core.TypeQ4_0, core.TypeF16}: true, {core.TypeF16, core.TypeQ4_0}: true,
	{core.TypeQ1_0, core.TypeQ4_0}: true, {core.TypeQ4_0, core.TypeQ1_0}: true, {core.TypeQ1_0, core.TypeF16}: true,
	{core.TypeQ2_0, core.TypeQ4_0}: true, {core.TypeQ4_0, core.TypeQ2_0}: true, {core.TypeQ2_0, core.TypeF16}: true,
}

// faPair reports whether (k, v) is a pair of the shader variants (shaders/internal/build/
// variants_attn.go, which lists the same): every pair of f32, f16 and q8_0, each type with
// itself, and faMixed.
func faPair(k, v core.Type) bool {
	base := func(t core.Type) bool { return t == core.TypeF32 || t == core.TypeF16 || t == core.TypeQ8_0 }
	return base(k) && base(v) || k == v || faMixed[[2]core.Type{k, v}]
}

func supportsFlashAttn(d *Device, t *core.Tensor) bool {
	q, k, v, m, sinks := t.Src[0], t.Src[1], t.Src[2], t.Src[3], t.Src[4]
	_, ku, kok := faTypeName(d, k.Type)
	_, vu, vok := faTypeName(d, v.Type)
	switch {
	case !kok || !vok || !faPair(k.Type, v.Type) || q.Type != core.TypeF32 || t.Type != core.TypeF32:
		return false
	case q.Ne[0] != k.Ne[0] || k.Ne[0] > faMaxDK || v.Ne[0] > faMaxD || k.Ne[1] != v.Ne[1] || k.Ne[0]%k.Type.BlockSize() != 0:
		return false
	case k.Ne[2] == 0 || v.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0 || q.Ne[2]%v.Ne[2] != 0 || q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3]:
		return false
	case t.Ne != [4]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]} || !t.IsContiguous():
		return false
	case q.Nb[0] != 4 || !stridesIn(q, 4) || !k.IsContiguousRows() || !stridesIn(k, ku) || !v.IsContiguousRows() || !stridesIn(v, vu):
		return false
	case t.NRows() >= maxShaderIndex:
		return false
	}
	if m != nil {
		mu := m.Type.Size()
		switch {
		case m.Type != core.TypeF32 && !(m.Type == core.TypeF16 && d.Storage16Bit):
			return false
		case m.Nb[0] != mu || !stridesIn(m, mu) || m.Ne[0] < k.Ne[1] || m.Ne[1] < q.Ne[1]:
			return false
		case m.Ne[2] == 0 || m.Ne[3] == 0 || q.Ne[2]%m.Ne[2] != 0 || q.Ne[3]%m.Ne[3] != 0:
			return false
		}
	} else if core.FlashAttnParamsOf(t).MaxBias > 0 {
		return false
	}
	if sinks != nil && !(sinks.Type == core.TypeF32 && sinks.Ne[0] == q.Ne[2] && sinks.Nb[0] == 4 && stridesIn(sinks, 4)) {
		return false
	}
	// On a software device the one-row shader's key dot must stay under llvmpipe's loop limit:
	// a node past it runs only if its keys split (faSplitPlan), else it stays on the CPU.
	if faOneRowPastLoopLimit(d, k.Ne[0], k.Ne[1]) {
		_, ok := faSplitPlanOn(d, t, false)
		return ok
	}
	return true
}

func (e *Encoder) encodeFlashAttn(n *core.Tensor) error {
	if s, ok := e.faSplitPlan(n); ok {
		if sp, ok := e.scratchOperand(s.scratch); ok {
			return e.encodeFlashAttnSplit(n, s, sp)
		}
	}
	q, k, v, m, sinks := n.Src[0], n.Src[1], n.Src[2], n.Src[3], n.Src[4]
	name, ku, vu, mu := faVariant(e.dev, "flash_attn_ext", n)
	p, err := e.pipeline(name, 6, faPushSize)
	if err != nil {
		return err
	}
	srcs := []use{{q, 4}, {k, ku}, {v, vu}}
	if m != nil {
		srcs = append(srcs, use{m, mu})
	}
	if sinks != nil {
		srcs = append(srcs, use{sinks, 4})
	}
	ops, err := e.bindNode(n, 4, srcs...)
	if err != nil {
		return err
	}
	oq, ok, ov, od := ops[0], ops[1], ops[2], ops[len(ops)-1]
	om, os := oq, oq // absent: bind q again (never read)
	if m != nil {
		om = ops[3]
	}
	if sinks != nil {
		os = ops[len(ops)-2]
	}
	pc := e.pushFlashAttnShape(n, ku, vu, mu)
	pc.U32(oq.offs, ok.offs, ov.offs, om.offs, os.offs, od.offs)
	fp := core.FlashAttnParamsOf(n)
	pc.F32(faScale(fp), fp.LogitSoftcap, fp.MaxBias)
	pc.U32(b2u(m != nil)|b2u(sinks != nil)<<1, u32(n.NRows()))
	return e.dispatch(p, [3]uint32{e.groups(n.NRows(), 1, 0), 1, 1}, pc.Bytes(), oq.bind, ok.bind, ov.bind, om.bind, os.bind, od.bind)
}

// faVariant returns the shader variant of FLASH_ATTN_EXT node n in the family prefix
// ("flash_attn_ext", "flash_attn_split": _k<type>_v<type>[_mask_f16]) and the units its K, V and
// mask are addressed in.
func faVariant(d *Device, prefix string, n *core.Tensor) (name string, ku, vu, mu int64) {
	k, v, m := n.Src[1], n.Src[2], n.Src[3]
	kn, ku, _ := faTypeName(d, k.Type)
	vn, vu, _ := faTypeName(d, v.Type)
	name, mu = prefix+"_k"+kn+"_v"+vn, 4
	if m != nil && m.Type == core.TypeF16 {
		name, mu = name+"_mask_f16", 2
	}
	return name, ku, vu, mu
}

// faScale is the score scale the shaders apply: divided by the soft cap when there is one.
func faScale(fp core.FlashAttnParams) float32 {
	if fp.LogitSoftcap != 0 {
		return fp.Scale / fp.LogitSoftcap
	}
	return fp.Scale
}

// pushFlashAttnShape starts the push constants both FLASH_ATTN_EXT shaders share: sizes, the
// strides of q (floats), k and v (their units) and the mask (mu bytes), the mask's broadcast
// planes and the query heads per k and per v head.
func (e *Encoder) pushFlashAttnShape(n *core.Tensor, ku, vu, mu int64) *Push {
	q, k, v, m := n.Src[0], n.Src[1], n.Src[2], n.Src[3]
	var mnb [3]int64
	m2, m3 := int64(1), int64(1)
	if m != nil {
		mnb = [3]int64{m.Nb[1] / mu, m.Nb[2] / mu, m.Nb[3] / mu}
		m2, m3 = m.Ne[2], m.Ne[3]
	}
	pc := e.push.Reset()
	pc.U32(u32(k.Ne[0]), u32(v.Ne[0]), u32(q.Ne[1]), u32(k.Ne[1]), u32(q.Ne[2]))
	pc.U32(u32(q.Nb[1]/4), u32(q.Nb[2]/4), u32(q.Nb[3]/4))
	pc.U32(u32(k.Nb[1]/ku), u32(k.Nb[2]/ku), u32(k.Nb[3]/ku))
	pc.U32(u32(v.Nb[1]/vu), u32(v.Nb[2]/vu), u32(v.Nb[3]/vu))
	pc.U32(u32(mnb[0]), u32(mnb[1]), u32(mnb[2]), u32(m2), u32(m3))
	pc.U32(u32(q.Ne[2]/k.Ne[2]), u32(q.Ne[2]/v.Ne[2]))
	return pc
}
