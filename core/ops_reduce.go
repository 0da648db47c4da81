package core

// Sum returns the sum of all elements of a as a 1-element tensor of a's type.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Sum(a *Tensor) *Tensor {
	if err := c.check("SUM", a); err != nil {
		return c.fail("SUM", err)
	}
	if p := c.requireTypes("SUM", isFloatType, "f32, f16 or bf16", a); p != nil {
		return p
	}
	return c.newOp(OpSum, a.Type, [4]int64{1, 1, 1, 1}, a)
}

// SumRows returns the sum of each row: shape [1, ne1, ne2, ne3].
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) SumRows(a *Tensor) *Tensor {
	if err := c.check("SUM_ROWS", a); err != nil {
		return c.fail("SUM_ROWS", err)
	}
	if p := c.requireTypes("SUM_ROWS", func(t Type) bool { return t == TypeF32 }, "f32", a); p != nil {
		return p
	}
	return c.newOp(OpSumRows, a.Type, [4]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}, a)
}

// Mean returns the mean of each row: F32 [1, ne1, ne2, ne3].
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Mean(a *Tensor) *Tensor {
	if err := c.check("MEAN", a); err != nil {
		return c.fail("MEAN", err)
	}
	if p := c.requireTypes("MEAN", func(t Type) bool { return t == TypeF32 }, "f32", a); p != nil {
		return p
	}
	return c.newOp(OpMean, TypeF32, [4]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}, a)
}

// Argmax returns, for each row of matrix a, the index of its largest element (I32 [ne1]); the first
// index wins ties.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Argmax(a *Tensor) *Tensor {
	if err := c.check("ARGMAX", a); err != nil {
		return c.fail("ARGMAX", err)
	}
	if p := c.requireTypes("ARGMAX", func(t Type) bool { return t == TypeF32 }, "f32", a); p != nil {
		return p
	}
	if a.Ne[2] != 1 || a.Ne[3] != 1 {
		return c.errorf("ARGMAX: %v must be a matrix", a)
	}
	if a.Ne[0] > 1<<31-1 {
		return c.errorf("ARGMAX: rows of %v are too long for i32 indices", a)
	}
	return c.newOp(OpArgmax, TypeI32, [4]int64{a.Ne[1], 1, 1, 1}, a)
}

// Argsort returns, for each row of a, the I32 indices that sort it in the given order (stable).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Argsort(a *Tensor, order SortOrder) *Tensor {
	if err := c.check("ARGSORT", a); err != nil {
		return c.fail("ARGSORT", err)
	}
	if p := c.requireTypes("ARGSORT", func(t Type) bool { return t == TypeF32 }, "f32", a); p != nil {
		return p
	}
	if order != SortAsc && order != SortDesc {
		return c.errorf("ARGSORT: unknown order %d", int32(order))
	}
	if a.Ne[0] > 1<<31-1 {
		return c.errorf("ARGSORT: rows of %v are too long for i32 indices", a)
	}
	t := c.newOp(OpArgsort, TypeI32, a.Ne, a)
	t.Params[0] = int32(order)
	return t
}

// Repeat tiles a to the shape of b (a must divide b's shape in every dimension).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Repeat(a, b *Tensor) *Tensor {
	if err := c.check("REPEAT", a, b); err != nil {
		return c.fail("REPEAT", err)
	}
	if !CanRepeat(a, b) {
		return c.errorf("REPEAT: %v cannot be tiled to the shape of %v", a, b)
	}
	if !a.Type.CanConvert() && a.Type.Size() == 0 {
		return c.errorf("REPEAT: unsupported type %v", a.Type)
	}
	if a.Type.IsQuantized() {
		return c.errorf("REPEAT: %v is quantized; repeat needs an element type", a)
	}
	return c.newOp(OpRepeat, a.Type, b.Ne, a, b)
}

// Concat joins a and b along dimension dim; all other dimensions must match. Quantized tensors
// join as ggml's do, by whole blocks: their rows must be consecutive blocks (and along dimension
// 0 both rows are whole blocks, as every quantized row is).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Concat(a, b *Tensor, dim int) *Tensor {
	if err := c.check("CONCAT", a, b); err != nil {
		return c.fail("CONCAT", err)
	}
	if dim < 0 || dim >= MaxDims {
		return c.errorf("CONCAT: dimension %d out of range", dim)
	}
	if a.Type != b.Type {
		return c.errorf("CONCAT: types differ: %v vs %v", a, b)
	}
	if a.Type.IsQuantized() && (a.Nb[0] != a.Type.Size() || b.Nb[0] != b.Type.Size()) {
		// ggml_compute_forward_concat_any copies whole rows of blocks
		return c.errorf("CONCAT: quantized %v and %v need rows of consecutive blocks", a, b)
	}
	ne := a.Ne
	for d := 0; d < MaxDims; d++ {
		if d == dim {
			var ok bool
			if ne[d], ok = CheckedAdd(a.Ne[d], b.Ne[d]); !ok {
				return c.failErr(overflowf("CONCAT: %v and %v along dimension %d", a, b, d))
			}
		} else if a.Ne[d] != b.Ne[d] {
			return c.errorf("CONCAT: %v and %v differ in dimension %d", a, b, d)
		}
	}
	t := c.newOp(OpConcat, a.Type, ne, a, b)
	t.Params[0] = int32(dim)
	return t
}
