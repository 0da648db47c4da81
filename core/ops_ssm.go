package core

import "math"

// State-space and linear-attention ops of ggml: SSM_CONV, SSM_SCAN (Mamba-1 and Mamba-2),
// RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7, SOLVE_TRI and GATED_DELTA_NET. Each takes f32 operands
// and returns one f32 tensor; the recurrent ones return the per-token outputs followed by the
// final (or, with K > 1, the last K) recurrent states, as ggml concatenates them. Sources are in
// ggml's order and op_params in ggml's words, so the nodes travel over RPC unchanged. ggml has no
// gradient for any of them.

// requireF32 records an error unless every tensor is f32; it returns nil when they all are.
func (c *Context) requireF32(op string, ts ...*Tensor) *Tensor {
	return c.requireTypes(op, func(t Type) bool { return t == TypeF32 }, "f32", ts...)
}

// denseRows01 reports whether t's dims 0 and 1 are dense (unit element stride, rows adjacent):
// what ggml_ssm_scan demands of x, B and C.
func denseRows01(t *Tensor) bool {
	return t.Nb[0] == t.Type.Size() && t.Nb[1] == t.Ne[0]*t.Nb[0]
}

// SSMConv is Mamba's depthwise causal convolution (ggml_ssm_conv): sx [d_conv-1+n_t, d_inner,
// n_s] holds each channel's previous d_conv-1 inputs followed by the n_t new ones, c [d_conv,
// d_inner] the channel filters; result [d_inner, n_t, n_s] with element (i, t, s) =
// Σ_j sx[t+j, i, s]·c[j, i], summed in float32 in order of j. Both must be f32 (any strides);
// sx is 3-D and c a matrix. A nil operand (or a nil context) records an error on the context
// and returns a placeholder.
func (c *Context) SSMConv(sx, conv *Tensor) *Tensor {
	const op = "SSM_CONV"
	if err := c.check(op, sx, conv); err != nil {
		return c.fail(op, err)
	}
	if t := c.requireF32(op, sx, conv); t != nil {
		return t
	}
	dConv, dInner := conv.Ne[0], conv.Ne[1]
	switch {
	case sx.Ne[3] != 1:
		return c.errorf("SSM_CONV: %v must be 3-D (ne3 = 1)", sx)
	case conv.Ne[2] != 1 || conv.Ne[3] != 1:
		return c.errorf("SSM_CONV: filters %v must be a matrix [d_conv, d_inner]", conv)
	case dConv < 1:
		return c.errorf("SSM_CONV: filters %v have no taps (d_conv = 0)", conv)
	case sx.Ne[1] != dInner:
		return c.errorf("SSM_CONV: %v has %d channels (ne1), the filters %v have %d", sx, sx.Ne[1], conv, dInner)
	case sx.Ne[0] < dConv-1:
		return c.errorf("SSM_CONV: %v has %d columns, fewer than d_conv-1 = %d", sx, sx.Ne[0], dConv-1)
	}
	return c.newOp(OpSSMConv, TypeF32, [4]int64{dInner, sx.Ne[0] - dConv + 1, sx.Ne[2], 1}, sx, conv)
}

// SSMScan is Mamba's selective scan (ggml_ssm_scan). Shapes: s [d_state, head_dim, n_head, ≥1]
// the initial states, x [head_dim, n_head, n_seq_tokens, n_seqs], dt [n_head, n_seq_tokens,
// n_seqs], A [d_state, n_head] (Mamba-1: a decay per state element) or [1, n_head] (Mamba-2: one
// per head), B and C [d_state, n_group, n_seq_tokens, n_seqs] with n_group dividing n_head (head
// h uses group h/(n_head/n_group)), ids [n_seqs] i32: sequence i starts from state s[..., ids[i]].
// Per token, with Δ = softplus(dt): state = state·exp(Δ·A) + B·(x·Δ), y = Σ state·C over d_state.
// Result: a 1-D f32 tensor of n(x) + K·d_state·head_dim·n_head·n_seqs elements, the outputs y
// laid out as x (contiguous) followed by K state slots of n_seqs states each: slot 0 the state
// after the last token, slot k (0 < k < K) the one after token n_seq_tokens-1-k (slots for tokens
// before the first are not written). K > 1 needs the Mamba-2 form. s, dt and A must be
// contiguous, x, B and C dense in dims 0 and 1 (they may be views of one tensor); all f32. An
// id outside s fails the node when it runs. A nil operand (or a nil context) records an error
// on the context and returns a placeholder.
func (c *Context) SSMScan(s, x, dt, a, b, cm, ids *Tensor, k int) *Tensor {
	const op = "SSM_SCAN"
	if err := c.check(op, s, x, dt, a, b, cm, ids); err != nil {
		return c.fail(op, err)
	}
	if t := c.requireF32(op, s, x, dt, a, b, cm); t != nil {
		return t
	}
	dState, headDim, nHead, nTok, nSeqs := s.Ne[0], x.Ne[0], x.Ne[1], x.Ne[2], x.Ne[3]
	switch {
	case k < 1 || k > math.MaxInt32:
		return c.errorf("SSM_SCAN: K = %d snapshot slots, want 1 ≤ K < 2³¹", k)
	case ids.Type != TypeI32:
		return c.errorf("SSM_SCAN: ids %v has type %v, want i32", ids, ids.Type)
	case !s.IsContiguous() || !dt.IsContiguous() || !a.IsContiguous():
		return c.errorf("SSM_SCAN: the states %v, dt %v and A %v must be contiguous", s, dt, a)
	case !denseRows01(x) || !denseRows01(b) || !denseRows01(cm):
		return c.errorf("SSM_SCAN: x %v, B %v and C %v must be dense in dims 0 and 1", x, b, cm)
	case b.Ne != cm.Ne:
		return c.errorf("SSM_SCAN: B %v and C %v differ in shape", b, cm)
	case dt.Ne != [4]int64{nHead, nTok, nSeqs, 1}:
		return c.errorf("SSM_SCAN: dt %v, want [%d, %d, %d] (n_head, n_seq_tokens, n_seqs of x %v)", dt, nHead, nTok, nSeqs, x)
	case s.Ne[1] != headDim || s.Ne[2] != nHead:
		return c.errorf("SSM_SCAN: states %v, want [d_state, %d, %d, …] (head_dim, n_head of x %v)", s, headDim, nHead, x)
	case b.Ne[0] != dState || b.Ne[2] != nTok || b.Ne[3] != nSeqs:
		return c.errorf("SSM_SCAN: B %v, want [%d, n_group, %d, %d]", b, dState, nTok, nSeqs)
	case b.Ne[1] < 1 || nHead%b.Ne[1] != 0:
		return c.errorf("SSM_SCAN: %d groups in B %v do not divide the %d heads", b.Ne[1], b, nHead)
	case ids.Ne != [4]int64{nSeqs, 1, 1, 1}:
		return c.errorf("SSM_SCAN: ids %v, want a vector of %d (n_seqs of x %v)", ids, nSeqs, x)
	case a.Ne[1] != nHead || a.Ne[2] != 1 || a.Ne[3] != 1:
		return c.errorf("SSM_SCAN: A %v, want [d_state or 1, %d]", a, nHead)
	case a.Ne[0] != 1 && a.Ne[0] != dState:
		return c.errorf("SSM_SCAN: A %v, want ne0 = %d (Mamba-1) or 1 (Mamba-2)", a, dState)
	case a.Ne[0] != 1 && k != 1:
		return c.errorf("SSM_SCAN: K = %d snapshot slots need Mamba-2's scalar A, got %v", k, a)
	}
	state, ok := checkedProduct(int64(k), dState, headDim, nHead, nSeqs)
	n, ok2 := CheckedAdd(x.NElements(), state)
	if !ok || !ok2 {
		return c.errorf("SSM_SCAN: the result's size overflows (x %v, states %v, K = %d)", x, s, k)
	}
	t := c.newOp(OpSSMScan, TypeF32, [4]int64{n, 1, 1, 1}, s, x, dt, a, b, cm, ids)
	t.Params[0] = int32(k)
	return t
}

// SnapshotSlotsOf returns K, the number of state slots of an SSM_SCAN or GATED_DELTA_NET node
// (0 for a nil t or another op).
func SnapshotSlotsOf(t *Tensor) int {
	if t == nil || (t.Op != OpSSMScan && t.Op != OpGatedDeltaNet) {
		return 0
	}
	return int(t.Params[0])
}

// linAttnShapes checks the operands of RWKV_WKV6, GATED_LINEAR_ATTN and RWKV_WKV7: every
// per-token operand contiguous f32 [S, H, n_tokens], the state holding S·S·H·n_seqs elements
// with n_seqs = state.ne1 dividing n_tokens (each sequence has n_tokens/n_seqs tokens, in
// order). It returns the result's shape [S·H, n_tokens + S·n_seqs] or a placeholder.
func (c *Context) linAttnShapes(op string, state *Tensor, toks ...*Tensor) ([4]int64, *Tensor) {
	if t := c.requireF32(op, append([]*Tensor{state}, toks...)...); t != nil {
		return [4]int64{}, t
	}
	for _, x := range append([]*Tensor{state}, toks...) {
		if !x.IsContiguous() {
			return [4]int64{}, c.errorf("%s: %v must be contiguous", op, x)
		}
	}
	ref := toks[0]
	S, H, T := ref.Ne[0], ref.Ne[1], ref.Ne[2]
	for _, x := range toks {
		if x.Ne != [4]int64{S, H, T, 1} {
			return [4]int64{}, c.errorf("%s: %v, want [%d, %d, %d] as %v", op, x, S, H, T, ref)
		}
	}
	nSeqs := state.Ne[1]
	want, ok := checkedProduct(S, S, H, nSeqs)
	switch {
	case !ok || state.NElements() != want || state.Ne[2] != 1 || state.Ne[3] != 1:
		return [4]int64{}, c.errorf("%s: state %v, want [%d·%d·%d, n_seqs] (S·S·H per sequence)", op, state, S, S, H)
	case nSeqs < 1 || T%nSeqs != 0:
		return [4]int64{}, c.errorf("%s: %d tokens do not split into the %d sequences of the state %v", op, T, nSeqs, state)
	}
	rows, ok := CheckedAdd(T, S*nSeqs)
	if !ok {
		return [4]int64{}, c.errorf("%s: the result's size overflows", op)
	}
	return [4]int64{S * H, rows, 1, 1}, nil
}

// RWKVWKV6 is RWKV-6's time mixing (ggml_rwkv_wkv6). k, v, r and td (the per-token decay) are
// [S, H, n_tokens], tf (the bonus u) has S·H elements, state [S·S·H, n_seqs] the initial states
// (per head an S×S matrix, row i for key index i). Per sequence, per token, per head:
// out[j] = Σ_i r[i]·(tf[i]·k[i]·v[j] + state[i][j]), then state[i][j] = state[i][j]·td[i] +
// k[i]·v[j]. Result [S·H, n_tokens + S·n_seqs]: the n_tokens output rows, then the final states.
// All contiguous f32; n_seqs divides n_tokens. A nil operand (or a nil context) records an
// error on the context and returns a placeholder.
func (c *Context) RWKVWKV6(k, v, r, tf, td, state *Tensor) *Tensor {
	const op = "RWKV_WKV6"
	if err := c.check(op, k, v, r, tf, td, state); err != nil {
		return c.fail(op, err)
	}
	ne, bad := c.linAttnShapes(op, state, k, v, r, td)
	if bad != nil {
		return bad
	}
	if tf.Type != TypeF32 || !tf.IsContiguous() || tf.NElements() != k.Ne[0]*k.Ne[1] {
		return c.errorf("RWKV_WKV6: tf %v, want contiguous f32 of %d elements (S·H)", tf, k.Ne[0]*k.Ne[1])
	}
	return c.newOp(OpRWKVWKV6, TypeF32, ne, k, v, r, tf, td, state)
}

// GatedLinearAttn is gated linear attention (ggml_gated_linear_attn). k, v, q and g (the gate)
// are [S, H, n_tokens], state [S·S·H, n_seqs]. Per sequence, per token, per head:
// state[i][j] = state[i][j]·g[i] + k[i]·v[j], out[j] = Σ_i state[i][j]·q[i]·scale. Result
// [S·H, n_tokens + S·n_seqs]: outputs, then the final states. All contiguous f32; n_seqs divides
// n_tokens; scale is op_params word 0. A nil operand (or a nil context) records an error on the
// context and returns a placeholder.
func (c *Context) GatedLinearAttn(k, v, q, g, state *Tensor, scale float32) *Tensor {
	const op = "GATED_LINEAR_ATTN"
	if err := c.check(op, k, v, q, g, state); err != nil {
		return c.fail(op, err)
	}
	ne, bad := c.linAttnShapes(op, state, k, v, q, g)
	if bad != nil {
		return bad
	}
	t := c.newOp(OpGatedLinearAttn, TypeF32, ne, k, v, q, g, state)
	if t.err == nil {
		t.SetParamF32(0, scale)
	}
	return t
}

// GatedLinearAttnScaleOf returns the scale of a GATED_LINEAR_ATTN node (0 for a nil t or
// another op).
func GatedLinearAttnScaleOf(t *Tensor) float32 {
	if t == nil || t.Op != OpGatedLinearAttn {
		return 0
	}
	return t.ParamF32(0)
}

// RWKVWKV7 is RWKV-7's time mixing (ggml_rwkv_wkv7). r, w (decay), k, v, a and b are [S, H,
// n_tokens], state [S·S·H, n_seqs] (per head an S×S matrix, row i for value index i). Per
// sequence, per token, per head: sa_i = Σ_j a[j]·state[i][j], state[i][j] = state[i][j]·w[j] +
// v[i]·k[j] + sa_i·b[j], out[i] = Σ_j state[i][j]·r[j]. Result [S·H, n_tokens + S·n_seqs]:
// outputs, then the final states. All contiguous f32; n_seqs divides n_tokens. A nil operand
// (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) RWKVWKV7(r, w, k, v, a, b, state *Tensor) *Tensor {
	const op = "RWKV_WKV7"
	if err := c.check(op, r, w, k, v, a, b, state); err != nil {
		return c.fail(op, err)
	}
	ne, bad := c.linAttnShapes(op, state, k, r, w, v, a, b)
	if bad != nil {
		return bad
	}
	return c.newOp(OpRWKVWKV7, TypeF32, ne, r, w, k, v, a, b, state)
}

// SolveTri solves A·X = B for X by forward substitution (ggml_solve_tri), per matrix of the
// batch: a [n, n, ne2, ne3] lower triangular (entries above the diagonal are not read), b [k, n,
// ne2, ne3] k right-hand sides as columns; result [k, n, ne2, ne3]. Element (column c, row i) =
// (b[c, i] - Σ_{t<i} a[t, i]·x[c, t]) / a[i, i], the sum in float32 in order of t; a zero on
// the diagonal gives infinities or NaNs. ggml implements only left = true, lower = true, uni =
// false (no unit diagonal); other variants are refused. Both contiguous f32. A nil operand (or a
// nil context) records an error on the context and returns a placeholder.
func (c *Context) SolveTri(a, b *Tensor, left, lower, uni bool) *Tensor {
	const op = "SOLVE_TRI"
	if err := c.check(op, a, b); err != nil {
		return c.fail(op, err)
	}
	if t := c.requireF32(op, a, b); t != nil {
		return t
	}
	switch {
	case !left || !lower || uni:
		return c.errorf("SOLVE_TRI: left = %v, lower = %v, uni = %v: only a left, lower, non-unit solve exists (as in ggml)", left, lower, uni)
	case a.Ne[0] != a.Ne[1]:
		return c.errorf("SOLVE_TRI: %v is not square", a)
	case b.Ne[1] != a.Ne[1]:
		return c.errorf("SOLVE_TRI: %v has %d rows, the matrix %v has %d", b, b.Ne[1], a, a.Ne[1])
	case a.Ne[2] != b.Ne[2] || a.Ne[3] != b.Ne[3]:
		return c.errorf("SOLVE_TRI: batch dimensions of %v and %v differ", a, b)
	case !a.IsContiguous() || !b.IsContiguous():
		return c.errorf("SOLVE_TRI: %v and %v must be contiguous", a, b)
	}
	return c.newOp(OpSolveTri, TypeF32, b.Ne, a, b)
}

// GatedDeltaNet is the gated delta rule (ggml_gated_delta_net, Qwen3-Next and Kimi linear
// attention). v [S, H, n_tokens, n_seqs]; q and k [S, H_qk, n_tokens, n_seqs_qk] with H_qk
// dividing H (head h reads q/k head h mod H_qk) and n_seqs_qk dividing n_seqs (sequence s reads
// s/(n_seqs/n_seqs_qk)); g [1 or S, H, n_tokens, n_seqs] the log-gate (scalar per head, or per
// key element: KDA); beta [1, H, n_tokens, n_seqs]; state [S, S, H, n_seqs] the initial states
// (element (j, i) = S[i][j], i the key index). Per token: S ← S·exp(g) (per row i with a vector
// gate), d[j] = (v[j] - Σ_i S[i][j]·k[i])·beta, S[i][j] += k[i]·d[j], out[j] = Σ_i S[i][j]·q[i]/√S.
// Result [S·H, n_tokens·n_seqs + K·S·n_seqs]: the outputs, then K slots of states (slot 0 after
// the last token, slot k after token n_tokens-1-k; slots before the first token are not
// written). q, k and v need dense rows, g, beta and state contiguity; all f32. A nil operand
// (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) GatedDeltaNet(q, k, v, g, beta, state *Tensor, K int) *Tensor {
	const op = "GATED_DELTA_NET"
	if err := c.check(op, q, k, v, g, beta, state); err != nil {
		return c.fail(op, err)
	}
	if t := c.requireF32(op, q, k, v, g, beta, state); t != nil {
		return t
	}
	S, H, T, nSeqs := v.Ne[0], v.Ne[1], v.Ne[2], v.Ne[3]
	qkOK := func(x *Tensor) bool {
		return x.Ne[0] == S && x.Ne[2] == T && x.Ne[1] >= 1 && H%x.Ne[1] == 0 && x.Ne[3] >= 1 && nSeqs%x.Ne[3] == 0
	}
	switch {
	case K < 1 || K > math.MaxInt32:
		return c.errorf("GATED_DELTA_NET: K = %d snapshot slots, want 1 ≤ K < 2³¹", K)
	case !q.IsContiguousRows() || !k.IsContiguousRows() || !v.IsContiguousRows():
		return c.errorf("GATED_DELTA_NET: q %v, k %v and v %v need unit stride along dim 0", q, k, v)
	case !g.IsContiguous() || !beta.IsContiguous() || !state.IsContiguous():
		return c.errorf("GATED_DELTA_NET: g %v, beta %v and state %v must be contiguous", g, beta, state)
	case !qkOK(q) || !qkOK(k):
		return c.errorf("GATED_DELTA_NET: q %v and k %v, want [%d, a divisor of %d, %d, a divisor of %d] (v %v)", q, k, S, H, T, nSeqs, v)
	case g.Ne != [4]int64{1, H, T, nSeqs} && g.Ne != [4]int64{S, H, T, nSeqs}:
		return c.errorf("GATED_DELTA_NET: gate %v, want [1 or %d, %d, %d, %d]", g, S, H, T, nSeqs)
	case beta.Ne != [4]int64{1, H, T, nSeqs}:
		return c.errorf("GATED_DELTA_NET: beta %v, want [1, %d, %d, %d]", beta, H, T, nSeqs)
	case state.Ne != [4]int64{S, S, H, nSeqs}:
		return c.errorf("GATED_DELTA_NET: state %v, want [%d, %d, %d, %d]", state, S, S, H, nSeqs)
	}
	stateRows, ok := checkedProduct(int64(K), S, nSeqs)
	outRows, ok2 := CheckedMul(T, nSeqs)
	rows, ok3 := CheckedAdd(outRows, stateRows)
	if _, ok4 := checkedProduct(S, H, rows); !ok || !ok2 || !ok3 || !ok4 {
		return c.errorf("GATED_DELTA_NET: the result's size overflows (v %v, K = %d)", v, K)
	}
	t := c.newOp(OpGatedDeltaNet, TypeF32, [4]int64{S * H, rows, 1, 1}, q, k, v, g, beta, state)
	t.Params[0] = int32(K)
	return t
}

// StateSpaceNodeValid reports whether t, a node of one of this file's ops, is what its
// constructor would build from its sources and parameters: the sources pass the constructor's
// checks and the result has t's shape and type. Backends use it to refuse hand-assembled nodes
// whose shapes disagree (false for a nil t or another op).
func StateSpaceNodeValid(t *Tensor) bool {
	if t == nil {
		return false
	}
	c := NewContext(ContextParams{NoAlloc: true})
	s := t.Src
	var r *Tensor
	switch t.Op {
	case OpSSMConv:
		r = c.SSMConv(s[0], s[1])
	case OpSSMScan:
		r = c.SSMScan(s[0], s[1], s[2], s[3], s[4], s[5], s[6], int(t.Params[0]))
	case OpRWKVWKV6:
		r = c.RWKVWKV6(s[0], s[1], s[2], s[3], s[4], s[5])
	case OpGatedLinearAttn:
		r = c.GatedLinearAttn(s[0], s[1], s[2], s[3], s[4], t.ParamF32(0))
	case OpRWKVWKV7:
		r = c.RWKVWKV7(s[0], s[1], s[2], s[3], s[4], s[5], s[6])
	case OpSolveTri:
		r = c.SolveTri(s[0], s[1], true, true, false)
	case OpGatedDeltaNet:
		r = c.GatedDeltaNet(s[0], s[1], s[2], s[3], s[4], s[5], int(t.Params[0]))
	default:
		return false
	}
	return c.Err() == nil && r.Ne == t.Ne && r.Type == t.Type
}
