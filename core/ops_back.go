package core

// The *_BACK ops compute the gradient of a forward op's input from the gradient g of its output.
// The automatic differentiation (BuildBackward) creates them; they are ordinary ops that any
// backend may implement. Source order follows ggml: the incoming gradient first.

// sameF32 checks that every tensor is F32 and has the shape of the first.
func (c *Context) sameF32(op string, ts ...*Tensor) bool {
	if err := c.check(op, ts...); err != nil {
		c.setErr(asOpError(op, err))
		return false
	}
	for _, t := range ts {
		if t.Type != TypeF32 {
			c.setErr(errorfNoCtx("%s: %v must be f32", op, t))
			return false
		}
		if t.Ne != ts[0].Ne {
			c.setErr(errorfNoCtx("%s: %v and %v must have the same shape", op, ts[0], t))
			return false
		}
	}
	return true
}

// SiluBack is the gradient of SILU: src0 = g (gradient of silu(x)), src1 = x, both F32 of one shape.
// Result: g·s·(1 + x·(1 − s)) with s = sigmoid(x).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) SiluBack(g, x *Tensor) *Tensor {
	if !c.sameF32("SILU_BACK", g, x) {
		return c.placeholder()
	}
	return c.newOp(OpSiluBack, TypeF32, x.Ne, g, x)
}

// RMSNormBack is the gradient of RMS_NORM(x, eps): src0 = g, src1 = x (F32, same shape);
// Params[0] = eps. Per row of n elements: (g − x·Σ(x·g)/(n·(mean(x²)+eps))) / sqrt(mean(x²)+eps).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) RMSNormBack(g, x *Tensor, eps float32) *Tensor {
	if !c.sameF32("RMS_NORM_BACK", g, x) {
		return c.placeholder()
	}
	t := c.newOp(OpRMSNormBack, TypeF32, x.Ne, g, x)
	t.SetParamF32(0, eps)
	return t
}

// SoftMaxExtBack is the gradient of SOFT_MAX(x, mask, scale, maxBias) with respect to x: src0 = g,
// src1 = y (the softmax output), both F32 of one shape; Params[0] = scale, Params[1] = maxBias (as
// SOFT_MAX). Per row: scale·y⊙(g − Σ y·g). The ALiBi slope only multiplies the mask, so maxBias does
// not change the result; it is kept for ggml's parameter layout.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) SoftMaxExtBack(g, y *Tensor, scale, maxBias float32) *Tensor {
	if !c.sameF32("SOFT_MAX_BACK", g, y) {
		return c.placeholder()
	}
	t := c.newOp(OpSoftMaxBack, TypeF32, y.Ne, g, y)
	t.SetParamF32(0, scale)
	t.SetParamF32(1, maxBias)
	return t
}

// RopeBack is RopeExtBack with ggml's default frequency parameters (as Rope).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) RopeBack(g, pos *Tensor, nDims, mode int) *Tensor {
	return c.RopeExtBack(g, pos, nil, RopeParams{NDims: nDims, Mode: mode, FreqBase: 10000, FreqScale: 1,
		AttnFactor: 1, BetaFast: 32, BetaSlow: 1})
}

// RopeExtBack is the gradient of ROPE: the rotation by −θ (the transpose of the forward rotation,
// magnitude scaling included). Sources and parameters are those of RopeExt (src0 = g, src1 = I32
// positions, src2 = optional freq factors); RopeParamsOf reads them back.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) RopeExtBack(g, pos, freqFactors *Tensor, p RopeParams) *Tensor {
	t := c.RopeExt(g, pos, freqFactors, p)
	if t.Op == OpRope {
		t.Op = OpRopeBack
	}
	return t
}

// GetRowsBack is the gradient of GET_ROWS(a, idx): an F32 tensor of like's shape (a's shape), zero
// except that row idx[r, i2, i3] of batch (i2, i3) accumulates row r of g. src0 = g
// [ne0, m, ne2, ne3] (F32, or F16 summed in f32 as ggml's), src1 = idx (I32 [n, ne2, ne3]) with n <= m; like only gives the shape.
// As ggml's, g may hold more rows than there are indices: rows n.. of g are not read
// (test-backend-ops sends a view of the first half of the indices with the whole gradient).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) GetRowsBack(g, idx, like *Tensor) *Tensor {
	if err := c.check("GET_ROWS_BACK", g, idx, like); err != nil {
		return c.fail("GET_ROWS_BACK", err)
	}
	switch {
	case g.Type != TypeF32 && g.Type != TypeF16:
		return c.errorf("GET_ROWS_BACK: gradient %v must be f32 or f16", g)
	case idx.Type != TypeI32:
		return c.errorf("GET_ROWS_BACK: indices %v must be i32", idx)
	case idx.Ne[0] > g.Ne[1] || idx.Ne[1] != g.Ne[2] || idx.Ne[2] != g.Ne[3] || idx.Ne[3] != 1:
		return c.errorf("GET_ROWS_BACK: indices %v do not match gradient %v", idx, g)
	case like.Ne[0] != g.Ne[0] || like.Ne[2] != g.Ne[2] || like.Ne[3] != g.Ne[3]:
		return c.errorf("GET_ROWS_BACK: gradient %v does not match rows of %v", g, like)
	}
	return c.newOp(OpGetRowsBack, TypeF32, like.Ne, g, idx)
}

// RepeatBack is the gradient of REPEAT: it sums the tiles of a back into b's shape (every a.Ne[i]
// a multiple of b.Ne[i]); result F32 with b's shape, src0 = a only (b gives the shape).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) RepeatBack(a, b *Tensor) *Tensor {
	if err := c.check("REPEAT_BACK", a, b); err != nil {
		return c.fail("REPEAT_BACK", err)
	}
	return c.repeatBackNe(a, b.Ne)
}

func (c *Context) repeatBackNe(a *Tensor, ne [4]int64) *Tensor {
	if a.Type != TypeF32 {
		return c.errorf("REPEAT_BACK: %v must be f32", a)
	}
	for i := range ne {
		if ne[i] <= 0 || a.Ne[i]%ne[i] != 0 {
			return c.errorf("REPEAT_BACK: %v cannot be summed into shape %v", a, ne)
		}
	}
	return c.newOp(OpRepeatBack, TypeF32, ne, a)
}

// Acc returns a copy of a with b added into the view of a given by byte strides nb1, nb2, nb3 and
// byte offset (b's shape, a's element type): ggml_acc. Both F32; Params = nb1, nb2, nb3, offset.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Acc(a, b *Tensor, nb1, nb2, nb3, offset int64) *Tensor {
	if err := c.check("ACC", a, b); err != nil {
		return c.fail("ACC", err)
	}
	switch {
	case a.Type != TypeF32 || b.Type != TypeF32:
		return c.errorf("ACC: %v and %v must be f32", a, b)
	case !a.IsContiguous():
		return c.errorf("ACC: %v must be contiguous", a)
	case b.NElements() > a.NElements():
		return c.errorf("ACC: %v does not fit into %v", b, a)
	case offset < 0 || nb1 < 0 || nb2 < 0 || nb3 < 0 || offset > 1<<31-1 || nb3 > 1<<31-1 || nb2 > 1<<31-1 || nb1 > 1<<31-1:
		return c.errorf("ACC: strides %d,%d,%d and offset %d out of range", nb1, nb2, nb3, offset)
	}
	last := offset + (b.Ne[0]-1)*4 + (b.Ne[1]-1)*nb1 + (b.Ne[2]-1)*nb2 + (b.Ne[3]-1)*nb3
	if b.NElements() > 0 && last+4 > a.NBytes() {
		return c.errorf("ACC: view of %v at offset %d with strides %d,%d,%d exceeds %v", b, offset, nb1, nb2, nb3, a)
	}
	t := c.newOp(OpAcc, TypeF32, a.Ne, a, b)
	t.Params[0], t.Params[1], t.Params[2], t.Params[3] = int32(nb1), int32(nb2), int32(nb3), int32(offset)
	return t
}

// AccParamsOf returns the byte strides and offset of an ACC node (zeros for a nil t or another op).
func AccParamsOf(t *Tensor) (nb1, nb2, nb3, offset int64) {
	if t == nil || t.Op != OpAcc {
		return 0, 0, 0, 0
	}
	return int64(t.Params[0]), int64(t.Params[1]), int64(t.Params[2]), int64(t.Params[3])
}

// DiagMaskZero sets every element with column > row + nPast to 0 (the gradient of DiagMaskInf).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) DiagMaskZero(a *Tensor, nPast int) *Tensor {
	if err := c.check("DIAG_MASK_ZERO", a); err != nil {
		return c.fail("DIAG_MASK_ZERO", err)
	}
	if p := c.requireTypes("DIAG_MASK_ZERO", isF32, "f32", a); p != nil {
		return p
	}
	t := c.newOp(OpDiagMaskZero, TypeF32, a.Ne, a)
	t.Params[0] = int32(nPast)
	return t
}

// Im2ColBack is the gradient of IM2COL with respect to its input: g (F32, the shape of the im2col
// result) is scattered back (summed) into an F32 tensor of shape imageNe. src0 = g, src1 = the
// kernel (only its shape is used); Params as IM2COL (Im2ColParamsOf).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Im2ColBack(g, kernel *Tensor, imageNe [4]int64, p Im2ColParams) *Tensor {
	if err := c.check("IM2COL_BACK", g, kernel); err != nil {
		return c.fail("IM2COL_BACK", err)
	}
	if g.Type != TypeF32 {
		return c.errorf("IM2COL_BACK: gradient %v must be f32", g)
	}
	probe := NewContext(ContextParams{NoAlloc: true})
	im := probe.Im2Col(kernel, &Tensor{Type: TypeF32, Ne: imageNe, Nb: contiguousStrides(TypeF32, imageNe)}, p, TypeF32)
	if err := probe.Err(); err != nil {
		return c.fail("IM2COL_BACK", err)
	}
	if im.Ne != g.Ne {
		return c.errorf("IM2COL_BACK: gradient %v does not have the im2col shape %v", g, im.Ne)
	}
	t := c.newOp(OpIm2ColBack, TypeF32, imageNe, g, kernel)
	t.Params = im.Params
	return t
}

// Pool2DBack is the gradient of POOL_2D(x, …) with respect to x: src0 = g (F32, the pooled shape),
// src1 = x (the forward input); result F32 of x's shape. MAX sends each g to the first maximum of its
// window; AVG spreads g/(k0·k1) over the window's in-bounds positions.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Pool2DBack(g, x *Tensor, op PoolOp, k0, k1, s0, s1, p0, p1 int) *Tensor {
	if err := c.check("POOL_2D_BACK", g, x); err != nil {
		return c.fail("POOL_2D_BACK", err)
	}
	if g.Type != TypeF32 || x.Type != TypeF32 {
		return c.errorf("POOL_2D_BACK: %v and %v must be f32", g, x)
	}
	probe := NewContext(ContextParams{NoAlloc: true})
	pf := probe.Pool2D(&Tensor{Type: TypeF32, Ne: x.Ne, Nb: x.Nb}, op, k0, k1, s0, s1, p0, p1)
	if err := probe.Err(); err != nil {
		return c.fail("POOL_2D_BACK", err)
	}
	if pf.Ne != g.Ne {
		return c.errorf("POOL_2D_BACK: gradient %v does not have the pooled shape %v", g, pf.Ne)
	}
	t := c.newOp(OpPool2DBack, TypeF32, x.Ne, g, x)
	t.Params = pf.Params
	return t
}
