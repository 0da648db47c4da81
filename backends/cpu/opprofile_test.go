package cpu_test

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// The op profile counts every node run while it is on, by op and weight type, and is nil off.
func TestOpProfile(t *testing.T) {
	be, _ := cpu.New(cpu.Options{Threads: 2})
	defer be.Close()
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	w := ctx.NewTensor2D(core.TypeF16, 64, 8)
	x := ctx.NewTensor2D(core.TypeF32, 64, 1)
	y := ctx.Add(ctx.MulMat(w, x), ctx.MulMat(w, x))
	if err := core.SetFloat32s(w, make([]float32, 64*8)); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(x, make([]float32, 64)); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(16)
	g.BuildForwardExpand(y)
	if be.OpProfile() != nil {
		t.Fatal("OpProfile before SetOpProfile(true) is not nil")
	}
	be.SetOpProfile(true)
	for range 3 {
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int{}
	for _, o := range be.OpProfile() {
		got[o.Op] = o.Nodes
		if o.Time <= 0 {
			t.Errorf("%s: time %v", o.Op, o.Time)
		}
	}
	if got["MUL_MAT f16 1-row"] != 6 || got["ADD"] != 3 || len(got) != 2 {
		t.Errorf("profile %v, want MUL_MAT f16 1-row ×6 and ADD ×3", got)
	}
	be.SetOpProfile(false)
	if p := be.OpProfile(); p != nil {
		t.Errorf("profile after SetOpProfile(false): %v", p)
	}
}
