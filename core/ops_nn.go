package core

import "math"

func isF32(t Type) bool { return t == TypeF32 }

// Norm normalizes each row to zero mean and unit variance: (x-mean)/sqrt(var+eps).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Norm(a *Tensor, eps float32) *Tensor {
	if err := c.check("NORM", a); err != nil {
		return c.fail("NORM", err)
	}
	if p := c.requireTypes("NORM", isF32, "f32", a); p != nil {
		return p
	}
	t := c.newOp(OpNorm, TypeF32, a.Ne, a)
	t.SetParamF32(0, eps)
	return t
}

// RMSNorm scales each row by 1/sqrt(mean(x²)+eps).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) RMSNorm(a *Tensor, eps float32) *Tensor {
	if err := c.check("RMS_NORM", a); err != nil {
		return c.fail("RMS_NORM", err)
	}
	if p := c.requireTypes("RMS_NORM", isF32, "f32", a); p != nil {
		return p
	}
	t := c.newOp(OpRMSNorm, TypeF32, a.Ne, a)
	t.SetParamF32(0, eps)
	return t
}

// L2Norm scales each row by 1/max(‖x‖₂, eps) (ggml_l2_norm); the sum of squares is accumulated in
// float64. a must be f32 (any strides) and eps ≥ 0.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) L2Norm(a *Tensor, eps float32) *Tensor {
	if err := c.check("L2_NORM", a); err != nil {
		return c.fail("L2_NORM", err)
	}
	if p := c.requireTypes("L2_NORM", isF32, "f32", a); p != nil {
		return p
	}
	if !(eps >= 0) || math.IsInf(float64(eps), 1) {
		return c.errorf("L2_NORM: eps %v, want a finite number ≥ 0", eps)
	}
	t := c.newOp(OpL2Norm, TypeF32, a.Ne, a)
	t.SetParamF32(0, eps)
	return t
}

// SoftMax is the row softmax of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) SoftMax(a *Tensor) *Tensor { return c.SoftMaxExt(a, nil, 1, 0) }

// SoftMaxExt is the row softmax of a*scale + slope·mask. mask (optional, F16 or F32,
// [ne0, ≥ne1, ne2/k, ne3/l]) is broadcast over dims 2 and 3; with maxBias > 0 the slope is the
// ALiBi slope of head i2 (mask required), else 1.
// A nil a records an error on the context and returns a placeholder; a nil mask means no mask
// (maxBias must then be 0).
func (c *Context) SoftMaxExt(a, mask *Tensor, scale, maxBias float32) *Tensor {
	if err := c.check("SOFT_MAX", a); err != nil {
		return c.fail("SOFT_MAX", err)
	}
	if p := c.requireTypes("SOFT_MAX", isF32, "f32", a); p != nil {
		return p
	}
	if !a.IsContiguous() {
		return c.errorf("SOFT_MAX: %v is not contiguous", a)
	}
	if mask != nil {
		switch {
		case mask.Type != TypeF32 && mask.Type != TypeF16:
			return c.errorf("SOFT_MAX: mask %v must be f16 or f32", mask)
		case !mask.IsContiguousRows():
			return c.errorf("SOFT_MAX: mask %v rows are not contiguous", mask)
		case mask.Ne[0] != a.Ne[0] || mask.Ne[1] < a.Ne[1]:
			return c.errorf("SOFT_MAX: mask %v does not cover %v (want ne0 = %d, ne1 ≥ %d)", mask, a, a.Ne[0], a.Ne[1])
		case mask.Ne[2] == 0 || mask.Ne[3] == 0 || a.Ne[2]%mask.Ne[2] != 0 || a.Ne[3]%mask.Ne[3] != 0:
			return c.errorf("SOFT_MAX: mask %v does not broadcast over %v", mask, a)
		}
	}
	if maxBias > 0 && mask == nil {
		return c.errorf("SOFT_MAX: max_bias %g needs a mask", maxBias)
	}
	t := c.newOp(OpSoftMax, TypeF32, a.Ne, a, mask)
	t.SetParamF32(0, scale)
	t.SetParamF32(1, maxBias)
	return t
}

// SoftMaxAddSinks gives the SOFT_MAX node t one sink logit per head (ggml_soft_max_add_sinks):
// sinks is an f32 vector with one entry per plane i2 of t's input. A sink joins only the
// denominator of its head's rows, y = exp(w - m) / (Σ exp(w - m) + exp(sink - m)) with m the
// larger of the row's maximum and the sink, so rows sum to less than 1. A nil sinks removes them.
// It returns t; a t that is not SOFT_MAX (or sinks of the wrong type or length) records an error
// on the context and returns a placeholder.
func (c *Context) SoftMaxAddSinks(t, sinks *Tensor) *Tensor {
	if err := c.check("SOFT_MAX", t); err != nil {
		return c.fail("SOFT_MAX", err)
	}
	if t.Op != OpSoftMax || t.Src[0] == nil {
		return c.errorf("SOFT_MAX: sinks added to %v, which is not a SOFT_MAX node", t)
	}
	if sinks == nil {
		t.Src[2] = nil
		return t
	}
	if err := c.check("SOFT_MAX", sinks); err != nil {
		return c.fail("SOFT_MAX", err)
	}
	switch {
	case t.Src[2] != nil:
		return c.errorf("SOFT_MAX: %v already has sinks %v", t, t.Src[2])
	case sinks.Type != TypeF32:
		return c.errorf("SOFT_MAX: sinks %v must be f32", sinks)
	case sinks.Ne[0] != t.Src[0].Ne[2] || sinks.Ne[1] != 1 || sinks.Ne[2] != 1 || sinks.Ne[3] != 1:
		return c.errorf("SOFT_MAX: sinks %v must be a vector of %d (one per head of %v)", sinks, t.Src[0].Ne[2], t.Src[0])
	}
	t.Src[2] = sinks
	return t
}

// AlibiSlope is the ALiBi slope of head h out of nHead heads for max_bias (1 when maxBias is 0).
func AlibiSlope(h, nHead int64, maxBias float32) float32 {
	if maxBias <= 0 {
		return 1
	}
	nLog2 := int64(1) << uint(math.Floor(math.Log2(float64(nHead))))
	m0 := math.Pow(2, -float64(maxBias)/float64(nLog2))
	m1 := math.Pow(2, -float64(maxBias)/2/float64(nLog2))
	if h < nLog2 {
		return float32(math.Pow(m0, float64(h+1)))
	}
	return float32(math.Pow(m1, float64(2*(h-nLog2)+1)))
}

// DiagMaskInf sets every element with column > row + nPast to -inf (causal masking).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) DiagMaskInf(a *Tensor, nPast int) *Tensor {
	if err := c.check("DIAG_MASK_INF", a); err != nil {
		return c.fail("DIAG_MASK_INF", err)
	}
	if p := c.requireTypes("DIAG_MASK_INF", isF32, "f32", a); p != nil {
		return p
	}
	if !fitsI32(nPast) {
		return c.errorf("DIAG_MASK_INF: n_past %d does not fit an int32", nPast)
	}
	t := c.newOp(OpDiagMaskInf, TypeF32, a.Ne, a)
	t.Params[0] = int32(nPast)
	return t
}

// RopeParams are the parameters of RopeExt beyond the tensors (ggml's names).
type RopeParams struct {
	NDims      int     // rotated dimensions (even, ≤ ne0)
	Mode       int     // RopeNormal or RopeNeox
	NCtxOrig   int     // original context length (YaRN)
	FreqBase   float32 // θ base, 10000 by default
	FreqScale  float32 // position scale (1 = none)
	ExtFactor  float32 // YaRN extrapolation mix (0 = off)
	AttnFactor float32 // magnitude scale (1 = none)
	BetaFast   float32 // YaRN ramp (32)
	BetaSlow   float32 // YaRN ramp (1)
	// Sections (MROPE, VISION, IMROPE only): rotated pairs per position component t, h, w, e
	// (ggml_rope_multi's int sections[4]; op_params 11..14).
	Sections [4]int
	// NOffs rotates dims NOffs … NOffs+NDims-1 instead of 0 … NDims-1 (ggml_rope_set_offset;
	// op_params 15): even, not with VISION.
	NOffs int
}

// Rope rotates a [head_dim, n_head, n_tok, 1] by positions pos (I32 [n_tok]) with base 10000.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Rope(a, pos *Tensor, nDims, mode int) *Tensor {
	return c.RopeExt(a, pos, nil, RopeParams{NDims: nDims, Mode: mode, FreqBase: 10000, FreqScale: 1,
		AttnFactor: 1, BetaFast: 32, BetaSlow: 1})
}

// RopeExt is rotary position embedding with ggml's full parameter set; freqFactors (optional, F32
// [n_dims/2], [n_dims] for VISION) divide the per-pair frequencies. With the multi modes (MROPE,
// VISION, IMROPE: ggml_rope_multi) pos holds 4·n_tok positions, component c of token i at
// c·n_tok + i, and p.Sections assign the pairs to the components.
// A nil a or pos records an error on the context and returns a placeholder; a nil freqFactors
// means no frequency factors.
func (c *Context) RopeExt(a, pos, freqFactors *Tensor, p RopeParams) *Tensor {
	return c.rope(a, pos, freqFactors, p, false)
}

// RopeMulti is RopeExt for ggml_rope_multi's modes (MROPE, VISION, IMROPE); p.Sections must be set.
// A nil a or pos records an error on the context and returns a placeholder.
func (c *Context) RopeMulti(a, pos, freqFactors *Tensor, p RopeParams) *Tensor {
	if err := c.check("ROPE", a, pos); err != nil {
		return c.fail("ROPE", err)
	}
	if !RopeIsMulti(p.Mode) {
		return c.errorf("ROPE: mode %d is not a multi-section mode (mrope 8, vision 24, imrope 40)", p.Mode)
	}
	return c.rope(a, pos, freqFactors, p, false)
}

// RopeExtInplace is RopeExt writing into a's memory (ggml_rope_ext_inplace, ggml_rope_multi_inplace):
// the result is a view of a with a's strides, so a may be a strided (non-contiguous) view.
// A nil a or pos records an error on the context and returns a placeholder.
func (c *Context) RopeExtInplace(a, pos, freqFactors *Tensor, p RopeParams) *Tensor {
	return c.rope(a, pos, freqFactors, p, true)
}

// RopeSetOffset makes the ROPE or ROPE_BACK node t rotate dims nOffs … nOffs+n_dims-1 (ggml_rope_set_offset):
// nOffs even, ≥ 0, nOffs + n_dims ≤ ne0, not with VISION. The dims outside are copied. It returns t;
// a nil t, a bad offset or a t of another op records an error on the context and returns a
// placeholder.
func (c *Context) RopeSetOffset(t *Tensor, nOffs int) *Tensor {
	if err := c.check("ROPE", t); err != nil {
		return c.fail("ROPE", err)
	}
	if t.Op != OpRope && t.Op != OpRopeBack {
		return c.errorf("ROPE: offset set on %v, which is not a ROPE or ROPE_BACK node", t)
	}
	p := RopeParamsOf(t)
	switch {
	case p.Mode == RopeVision:
		return c.errorf("ROPE: vision rope %v takes no offset", t)
	case nOffs < 0 || nOffs%2 != 0 || int64(nOffs)+int64(p.NDims) > t.Ne[0]:
		return c.errorf("ROPE: offset %d must be even, ≥ 0 and leave n_dims %d inside %d", nOffs, p.NDims, t.Ne[0])
	}
	t.Params[15] = int32(nOffs)
	return t
}

func (c *Context) rope(a, pos, freqFactors *Tensor, p RopeParams, inplace bool) *Tensor {
	if err := c.check("ROPE", a, pos); err != nil {
		return c.fail("ROPE", err)
	}
	multi := RopeIsMulti(p.Mode)
	nPos := a.Ne[2]
	if multi {
		nPos = 4 * a.Ne[2]
	}
	ffNeed := int64(p.NDims / 2)
	if p.Mode == RopeVision {
		ffNeed = int64(p.NDims)
	}
	sect := p.Sections[0] + p.Sections[1] + p.Sections[2] + p.Sections[3]
	switch {
	case a.Type != TypeF32 && a.Type != TypeF16:
		return c.errorf("ROPE: %v must be f32 or f16", a)
	case pos.Type != TypeI32 || pos.Ne[1] != 1 || pos.Ne[2] != 1 || pos.Ne[3] != 1:
		return c.errorf("ROPE: positions %v must be an i32 vector", pos)
	case pos.Ne[0] != nPos:
		return c.errorf("ROPE: %d positions for %d tokens (dimension 2 of %v; mode %d wants %d)", pos.Ne[0], a.Ne[2], a, p.Mode, nPos)
	case p.Mode != RopeNormal && p.Mode != RopeNeox && p.Mode != RopeMrope && p.Mode != RopeVision && p.Mode != RopeImrope:
		return c.errorf("ROPE: mode %d is not supported (normal 0, neox 2, mrope 8, vision 24, imrope 40)", p.Mode)
	case p.NDims <= 0 || p.NDims%2 != 0 || int64(p.NDims) > a.Ne[0]:
		return c.errorf("ROPE: n_dims %d must be even and ≤ %d", p.NDims, a.Ne[0])
	case !fitsI32(p.NDims) || !fitsI32(p.NCtxOrig):
		return c.errorf("ROPE: n_dims %d or n_ctx_orig %d does not fit an int32", p.NDims, p.NCtxOrig)
	case p.Mode == RopeVision && int64(p.NDims) != a.Ne[0]/2:
		return c.errorf("ROPE: vision rope needs n_dims = ne0/2 = %d, got %d", a.Ne[0]/2, p.NDims)
	case multi && (p.Sections[0] < 0 || p.Sections[1] < 0 || p.Sections[2] < 0 || p.Sections[3] < 0 ||
		p.Sections[0]+p.Sections[1]+p.Sections[2] <= 0 || int64(sect) > a.Ne[0] || !fitsI32(sect)):
		return c.errorf("ROPE: sections %v must be ≥ 0, not all of the first three 0, and sum to ≤ %d", p.Sections, a.Ne[0])
	case !multi && p.Sections != [4]int{}:
		return c.errorf("ROPE: sections %v need a multi mode (mrope, vision, imrope)", p.Sections)
	case p.NOffs != 0 && (p.Mode == RopeVision || p.NOffs < 0 || p.NOffs%2 != 0 || int64(p.NOffs)+int64(p.NDims) > a.Ne[0]):
		return c.errorf("ROPE: offset %d must be even, ≥ 0, leave n_dims %d inside %d and not be used with vision", p.NOffs, p.NDims, a.Ne[0])
	}
	if freqFactors != nil && (freqFactors.Type != TypeF32 || freqFactors.Ne[0] < ffNeed) {
		return c.errorf("ROPE: freq factors %v must be f32 with ≥ %d elements", freqFactors, ffNeed)
	}
	var t *Tensor
	if inplace {
		t = c.inplaceOp(OpRope, a)
		if t.Op != OpRope {
			return t
		}
		t.Src[1], t.Src[2] = pos, freqFactors
	} else {
		t = c.newOp(OpRope, a.Type, a.Ne, a, pos, freqFactors)
	}
	t.Params[1] = int32(p.NDims)
	t.Params[2] = int32(p.Mode)
	t.Params[4] = int32(p.NCtxOrig)
	t.SetParamF32(5, p.FreqBase)
	t.SetParamF32(6, p.FreqScale)
	t.SetParamF32(7, p.ExtFactor)
	t.SetParamF32(8, p.AttnFactor)
	t.SetParamF32(9, p.BetaFast)
	t.SetParamF32(10, p.BetaSlow)
	for i, v := range p.Sections {
		t.Params[11+i] = int32(v)
	}
	t.Params[15] = int32(p.NOffs)
	return t
}

// RopeParamsOf reads the rope parameters back from a ROPE node.
// A nil t gives the zero RopeParams.
func RopeParamsOf(t *Tensor) RopeParams {
	if t == nil {
		return RopeParams{}
	}
	return RopeParams{NDims: int(t.Params[1]), Mode: int(t.Params[2]), NCtxOrig: int(t.Params[4]),
		FreqBase: t.ParamF32(5), FreqScale: t.ParamF32(6), ExtFactor: t.ParamF32(7), AttnFactor: t.ParamF32(8),
		BetaFast: t.ParamF32(9), BetaSlow: t.ParamF32(10),
		Sections: [4]int{int(t.Params[11]), int(t.Params[12]), int(t.Params[13]), int(t.Params[14])},
		NOffs:    int(t.Params[15])}
}

// MulMatWeightTypes are the types MulMat accepts for its first operand.
var mulMatWeightTypes = map[Type]bool{TypeF32: true, TypeF16: true, TypeBF16: true, TypeQ4_0: true, TypeQ4_1: true, TypeQ8_0: true,
	TypeQ5_0: true, TypeQ5_1: true, TypeQ2_K: true, TypeQ3_K: true, TypeQ4_K: true, TypeQ5_K: true, TypeQ6_K: true,
	TypeIQ4_NL: true, TypeIQ4_XS: true, TypeMXFP4: true, TypeNVFP4: true, TypeQ1_0: true, TypeTQ1_0: true,
	TypeTQ2_0: true, TypeIQ3_XXS: true, TypeIQ3_S: true, TypeQ2_0: true, TypeIQ2_XXS: true, TypeIQ2_XS: true,
	TypeIQ2_S: true, TypeIQ1_S: true, TypeIQ1_M: true}

// MulMat multiplies a [k, m, ne02, ne03] by b [k, n, ne12, ne13] giving F32 [m, n, ne12, ne13]:
// result[i, j] = dot(row i of a, row j of b). a is broadcast over dims 2 and 3 (ne12 % ne02 == 0).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) MulMat(a, b *Tensor) *Tensor {
	if err := c.check("MUL_MAT", a, b); err != nil {
		return c.fail("MUL_MAT", err)
	}
	switch {
	case !mulMatWeightTypes[a.Type]:
		return c.errorf("MUL_MAT: weights %v have unsupported type %v", a, a.Type)
	case b.Type != TypeF32 && b.Type != a.Type.VecDotType():
		return c.errorf("MUL_MAT: activations %v must be f32 (or %v)", b, a.Type.VecDotType())
	case a.Ne[0] != b.Ne[0]:
		return c.errorf("MUL_MAT: inner dimensions differ: %v vs %v", a, b)
	case a.Ne[2] == 0 || a.Ne[3] == 0 || b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0:
		return c.errorf("MUL_MAT: %v cannot be broadcast over the batch of %v", a, b)
	case a.Ne[0] == 0 && a.Ne[1] != 0 && b.NRows() != 0:
		return c.errorf("MUL_MAT: inner dimension k is 0 (%v times %v): the rows to multiply are empty, "+
			"so the %dx%d result would have no terms; empty operands need an empty result", a, b, a.Ne[1], b.NRows())
	case a.Ne[0] != 0 && a.IsTransposed():
		return c.errorf("MUL_MAT: weights %v are transposed (use Cont)", a)
	case a.Nb[0] != a.Type.Size() || b.Nb[0] != b.Type.Size():
		return c.errorf("MUL_MAT: dimension 0 of %v and %v must be contiguous", a, b)
	}
	return c.newOp(OpMulMat, TypeF32, [4]int64{a.Ne[1], b.Ne[1], b.Ne[2], b.Ne[3]}, a, b)
}

// MulMatSetPrec sets the precision of a MUL_MAT node (ggml_mul_mat_set_prec, op parameter 0).
// PrecBF16 allows the backend to round both operands to bf16 (8 significant bits; each
// product's relative error up to 2^-8) where that is faster: the CPU backend does so for F16
// weights and at least 64 activation rows on CPUs with AVX-512 BF16 (kernel set avx512bf16),
// about 1.6 times faster than its f32 products, and computes as under PrecDefault elsewhere.
// A nil a, a node of another op or an unknown precision records an error on the context.
func (c *Context) MulMatSetPrec(a *Tensor, prec Prec) {
	const op = "MUL_MAT prec"
	if err := c.check(op, a); err != nil {
		c.fail(op, err)
		return
	}
	switch {
	case a.Op != OpMulMat:
		c.errorf("%s: %v is not a MUL_MAT node", op, a)
	case prec != PrecDefault && prec != PrecF32 && prec != PrecBF16:
		c.errorf("%s: unknown precision %d (want PrecDefault 0, PrecF32 10 or PrecBF16 16)", op, int32(prec))
	default:
		a.Params[0] = int32(prec)
	}
}

// OutProd is the outer product summed over dim 1: a [m, k, ne02, ne03], b [p, k, ne12, ne13] gives
// F32 [m, p, ne12, ne13] with result[i, j] = Σ_l a[i, l]·b[j, l].
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) OutProd(a, b *Tensor) *Tensor {
	if err := c.check("OUT_PROD", a, b); err != nil {
		return c.fail("OUT_PROD", err)
	}
	switch {
	case !a.Type.CanDequantize() || a.Type == TypeI32:
		return c.errorf("OUT_PROD: %v has unsupported type %v", a, a.Type)
	case b.Type != TypeF32:
		return c.errorf("OUT_PROD: %v must be f32", b)
	case a.Ne[1] != b.Ne[1]:
		return c.errorf("OUT_PROD: %v and %v differ in dimension 1", a, b)
	case a.Ne[2] == 0 || a.Ne[3] == 0 || b.Ne[2]%a.Ne[2] != 0 || b.Ne[3]%a.Ne[3] != 0:
		return c.errorf("OUT_PROD: %v cannot be broadcast over the batch of %v", a, b)
	}
	return c.newOp(OpOutProd, TypeF32, [4]int64{a.Ne[0], b.Ne[0], b.Ne[2], b.Ne[3]}, a, b)
}
