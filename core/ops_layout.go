package core

import "fmt"

// Dup returns a contiguous copy of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Dup(a *Tensor) *Tensor {
	if err := c.check("DUP", a); err != nil {
		return c.fail("DUP", err)
	}
	return c.newOp(OpDup, a.Type, a.Ne, a)
}

// Cont returns a contiguous copy of a (same type and shape).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Cont(a *Tensor) *Tensor {
	if err := c.check("CONT", a); err != nil {
		return c.fail("CONT", err)
	}
	return c.newOp(OpCont, a.Type, a.Ne, a)
}

// ContShape returns a contiguous copy of a with a new shape ne (1 to 4 sizes) of the same element
// count. A nil a records an error and returns a placeholder.
func (c *Context) ContShape(a *Tensor, ne ...int64) *Tensor {
	if err := c.check("CONT", a); err != nil {
		return c.fail("CONT", err)
	}
	shape, ok := c.shape("CONT", ne)
	if !ok {
		return c.placeholder()
	}
	if n, ok := checkedProduct(shape[:]...); !ok || n != a.NElements() {
		if !ok {
			return c.failErr(overflowf("CONT: element count of shape %v", shape))
		}
		return c.errorf("CONT: %v has %d elements, shape %v has %d", a, a.NElements(), shape, n)
	}
	return c.newOp(OpCont, a.Type, shape, a)
}

func convertible(from, to Type) bool {
	if from == to {
		return true
	}
	f := from.IsFloat() || from.IsQuantized()
	g := to.IsFloat() || to.IsQuantized()
	if f && g {
		// quantized to quantized goes through f32 on the CPU; ggml allows dequantize only into
		// float types, so keep to its rule: a quantized source needs a float destination.
		return !from.IsQuantized() || to.IsFloat()
	}
	return (from == TypeF32 && to == TypeI32) || (from == TypeI32 && to == TypeF32)
}

// Cpy copies a into b's memory, converting a's type to b's (quantizing on write); both must have the
// same number of elements. The result is a view of b.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Cpy(a, b *Tensor) *Tensor {
	if err := c.check("CPY", a, b); err != nil {
		return c.fail("CPY", err)
	}
	if a.NElements() != b.NElements() {
		return c.errorf("CPY: %v has %d elements, %v has %d", a, a.NElements(), b, b.NElements())
	}
	if !convertible(a.Type, b.Type) {
		return c.errorf("CPY: cannot convert %v to %v", a.Type, b.Type)
	}
	if a.Type != b.Type && !b.Type.CanConvert() {
		return c.errorf("CPY: %v has no quantizer (ggml's CPU has no conversion from f32 into it)", b.Type)
	}
	if b.Type.IsQuantized() && !b.IsContiguousRows() {
		return c.errorf("CPY: destination %v is quantized and not contiguous", b)
	}
	t := c.viewOpStrided(OpCpy, b, b.Type, b.Ne, &b.Nb, 0)
	if t.Op == OpCpy {
		t.Src[0], t.Src[1] = a, b
		if b.Name != "" {
			t.Name = b.Name + " (copy of " + a.Name + ")"
		}
	}
	return t
}

// Cast returns a converted to type typ (a new contiguous tensor).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Cast(a *Tensor, typ Type) *Tensor {
	if err := c.check("CPY", a); err != nil {
		return c.fail("CPY", err)
	}
	if !convertible(a.Type, typ) {
		return c.errorf("CPY: cannot convert %v to %v", a.Type, typ)
	}
	if a.Type != typ && !typ.CanConvert() {
		return c.errorf("CPY: %v has no quantizer (ggml's CPU has no conversion from f32 into it)", typ)
	}
	if a.Ne[0]%typ.BlockSize() != 0 {
		return c.errorf("CPY: rows of %v are not a whole number of %v blocks", a, typ)
	}
	// The result owns its memory: CPY's kernel writes dst, Src[1] is only set by Cpy for aliasing.
	return c.newOp(OpCpy, typ, a.Ne, a)
}

func (c *Context) shape(op string, ne []int64) ([4]int64, bool) {
	var s [4]int64
	if len(ne) < 1 || len(ne) > MaxDims {
		c.setErr(errorfNoCtx("%s: %d dimensions given, want 1 to %d", op, len(ne), MaxDims))
		return s, false
	}
	for i := range s {
		s[i] = 1
	}
	copy(s[:], ne)
	for i, n := range s {
		if n < 0 {
			c.setErr(errorfNoCtx("%s: negative size %d in dimension %d", op, n, i))
			return s, false
		}
	}
	return s, true
}

// Reshape returns a view of contiguous a with shape ne (same element count).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Reshape(a *Tensor, ne ...int64) *Tensor {
	if err := c.check("RESHAPE", a); err != nil {
		return c.fail("RESHAPE", err)
	}
	shape, ok := c.shape("RESHAPE", ne)
	if !ok {
		return c.placeholder()
	}
	if !a.IsContiguous() {
		return c.errorf("RESHAPE: %v is not contiguous (use Cont first)", a)
	}
	if n, ok := checkedProduct(shape[:]...); !ok || n != a.NElements() {
		if !ok {
			return c.failErr(overflowf("RESHAPE: element count of shape %v", shape))
		}
		return c.errorf("RESHAPE: %v has %d elements, shape %v has %d", a, a.NElements(), shape, n)
	}
	if shape[0]%a.Type.BlockSize() != 0 {
		return c.errorf("RESHAPE: row length %d is not a multiple of the %v block size", shape[0], a.Type)
	}
	return c.viewOp(OpReshape, a, a.Type, shape, 0)
}

// Reshape1D is Reshape to one dimension; a nil a records an error and returns a placeholder.
func (c *Context) Reshape1D(a *Tensor, ne0 int64) *Tensor { return c.Reshape(a, ne0) }

// Reshape2D is Reshape to two dimensions; a nil a records an error and returns a placeholder.
func (c *Context) Reshape2D(a *Tensor, ne0, ne1 int64) *Tensor { return c.Reshape(a, ne0, ne1) }

// Reshape3D is Reshape to three dimensions; a nil a records an error and returns a placeholder.
func (c *Context) Reshape3D(a *Tensor, ne0, ne1, ne2 int64) *Tensor {
	return c.Reshape(a, ne0, ne1, ne2)
}

// Reshape4D is Reshape to four dimensions; a nil a records an error and returns a placeholder.
func (c *Context) Reshape4D(a *Tensor, ne0, ne1, ne2, ne3 int64) *Tensor {
	return c.Reshape(a, ne0, ne1, ne2, ne3)
}

// ReshapeAs returns a view of contiguous a with b's shape. A nil a or b records an error and
// returns a placeholder.
func (c *Context) ReshapeAs(a, b *Tensor) *Tensor {
	if err := c.check("RESHAPE", a, b); err != nil {
		return c.fail("RESHAPE", err)
	}
	return c.Reshape(a, b.Ne[:]...)
}

// View returns a view of a with shape ne, byte strides nb (nb[0] is the element size and need not be
// given: pass nb1..nb3) and byte offset. Strides must be ≥ 0 and the view must lie inside a: its
// first byte (offset) and its last byte (offset plus the span its shape and strides cover) are
// checked, with overflow-checked arithmetic. An empty view (a zero size) may start anywhere inside
// a or at its end. A nil a records an error and returns a placeholder.
func (c *Context) View(a *Tensor, ne []int64, nb []int64, offset int64) *Tensor {
	if err := c.check("VIEW", a); err != nil {
		return c.fail("VIEW", err)
	}
	shape, ok := c.shape("VIEW", ne)
	if !ok {
		return c.placeholder()
	}
	if len(nb) != len(ne)-1 {
		return c.errorf("VIEW: %d dimensions need %d strides, got %d", len(ne), len(ne)-1, len(nb))
	}
	if shape[0]%a.Type.BlockSize() != 0 {
		return c.errorf("VIEW: row length %d is not a multiple of the %v block size", shape[0], a.Type)
	}
	strides, err := checkedStrides(a.Type, shape)
	if err != nil {
		return c.failErr(fmt.Errorf("tandem: VIEW: %w", err))
	}
	copy(strides[1:], nb)
	for i, s := range nb {
		if s < 0 {
			return c.errorf("VIEW: negative stride nb%d = %d (strides must be ≥ 0)", i+1, s)
		}
	}
	if offset < 0 {
		return c.errorf("VIEW: negative offset %d", offset)
	}
	for i := len(ne); i < MaxDims; i++ {
		var ok bool
		if strides[i], ok = CheckedMul(strides[i-1], shape[i-1]); !ok {
			return c.failErr(overflowf("VIEW: stride of dimension %d", i))
		}
	}
	v := c.viewOpStrided(OpView, a, a.Type, shape, &strides, offset)
	if v.Op == OpView {
		v.SetParamI32(0, int32(offset))
		v.SetParamI32(1, int32(offset>>32))
	}
	return v
}

// View1D returns ne0 elements of a starting at byte offset.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) View1D(a *Tensor, ne0, offset int64) *Tensor {
	return c.View(a, []int64{ne0}, nil, offset)
}

// View2D returns a [ne0, ne1] view with row stride nb1 bytes.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) View2D(a *Tensor, ne0, ne1, nb1, offset int64) *Tensor {
	return c.View(a, []int64{ne0, ne1}, []int64{nb1}, offset)
}

// View3D returns a [ne0, ne1, ne2] view.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) View3D(a *Tensor, ne0, ne1, ne2, nb1, nb2, offset int64) *Tensor {
	return c.View(a, []int64{ne0, ne1, ne2}, []int64{nb1, nb2}, offset)
}

// View4D returns a [ne0, ne1, ne2, ne3] view.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) View4D(a *Tensor, ne0, ne1, ne2, ne3, nb1, nb2, nb3, offset int64) *Tensor {
	return c.View(a, []int64{ne0, ne1, ne2, ne3}, []int64{nb1, nb2, nb3}, offset)
}

// Permute returns a view of a whose dimension i becomes dimension ax_i (as ggml_permute and
// PyTorch's inverse-permutation convention in ggml).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Permute(a *Tensor, ax0, ax1, ax2, ax3 int) *Tensor {
	if err := c.check("PERMUTE", a); err != nil {
		return c.fail("PERMUTE", err)
	}
	axes := [4]int{ax0, ax1, ax2, ax3}
	var seen [4]bool
	for _, ax := range axes {
		if ax < 0 || ax >= MaxDims || seen[ax] {
			return c.errorf("PERMUTE: axes %v are not a permutation of 0..3", axes)
		}
		seen[ax] = true
	}
	var ne, nb [4]int64
	for i, ax := range axes {
		ne[ax] = a.Ne[i]
		nb[ax] = a.Nb[i]
	}
	t := c.viewOpStrided(OpPermute, a, a.Type, ne, &nb, 0)
	if t.Op == OpPermute {
		for i, ax := range axes {
			t.Params[i] = int32(ax)
		}
		if a.Name != "" {
			t.Name = a.Name + " (permuted)"
		}
	}
	return t
}

// Transpose swaps dimensions 0 and 1 (a view).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Transpose(a *Tensor) *Tensor {
	t := c.Permute(a, 1, 0, 2, 3)
	if t.err == nil && t.Op == OpPermute {
		t.Op = OpTranspose
		if a.Name != "" {
			t.Name = a.Name + " (transposed)"
		}
	}
	return t
}

// GetRows gathers rows of a selected by the I32 indices b: a [n_embd, ne1, ne2, ne3], b [n, ne2, ne3]
// gives [n_embd, n, ne2, ne3] in F32 (I32 when a is I32), dequantizing as needed.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) GetRows(a, b *Tensor) *Tensor {
	if err := c.check("GET_ROWS", a, b); err != nil {
		return c.fail("GET_ROWS", err)
	}
	if b.Type != TypeI32 {
		return c.errorf("GET_ROWS: indices %v must be i32", b)
	}
	if a.Ne[2] != b.Ne[1] || a.Ne[3] != b.Ne[2] || b.Ne[3] != 1 {
		return c.errorf("GET_ROWS: indices %v do not match the batch dims of %v (want [n, %d, %d, 1])", b, a, a.Ne[2], a.Ne[3])
	}
	if !a.Type.CanDequantize() {
		return c.errorf("GET_ROWS: unsupported type %v", a.Type)
	}
	typ := TypeF32
	if a.Type == TypeI32 {
		typ = TypeI32
	}
	return c.newOp(OpGetRows, typ, [4]int64{a.Ne[0], b.Ne[0], b.Ne[1], b.Ne[2]}, a, b)
}

// SetRows writes the rows of b into rows idx of a (converting to a's type) and returns a view of a.
// a [ne0, rows, ne2, ne3], b F32 or F16 [ne0, n, ne2, ne3], idx I32/I64 [n, ne2/k, ne3/l]. With no
// rows to write (n = 0, or an empty a) it is a no-op.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) SetRows(a, b, idx *Tensor) *Tensor {
	if err := c.check("SET_ROWS", a, b, idx); err != nil {
		return c.fail("SET_ROWS", err)
	}
	switch {
	case b.Type != TypeF32 && b.Type != TypeF16:
		return c.errorf("SET_ROWS: source rows %v must be f32 or f16", b)
	case idx.Type != TypeI32 && idx.Type != TypeI64:
		return c.errorf("SET_ROWS: indices %v must be i32 or i64", idx)
	case !a.Type.CanConvert() || a.Type == TypeI32:
		return c.errorf("SET_ROWS: unsupported destination type %v", a.Type)
	case a.Ne[0] != b.Ne[0] || a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3]:
		return c.errorf("SET_ROWS: rows %v do not fit destination %v", b, a)
	case b.Ne[1] != idx.Ne[0] || idx.Ne[1] == 0 || idx.Ne[2] == 0 || b.Ne[2]%idx.Ne[1] != 0 || b.Ne[3]%idx.Ne[2] != 0 || idx.Ne[3] != 1:
		return c.errorf("SET_ROWS: indices %v do not match rows %v", idx, b)
	case a.Type.IsQuantized() && !a.IsContiguousRows():
		return c.errorf("SET_ROWS: quantized destination %v has non-contiguous rows", a)
	}
	t := c.viewOpStrided(OpSetRows, a, a.Type, a.Ne, &a.Nb, 0)
	if t.Op == OpSetRows {
		t.Src[0], t.Src[1], t.Src[2] = a, b, idx
	}
	return t
}
