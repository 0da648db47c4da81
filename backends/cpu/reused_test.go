package cpu_test

import (
	"context"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// TestGraphComputeReused: the graph the backend computed last runs through GraphComputeReused
// without its layouts checked again, and new input data reaches its result; any other graph (a
// new one, or the old one after another ran) is planned and checked as GraphComputeContext does.
func TestGraphComputeReused(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 64)
	y := ctx.NewTensor1D(core.TypeF32, 64)
	sum := ctx.Add(x, y)
	prod := ctx.Scale(ctx.Mul(x, y), 0.5) // two nodes where the first graph has one
	buf, err := alloc.AllocCtxTensors(ctx, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	g1, g2 := core.NewGraph(8), core.NewGraph(8)
	g1.BuildForwardExpand(sum)
	g2.BuildForwardExpand(prod)
	set := func(v float32) {
		xs, ys := make([]float32, 64), make([]float32, 64)
		for i := range xs {
			xs[i], ys[i] = v+float32(i), float32(2*i)
		}
		if err := core.SetFloat32s(x, xs); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(y, ys); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, out *core.Tensor, v float32, f func(a, b float32) float32) {
		t.Helper()
		got, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if want := f(v+float32(i), float32(2*i)); g != want {
				t.Fatalf("%s: element %d = %v, want %v", what, i, g, want)
			}
		}
	}
	add := func(a, b float32) float32 { return a + b }
	mul := func(a, b float32) float32 { return a * b * 0.5 }
	bg := context.Background()
	set(1)
	for range 2 { // planned, then reused with its layouts checked
		if err := be.GraphCompute(g1); err != nil {
			t.Fatal(err)
		}
	}
	check("computed", sum, 1, add)
	checks := cpu.LayoutChecks(be)
	if checks != 1 {
		t.Fatalf("a reused plan checked %d times, want 1", checks)
	}
	for v := float32(2); v < 5; v++ {
		set(v)
		if err := be.GraphComputeReused(bg, g1); err != nil {
			t.Fatal(err)
		}
		check("reused", sum, v, add)
	}
	if n := cpu.LayoutChecks(be); n != checks {
		t.Errorf("GraphComputeReused checked the layouts %d times", n-checks)
	}
	set(7)
	if err := be.GraphComputeReused(bg, g2); err != nil { // never computed: planned
		t.Fatal(err)
	}
	check("another graph", prod, 7, mul)
	if err := be.GraphComputeReused(bg, g1); err != nil { // no longer the last: planned again
		t.Fatal(err)
	}
	check("the first graph again", sum, 7, add)
	if err := be.GraphComputeReused(bg, nil); err == nil {
		t.Error("a nil graph accepted")
	}
	set(9)
	if err := be.GraphComputeReused(nil, g1); err != nil {
		t.Fatalf("a nil ctx: %v", err)
	}
	check("a nil ctx", sum, 9, add)
}
