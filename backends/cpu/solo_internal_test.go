package cpu

import (
	"errors"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// rowsChain builds n GET_ROWS nodes: the first takes row 2 of x ([8, 4], row r holding r*10+i),
// each next one row 0 of the one before; every node has one row, so one task.
func rowsChain(t *testing.T, n int) (*core.Graph, []*core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	x := ctx.NewTensor2D(core.TypeF32, 8, 4)
	xs := make([]float32, 32)
	for i := range xs {
		xs[i] = float32(i/8*10 + i%8)
	}
	two, zero := ctx.NewTensor1D(core.TypeI32, 1), ctx.NewTensor1D(core.TypeI32, 1)
	if err := errors.Join(core.SetFloat32s(x, xs), core.SetInt32s(two, []int32{2}), core.SetInt32s(zero, []int32{0})); err != nil {
		t.Fatal(err)
	}
	ys := make([]*core.Tensor, n)
	y := ctx.GetRows(x, two)
	for i := range n {
		if i > 0 {
			y = ctx.GetRows(y, zero)
		}
		ys[i] = y
	}
	return graphTo(t, ctx, y), ys
}

// TestSingleTaskGraphRunsOnCaller: a graph whose every node has one task (one-row GET_ROWS) runs on
// the calling goroutine without publishing a run to the pool, with the right values; a panic in
// it is the node's error and the backend runs again afterwards. A graph with more rows than
// workers still runs on the whole pool.
func TestSingleTaskGraphRunsOnCaller(t *testing.T) {
	be, err := New(Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	g, ys := rowsChain(t, 5)
	seen := map[[2]int]bool{}
	withHook(t, func(p *params, n *core.Tensor) { seen[[2]int{p.ith, p.nth}] = true })
	seq := be.pool.seq.Load()
	for range 2 {
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
	}
	if got := be.pool.seq.Load(); got != seq {
		t.Errorf("one-task graph published %d pool runs, want 0", got-seq)
	}
	if len(seen) != 1 || !seen[[2]int{0, 1}] {
		t.Errorf("kernels ran as (ith, nth) %v, want only (0, 1)", seen)
	}
	if got := ys[4].Float32s()[7]; got != 27 {
		t.Errorf("last node %v, want 27", got)
	}
	if err := core.SetFloat32s(ys[3], make([]float32, 8)); err != nil {
		t.Fatal(err)
	}

	withHook(t, func(p *params, n *core.Tensor) {
		if p.node == 2 {
			panic("boom")
		}
	})
	err = be.GraphCompute(g)
	var kp *KernelPanicError
	if !errors.As(err, &kp) {
		t.Fatalf("panic in a one-task graph: error %v", err)
	}
	if got := ys[3].Float32s()[0]; got != 0 {
		t.Errorf("node 3 ran after node 2 panicked: %v", got)
	}
	kernelHook = nil
	if err := be.GraphCompute(g); err != nil {
		t.Fatalf("after the panic: %v", err)
	}
	if got := ys[4].Float32s()[3]; got != 23 {
		t.Errorf("after the panic: last node %v, want 23", got)
	}

	g12, ys12 := addChain(t, 3, 256, 12) // 12 KiB rows: over smallNodeBytes, split
	seq = be.pool.seq.Load()
	if err := be.GraphCompute(g12); err != nil {
		t.Fatal(err)
	}
	if be.pool.seq.Load() == seq {
		t.Error("a 12-row graph on 3 workers did not run on the pool")
	}
	if got := ys12[2].Float32s()[95]; got != 3 {
		t.Errorf("12-row graph: last node %v, want 3", got)
	}
}
