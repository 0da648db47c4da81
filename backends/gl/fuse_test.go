//go:build gl && cgo

package gl

import (
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
