package core

// ggml's convolution nodes beyond IM2COL: CONV_TRANSPOSE_1D, IM2COL_3D, COL2IM_1D, the direct
// CONV_2D and CONV_3D (one node each, not the IM2COL + MUL_MAT composites Conv1D/Conv2D build),
// the depthwise CONV_2D_DW and CONV_TRANSPOSE_2D. Shapes, result types and op_params are
// ggml_conv_transpose_1d, ggml_im2col_3d, ggml_col2im_1d, ggml_conv_2d_direct, ggml_conv_3d_direct,
// ggml_conv_2d_dw_direct and ggml_conv_transpose_2d_p0's (ggml/src/ggml.c).

// Conv2DParams are the strides, paddings and dilations of CONV_2D and CONV_2D_DW (index 0:
// width, 1: height), op_params words 0..5 in this order.
type Conv2DParams struct {
	S0, S1, P0, P1, D0, D1 int
}

// Conv3DParams are the strides, paddings and dilations of IM2COL_3D and CONV_3D (index 0: width,
// 1: height, 2: depth), op_params words 0..8 in this order.
type Conv3DParams struct {
	S0, S1, S2, P0, P1, P2, D0, D1, D2 int
}

// Conv2DParamsOf reads the parameters back from a CONV_2D or CONV_2D_DW node (the zero value
// for nil).
func Conv2DParamsOf(t *Tensor) Conv2DParams {
	if t == nil {
		return Conv2DParams{}
	}
	p := t.Params
	return Conv2DParams{S0: int(p[0]), S1: int(p[1]), P0: int(p[2]), P1: int(p[3]), D0: int(p[4]), D1: int(p[5])}
}

// Conv3DParamsOf reads the parameters back from an IM2COL_3D or CONV_3D node (the zero value for
// nil). IM2COL_3D keeps its input channels in word 9; CONV_3D its channels, batch and output
// channels in words 9, 10 and 11.
func Conv3DParamsOf(t *Tensor) Conv3DParams {
	if t == nil {
		return Conv3DParams{}
	}
	p := t.Params
	return Conv3DParams{S0: int(p[0]), S1: int(p[1]), S2: int(p[2]), P0: int(p[3]), P1: int(p[4]), P2: int(p[5]),
		D0: int(p[6]), D1: int(p[7]), D2: int(p[8])}
}

func (p Conv2DParams) valid() bool {
	for _, v := range []int{p.S0, p.S1, p.P0, p.P1, p.D0, p.D1} {
		if !fitsI32(v) {
			return false
		}
	}
	return p.S0 > 0 && p.S1 > 0 && p.D0 > 0 && p.D1 > 0 && p.P0 >= 0 && p.P1 >= 0
}

func (p Conv3DParams) valid() bool {
	for _, v := range []int{p.S0, p.S1, p.S2, p.P0, p.P1, p.P2, p.D0, p.D1, p.D2} {
		if !fitsI32(v) {
			return false
		}
	}
	return p.S0 > 0 && p.S1 > 0 && p.S2 > 0 && p.D0 > 0 && p.D1 > 0 && p.D2 > 0 && p.P0 >= 0 && p.P1 >= 0 && p.P2 >= 0
}

func (p Conv3DParams) words() []int {
	return []int{p.S0, p.S1, p.S2, p.P0, p.P1, p.P2, p.D0, p.D1, p.D2}
}

// convOut3 is convOut along the three spatial dimensions of a Conv3DParams convolution of input b
// by kernel a: the output width, height and depth, or the failed placeholder.
func (c *Context) convOut3(op string, a, b *Tensor, p Conv3DParams) (ow, oh, od int64, fail *Tensor) {
	if ow, fail = c.convOut(op, a, b, b.Ne[0], a.Ne[0], p.S0, p.P0, p.D0); fail != nil {
		return
	}
	if oh, fail = c.convOut(op, a, b, b.Ne[1], a.Ne[1], p.S1, p.P1, p.D1); fail != nil {
		return
	}
	od, fail = c.convOut(op, a, b, b.Ne[2], a.Ne[2], p.S2, p.P2, p.D2)
	return
}

// convOut is the output length along one axis for op, or an error tensor when it overflows or
// the kernel does not fit.
func (c *Context) convOut(op string, a, b *Tensor, ins, ks int64, s, p, d int) (int64, *Tensor) {
	n, ok := convOutputSize(ins, ks, int64(s), int64(p), int64(d))
	if !ok {
		return 0, c.failErr(overflowErr("%s: output size of kernel %v over input %v", op, a, b))
	}
	if n <= 0 {
		return 0, c.errorf("%s: kernel %v does not fit input %v", op, a, b)
	}
	return n, nil
}

// transposeOut is (ins-1)·s + ks, the output length of a transposed convolution without padding
// and dilation; ok is false on overflow.
func transposeOut(ins, ks int64, s int) (int64, bool) {
	m, ok1 := CheckedMul(ins-1, int64(s))
	n, ok2 := CheckedAdd(m, ks)
	return n, ok1 && ok2
}

// ConvTranspose1D is ggml_conv_transpose_1d: the transposed 1-D convolution of b [L, Cin] (a
// matrix, f32) by kernel a [K, Cout, Cin] (f32 or f16), stride s0:
// dst[l·s0 + k, co] += Σ_ci a[k, co, ci]·b[l, ci], giving f32 [(L-1)·s0 + K, Cout]. As in ggml,
// p0 must be 0 and d0 1; op_params are s0, p0, d0.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) ConvTranspose1D(a, b *Tensor, s0, p0, d0 int) *Tensor {
	const op = "CONV_TRANSPOSE_1D"
	if err := c.check(op, a, b); err != nil {
		return c.fail(op, err)
	}
	switch {
	case a.Type != TypeF32 && a.Type != TypeF16:
		return c.errorf("%s: kernel %v has type %v, want f32 or f16", op, a, a.Type)
	case b.Type != TypeF32:
		return c.errorf("%s: input %v has type %v, want f32", op, b, b.Type)
	case b.Ne[2] != 1 || b.Ne[3] != 1 || a.Ne[3] != 1:
		return c.errorf("%s: input %v must be a matrix [L, Cin] and kernel %v 3-D [K, Cout, Cin]", op, b, a)
	case a.Ne[2] != b.Ne[1]:
		return c.errorf("%s: kernel %v has %d input channels, input %v has %d", op, a, a.Ne[2], b, b.Ne[1])
	case s0 <= 0 || !fitsI32(s0):
		return c.errorf("%s: stride %d must be positive (int32)", op, s0)
	case p0 != 0 || d0 != 1:
		return c.errorf("%s: padding %d and dilation %d: ggml supports only padding 0, dilation 1", op, p0, d0)
	case a.IsEmpty() || b.IsEmpty():
		return c.errorf("%s: kernel %v or input %v is empty", op, a, b)
	}
	ol, ok := transposeOut(b.Ne[0], a.Ne[0], s0)
	if !ok {
		return c.failErr(overflowErr("%s: output length of kernel %v over input %v", op, a, b))
	}
	t := c.newOp(OpConvTranspose1D, TypeF32, [4]int64{ol, a.Ne[1], b.Ne[2], 1}, a, b)
	t.Params[0], t.Params[1], t.Params[2] = int32(s0), int32(p0), int32(d0)
	return t
}

// Im2Col3D is ggml_im2col_3d: it unfolds the f32 input b [IW, IH, ID, N·IC] into patches for a
// kernel a [KW, KH, KD, OC·IC] (only its shape is used), giving dst [IC·KD·KH·KW, OW, OH, OD·N]
// of type dst (f32 or f16) with dst[((ic·KD + kd)·KH + kh)·KW + kw, ow, oh, od + n·OD] =
// b[ow·s0 + kw·d0 - p0, oh·s1 + kh·d1 - p1, od·s2 + kd·d2 - p2, n·IC + ic], zero outside the
// input; N = ⌊ne3/IC⌋ as ggml (spare channels are not read; ne3 < IC gives N = 0 and an empty
// result, as ggml's for test-backend-ops' IC=3 views of ne3 = 1). op_params: s0, s1, s2, p0, p1,
// p2, d0, d1, d2, IC.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Im2Col3D(a, b *Tensor, ic int64, p Conv3DParams, dst Type) *Tensor {
	const op = "IM2COL_3D"
	if err := c.check(op, a, b); err != nil {
		return c.fail(op, err)
	}
	switch {
	case dst != TypeF32 && dst != TypeF16:
		return c.errorf("%s: result type %v must be f32 or f16", op, dst)
	case b.Type != TypeF32:
		return c.errorf("%s: input %v has type %v, want f32", op, b, b.Type)
	case !p.valid():
		return c.errorf("%s: strides and dilations must be positive, paddings ≥ 0 (int32): %+v", op, p)
	case ic <= 0 || ic > 1<<31-1:
		return c.errorf("%s: input channels %d must be positive (int32)", op, ic)
	case a.IsEmpty() || b.IsEmpty():
		return c.errorf("%s: kernel %v or input %v is empty", op, a, b)
	}
	ow, oh, od, e := c.convOut3(op, a, b, p)
	if e != nil {
		return e
	}
	k, ok := checkedProduct(a.Ne[0], a.Ne[1], a.Ne[2], ic)
	n3, ok2 := CheckedMul(od, b.Ne[3]/ic)
	if !ok || !ok2 {
		return c.failErr(overflowErr("%s: result of kernel %v over input %v", op, a, b))
	}
	t := c.newOp(OpIm2Col3D, dst, [4]int64{k, ow, oh, n3}, a, b)
	for i, v := range p.words() {
		t.Params[i] = int32(v)
	}
	t.Params[9] = int32(ic)
	return t
}

// Col2Im1D is ggml_col2im_1d: it scatter-adds the columns of a [K·OC, T_in] (contiguous, f32,
// f16 or bf16) back into a signal dst [T_out, OC] of a's type, T_out = (T_in-1)·s0 + K - 2·p0:
// dst[t, oc] = Σ a[oc·K + k, ti] over ti·s0 + k = t + p0 (summed in f32). op_params: s0, oc, p0.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Col2Im1D(a *Tensor, s0, oc, p0 int) *Tensor {
	const op = "COL2IM_1D"
	if err := c.check(op, a); err != nil {
		return c.fail(op, err)
	}
	switch {
	case !isFloatType(a.Type):
		return c.errorf("%s: %v has type %v, want f32, f16 or bf16", op, a, a.Type)
	case a.Ne[2] != 1 || a.Ne[3] != 1 || !a.IsContiguous():
		return c.errorf("%s: %v must be a contiguous matrix [K·OC, T_in]", op, a)
	case s0 <= 0 || oc <= 0 || p0 < 0 || !fitsI32(s0) || !fitsI32(oc) || !fitsI32(p0):
		return c.errorf("%s: stride %d and channels %d must be positive, padding %d ≥ 0 (int32)", op, s0, oc, p0)
	case a.Ne[0]%int64(oc) != 0 || a.Ne[0] == 0:
		return c.errorf("%s: %v: ne0 %d is not a positive multiple of %d channels", op, a, a.Ne[0], oc)
	case a.Ne[1] == 0:
		return c.errorf("%s: %v has no columns", op, a)
	}
	k := a.Ne[0] / int64(oc)
	n, ok := transposeOut(a.Ne[1], k, s0)
	n2, ok2 := CheckedAdd(n, -2*int64(p0))
	if !ok || !ok2 {
		return c.failErr(overflowErr("%s: output length of %v", op, a))
	}
	if n2 <= 0 {
		return c.errorf("%s: padding %d crops all of the %d outputs of %v", op, p0, n, a)
	}
	t := c.newOp(OpCol2Im1D, a.Type, [4]int64{n2, int64(oc), 1, 1}, a)
	t.Params[0], t.Params[1], t.Params[2] = int32(s0), int32(oc), int32(p0)
	return t
}

// convCheck validates the operands the direct convolutions share: an f32 or f16 kernel, an f32
// input (ggml's result takes the input's type and its CPU kernels write f32), parameters p whose
// validity is valid, non-empty operands.
func (c *Context) convCheck(op string, a, b *Tensor, valid bool, p any) *Tensor {
	if err := c.check(op, a, b); err != nil {
		return c.fail(op, err)
	}
	switch {
	case a.Type != TypeF32 && a.Type != TypeF16:
		return c.errorf("%s: kernel %v has type %v, want f32 or f16", op, a, a.Type)
	case b.Type != TypeF32:
		return c.errorf("%s: input %v has type %v, want f32", op, b, b.Type)
	case !valid:
		return c.errorf("%s: strides and dilations must be positive, paddings ≥ 0 (int32): %+v", op, p)
	case a.IsEmpty() || b.IsEmpty():
		return c.errorf("%s: kernel %v or input %v is empty", op, a, b)
	}
	return nil
}

// Conv2DDirect is ggml_conv_2d_direct: the 2-D convolution of b [W, H, IC, N] (f32, any
// strides) by kernel a [KW, KH, IC, OC] (f32 or f16) as one CONV_2D node, giving f32
// [OW, OH, OC, N]: dst[ow, oh, oc, n] = Σ a[kw, kh, ic, oc]·b[ow·s0 + kw·d0 - p0,
// oh·s1 + kh·d1 - p1, ic, n], zero padding. With an f16 kernel the input is rounded to f16 as
// ggml's CPU does. Conv2D builds the same result from IM2COL and MUL_MAT. op_params: s0, s1, p0,
// p1, d0, d1.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Conv2DDirect(a, b *Tensor, s0, s1, p0, p1, d0, d1 int) *Tensor {
	const op = "CONV_2D"
	p := Conv2DParams{S0: s0, S1: s1, P0: p0, P1: p1, D0: d0, D1: d1}
	if e := c.convCheck(op, a, b, p.valid(), p); e != nil {
		return e
	}
	if a.Ne[2] != b.Ne[2] {
		return c.errorf("%s: kernel %v has %d input channels, input %v has %d", op, a, a.Ne[2], b, b.Ne[2])
	}
	oh, e := c.convOut(op, a, b, b.Ne[1], a.Ne[1], s1, p1, d1)
	if e != nil {
		return e
	}
	ow, e := c.convOut(op, a, b, b.Ne[0], a.Ne[0], s0, p0, d0)
	if e != nil {
		return e
	}
	t := c.newOp(OpConv2D, b.Type, [4]int64{ow, oh, a.Ne[3], b.Ne[3]}, a, b)
	for i, v := range []int{s0, s1, p0, p1, d0, d1} {
		t.Params[i] = int32(v)
	}
	return t
}

// Conv3DDirect is ggml_conv_3d_direct: the 3-D convolution of b [W, H, D, IC·N] (f32, channel
// ic of batch n at n·IC + ic) by kernel a [KW, KH, KD, IC·OC] (f32 or f16, channel ic of output
// oc at oc·IC + ic), giving f32 [OW, OH, OD, OC·N] (output oc of batch n at n·OC + oc), zero
// padding; an f16 kernel rounds the input to f16 as ggml's CPU. op_params: s0, s1, s2, p0, p1,
// p2, d0, d1, d2, ic, n, oc.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Conv3DDirect(a, b *Tensor, p Conv3DParams, ic, n, oc int) *Tensor {
	const op = "CONV_3D"
	if e := c.convCheck(op, a, b, p.valid(), p); e != nil {
		return e
	}
	switch {
	case ic <= 0 || n <= 0 || oc <= 0 || !fitsI32(ic) || !fitsI32(n) || !fitsI32(oc):
		return c.errorf("%s: channels %d, batch %d and output channels %d must be positive (int32)", op, ic, n, oc)
	case a.Ne[3] != int64(ic)*int64(oc):
		return c.errorf("%s: kernel %v: ne3 %d, want channels·output channels = %d·%d", op, a, a.Ne[3], ic, oc)
	case b.Ne[3] != int64(ic)*int64(n):
		return c.errorf("%s: input %v: ne3 %d, want channels·batch = %d·%d", op, b, b.Ne[3], ic, n)
	}
	ow, oh, od, e := c.convOut3(op, a, b, p)
	if e != nil {
		return e
	}
	t := c.newOp(OpConv3D, TypeF32, [4]int64{ow, oh, od, int64(oc) * int64(n)}, a, b)
	for i, v := range p.words() {
		t.Params[i] = int32(v)
	}
	t.Params[9], t.Params[10], t.Params[11] = int32(ic), int32(n), int32(oc)
	return t
}

// isContiguousChannels is ggml_is_contiguous_channels: the channels (dim 2) are the densest
// dimension, then width, then height (a CWHN tensor permuted back to WHCN).
func isContiguousChannels(t *Tensor) bool {
	return t.Nb[0] > t.Nb[2] && t.Nb[1] > t.Nb[0] && t.Nb[2] == t.Type.Size()
}

// Conv2DDwDirect is ggml_conv_2d_dw_direct: the depthwise 2-D convolution of b [W, H, C, N] (f32,
// any strides) by kernel a [KW, KH, 1, C] (f32 or f16), one kernel per channel, giving
// [OW, OH, C, N] of b's type: dst[ow, oh, c, n] = Σ a[kw, kh, 0, c]·b[ow·s0 + kw·d0 - p0,
// oh·s1 + kh·d1 - p1, c, n], zero padding. As in ggml, when b's channels are its densest
// dimension (a CWHN tensor permuted to WHCN) the result is laid out the same way: strides
// nb0 = C·4, nb1 = OW·C·4, nb2 = 4. op_params: s0, s1, p0, p1, d0, d1.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Conv2DDwDirect(a, b *Tensor, s0, s1, p0, p1, d0, d1 int) *Tensor {
	const op = "CONV_2D_DW"
	p := Conv2DParams{S0: s0, S1: s1, P0: p0, P1: p1, D0: d0, D1: d1}
	if e := c.convCheck(op, a, b, p.valid(), p); e != nil {
		return e
	}
	if a.Ne[2] != 1 || a.Ne[3] != b.Ne[2] {
		return c.errorf("%s: kernel %v must be [KW, KH, 1, C] with C = %d, the channels of input %v", op, a, b.Ne[2], b)
	}
	ow, e := c.convOut(op, a, b, b.Ne[0], a.Ne[0], s0, p0, d0)
	if e != nil {
		return e
	}
	oh, e := c.convOut(op, a, b, b.Ne[1], a.Ne[1], s1, p1, d1)
	if e != nil {
		return e
	}
	t := c.newOp(OpConv2DDw, b.Type, [4]int64{ow, oh, b.Ne[2], b.Ne[3]}, a, b)
	if t.Op != OpConv2DDw {
		return t
	}
	if isContiguousChannels(b) {
		es := t.Type.Size()
		t.Nb[0] = t.Ne[2] * es
		t.Nb[1] = t.Ne[0] * t.Nb[0]
		t.Nb[2] = es
		t.Nb[3] = t.Ne[1] * t.Nb[1]
	}
	for i, v := range []int{s0, s1, p0, p1, d0, d1} {
		t.Params[i] = int32(v)
	}
	return t
}

// ConvTranspose2DP0 is ggml_conv_transpose_2d_p0: the transposed 2-D convolution of b
// [W, H, Cin, N] (f32) by kernel a [KW, KH, Cout, Cin] (f32 or f16) with stride s and no
// padding: dst[x·s + kw, y·s + kh, co, n] += Σ_ci a[kw, kh, co, ci]·b[x, y, ci, n], giving f32
// [(W-1)·s + KW, (H-1)·s + KH, Cout, N]; an f16 kernel rounds the input to f16 as ggml's CPU.
// (ggml's CPU computes batch 0 only and leaves the others zero; tandem computes every batch.)
// op_params: s.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) ConvTranspose2DP0(a, b *Tensor, s int) *Tensor {
	const op = "CONV_TRANSPOSE_2D"
	if err := c.check(op, a, b); err != nil {
		return c.fail(op, err)
	}
	switch {
	case a.Type != TypeF32 && a.Type != TypeF16:
		return c.errorf("%s: kernel %v has type %v, want f32 or f16", op, a, a.Type)
	case b.Type != TypeF32:
		return c.errorf("%s: input %v has type %v, want f32", op, b, b.Type)
	case a.Ne[3] != b.Ne[2]:
		return c.errorf("%s: kernel %v has %d input channels, input %v has %d", op, a, a.Ne[3], b, b.Ne[2])
	case s <= 0 || !fitsI32(s):
		return c.errorf("%s: stride %d must be positive (int32)", op, s)
	case a.IsEmpty() || b.IsEmpty():
		return c.errorf("%s: kernel %v or input %v is empty", op, a, b)
	}
	ow, ok1 := transposeOut(b.Ne[0], a.Ne[0], s)
	oh, ok2 := transposeOut(b.Ne[1], a.Ne[1], s)
	if !ok1 || !ok2 {
		return c.failErr(overflowErr("%s: output size of kernel %v over input %v", op, a, b))
	}
	t := c.newOp(OpConvTranspose2D, TypeF32, [4]int64{ow, oh, a.Ne[2], b.Ne[3]}, a, b)
	t.Params[0] = int32(s)
	return t
}

// ConvNodeValid reports whether t is a convolution node (CONV_TRANSPOSE_1D, IM2COL_3D, COL2IM_1D,
// CONV_2D, CONV_3D, CONV_2D_DW, CONV_TRANSPOSE_2D) its constructor would build from its sources
// and op_params: same shape, type, parameters and result strides. Backends check it before
// running a node that may have been assembled by hand (their kernels trust the geometry). A nil
// t gives false.
func ConvNodeValid(t *Tensor) bool {
	if t == nil {
		return false
	}
	c := NewContext(ContextParams{NoAlloc: true})
	s, p := t.Src, t.Params
	i := func(k int) int { return int(p[k]) }
	p3 := Conv3DParams{S0: i(0), S1: i(1), S2: i(2), P0: i(3), P1: i(4), P2: i(5), D0: i(6), D1: i(7), D2: i(8)}
	var r *Tensor
	switch t.Op {
	case OpConvTranspose1D:
		r = c.ConvTranspose1D(s[0], s[1], i(0), i(1), i(2))
	case OpIm2Col3D:
		r = c.Im2Col3D(s[0], s[1], int64(p[9]), p3, t.Type)
	case OpCol2Im1D:
		r = c.Col2Im1D(s[0], i(0), i(1), i(2))
	case OpConv2D:
		r = c.Conv2DDirect(s[0], s[1], i(0), i(1), i(2), i(3), i(4), i(5))
	case OpConv3D:
		r = c.Conv3DDirect(s[0], s[1], p3, i(9), i(10), i(11))
	case OpConv2DDw:
		r = c.Conv2DDwDirect(s[0], s[1], i(0), i(1), i(2), i(3), i(4), i(5))
	case OpConvTranspose2D:
		r = c.ConvTranspose2DP0(s[0], s[1], i(0))
	default:
		return false
	}
	return c.Err() == nil && r.Ne == t.Ne && r.Nb == t.Nb && r.Type == t.Type && r.Params == t.Params
}
