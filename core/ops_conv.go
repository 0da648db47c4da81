package core

import "math"

// ConvOutputSize is the output length of a convolution over ins inputs with kernel ks, stride s,
// padding p and dilation d (≤ 0 when the kernel does not fit; 0 when s ≤ 0 or the arithmetic
// would overflow).
func ConvOutputSize(ins, ks, s, p, d int64) int64 {
	n, ok := convOutputSize(ins, ks, s, p, d)
	if !ok {
		return 0
	}
	return n
}

// convOutputSize is ConvOutputSize with overflow reported.
func convOutputSize(ins, ks, s, p, d int64) (int64, bool) {
	if s <= 0 {
		return 0, false
	}
	p2, ok1 := CheckedMul(2, p)
	span, ok2 := CheckedMul(d, ks-1)
	in, ok3 := CheckedAdd(ins, p2)
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	num, ok := CheckedAdd(in, -span-1)
	if !ok || span == math.MaxInt64 {
		return 0, false
	}
	return num/s + 1, true
}

// Im2ColParams are the stride, padding and dilation of Im2Col (index 0: width, 1: height).
type Im2ColParams struct {
	S0, S1, P0, P1, D0, D1 int
	Is2D                   bool
}

// Im2Col unfolds input b into patches for kernel a. 2-D: a [KW, KH, IC, OC], b [W, H, IC, N] gives
// [IC*KH*KW, OW, OH, N]. 1-D: a [K, IC, OC], b [L, IC, N] gives [IC*K, OL, N]. The result has type
// dst (F32 or F16).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Im2Col(a, b *Tensor, p Im2ColParams, dst Type) *Tensor {
	return c.im2col("IM2COL", a, b, p, dst)
}

// im2col is Im2Col whose errors are of op: the convolutions built on it report their own name,
// the one their caller wrote.
func (c *Context) im2col(op string, a, b *Tensor, p Im2ColParams, dst Type) *Tensor {
	if err := c.check(op, a, b); err != nil {
		return c.fail(op, err)
	}
	switch {
	case dst != TypeF32 && dst != TypeF16:
		return c.errorf("%s: result type %v must be f32 or f16", op, dst)
	case b.Type != TypeF32:
		return c.errorf("%s: input %v must be f32", op, b)
	case p.S0 <= 0 || (p.Is2D && p.S1 <= 0) || p.D0 <= 0 || (p.Is2D && p.D1 <= 0) || p.P0 < 0 || p.P1 < 0:
		return c.errorf("%s: strides and dilations must be positive, paddings ≥ 0: %+v", op, p)
	case !fitsI32(p.S0) || !fitsI32(p.S1) || !fitsI32(p.P0) || !fitsI32(p.P1) || !fitsI32(p.D0) || !fitsI32(p.D1):
		return c.errorf("%s: parameters %+v do not fit int32", op, p)
	}
	var ne [4]int64
	if p.Is2D {
		if a.Ne[2] != b.Ne[2] {
			return c.errorf("%s: kernel %v has %d input channels, input %v has %d", op, a, a.Ne[2], b, b.Ne[2])
		}
		oh, ok1 := convOutputSize(b.Ne[1], a.Ne[1], int64(p.S1), int64(p.P1), int64(p.D1))
		ow, ok2 := convOutputSize(b.Ne[0], a.Ne[0], int64(p.S0), int64(p.P0), int64(p.D0))
		if !ok1 || !ok2 {
			return c.failErr(overflowErr("%s: output size of kernel %v over input %v", op, a, b))
		}
		if oh <= 0 || ow <= 0 {
			return c.errorf("%s: kernel %v does not fit input %v", op, a, b)
		}
		ne = [4]int64{a.Ne[2] * a.Ne[1] * a.Ne[0], ow, oh, b.Ne[3]}
	} else {
		if a.Ne[1] != b.Ne[1] || b.Ne[3] != 1 {
			return c.errorf("%s: kernel %v has %d input channels, input %v has %d", op, a, a.Ne[1], b, b.Ne[1])
		}
		ow, ok := convOutputSize(b.Ne[0], a.Ne[0], int64(p.S0), int64(p.P0), int64(p.D0))
		if !ok {
			return c.failErr(overflowErr("%s: output size of kernel %v over input %v", op, a, b))
		}
		if ow <= 0 {
			return c.errorf("%s: kernel %v does not fit input %v", op, a, b)
		}
		ne = [4]int64{a.Ne[1] * a.Ne[0], ow, b.Ne[2], 1}
	}
	t := c.newOp(OpIm2Col, dst, ne, a, b)
	for i, v := range []int{p.S0, p.S1, p.P0, p.P1, p.D0, p.D1} {
		t.Params[i] = int32(v)
	}
	if p.Is2D {
		t.Params[6] = 1
	}
	return t
}

// Im2ColParamsOf reads the parameters back from an IM2COL node.
// A nil t gives the zero Im2ColParams.
func Im2ColParamsOf(t *Tensor) Im2ColParams {
	if t == nil {
		return Im2ColParams{}
	}
	return Im2ColParams{S0: int(t.Params[0]), S1: int(t.Params[1]), P0: int(t.Params[2]), P1: int(t.Params[3]),
		D0: int(t.Params[4]), D1: int(t.Params[5]), Is2D: t.Params[6] != 0}
}

// Conv1D convolves b [L, IC, N] with kernel a [K, IC, OC] (stride s0, padding p0, dilation d0),
// giving [OL, OC, N]; built from Im2Col and MulMat as in ggml.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Conv1D(a, b *Tensor, s0, p0, d0 int) *Tensor {
	if err := c.check("CONV_1D", a, b); err != nil {
		return c.fail("CONV_1D", err)
	}
	if a.IsEmpty() || b.IsEmpty() {
		return c.errorf("CONV_1D: kernel %v or input %v is empty", a, b)
	}
	if a.Type != TypeF32 && a.Type != TypeF16 {
		return c.errorf("CONV_1D: kernel %v has type %v, want f32 or f16", a, a.Type)
	}
	im := c.im2col("CONV_1D", a, b, Im2ColParams{S0: s0, P0: p0, D0: d0}, a.Type)
	if im.Op != OpIm2Col {
		return im
	}
	// The product is [OL·N, OC] with OL fastest, then N: reshape to [OL, N, OC] and swap the last
	// two. (ggml reshapes straight to [OL, OC, N], which mixes batches when N > 1.)
	r := c.MulMat(c.Reshape2D(im, im.Ne[0], im.Ne[2]*im.Ne[1]), c.Reshape2D(a, a.Ne[0]*a.Ne[1], a.Ne[2]))
	r = c.Reshape3D(r, im.Ne[1], im.Ne[2], a.Ne[2])
	return c.Cont(c.Permute(r, 0, 2, 1, 3))
}

// Conv2D convolves b [W, H, IC, N] with kernel a [KW, KH, IC, OC], giving [OW, OH, OC, N]; built
// from Im2Col, MulMat, Permute and Cont as in ggml.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Conv2D(a, b *Tensor, s0, s1, p0, p1, d0, d1 int) *Tensor {
	if err := c.check("CONV_2D", a, b); err != nil {
		return c.fail("CONV_2D", err)
	}
	if a.IsEmpty() || b.IsEmpty() {
		return c.errorf("CONV_2D: kernel %v or input %v is empty", a, b)
	}
	if a.Type != TypeF32 && a.Type != TypeF16 {
		return c.errorf("CONV_2D: kernel %v has type %v, want f32 or f16", a, a.Type)
	}
	im := c.im2col("CONV_2D", a, b, Im2ColParams{S0: s0, S1: s1, P0: p0, P1: p1, D0: d0, D1: d1, Is2D: true}, a.Type)
	if im.Op != OpIm2Col {
		return im
	}
	r := c.MulMat(c.Reshape2D(im, im.Ne[0], im.Ne[3]*im.Ne[2]*im.Ne[1]), c.Reshape2D(a, a.Ne[0]*a.Ne[1]*a.Ne[2], a.Ne[3]))
	r = c.Reshape4D(r, im.Ne[1], im.Ne[2], im.Ne[3], a.Ne[3])
	return c.Cont(c.Permute(r, 0, 1, 3, 2))
}

// PoolOutputSize is the output length of pooling ins inputs with kernel ks, stride s, padding p
// (≤ 0 when the kernel does not fit; 0 when s ≤ 0 or the arithmetic would overflow).
func PoolOutputSize(ins, ks, s, p int64) int64 { return ConvOutputSize(ins, ks, s, p, 1) }

// Pool1D pools each row of a with kernel k0, stride s0 and padding p0 (any p0 ≥ 0, also ≥ k0, as
// ggml allows). Padding is skipped: an average divides by the window's in-bounds positions, as
// ggml's CPU does for POOL_1D (unlike Pool2D, which divides by k0·k1), 0 for a window wholly in
// the padding; max ignores it, and a window wholly in the padding gives -FLT_MAX (ggml's start
// value). Result F32 [OL, ne1, ne2, ne3].
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Pool1D(a *Tensor, op PoolOp, k0, s0, p0 int) *Tensor {
	if err := c.check("POOL_1D", a); err != nil {
		return c.fail("POOL_1D", err)
	}
	if a.Type != TypeF32 && a.Type != TypeF16 {
		return c.errorf("POOL_1D: %v must be f32 or f16", a)
	}
	if op != PoolMax && op != PoolAvg {
		return c.errorf("POOL_1D: unknown pooling %d", int32(op))
	}
	if k0 <= 0 || s0 <= 0 || p0 < 0 || !fitsI32(k0) || !fitsI32(s0) || !fitsI32(p0) {
		return c.errorf("POOL_1D: kernel %d, stride %d, padding %d are invalid", k0, s0, p0)
	}
	ow := PoolOutputSize(a.Ne[0], int64(k0), int64(s0), int64(p0))
	if ow <= 0 {
		return c.errorf("POOL_1D: kernel %d does not fit %v", k0, a)
	}
	t := c.newOp(OpPool1D, TypeF32, [4]int64{ow, a.Ne[1], a.Ne[2], a.Ne[3]}, a)
	t.Params[0], t.Params[1], t.Params[2], t.Params[3] = int32(op), int32(k0), int32(s0), int32(p0)
	return t
}

// Pool2D pools the [W, H] planes of a with kernel (k0, k1), strides (s0, s1) and paddings (p0, p1)
// (any paddings ≥ 0, also ≥ the kernel, as ggml allows). Padding counts as zero for averages,
// which divide by k0·k1 (ggml's POOL_2D), and is skipped for max; a window wholly in the padding
// gives 0 (avg) or -FLT_MAX (max, ggml's start value). Result F32 [OW, OH, ne2, ne3].
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Pool2D(a *Tensor, op PoolOp, k0, k1, s0, s1, p0, p1 int) *Tensor {
	if err := c.check("POOL_2D", a); err != nil {
		return c.fail("POOL_2D", err)
	}
	if a.Type != TypeF32 && a.Type != TypeF16 {
		return c.errorf("POOL_2D: %v must be f32 or f16", a)
	}
	if op != PoolMax && op != PoolAvg {
		return c.errorf("POOL_2D: unknown pooling %d", int32(op))
	}
	if k0 <= 0 || k1 <= 0 || s0 <= 0 || s1 <= 0 || p0 < 0 || p1 < 0 ||
		!fitsI32(k0) || !fitsI32(k1) || !fitsI32(s0) || !fitsI32(s1) || !fitsI32(p0) || !fitsI32(p1) {
		return c.errorf("POOL_2D: kernel %dx%d, strides %d,%d, paddings %d,%d are invalid", k0, k1, s0, s1, p0, p1)
	}
	ow := PoolOutputSize(a.Ne[0], int64(k0), int64(s0), int64(p0))
	oh := PoolOutputSize(a.Ne[1], int64(k1), int64(s1), int64(p1))
	if ow <= 0 || oh <= 0 {
		return c.errorf("POOL_2D: kernel %dx%d does not fit %v", k0, k1, a)
	}
	t := c.newOp(OpPool2D, TypeF32, [4]int64{ow, oh, a.Ne[2], a.Ne[3]}, a)
	t.Params[0], t.Params[1], t.Params[2], t.Params[3] = int32(op), int32(k0), int32(k1), int32(s0)
	t.Params[4], t.Params[5], t.Params[6] = int32(s1), int32(p0), int32(p1)
	return t
}
