package core

import "math"

// Generators, fills and index-shuffling ops of ggml: SET, FILL, TRI, DIAG, ARANGE, CUMSUM,
// COUNT_EQUAL, TOP_K, ROLL, PAD, PAD_REFLECT_1D and TIMESTEP_EMBEDDING. Their op_params words
// are laid out as ggml lays them out, so they travel over RPC unchanged.

// TriType selects the triangle TRI keeps (ggml's enum ggml_tri_type); elements outside it become 0.
// Index i0 is the column (fastest dimension) and i1 the row.
type TriType int32

// TRI's triangles, ggml's numbers.
const (
	TriUpperDiag TriType = iota // i0 ≥ i1: the upper triangle with the diagonal
	TriUpper                    // i0 > i1
	TriLowerDiag                // i0 ≤ i1
	TriLower                    // i0 < i1
)

// Keeps reports whether TRI of type tt keeps the element at column i0 of row i1.
func (tt TriType) Keeps(i0, i1 int64) bool {
	switch tt {
	case TriUpperDiag:
		return i0 >= i1
	case TriUpper:
		return i0 > i1
	case TriLowerDiag:
		return i0 <= i1
	case TriLower:
		return i0 < i1
	}
	return false
}

// inplaceOp creates the result of an in-place variant of op: a tensor of a's type, shape and
// strides that aliases a's memory (ViewSrc a) and has a as its first source.
func (c *Context) inplaceOp(op Op, a *Tensor) *Tensor {
	nb := a.Nb
	t := c.viewOpStrided(op, a, a.Type, a.Ne, &nb, 0)
	if t.err == nil && a.Name != "" {
		t.Name = a.Name + " (" + op.String() + ")"
	}
	return t
}

// Set returns a copy of a in which the window given by byte strides nb1, nb2, nb3 and byte offset
// offset (b's shape, unit stride along dim 0) holds b's elements: ggml_set. a must be contiguous,
// f32 or i32; b must have a's type and unit-stride rows, and the window must lie inside a. The
// strides and the offset travel as 32-bit words (offset < 2³⁰, as ggml demands).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Set(a, b *Tensor, nb1, nb2, nb3, offset int64) *Tensor {
	return c.set(a, b, nb1, nb2, nb3, offset, false)
}

// SetInplace is Set writing into a's memory (ggml_set_inplace): the result is a view of a, whose
// elements outside the window are not copied.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) SetInplace(a, b *Tensor, nb1, nb2, nb3, offset int64) *Tensor {
	return c.set(a, b, nb1, nb2, nb3, offset, true)
}

// Set1D is Set with a's own strides (ggml_set_1d): b's elements go to a's memory from byte offset
// offset on, in b's element order when b is a row.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Set1D(a, b *Tensor, offset int64) *Tensor {
	if a == nil {
		return c.Set(a, b, 0, 0, 0, offset)
	}
	return c.Set(a, b, a.Nb[1], a.Nb[2], a.Nb[3], offset)
}

// Set2D is Set with row stride nb1 and a's strides above (ggml_set_2d).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Set2D(a, b *Tensor, nb1, offset int64) *Tensor {
	if a == nil {
		return c.Set(a, b, nb1, 0, 0, offset)
	}
	return c.Set(a, b, nb1, a.Nb[2], a.Nb[3], offset)
}

func (c *Context) set(a, b *Tensor, nb1, nb2, nb3, offset int64, inplace bool) *Tensor {
	if err := c.check("SET", a, b); err != nil {
		return c.fail("SET", err)
	}
	es := a.Type.Size()
	switch {
	case a.Type != TypeF32 && a.Type != TypeI32:
		return c.errorf("SET: %v has type %v, want f32 or i32", a, a.Type)
	case b.Type != a.Type:
		return c.errorf("SET: %v must have the type of %v", b, a)
	case !a.IsContiguous():
		return c.errorf("SET: %v must be contiguous", a)
	case b.Nb[0] != es && b.Ne[0] > 1:
		return c.errorf("SET: %v must have unit-stride rows", b)
	case b.NElements() > a.NElements():
		return c.errorf("SET: %v has more elements than %v", b, a)
	case offset < 0 || offset >= 1<<30:
		return c.errorf("SET: offset %d out of range [0, 2^30)", offset)
	case nb1 < 0 || nb2 < 0 || nb3 < 0 || nb1 > math.MaxInt32 || nb2 > math.MaxInt32 || nb3 > math.MaxInt32:
		return c.errorf("SET: strides %d, %d, %d out of range [0, 2^31)", nb1, nb2, nb3)
	}
	if !b.IsEmpty() {
		last := offset + (b.Ne[0]-1)*es + (b.Ne[1]-1)*nb1 + (b.Ne[2]-1)*nb2 + (b.Ne[3]-1)*nb3
		if last+es > a.NBytes() {
			return c.errorf("SET: window of %v at offset %d with strides %d, %d, %d exceeds %v", b, offset, nb1, nb2, nb3, a)
		}
	}
	var t *Tensor
	if inplace {
		t = c.inplaceOp(OpSet, a)
	} else {
		t = c.newOp(OpSet, a.Type, a.Ne, a)
	}
	if t.err != nil {
		return t
	}
	t.Src[1] = b
	t.Params[0], t.Params[1], t.Params[2], t.Params[3] = int32(nb1), int32(nb2), int32(nb3), int32(offset)
	if inplace {
		t.Params[4] = 1
	}
	return t
}

// SetParams are the parameters of a SET node: the window's byte strides and offset in the
// result, and whether the node writes into its first source's memory.
type SetParams struct {
	Nb1, Nb2, Nb3, Offset int64
	Inplace               bool
}

// SetParamsOf decodes the parameters of a SET node (the zero value for a nil t or another op).
func SetParamsOf(t *Tensor) SetParams {
	if t == nil || t.Op != OpSet {
		return SetParams{}
	}
	return SetParams{Nb1: int64(t.Params[0]), Nb2: int64(t.Params[1]), Nb3: int64(t.Params[2]),
		Offset: int64(t.Params[3]), Inplace: t.Params[4] != 0}
}

// Fill returns a tensor of a's shape and type with every element v (ggml_fill); a's values are not
// read. a must be contiguous, f32 or f16 (v rounded to f16 there).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Fill(a *Tensor, v float32) *Tensor { return c.fill(a, v, false) }

// FillInplace is Fill writing into a's memory (ggml_fill_inplace); the result is a view of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) FillInplace(a *Tensor, v float32) *Tensor { return c.fill(a, v, true) }

func (c *Context) fill(a *Tensor, v float32, inplace bool) *Tensor {
	if err := c.check("FILL", a); err != nil {
		return c.fail("FILL", err)
	}
	if a.Type != TypeF32 && a.Type != TypeF16 {
		return c.errorf("FILL: %v has type %v, want f32 or f16", a, a.Type)
	}
	if !a.IsContiguous() {
		return c.errorf("FILL: %v must be contiguous", a)
	}
	var t *Tensor
	if inplace {
		t = c.inplaceOp(OpFill, a)
	} else {
		t = c.newOp(OpFill, a.Type, a.Ne, a)
	}
	if t.err == nil {
		t.SetParamF32(0, v)
	}
	return t
}

// FillValueOf returns the value of a FILL node (0 for a nil t or another op).
func FillValueOf(t *Tensor) float32 {
	if t == nil || t.Op != OpFill {
		return 0
	}
	return t.ParamF32(0)
}

// Tri keeps one triangle of each square matrix of a and zeroes the rest (ggml_tri): element
// (column i0, row i1) is kept where tt.Keeps(i0, i1). a must be a contiguous f32 tensor with
// ne0 = ne1. A nil operand (or a nil context) records an error on the context and returns a
// placeholder.
func (c *Context) Tri(a *Tensor, tt TriType) *Tensor {
	if err := c.check("TRI", a); err != nil {
		return c.fail("TRI", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("TRI: %v has type %v, want f32", a, a.Type)
	case !a.IsContiguous():
		return c.errorf("TRI: %v must be contiguous", a)
	case a.Ne[0] != a.Ne[1]:
		return c.errorf("TRI: %v is not square (ne0 = %d, ne1 = %d)", a, a.Ne[0], a.Ne[1])
	case tt < TriUpperDiag || tt > TriLower:
		return c.errorf("TRI: unknown triangle type %d", int32(tt))
	}
	t := c.newOp(OpTri, TypeF32, a.Ne, a)
	t.Params[0] = int32(tt)
	return t
}

// TriTypeOf returns the triangle of a TRI node (TriUpperDiag for a nil t or another op).
func TriTypeOf(t *Tensor) TriType {
	if t == nil || t.Op != OpTri {
		return TriUpperDiag
	}
	return TriType(t.Params[0])
}

// Diag turns each row of a [n, 1, ne2, ne3] into the diagonal of an n×n matrix (ggml_diag):
// result [n, n, ne2, ne3], element (i0, i1) = a[i0] where i0 = i1, else 0. a must be f32 with
// unit stride along dim 0. A nil operand (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) Diag(a *Tensor) *Tensor {
	if err := c.check("DIAG", a); err != nil {
		return c.fail("DIAG", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("DIAG: %v has type %v, want f32", a, a.Type)
	case a.Ne[1] != 1:
		return c.errorf("DIAG: %v must have ne1 = 1", a)
	case a.Nb[0] != 4 && a.Ne[0] > 1:
		return c.errorf("DIAG: %v must have unit stride along dim 0", a)
	}
	return c.newOp(OpDiag, TypeF32, [4]int64{a.Ne[0], a.Ne[0], a.Ne[2], a.Ne[3]}, a)
}

// Arange returns the f32 row start, start+step, … below stop (ggml_arange): ⌈(stop-start)/step⌉
// elements, computed in float32 as ggml does, element i = start + step·i. stop must exceed
// start and step must be positive; all three finite. The node has no sources. A nil context
// records an error and returns a placeholder.
func (c *Context) Arange(start, stop, step float32) *Tensor {
	if c == nil {
		return c.fail("ARANGE", errNilContext)
	}
	for _, v := range []float32{start, stop, step} {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return c.errorf("ARANGE: start %v, stop %v, step %v: want finite numbers", start, stop, step)
		}
	}
	if !(stop > start) || !(step > 0) {
		return c.errorf("ARANGE: start %v, stop %v, step %v: want stop > start and step > 0", start, stop, step)
	}
	n := math.Ceil(float64((stop - start) / step))
	if n > 1<<40 {
		return c.errorf("ARANGE: start %v, stop %v, step %v give %v elements, too many", start, stop, step, n)
	}
	t := c.newOp(OpArange, TypeF32, [4]int64{int64(n), 1, 1, 1})
	if t.err == nil {
		t.SetParamF32(0, start)
		t.SetParamF32(1, stop)
		t.SetParamF32(2, step)
	}
	return t
}

// ArangeParamsOf returns start, stop and step of an ARANGE node (zeros for a nil t or another op).
func ArangeParamsOf(t *Tensor) (start, stop, step float32) {
	if t == nil || t.Op != OpArange {
		return 0, 0, 0
	}
	return t.ParamF32(0), t.ParamF32(1), t.ParamF32(2)
}

// Cumsum returns the running sums of each row of a (ggml_cumsum): element i of a row is the
// float32 sum of the row's elements 0..i, added in order. a must be f32 with unit stride along
// dim 0. A nil operand (or a nil context) records an error on the context and returns a
// placeholder.
func (c *Context) Cumsum(a *Tensor) *Tensor {
	if err := c.check("CUMSUM", a); err != nil {
		return c.fail("CUMSUM", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("CUMSUM: %v has type %v, want f32", a, a.Type)
	case a.Nb[0] != 4 && a.Ne[0] > 1:
		return c.errorf("CUMSUM: %v must have unit stride along dim 0", a)
	}
	return c.newOp(OpCumsum, TypeF32, a.Ne, a)
}

// CountEqual returns the number of positions where a and b hold the same value, as a single
// i64 (ggml_count_equal). a and b must be i32 tensors of the same shape (any strides).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) CountEqual(a, b *Tensor) *Tensor {
	if err := c.check("COUNT_EQUAL", a, b); err != nil {
		return c.fail("COUNT_EQUAL", err)
	}
	switch {
	case a.Type != TypeI32 || b.Type != TypeI32:
		return c.errorf("COUNT_EQUAL: %v and %v must be i32", a, b)
	case a.Ne != b.Ne:
		return c.errorf("COUNT_EQUAL: %v and %v differ in shape", a, b)
	}
	return c.newOp(OpCountEqual, TypeI64, [4]int64{1, 1, 1, 1}, a, b)
}

// TopK returns, for each row of a, the i32 indices of its k largest elements (ggml_top_k, the
// TOP_K op): result [k, ne1, ne2, ne3]. As in ggml the order within a row is not part of the
// contract; tandem's kernels, like ggml's CPU kernel, give the indices by decreasing value (equal
// values by increasing index, NaNs last) with the first two swapped. a must be f32 and 1 ≤ k ≤
// ne0. A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) TopK(a *Tensor, k int) *Tensor {
	if err := c.check("TOP_K", a); err != nil {
		return c.fail("TOP_K", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("TOP_K: %v has type %v, want f32", a, a.Type)
	case a.Ne[0] > math.MaxInt32:
		return c.errorf("TOP_K: rows of %v are too long for i32 indices", a)
	case k < 1 || int64(k) > a.Ne[0]:
		return c.errorf("TOP_K: k = %d, want 1 ≤ k ≤ %d (the row length of %v)", k, a.Ne[0], a)
	}
	return c.newOp(OpTopK, TypeI32, [4]int64{int64(k), a.Ne[1], a.Ne[2], a.Ne[3]}, a)
}

// Roll shifts a circularly along each dimension (ggml_roll): result element i is a's element
// (i - shift) mod ne in every dimension. Each |shift| must be below that dimension's size, and a
// must be f32 with unit stride along dim 0. A nil operand (or a nil context) records an error on
// the context and returns a placeholder.
func (c *Context) Roll(a *Tensor, shift0, shift1, shift2, shift3 int) *Tensor {
	if err := c.check("ROLL", a); err != nil {
		return c.fail("ROLL", err)
	}
	if a.Type != TypeF32 {
		return c.errorf("ROLL: %v has type %v, want f32", a, a.Type)
	}
	if a.Nb[0] != 4 && a.Ne[0] > 1 {
		return c.errorf("ROLL: %v must have unit stride along dim 0", a)
	}
	shifts := [4]int{shift0, shift1, shift2, shift3}
	for i, s := range shifts {
		if int64(max(s, -s)) >= a.Ne[i] || s == math.MinInt {
			return c.errorf("ROLL: shift %d along dim %d of %v, want |shift| < %d", s, i, a, a.Ne[i])
		}
	}
	t := c.newOp(OpRoll, TypeF32, a.Ne, a)
	for i, s := range shifts {
		t.Params[i] = int32(s)
	}
	return t
}

// RollShiftsOf returns the shifts of a ROLL node (zeros for a nil t or another op).
func RollShiftsOf(t *Tensor) [4]int64 {
	if t == nil || t.Op != OpRoll {
		return [4]int64{}
	}
	return [4]int64{int64(t.Params[0]), int64(t.Params[1]), int64(t.Params[2]), int64(t.Params[3])}
}

// PadParams are PAD's paddings: Left[i] elements before and Right[i] after dimension i, and
// whether they wrap around (circular: taken from the other end of a) instead of being zeros.
type PadParams struct {
	Left, Right [4]int
	Circular    bool
}

// Pad appends p0..p3 zeros at the end of each dimension of a (ggml_pad).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Pad(a *Tensor, p0, p1, p2, p3 int) *Tensor {
	return c.PadExt(a, PadParams{Right: [4]int{p0, p1, p2, p3}})
}

// PadExt pads a on both sides of every dimension (ggml_pad_ext, and ggml_pad_ext_circular with
// p.Circular): result ne[i] = Left[i] + a.ne[i] + Right[i]; an element outside a is 0, or, when
// circular, a's element at the index wrapped around modulo a.ne[i]. Paddings must be ≥ 0, and a
// circular padding at most a's size along its dimension. a must be f32 (any strides).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) PadExt(a *Tensor, p PadParams) *Tensor {
	if err := c.check("PAD", a); err != nil {
		return c.fail("PAD", err)
	}
	if a.Type != TypeF32 {
		return c.errorf("PAD: %v has type %v, want f32", a, a.Type)
	}
	var ne [4]int64
	for i := range ne {
		l, r := p.Left[i], p.Right[i]
		if l < 0 || r < 0 || l > math.MaxInt32/2 || r > math.MaxInt32/2 {
			return c.errorf("PAD: padding %d, %d of dim %d out of range [0, 2^30)", l, r, i)
		}
		if p.Circular && (int64(l) > a.Ne[i] || int64(r) > a.Ne[i]) {
			return c.errorf("PAD: circular padding %d, %d of dim %d exceeds %v's size %d", l, r, i, a, a.Ne[i])
		}
		ne[i] = a.Ne[i] + int64(l) + int64(r)
	}
	t := c.newOp(OpPad, TypeF32, ne, a)
	if t.err != nil {
		return t
	}
	for i := range 4 {
		t.Params[2*i], t.Params[2*i+1] = int32(p.Left[i]), int32(p.Right[i])
	}
	if p.Circular {
		t.Params[8] = 1
	}
	return t
}

// PadParamsOf decodes the paddings of a PAD node (the zero value for a nil t or another op).
func PadParamsOf(t *Tensor) PadParams {
	var p PadParams
	if t == nil || t.Op != OpPad {
		return p
	}
	for i := range 4 {
		p.Left[i], p.Right[i] = int(t.Params[2*i]), int(t.Params[2*i+1])
	}
	p.Circular = t.Params[8] != 0
	return p
}

// PadReflect1D pads each row of a with p0 elements before and p1 after, mirrored about the row's
// first and last elements (which are not repeated): ggml_pad_reflect_1d. 0 ≤ p0, p1 < ne0; a
// must be a contiguous f32 tensor. A nil operand (or a nil context) records an error on the
// context and returns a placeholder.
func (c *Context) PadReflect1D(a *Tensor, p0, p1 int) *Tensor {
	if err := c.check("PAD_REFLECT_1D", a); err != nil {
		return c.fail("PAD_REFLECT_1D", err)
	}
	switch {
	case a.Type != TypeF32:
		return c.errorf("PAD_REFLECT_1D: %v has type %v, want f32", a, a.Type)
	case !a.IsContiguous():
		return c.errorf("PAD_REFLECT_1D: %v must be contiguous", a)
	case p0 < 0 || p1 < 0 || int64(p0) >= a.Ne[0] || int64(p1) >= a.Ne[0]:
		return c.errorf("PAD_REFLECT_1D: paddings %d, %d, want 0 ≤ p < %d (the row length of %v)", p0, p1, a.Ne[0], a)
	}
	t := c.newOp(OpPadReflect1D, TypeF32, [4]int64{a.Ne[0] + int64(p0) + int64(p1), a.Ne[1], a.Ne[2], a.Ne[3]}, a)
	if t.err == nil {
		t.Params[0], t.Params[1] = int32(p0), int32(p1)
	}
	return t
}

// PadReflectOf returns the paddings p0, p1 of a PAD_REFLECT_1D node (zeros for a nil t or
// another op).
func PadReflectOf(t *Tensor) (p0, p1 int64) {
	if t == nil || t.Op != OpPadReflect1D {
		return 0, 0
	}
	return int64(t.Params[0]), int64(t.Params[1])
}

// TimestepEmbedding returns the sinusoidal embeddings of diffusion timesteps
// (ggml_timestep_embedding): timesteps is an f32 vector [n] with unit stride, the result f32
// [dim, n]. With half = dim/2 and f_j = exp(-ln(maxPeriod)·j/half), row i holds cos(t_i·f_j) for
// j < half, then sin(t_i·f_j), then a 0 when dim is odd. dim and maxPeriod must be positive.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) TimestepEmbedding(timesteps *Tensor, dim, maxPeriod int) *Tensor {
	if err := c.check("TIMESTEP_EMBEDDING", timesteps); err != nil {
		return c.fail("TIMESTEP_EMBEDDING", err)
	}
	a := timesteps
	switch {
	case a.Type != TypeF32:
		return c.errorf("TIMESTEP_EMBEDDING: %v has type %v, want f32", a, a.Type)
	case a.Ne[1] != 1 || a.Ne[2] != 1 || a.Ne[3] != 1 || a.Nb[0] != 4 && a.Ne[0] > 1:
		return c.errorf("TIMESTEP_EMBEDDING: %v must be a vector with unit stride", a)
	case dim < 1 || dim > math.MaxInt32:
		return c.errorf("TIMESTEP_EMBEDDING: dim %d, want 1 ≤ dim < 2^31", dim)
	case maxPeriod < 1 || maxPeriod > math.MaxInt32:
		return c.errorf("TIMESTEP_EMBEDDING: max_period %d, want 1 ≤ max_period < 2^31", maxPeriod)
	}
	t := c.newOp(OpTimestepEmbedding, TypeF32, [4]int64{int64(dim), a.Ne[0], 1, 1}, a)
	if t.err == nil {
		t.Params[0], t.Params[1] = int32(dim), int32(maxPeriod)
	}
	return t
}

// TimestepParamsOf returns dim and max_period of a TIMESTEP_EMBEDDING node (zeros for a nil t or
// another op).
func TimestepParamsOf(t *Tensor) (dim, maxPeriod int64) {
	if t == nil || t.Op != OpTimestepEmbedding {
		return 0, 0
	}
	return int64(t.Params[0]), int64(t.Params[1])
}
