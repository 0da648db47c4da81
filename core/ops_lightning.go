package core

// LightningIndexer scores every cached key for every token (ggml_lightning_indexer, DeepSeek's
// sparse-attention indexer): q [n_embd, n_head, n_tokens, n_stream] f32, k [n_embd, 1, n_kv,
// n_stream] of any type with a float conversion (f32, f16, bf16, quantized), weights [n_head,
// n_tokens, 1, n_stream] f32 (prescaled), mask [n_kv, n_tokens, 1, nm] f16 with nm dividing
// n_stream (stream s reads mask s mod nm). Result [n_kv, n_tokens, 1, n_stream] f32:
// out[j, t, s] = Σ_h max(q[:, h, t, s]·k[:, 0, j, s], 0)·weights[h, t, s] + mask[j, t, s mod nm],
// the head sum in float32 in order of h. Element 0 of every row is unit-stride in every source
// (ggml's kernel asserts it; other dimensions may have any stride). A nil operand (or a nil
// context) records an error on the context and returns a placeholder.
func (c *Context) LightningIndexer(q, k, weights, mask *Tensor) *Tensor {
	const op = "LIGHTNING_INDEXER"
	if err := c.check(op, q, k, weights, mask); err != nil {
		return c.fail(op, err)
	}
	switch {
	case q.Type != TypeF32 || weights.Type != TypeF32:
		return c.errorf("%s: q %v and weights %v must be f32", op, q, weights)
	case mask.Type != TypeF16:
		return c.errorf("%s: mask %v must be f16", op, mask)
	case k.Type != TypeF32 && !k.Type.CanConvert():
		return c.errorf("%s: k %v has no float conversion", op, k)
	case k.Ne[0] != q.Ne[0] || k.Ne[1] != 1 || k.Ne[3] != q.Ne[3]:
		return c.errorf("%s: k %v must be [n_embd, 1, n_kv, n_stream] of q %v", op, k, q)
	case weights.Ne != [4]int64{q.Ne[1], q.Ne[2], 1, q.Ne[3]}:
		return c.errorf("%s: weights %v must be [n_head, n_tokens, 1, n_stream] of q %v", op, weights, q)
	case mask.Ne[0] != k.Ne[2] || mask.Ne[1] != q.Ne[2] || mask.Ne[2] != 1 || mask.Ne[3] < 1 || q.Ne[3]%mask.Ne[3] != 0:
		return c.errorf("%s: mask %v must be [n_kv, n_tokens, 1, nm] with nm dividing n_stream (q %v, k %v)", op, mask, q, k)
	}
	for _, s := range [...]*Tensor{q, k, weights, mask} {
		if s.Ne[0] > 1 && s.Nb[0] != s.Type.Size() {
			return c.errorf("%s: %v: rows must be unit-stride", op, s)
		}
	}
	return c.newOp(OpLightningIndexer, TypeF32, [4]int64{k.Ne[2], q.Ne[2], 1, q.Ne[3]}, q, k, weights, mask)
}

// LightningIndexerNodeValid reports whether t, a LIGHTNING_INDEXER node, is what
// LightningIndexer builds from its sources (same shape and type), so kernels may index the
// sources by the result's shape; hand-made nodes whose sources disagree are refused (false for a
// nil t, a missing source or another op).
func LightningIndexerNodeValid(t *Tensor) bool {
	if t == nil || t.Op != OpLightningIndexer {
		return false
	}
	s := t.Src
	if s[0] == nil || s[1] == nil || s[2] == nil || s[3] == nil {
		return false
	}
	c := NewContext(ContextParams{NoAlloc: true})
	r := c.LightningIndexer(s[0], s[1], s[2], s[3])
	return c.Err() == nil && r.Ne == t.Ne && r.Type == t.Type
}
