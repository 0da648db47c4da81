package cpu_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestLightningIndexerValues: out[j, t] = Σ_h relu(q_h·k_j)·w_h + mask[j, t], by hand.
func TestLightningIndexerValues(t *testing.T) {
	ctx := newTrainCtx()
	q := f32T(ctx, []float32{1, 2, -1, 0.5}, 2, 2, 1, 1) // heads (1, 2) and (-1, 0.5)
	k := f32T(ctx, []float32{3, 1, -2, 4}, 2, 1, 2, 1)   // keys (3, 1) and (-2, 4)
	w := f32T(ctx, []float32{0.5, 2}, 2, 1, 1, 1)
	m := ctx.NewTensor(core.TypeF16, 2, 1, 1, 1)
	if err := core.SetFloat32s(m, []float32{0.25, float32(math.Inf(-1))}); err != nil {
		t.Fatal(err)
	}
	r := ctx.LightningIndexer(q, k, w, m)
	computeNode(t, r, 2)
	// key 0: q0·k = 5, q1·k = -2.5 → 5·0.5 + 0 + 0.25; key 1: q0·k = 6, q1·k = 4 → 3 + 8 − inf.
	got := r.Float32s()
	expectClose(t, "lightning_indexer[0]", got[:1], []float64{2.75}, 0)
	if !math.IsInf(float64(got[1]), -1) {
		t.Errorf("masked key: %v, want -inf", got[1])
	}
	bad := core.NewContext(core.ContextParams{NoAlloc: true})
	bad.LightningIndexer(bad.NewTensor(core.TypeF32, 2, 2, 1, 1), bad.NewTensor(core.TypeF32, 2, 1, 2, 1),
		bad.NewTensor(core.TypeF32, 2, 1, 1, 1), bad.NewTensor(core.TypeF32, 2, 1, 1, 1))
	if bad.Err() == nil {
		t.Error("an f32 mask gave no error")
	}
}
