//go:build gl && cgo

package gl

import (
	"bytes"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestFusedRMSNormMul: MUL(RMS_NORM(x), w) runs as one dispatch on GL (the encoder's fusion,
// norm.comp's MUL variant compiled by the driver) and writes both results, by hand: the row
// (3, 4) has mean square 12.5, so RMS_NORM gives (3, 4)/√(12.5 + eps), times w = (2, -1).
func TestFusedRMSNormMul(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, 2, 2)
	w := ctx.NewTensor1D(core.TypeF32, 2)
	norm := ctx.RMSNorm(x, 1e-6)
	mul := ctx.Mul(norm, w)
	allocCtx(t, ctx, be.DefaultBufferType())
	if err := core.SetFloat32s(x, []float32{3, 4, -6, 8}); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(w, []float32{2, -1}); err != nil {
		t.Fatal(err)
	}
	before := be.Dispatches()
	compute(t, be, mul)
	if n := be.Dispatches() - before; n != 1 {
		t.Errorf("%d dispatches for RMS_NORM + MUL, want 1 (fused)", n)
	}
	r0, r1 := math.Sqrt(12.5+1e-6), math.Sqrt(50+1e-6)
	wantNorm := []float64{3 / r0, 4 / r0, -6 / r1, 8 / r1}
	wantMul := []float64{2 * 3 / r0, -4 / r0, 2 * -6 / r1, -8 / r1}
	for _, c := range []struct {
		name string
		t    *core.Tensor
		want []float64
	}{{"RMS_NORM", norm, wantNorm}, {"MUL", mul, wantMul}} {
		got, err := core.GetFloat32s(c.t)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range c.want {
			if math.Abs(float64(got[i])-v) > 1e-6 {
				t.Fatalf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	}
}

// TestFusedRopeSetRows: one token's rotated keys stored as a row of an f16 KV cache run as one
// dispatch on GL (rope.comp's SET_ROWS variant) and give ROPE's result and the cache bit for bit
// as the two dispatches do.
func TestFusedRopeSetRows(t *testing.T) {
	be := newBackend(t)
	defer be.SetFusion(true)
	var results [2][2][]byte
	var dispatches [2]int
	for run, fuse := range []bool{false, true} {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		k := ctx.NewTensor(core.TypeF32, 64, 4, 1)
		pos := ctx.NewTensor1D(core.TypeI32, 1)
		rope := ctx.RopeExt(k, pos, nil, core.RopeParams{NDims: 64, Mode: core.RopeNeox, NCtxOrig: 4096,
			FreqBase: 10000, FreqScale: 1, AttnFactor: 1, BetaFast: 32, BetaSlow: 1})
		cache := ctx.NewTensor2D(core.TypeF16, 256, 8)
		idx := ctx.NewTensor1D(core.TypeI32, 1)
		set := ctx.SetRows(cache, ctx.Reshape2D(rope, 256, 1), idx)
		allocCtx(t, ctx, be.DefaultBufferType())
		kv := make([]float32, 256)
		for i := range kv {
			kv[i] = float32(math.Sin(float64(i)))
		}
		if err := core.SetFloat32s(k, kv); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(cache, make([]float32, 256*8)); err != nil {
			t.Fatal(err)
		}
		if err := core.SetInt32s(pos, []int32{1234}); err != nil {
			t.Fatal(err)
		}
		if err := core.SetInt32s(idx, []int32{5}); err != nil {
			t.Fatal(err)
		}
		be.SetFusion(fuse)
		before := be.Dispatches()
		compute(t, be, set)
		dispatches[run] = be.Dispatches() - before
		for i, tt := range []*core.Tensor{rope, cache} {
			results[run][i] = make([]byte, tt.NBytes())
			if err := core.TensorGet(tt, results[run][i], 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	if dispatches[0] != 2 || dispatches[1] != 1 {
		t.Errorf("ROPE + SET_ROWS: %d dispatches unfused, %d fused; want 2 and 1", dispatches[0], dispatches[1])
	}
	for i, name := range []string{"ROPE", "the cache"} {
		if !bytes.Equal(results[0][i], results[1][i]) {
			t.Errorf("%s: fused result differs from the unfused one", name)
		}
	}
	if bytes.Equal(results[1][1][5*512:6*512], make([]byte, 512)) {
		t.Error("cache row 5 was not written")
	}
}
