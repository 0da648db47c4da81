package core

// FLASH_ATTN_EXT: fused attention, ggml_flash_attn_ext's semantics.
//
// For every query row (iq1, head h, batch iq3) the op computes
//
//	s_j  = scale·(q · k_j)                       over the n_kv key rows j
//	s_j  = c·tanh(s_j / c)                       when logit_softcap c ≠ 0 (scale is applied first)
//	s_j += slope_h·mask[j, iq1, h % m2, iq3 % m3] when there is a mask (slope_h: ALiBi, 1 without)
//	out  = Σ_j softmax(s)_j · v_j
//
// with an optional per-head sink logit joining the softmax's denominator only. Key rows whose
// mask value is -inf take no part; a query row whose keys are all masked out gives zeros. K and V
// heads are shared by n_head / n_head_kv query heads (grouped-query attention). The result is
// F32 [Dv, n_head, n_q, ne3]: heads and query rows are swapped relative to q, as in ggml, so that
// a reshape to [Dv·n_head, n_q] gives the attention output per token.

// Prec is the precision an op asks for (ggml_prec), set on FLASH_ATTN_EXT and MUL_MAT nodes.
// PrecDefault leaves it to the backend (the CPU backend computes in f32; GPU backends may
// accumulate in F16); PrecF32 asks for f32 arithmetic throughout; PrecBF16 (a MUL_MAT only, no
// ggml counterpart) allows operands rounded to bf16 where that is faster (see MulMatSetPrec).
type Prec int32

// Precisions: PrecDefault and PrecF32 are ggml's values.
const (
	PrecDefault Prec = 0
	PrecF32     Prec = 10
	PrecBF16    Prec = 16
)

// flashAttnKVTypes are the K and V types FLASH_ATTN_EXT accepts: those the CPU backend can dot a
// query row with (K, after converting the query to the type's vec-dot type) and convert to F32 (V).
var flashAttnKVTypes = mulMatWeightTypes

// FlashAttnExt is fused scaled-dot-product attention (ggml_flash_attn_ext):
//
//   - q F32 [Dk, n_q, n_head, ne3], rows contiguous (Nb[0] = 4);
//   - k [Dk, n_kv, n_head_k, ne3] and v [Dv, n_kv, n_head_v, ne3] of F32, F16, BF16, Q8_0, Q4_0,
//     Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, MXFP4, NVFP4, Q1_0 or a K-quant, rows contiguous; dims 1-3
//     may have any strides (views of a KV cache); n_head must be a multiple of n_head_k and of n_head_v;
//   - mask (optional) F16 or F32 [≥n_kv, ≥n_q, m2, m3] with n_head % m2 == 0 and ne3 % m3 == 0,
//     rows contiguous; row iq1 masks query row iq1 (extra rows and columns are unused);
//   - scale multiplies q·k; maxBias > 0 turns on ALiBi (head h's slope AlibiSlope(h, n_head,
//     maxBias) multiplies the mask; a mask is then required); logitSoftcap ≠ 0 caps the scaled
//     logits as logitSoftcap·tanh(s/logitSoftcap).
//
// The result is F32 [Dv, n_head, n_q, ne3] (note the swap of heads and query rows). Its
// parameters are laid out as ggml's op_params: {scale, max_bias, logit_softcap, prec} (see
// FlashAttnParamsOf). Sinks and precision are set with FlashAttnExtAddSinks and
// FlashAttnExtSetPrec. A nil q, k or v (or a nil context) records an error on the context and
// returns a placeholder; a nil mask means no mask.
func (c *Context) FlashAttnExt(q, k, v, mask *Tensor, scale, maxBias, logitSoftcap float32) *Tensor {
	const op = "FLASH_ATTN_EXT"
	if err := c.check(op, q, k, v); err != nil {
		return c.fail(op, err)
	}
	if mask != nil {
		if err := c.check(op, q, k, v, mask); err != nil { // the mask is operand 3
			return c.fail(op, err)
		}
	}
	switch {
	case q.Type != TypeF32:
		return c.errorf("%s: q %v must be f32", op, q)
	case !flashAttnKVTypes[k.Type]:
		return c.errorf("%s: k %v has unsupported type %v (want f32, f16, bf16 or a quantized type the CPU can dot)", op, k, k.Type)
	case !flashAttnKVTypes[v.Type]:
		return c.errorf("%s: v %v has unsupported type %v (want f32, f16, bf16 or a quantized type the CPU can convert)", op, v, v.Type)
	case q.Nb[0] != q.Type.Size():
		return c.errorf("%s: q %v rows are not contiguous (stride %d in dimension 0)", op, q, q.Nb[0])
	case !k.IsContiguousRows():
		return c.errorf("%s: k %v rows are not contiguous (stride %d in dimension 0)", op, k, k.Nb[0])
	case !v.IsContiguousRows():
		return c.errorf("%s: v %v rows are not contiguous (stride %d in dimension 0)", op, v, v.Nb[0])
	case q.Ne[0] != k.Ne[0]:
		return c.errorf("%s: q %v and k %v differ in head size (dimension 0)", op, q, k)
	case k.Ne[0]%k.Type.VecDotType().BlockSize() != 0: // the query row is converted to this type
		return c.errorf("%s: k %v head size %d is not a whole number of %v blocks", op, k, k.Ne[0], k.Type)
	case k.Ne[1] != v.Ne[1]:
		return c.errorf("%s: k %v and v %v differ in the number of kv rows (dimension 1)", op, k, v)
	case k.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0:
		return c.errorf("%s: q heads %d (%v) are not a multiple of k heads %d (%v)", op, q.Ne[2], q, k.Ne[2], k)
	case v.Ne[2] == 0 || q.Ne[2]%v.Ne[2] != 0:
		return c.errorf("%s: q heads %d (%v) are not a multiple of v heads %d (%v)", op, q.Ne[2], q, v.Ne[2], v)
	case q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3]:
		return c.errorf("%s: q %v, k %v and v %v differ in dimension 3", op, q, k, v)
	}
	if mask != nil {
		switch {
		case mask.Type != TypeF16 && mask.Type != TypeF32:
			return c.errorf("%s: mask %v must be f16 or f32", op, mask)
		case mask.Nb[0] != mask.Type.Size():
			return c.errorf("%s: mask %v rows are not contiguous (stride %d in dimension 0)", op, mask, mask.Nb[0])
		case mask.Ne[0] < k.Ne[1] || mask.Ne[1] < q.Ne[1]:
			return c.errorf("%s: mask %v does not cover %d kv rows × %d query rows (want ne0 ≥ %d, ne1 ≥ %d)",
				op, mask, k.Ne[1], q.Ne[1], k.Ne[1], q.Ne[1])
		case mask.Ne[2] == 0 || mask.Ne[3] == 0 || q.Ne[2]%mask.Ne[2] != 0 || q.Ne[3]%mask.Ne[3] != 0:
			return c.errorf("%s: mask %v does not broadcast over %d heads × %d batches of q %v", op, mask, q.Ne[2], q.Ne[3], q)
		}
	}
	if maxBias > 0 && mask == nil {
		return c.errorf("%s: max_bias %g (ALiBi) needs a mask", op, maxBias)
	}
	t := c.newOp(OpFlashAttnExt, TypeF32, [4]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]}, q, k, v, mask)
	if t.err != nil {
		return t
	}
	t.SetParamF32(0, scale)
	t.SetParamF32(1, maxBias)
	t.SetParamF32(2, logitSoftcap)
	t.Params[3] = int32(PrecDefault)
	return t
}

// FlashAttnExtAddSinks adds attention sinks to a FLASH_ATTN_EXT node (ggml_flash_attn_ext_add_sinks):
// sinks is F32 [n_head], contiguous; head h's sink logit sinks[h] joins the softmax's denominator
// (never its numerator). A nil sinks removes them. Call it before the node is added to a graph.
// Errors (a not a FLASH_ATTN_EXT node, sinks already set, a bad sinks shape or type) are
// recorded on the context, which fails every graph built from a.
//
// This keeps ggml's form (a setter on the node) rather than a seventh constructor argument, so
// code ported from llama.cpp maps call for call, and the node's parameters stay those of
// FlashAttnExt.
func (c *Context) FlashAttnExtAddSinks(a, sinks *Tensor) {
	const op = "FLASH_ATTN_EXT sinks"
	if err := c.check(op, a); err != nil {
		c.fail(op, err)
		return
	}
	if a.Op != OpFlashAttnExt {
		c.errorf("%s: %v is not a FLASH_ATTN_EXT node", op, a)
		return
	}
	if sinks == nil {
		a.Src[4] = nil
		return
	}
	if err := c.check(op, a, sinks); err != nil {
		c.fail(op, err)
		return
	}
	q := a.Src[0]
	switch {
	case a.Src[4] != nil:
		c.errorf("%s: %v already has sinks %v", op, a, a.Src[4])
		return
	case sinks.Type != TypeF32:
		c.errorf("%s: sinks %v must be f32", op, sinks)
		return
	case sinks.Ne[0] != q.Ne[2] || sinks.Ne[1] != 1 || sinks.Ne[2] != 1 || sinks.Ne[3] != 1:
		c.errorf("%s: sinks %v must be a vector of %d values (one per head of q %v)", op, sinks, q.Ne[2], q)
		return
	case sinks.Nb[0] != 4:
		c.errorf("%s: sinks %v are not contiguous", op, sinks)
		return
	}
	a.Src[4] = sinks
}

// FlashAttnExtSetPrec sets the accumulation precision of a FLASH_ATTN_EXT node
// (ggml_flash_attn_ext_set_prec, op parameter 3). A nil a, a node of another op or an unknown
// precision records an error on the context.
func (c *Context) FlashAttnExtSetPrec(a *Tensor, prec Prec) {
	const op = "FLASH_ATTN_EXT prec"
	if err := c.check(op, a); err != nil {
		c.fail(op, err)
		return
	}
	switch {
	case a.Op != OpFlashAttnExt:
		c.errorf("%s: %v is not a FLASH_ATTN_EXT node", op, a)
	case prec != PrecDefault && prec != PrecF32:
		c.errorf("%s: unknown precision %d (want PrecDefault 0 or PrecF32 10)", op, int32(prec))
	default:
		a.Params[3] = int32(prec)
	}
}
