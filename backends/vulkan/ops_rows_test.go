//go:build cgo && !novulkan

package vulkan

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestRowsBadIndices: out-of-range indices (which the CPU reports as an error) give
// NaN rows in GET_ROWS and skipped rows in SET_ROWS, never an access outside the
// tensors; valid rows are unaffected.
func TestRowsBadIndices(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 4, 3)
	idx := ctx.NewTensor1D(core.TypeI32, 5)
	got := ctx.GetRows(a, idx)
	dst := ctx.NewTensor2D(core.TypeF32, 4, 3)
	src := ctx.NewTensor2D(core.TypeF32, 4, 3)
	idx64 := ctx.NewTensor1D(core.TypeI64, 3)
	set := ctx.SetRows(dst, src, idx64)
	allocCtx(t, ctx, be.DefaultBufferType())
	vals := make([]float32, 12)
	for i := range vals {
		vals[i] = float32(i)
	}
	for _, x := range []*core.Tensor{a, src} {
		if err := core.SetFloat32s(x, vals); err != nil {
			t.Fatal(err)
		}
	}
	if err := core.SetFloat32s(dst, make([]float32, 12)); err != nil {
		t.Fatal(err)
	}
	if err := core.SetInt32s(idx, []int32{2, -1, 3, 1 << 30, 0}); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 24)
	for i, v := range []int64{1, -1, 1 << 32} {
		for k := range 8 {
			raw[8*i+k] = byte(uint64(v) >> (8 * k))
		}
	}
	if err := core.TensorSet(idx64, raw, 0); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(got)
	g.BuildForwardExpand(set)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	out, err := core.GetFloat32s(got)
	if err != nil {
		t.Fatal(err)
	}
	for r, want := range []int{2, -1, -1, -1, 0} {
		for i := range 4 {
			v := out[4*r+i]
			if want < 0 && !math.IsNaN(float64(v)) || want >= 0 && v != vals[4*want+i] {
				t.Fatalf("GET_ROWS row %d = %v", r, out[4*r:4*r+4])
			}
		}
	}
	d, err := core.GetFloat32s(dst)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range d {
		want := float32(0)
		if i/4 == 1 { // source row 0 into row 1; rows with indices -1 and 2^32 skipped
			want = vals[i%4]
		}
		if v != want {
			t.Fatalf("SET_ROWS dst = %v", d)
		}
	}
}
