//go:build cgo && !novulkan

package vulkan

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestOpProfile times a graph of a mat-vec and a chain of 250 ADDs (five command buffers, more
// nodes than one buffer's timestamp queries would hold without the per-buffer restart) and checks
// the profile's kinds, counts and that the device's times are positive.
func TestOpProfile(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := ctx.NewTensor2D(core.TypeF32, 64, 32)
	x := ctx.NewTensor1D(core.TypeF32, 64)
	one := ctx.NewTensor1D(core.TypeF32, 32)
	y := ctx.MulMat(w, x)
	const adds = 250
	for range adds {
		y = ctx.Add(y, one)
	}
	allocCtx(t, ctx, be.DefaultBufferType())
	r := rand.New(rand.NewPCG(5, 6))
	randomize(t, r, w, -1e-3, 1e-3)
	randomize(t, r, x, -1e-3, 1e-3)
	randomize(t, r, one, 1, 1)
	g := core.NewGraph(512)
	g.BuildForwardExpand(y)

	if err := be.GraphCompute(g); err != nil { // profile off: nothing recorded
		t.Fatal(err)
	}
	if p := be.OpProfile(); p != nil {
		t.Fatalf("OpProfile with the profile off: %v", p)
	}
	be.SetOpProfile(true)
	for range 2 {
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
	}
	prof := be.OpProfile()
	got := map[string]core.OpTime{}
	for _, o := range prof {
		got[o.Op] = o
	}
	if len(prof) != 2 || got["MUL_MAT f32 1-row"].Nodes != 2 || got["ADD"].Nodes != 2*adds {
		t.Fatalf("profile %+v, want MUL_MAT f32 1-row x2 and ADD x%d", prof, 2*adds)
	}
	for _, o := range prof {
		if o.Time <= 0 {
			t.Errorf("%s: device time %v", o.Op, o.Time)
		}
	}
	if prof[0].Time < prof[1].Time {
		t.Errorf("profile not sorted by time: %+v", prof)
	}
	be.SetOpProfile(false)
	if p := be.OpProfile(); p != nil {
		t.Fatalf("OpProfile after SetOpProfile(false): %v", p)
	}
	// The values are still right with timestamps between the nodes.
	be.SetOpProfile(true)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	be.SetOpProfile(false)
	wv, _ := core.GetFloat32s(w)
	xv, _ := core.GetFloat32s(x)
	out, err := core.GetFloat32s(y)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 32 {
		var s float64
		for k := range 64 {
			s += float64(wv[i*64+k]) * float64(xv[k])
		}
		if want := s + adds; math.Abs(float64(out[i])-want) > 1e-4 {
			t.Fatalf("row %d: %v after the profiled run, want %v", i, out[i], want)
		}
	}
}
