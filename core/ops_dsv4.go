package core

// DeepSeek V4's hyper-connection ops (ggml_dsv4_hc_comb, ggml_dsv4_hc_pre, ggml_dsv4_hc_post):
// the residual stream is held as hc parallel streams, mixed per token by small matrices. ggml
// fixes hc = 4 for DSV4_HC_COMB (its kernel unrolls the 4×4 matrix); PRE and POST take any hc.
// Every source is f32 and read at its strides (ggml's kernels index every source by nb).

// Dsv4HC is the stream count DSV4_HC_COMB supports (ggml asserts hc == 4).
const Dsv4HC = 4

// Dsv4HcComb computes the per-token stream-mixing matrices (ggml_dsv4_hc_comb). mixes is
// [(2+hc)·hc, n_tokens], scale [≥3], base [(2+hc)·hc], hc = 4; result [hc (dst), hc (src),
// n_tokens] f32. For each token and each src column: logits[dst] = mixes[2hc + dst + hc·src]·scale[2]
// + base[2hc + dst + hc·src], a softmax over dst plus eps; then the columns (the sums over src
// for each dst) are normalized as sum + eps, and nIter−1 more rounds normalize over dst per src
// and then over src per dst (a Sinkhorn iteration), all in float32 in ggml's order. nIter must be
// at least 1. op_params: f[0] eps, i[1] n_iter. A nil operand (or a nil context) records an error
// on the context and returns a placeholder.
func (c *Context) Dsv4HcComb(mixes, scale, base *Tensor, eps float32, nIter int) *Tensor {
	const op = "DSV4_HC_COMB"
	if err := c.check(op, mixes, scale, base); err != nil {
		return c.fail(op, err)
	}
	const mixDim = (2 + Dsv4HC) * Dsv4HC
	switch {
	case mixes.Type != TypeF32 || scale.Type != TypeF32 || base.Type != TypeF32:
		return c.errorf("%s: mixes %v, scale %v and base %v must be f32", op, mixes, scale, base)
	case mixes.Ne[0] != mixDim || mixes.Ne[2] != 1 || mixes.Ne[3] != 1:
		return c.errorf("%s: mixes %v must be [%d, n_tokens] (hc = %d)", op, mixes, mixDim, Dsv4HC)
	case scale.Ne[0] < 3 || scale.Ne[1] != 1 || scale.Ne[2] != 1 || scale.Ne[3] != 1:
		return c.errorf("%s: scale %v must be a vector of at least 3", op, scale)
	case base.Ne[0] != mixDim || base.Ne[1] != 1 || base.Ne[2] != 1 || base.Ne[3] != 1:
		return c.errorf("%s: base %v must be a vector of %d", op, base, mixDim)
	case nIter < 1 || nIter > 1<<20:
		return c.errorf("%s: n_iter %d must be in [1, %d]", op, nIter, 1<<20)
	}
	t := c.newOp(OpDsv4HcComb, TypeF32, [4]int64{Dsv4HC, Dsv4HC, mixes.Ne[1], 1}, mixes, scale, base)
	if t.err == nil {
		t.SetParamF32(0, eps)
		t.SetParamI32(1, int32(nIter))
	}
	return t
}

// Dsv4HcCombParamsOf returns eps and n_iter of a DSV4_HC_COMB node (zeros for a nil t or another
// op).
func Dsv4HcCombParamsOf(t *Tensor) (eps float32, nIter int) {
	if t == nil || t.Op != OpDsv4HcComb {
		return 0, 0
	}
	return t.ParamF32(0), int(t.ParamI32(1))
}

// Dsv4HcPre collapses the streams (ggml_dsv4_hc_pre): x [n_embd, hc, n_tokens], weights [hc,
// n_tokens]; result [n_embd, n_tokens] f32 with result[i, t] = Σ_h x[i, h, t]·weights[h, t], summed
// in float32 in order of h. A nil operand (or a nil context) records an error on the context and
// returns a placeholder.
func (c *Context) Dsv4HcPre(x, weights *Tensor) *Tensor {
	const op = "DSV4_HC_PRE"
	if err := c.check(op, x, weights); err != nil {
		return c.fail(op, err)
	}
	switch {
	case x.Type != TypeF32 || weights.Type != TypeF32:
		return c.errorf("%s: x %v and weights %v must be f32", op, x, weights)
	case x.Ne[1] < 1 || x.Ne[3] != 1:
		return c.errorf("%s: x %v must be [n_embd, hc ≥ 1, n_tokens]", op, x)
	case weights.Ne != [4]int64{x.Ne[1], x.Ne[2], 1, 1}:
		return c.errorf("%s: weights %v must be [hc, n_tokens] of x %v", op, weights, x)
	}
	return c.newOp(OpDsv4HcPre, TypeF32, [4]int64{x.Ne[0], x.Ne[2], 1, 1}, x, weights)
}

// Dsv4HcPost expands a block's output back into the streams (ggml_dsv4_hc_post): x [n_embd,
// n_tokens], residual [n_embd, hc, n_tokens], post [hc, n_tokens], comb [hc (dst), hc (src),
// n_tokens]; result [n_embd, hc, n_tokens] f32 with result[i, d, t] = x[i, t]·post[d, t] +
// Σ_s residual[i, s, t]·comb[d, s, t], in float32 in order of s. A nil operand (or a nil context)
// records an error on the context and returns a placeholder.
func (c *Context) Dsv4HcPost(x, residual, post, comb *Tensor) *Tensor {
	const op = "DSV4_HC_POST"
	if err := c.check(op, x, residual, post, comb); err != nil {
		return c.fail(op, err)
	}
	n, nt, hc := x.Ne[0], x.Ne[1], residual.Ne[1]
	switch {
	case x.Type != TypeF32 || residual.Type != TypeF32 || post.Type != TypeF32 || comb.Type != TypeF32:
		return c.errorf("%s: x %v, residual %v, post %v and comb %v must be f32", op, x, residual, post, comb)
	case x.Ne[2] != 1 || x.Ne[3] != 1:
		return c.errorf("%s: x %v must be [n_embd, n_tokens]", op, x)
	case hc < 1 || residual.Ne != [4]int64{n, hc, nt, 1}:
		return c.errorf("%s: residual %v must be [n_embd, hc ≥ 1, n_tokens] of x %v", op, residual, x)
	case post.Ne != [4]int64{hc, nt, 1, 1}:
		return c.errorf("%s: post %v must be [hc, n_tokens] = [%d, %d]", op, post, hc, nt)
	case comb.Ne != [4]int64{hc, hc, nt, 1}:
		return c.errorf("%s: comb %v must be [hc, hc, n_tokens] = [%d, %d, %d]", op, comb, hc, hc, nt)
	}
	return c.newOp(OpDsv4HcPost, TypeF32, [4]int64{n, hc, nt, 1}, x, residual, post, comb)
}

// Dsv4NodeValid reports whether t, a DSV4_HC_* node, is what its constructor builds from its
// sources and parameters (same shape and type), so kernels may index its sources by the result's
// shape; hand-made nodes whose sources disagree are refused (false for a nil t or another op).
func Dsv4NodeValid(t *Tensor) bool {
	if t == nil {
		return false
	}
	c := NewContext(ContextParams{NoAlloc: true})
	s := t.Src
	var r *Tensor
	switch t.Op {
	case OpDsv4HcComb:
		eps, n := Dsv4HcCombParamsOf(t)
		r = c.Dsv4HcComb(s[0], s[1], s[2], eps, n)
	case OpDsv4HcPre:
		r = c.Dsv4HcPre(s[0], s[1])
	case OpDsv4HcPost:
		r = c.Dsv4HcPost(s[0], s[1], s[2], s[3])
	default:
		return false
	}
	return c.Err() == nil && r.Ne == t.Ne && r.Type == t.Type
}
