package cpu_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// A node used twice gets the sum of both contributions; constant branches get none.
func TestBackwardSumsReusedAndPrunes(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	x := ctx.NewTensor1D(core.TypeF32, 3)
	c := ctx.NewTensor1D(core.TypeF32, 3)
	ctx.SetParam(x)
	cc := ctx.Sqr(c) // constant branch
	y := ctx.Add(ctx.Mul(x, x), ctx.Sin(x))
	loss := ctx.Sum(ctx.Mul(y, cc))
	ctx.SetLoss(loss)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	gb, err := core.BuildBackward(ctx, gf)
	if err != nil {
		t.Fatal(err)
	}
	if gb.Grad(c) != nil || gb.Grad(cc) != nil {
		t.Error("constant branch got gradients")
	}
	copy(x.Float32s(), []float32{0.5, -1, 2})
	copy(c.Float32s(), []float32{1, 2, -3})
	if err := cpu.Compute(gb, 1); err != nil {
		t.Fatal(err)
	}
	// dL/dx = c²·(2x + cos x)
	want := []float64{1 * (1 + 0.8775825618903728), 4 * (-2 + 0.5403023058681398), 9 * (4 - 0.4161468365471424)}
	got := gb.Grad(x).Float32s()
	for i := range want {
		if d := float64(got[i]) - want[i]; d > 1e-5 || d < -1e-5 {
			t.Errorf("dL/dx[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

// With Accumulate, running the graph twice doubles the gradient, and zeroing the accumulator
// restarts the sum.
func TestBackwardAccumulate(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	w := ctx.NewTensor1D(core.TypeF32, 2)
	ctx.SetParam(w)
	loss := ctx.Sum(ctx.Sqr(w))
	ctx.SetLoss(loss)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	gb, err := core.BuildBackward(ctx, gf, core.BackwardOptions{Accumulate: true})
	if err != nil {
		t.Fatal(err)
	}
	acc := gb.GradAcc(w)
	if acc == nil || len(gb.GradAccs()) != 1 || gb.GradAccs()[0] != acc {
		t.Fatal("no accumulator")
	}
	copy(w.Float32s(), []float32{1.5, -2})
	for run, want := range [][]float32{{3, -4}, {6, -8}, {9, -12}} {
		if err := cpu.Compute(gb, 1); err != nil {
			t.Fatal(err)
		}
		for i, v := range acc.Float32s() {
			if v != want[i] {
				t.Fatalf("run %d: acc[%d] = %g, want %g", run, i, v, want[i])
			}
		}
		if g := gb.Grad(w).Float32s(); g[0] != want[0] || g[1] != want[1] {
			t.Fatalf("run %d: Grad(w) = %v, want %v", run, g, want)
		}
	}
	if err := gb.ResetGradAccs(); err != nil {
		t.Fatal(err)
	}
	if v := acc.Float32s(); v[0] != 0 || v[1] != 0 {
		t.Fatalf("after ResetGradAccs acc = %v", v)
	}
	if err := cpu.Compute(gb, 1); err != nil {
		t.Fatal(err)
	}
	if v := acc.Float32s(); v[0] != 3 || v[1] != -4 {
		t.Fatalf("after reset acc = %v, want [3 -4]", v)
	}
}

// A tensor flagged as a parameter after the forward graph was built (a leaf of gf) still gets its
// gradient, with and without accumulators.
func TestBackwardParamFlaggedLate(t *testing.T) {
	for _, accumulate := range []bool{false, true} {
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		w := ctx.NewTensor1D(core.TypeF32, 3)
		loss := ctx.Sum(ctx.Sqr(w))
		gf := core.NewGraph(core.DefaultGraphSize)
		gf.BuildForwardExpand(loss)
		if err := ctx.SetParam(w); err != nil {
			t.Fatal(err)
		}
		if err := ctx.SetLoss(loss); err != nil {
			t.Fatal(err)
		}
		gb, err := core.BuildBackward(ctx, gf, core.BackwardOptions{Accumulate: accumulate})
		if err != nil {
			t.Fatal(err)
		}
		copy(w.Float32s(), []float32{1, -2, 0.5})
		if err := cpu.Compute(gb, 1); err != nil {
			t.Fatal(err)
		}
		g := gb.Grad(w)
		if g == nil {
			t.Fatal("no gradient")
		}
		if v := g.Float32s(); v[0] != 2 || v[1] != -4 || v[2] != 1 {
			t.Errorf("accumulate=%v: gradient %v, want [2 -4 1]", accumulate, v)
		}
	}
}

// A mask that depends on a parameter has no gradient rule: a clear error naming SOFT_MAX.
func TestBackwardSoftMaxMaskError(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, 4, 2)
	mask := ctx.NewTensor2D(core.TypeF32, 4, 2)
	ctx.SetParam(x)
	ctx.SetParam(mask)
	loss := ctx.Sum(ctx.SoftMaxExt(x, mask, 1, 0))
	ctx.SetLoss(loss)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	if _, err := core.BuildBackward(ctx, gf); err == nil || !strings.Contains(err.Error(), "SOFT_MAX") {
		t.Errorf("err = %v, want one naming SOFT_MAX", err)
	}
}

// Several losses add up: L = Σw² + Σ3w (the second built on top of the first's inputs) gives 2w + 3.
func TestBackwardSeveralLosses(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	w := ctx.NewTensor1D(core.TypeF32, 3)
	ctx.SetParam(w)
	l1 := ctx.Sum(ctx.Sqr(w))
	l2 := ctx.Sum(ctx.Scale(w, 3))
	ctx.SetLoss(l1)
	ctx.SetLoss(l2)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(l1)
	gf.BuildForwardExpand(l2)
	gb, err := core.BuildBackward(ctx, gf)
	if err != nil {
		t.Fatal(err)
	}
	copy(w.Float32s(), []float32{1, -2, 0.25})
	if err := cpu.Compute(gb, 2); err != nil {
		t.Fatal(err)
	}
	if g := gb.Grad(w).Float32s(); g[0] != 5 || g[1] != -1 || g[2] != 3.5 {
		t.Errorf("gradient %v, want [5 -1 3.5]", g)
	}
}
