package core_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Seed 004: f(x) = a·x² + b at x = 2, a = 3, b = 4 → f = 16, ∂f/∂x = 2ax = 12, ∂f/∂a = x² = 4,
// ∂f/∂b = 1.
func TestSeed004Backward(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 16 * 1024 * 1024})
	x := ctx.NewTensor1D(core.TypeF32, 1)
	a := ctx.NewTensor1D(core.TypeF32, 1)
	b := ctx.NewTensor1D(core.TypeF32, 1)
	for _, p := range []*core.Tensor{x, a, b} {
		if err := ctx.SetParam(p); err != nil {
			t.Fatal(err)
		}
	}
	x2 := ctx.Mul(x, x)
	f := ctx.Add(ctx.Mul(a, x2), b)
	if err := ctx.SetLoss(f); err != nil {
		t.Fatal(err)
	}
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(f)
	nf := gf.NNodes()
	gb, err := core.BuildBackward(ctx, gf)
	if err != nil {
		t.Fatal(err)
	}
	if gf.NNodes() != nf || gf.Grad(x) != nil {
		t.Fatal("BuildBackward changed the forward graph")
	}
	if gb.NNodes() <= nf {
		t.Fatalf("backward graph has %d nodes, forward %d", gb.NNodes(), nf)
	}
	for i := 0; i < nf; i++ {
		if gb.Node(i) != gf.Node(i) {
			t.Fatalf("node %d of the backward graph is not the forward node", i)
		}
	}
	x.Float32s()[0], a.Float32s()[0], b.Float32s()[0] = 2, 3, 4
	if err := cpu.Compute(gb, 2); err != nil {
		t.Fatal(err)
	}
	if got := f.Float32s()[0]; got != 16 {
		t.Errorf("f = %g, want 16", got)
	}
	for _, c := range []struct {
		name string
		p    *core.Tensor
		want float32
	}{{"x", x, 12}, {"a", a, 4}, {"b", b, 1}} {
		g := gb.Grad(c.p)
		if g == nil {
			t.Fatalf("no gradient for %s", c.name)
		}
		if got := g.Float32s()[0]; got != c.want {
			t.Errorf("∂f/∂%s = %g, want %g", c.name, got, c.want)
		}
	}
	if g := gb.Grad(f); g == nil || g.Float32s()[0] != 1 {
		t.Errorf("loss seed = %v, want 1", g)
	}
	// x² is a node on the path: ∂f/∂(x²) = a = 3.
	if g := gb.Grad(x2); g == nil || g.Float32s()[0] != 3 {
		t.Errorf("∂f/∂(x²) = %v, want 3", g)
	}
}

func TestBackwardErrors(t *testing.T) {
	// An op without a derivative on the path to the loss.
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := ctx.NewTensor2D(core.TypeF32, 4, 3)
	ctx.SetParam(w)
	loss := ctx.Sum(ctx.Cast(ctx.Argmax(w), core.TypeF32))
	ctx.SetLoss(loss)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	if _, err := core.BuildBackward(ctx, gf); err == nil || !strings.Contains(err.Error(), "ARGMAX") {
		t.Errorf("argmax on the path: err = %v", err)
	}

	ctx = core.NewContext(core.ContextParams{NoAlloc: true})
	w = ctx.NewTensor1D(core.TypeF32, 4)
	ctx.SetParam(w)
	s := ctx.Sum(ctx.Cast(ctx.Argsort(w, core.SortAsc), core.TypeF32))
	ctx.SetLoss(s)
	gf = core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(s)
	if _, err := core.BuildBackward(ctx, gf); err == nil || !strings.Contains(err.Error(), "ARGSORT") {
		t.Errorf("argsort on the path: err = %v", err)
	}

	// No loss.
	ctx = core.NewContext(core.ContextParams{NoAlloc: true})
	w = ctx.NewTensor1D(core.TypeF32, 4)
	ctx.SetParam(w)
	gf = core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(ctx.Sum(w))
	if _, err := core.BuildBackward(ctx, gf); err == nil || !strings.Contains(err.Error(), "loss") {
		t.Errorf("no loss: err = %v", err)
	}

	// A non-scalar loss is refused by SetLoss and then by BuildBackward (context error).
	ctx = core.NewContext(core.ContextParams{NoAlloc: true})
	w = ctx.NewTensor1D(core.TypeF32, 4)
	ctx.SetParam(w)
	sq := ctx.Sqr(w)
	if err := ctx.SetLoss(sq); err == nil {
		t.Error("SetLoss accepted a vector")
	}
	gf = core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(sq)
	if _, err := core.BuildBackward(ctx, gf); err == nil || !strings.Contains(err.Error(), "scalar") {
		t.Errorf("vector loss: err = %v", err)
	}

	// SetParam on an integer tensor.
	ctx = core.NewContext(core.ContextParams{NoAlloc: true})
	if err := ctx.SetParam(ctx.NewTensor1D(core.TypeI32, 4)); err == nil || !strings.Contains(err.Error(), "SetParam") {
		t.Errorf("SetParam(i32): err = %v", err)
	}

	// Gradient not needed through ignored sources: indices from argmax into GET_ROWS are fine.
	ctx = core.NewContext(core.ContextParams{NoAlloc: true})
	emb := ctx.NewTensor2D(core.TypeF32, 4, 5)
	ctx.SetParam(emb)
	sel := ctx.GetRows(emb, ctx.Argmax(ctx.NewTensor2D(core.TypeF32, 5, 3)))
	l := ctx.Sum(sel)
	ctx.SetLoss(l)
	gf = core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(l)
	gb, err := core.BuildBackward(ctx, gf)
	if err != nil {
		t.Fatal(err)
	}
	if g := gb.Grad(emb); g == nil || g.Op != core.OpGetRowsBack {
		t.Errorf("embedding gradient = %v, want a GET_ROWS_BACK node", g)
	}
}
