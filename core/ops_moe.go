package core

// MulMatID is the mixture-of-experts matrix product (ggml_mul_mat_id): every token multiplies its
// activations by the weight matrices of the experts chosen for it.
//
//	as  [k, m, n_expert]           one weight matrix per expert, any type MulMat takes as weights
//	b   [k, n_b, n_tokens]         F32 activations; n_b is n_expert_used, or a divisor of it
//	                               (usually 1) whose rows are reused: slot e reads row e % n_b
//	ids [n_expert_used, n_tokens]  I32 expert of each (slot, token)
//	result F32 [m, n_expert_used, n_tokens]
//
// result[:, e, t] = as[:, :, ids[e, t]] · b[:, e % n_b, t], each element the dot product of a weight
// row and the activation row, as MulMat computes it.
//
// The expert ids are data, so only a run can check them: an id outside [0, n_expert) makes the
// compute return an error naming the id and its (slot, token) position, on the CPU and on the
// Vulkan and OpenGL backends alike; no memory outside as is ever read for it (the GPU shaders
// write zeros to that row and report it after the graph).
//
// as must have 3 dimensions (ne[3] = 1) with unit-stride, non-transposed rows; b must have 3
// dimensions with unit-stride rows; ids must be 2-D. A nil operand (or a nil context) records an
// error on the context and returns a placeholder.
func (c *Context) MulMatID(as, b, ids *Tensor) *Tensor {
	if err := c.check("MUL_MAT_ID", as, b, ids); err != nil {
		return c.fail("MUL_MAT_ID", err)
	}
	nUsed, nTok := ids.Ne[0], ids.Ne[1]
	switch {
	case !mulMatWeightTypes[as.Type]:
		return c.errorf("MUL_MAT_ID: expert weights %v have unsupported type %v", as, as.Type)
	case b.Type != TypeF32:
		return c.errorf("MUL_MAT_ID: activations %v must be f32", b)
	case ids.Type != TypeI32:
		return c.errorf("MUL_MAT_ID: expert ids %v must be i32", ids)
	case as.Ne[3] != 1:
		return c.errorf("MUL_MAT_ID: expert weights %v must be 3-D [k, m, n_expert]", as)
	case b.Ne[3] != 1:
		return c.errorf("MUL_MAT_ID: activations %v must be 3-D [k, n_expert_used, n_tokens]", b)
	case ids.Ne[2] != 1 || ids.Ne[3] != 1:
		return c.errorf("MUL_MAT_ID: expert ids %v must be 2-D [n_expert_used, n_tokens]", ids)
	case as.Ne[0] != b.Ne[0]:
		return c.errorf("MUL_MAT_ID: inner dimensions differ: %v vs %v", as, b)
	case ids.Ne[1] != b.Ne[2]:
		return c.errorf("MUL_MAT_ID: %d token id lists in %v for %d tokens of %v", nTok, ids, b.Ne[2], b)
	case nUsed != 0 && (b.Ne[1] == 0 || nUsed%b.Ne[1] != 0):
		return c.errorf("MUL_MAT_ID: %d activation rows per token in %v do not broadcast over the %d experts used per token of %v",
			b.Ne[1], b, nUsed, ids)
	case as.Ne[0] == 0 && as.Ne[1] != 0 && nUsed != 0 && nTok != 0:
		return c.errorf("MUL_MAT_ID: inner dimension k is 0 (%v times %v): the rows to multiply are empty", as, b)
	case as.Ne[0] != 0 && as.IsTransposed():
		return c.errorf("MUL_MAT_ID: expert weights %v are transposed (use Cont)", as)
	case as.Nb[0] != as.Type.Size() || b.Nb[0] != b.Type.Size():
		return c.errorf("MUL_MAT_ID: dimension 0 of %v and %v must be contiguous", as, b)
	}
	return c.newOp(OpMulMatID, TypeF32, [4]int64{as.Ne[1], nUsed, nTok, 1}, as, b, ids)
}

// AddID adds to each row of a the row of b its id selects (ggml_add_id, MoE expert biases):
//
//	a   [ne0, n_used, n_tokens, ne3]  F32
//	b   [ne0, n_expert]               F32, one row per expert
//	ids [n_used, n_tokens]            I32
//	result[:, e, t, i3] = a[:, e, t, i3] + b[:, ids[e, t]]
//
// a and b need unit stride along dim 0. The ids are data: an id outside [0, n_expert) makes the
// compute return an error naming it on the CPU (the GPU shaders write NaN to that row instead of
// reading outside b). A nil operand (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) AddID(a, b, ids *Tensor) *Tensor {
	if err := c.check("ADD_ID", a, b, ids); err != nil {
		return c.fail("ADD_ID", err)
	}
	switch {
	case a.Type != TypeF32 || b.Type != TypeF32:
		return c.errorf("ADD_ID: %v and %v must be f32", a, b)
	case ids.Type != TypeI32:
		return c.errorf("ADD_ID: ids %v must be i32", ids)
	case a.Ne[0] != b.Ne[0]:
		return c.errorf("ADD_ID: rows of %v and %v differ in length", a, b)
	case b.Ne[2] != 1 || b.Ne[3] != 1:
		return c.errorf("ADD_ID: %v must be 2-D [ne0, n_expert]", b)
	case ids.Ne[2] != 1 || ids.Ne[3] != 1 || ids.Ne[0] != a.Ne[1] || ids.Ne[1] != a.Ne[2]:
		return c.errorf("ADD_ID: ids %v must be [%d, %d] (ne1, ne2 of %v)", ids, a.Ne[1], a.Ne[2], a)
	case a.Nb[0] != 4 && a.Ne[0] > 1 || b.Nb[0] != 4 && b.Ne[0] > 1:
		return c.errorf("ADD_ID: %v and %v must have unit stride along dim 0", a, b)
	}
	return c.newOp(OpAddID, TypeF32, a.Ne, a, b, ids)
}
