package cpu

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/core"
)

// TestSmallNodesRunAsOneTask: light ops over at most smallNodeBytes plan one task, larger ones
// and the products every worker, whatever their size; a GET_ROWS counts the rows it gathers and
// a SET_ROWS the rows it stores, not the table.
func TestSmallNodesRunAsOneTask(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
	small := ctx.NewTensor2D(core.TypeF32, 256, 8)   // 8 KiB
	large := ctx.NewTensor2D(core.TypeF32, 256, 9)   // 9 KiB
	table := ctx.NewTensor2D(core.TypeF32, 2048, 64) // 512 KiB
	w := ctx.NewTensor2D(core.TypeF32, 256, 4)
	ids := ctx.NewTensor1D(core.TypeI32, 1)
	cache := ctx.NewTensor2D(core.TypeF16, 2048, 64)
	row := ctx.NewTensor2D(core.TypeF32, 2048, 1)
	router := ctx.NewTensor2D(core.TypeF32, 2048, 8) // 64 KiB
	wide := ctx.NewTensor2D(core.TypeF32, 2048, 9)   // 72 KiB
	cases := []struct {
		name  string
		node  *core.Tensor
		tasks int
	}{
		{"ADD of 8 KiB", ctx.Add(small, small), 1},
		{"ADD of 9 KiB", ctx.Add(large, large), 3},
		{"SUM_ROWS of 9 KiB", ctx.SumRows(large), 3},
		{"SOFT_MAX of 8 KiB", ctx.SoftMax(small), 1},
		{"GET_ROWS of one row from 512 KiB", ctx.GetRows(table, ids), 1},
		{"SET_ROWS of one row into 256 KiB", ctx.SetRows(cache, row, ids), 1},
		{"MUL_MAT of 4 rows", ctx.MulMat(w, small), 3},
		{"MUL_MAT of one row, 64 KiB of weights", ctx.MulMat(router, row), 1},
		{"MUL_MAT of one row, 72 KiB of weights", ctx.MulMat(wide, row), 3},
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		g := core.NewGraph(16)
		g.BuildForwardExpand(c.node)
		pl, err := makePlan(g, 3, false, false, activeMMKernels())
		if err != nil {
			t.Fatal(err)
		}
		exec := pl.execNodes(g.Nodes())
		last := len(exec) - 1
		if pl.tasks[last] != c.tasks {
			t.Errorf("%s: %d tasks, want %d", c.name, pl.tasks[last], c.tasks)
		}
		if ref, _ := makePlan(g, 3, true, false, activeMMKernels()); c.tasks == 1 && ref.tasks[last] == 1 && c.node.Op != core.OpGetRows && c.node.Op != core.OpSetRows {
			t.Errorf("%s: the reference plan runs it as one task too", c.name)
		}
		if c.node.Op != core.OpMulMat {
			continue
		}
		// one task or three, the same products bit for bit
		var want []float32
		for _, threads := range []int{1, 3} {
			for _, x := range []*core.Tensor{c.node.Src[0], c.node.Src[1]} {
				v := make([]float32, x.NElements())
				for i := range v {
					v[i] = float32(i%13) - 6.5
				}
				if err := core.SetFloat32s(x, v); err != nil {
					t.Fatal(err)
				}
			}
			if err := Compute(g, threads); err != nil {
				t.Fatal(err)
			}
			got := append([]float32(nil), c.node.Float32s()...)
			if want == nil {
				want = got
				continue
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s: output %d is %v on three workers, %v on one", c.name, i, got[i], want[i])
				}
			}
		}
	}
}

// TestPlanWaits: a barrier follows every computing node but one computed by worker 0 alone and
// followed by another such node; views, leafs and the first node of a fused pair have none.
func TestPlanWaits(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
	s := ctx.NewTensor2D(core.TypeF32, 64, 4) // 1 KiB: one task
	l := ctx.NewTensor2D(core.TypeF32, 64, 64)
	a := ctx.Add(s, s)                    // one task, before a one-task node: no barrier
	b := ctx.Mul(a, s)                    // one task, before a shared one: barrier
	c := ctx.Add(l, ctx.Repeat(b, l))     // REPEAT shared (16 KiB), ADD shared
	v := ctx.View2D(c, 64, 4, c.Nb[1], 0) // a view: nothing
	d := ctx.Scale(ctx.Cont(v), 2)        // one task, one task
	e := ctx.Mul(ctx.RMSNorm(d, 1e-5), s) // RMS_NORM + MUL fused, one task
	f := ctx.Add(ctx.Repeat(e, l), l)     // shared, shared: the last keeps its barrier
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(64)
	g.BuildForwardExpand(f)
	pl, err := makePlan(g, 2, false, false, activeMMKernels())
	if err != nil {
		t.Fatal(err)
	}
	exec := pl.execNodes(g.Nodes())
	var got []string
	for i, n := range exec {
		if skipNode(n) || pl.fused != nil && pl.fused[i] == fuseInNext {
			if pl.waits[i] {
				t.Errorf("node %d %v computes nothing itself but has a barrier", i, n.Op)
			}
			continue
		}
		mark := "-"
		if pl.waits[i] {
			mark = "|"
		}
		got = append(got, n.Op.String()+mark)
	}
	want := "ADD- MUL| REPEAT| ADD| CONT- SCALE- MUL| REPEAT| ADD|"
	if strings.Join(got, " ") != want {
		t.Errorf("barriers %q, want %q", strings.Join(got, " "), want)
	}
}

// smallBigChain builds x → small ADD, small ADD, a shared ADD, small ADD, small ADD, shared ADD:
// two runs of one-task nodes without barriers between them, each ending before a shared node.
func smallBigChain(t *testing.T) (*core.Graph, []*core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 4 << 20})
	s := ctx.NewTensor2D(core.TypeF32, 64, 4)
	l := ctx.NewTensor2D(core.TypeF32, 64, 64)
	one := make([]float32, 64*64)
	for i := range one {
		one[i] = 1
	}
	if err := core.SetFloat32s(l, one); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(s, one[:256]); err != nil {
		t.Fatal(err)
	}
	y0 := ctx.Add(s, s)                                            // 2
	y1 := ctx.Add(y0, s)                                           // 3
	y2 := ctx.Add(l, ctx.Repeat(y1, l))                            // 4 (REPEAT and ADD shared)
	y3 := ctx.Add(ctx.Cont(ctx.View2D(y2, 64, 4, y2.Nb[1], 0)), s) // 5 (CONT small)
	y4 := ctx.Add(y3, s)                                           // 6
	y5 := ctx.Add(l, ctx.Repeat(y4, l))                            // 7
	ys := []*core.Tensor{y0, y1, y2, y3, y4, y5}
	return graphTo(t, ctx, y5), ys
}

// TestElidedBarriersStop: a failure, a panic or an abort after a one-task node whose barrier is
// elided stops the run there on every worker (none waits forever at the next barrier), later
// nodes do not run, and the backend computes the graph again afterwards.
func TestElidedBarriersStop(t *testing.T) {
	g, ys := smallBigChain(t)
	var abortAfter atomic.Int32
	be, err := New(Options{Threads: 3, Abort: func() bool { return abortAfter.Add(-1) == 0 }})
	if err != nil {
		t.Fatal(err)
	}
	hung := false // a run that never returns leaves workers Close would wait for
	defer func() {
		if !hung {
			be.Close()
		}
	}()
	check := func(name string, want []float32) {
		t.Helper()
		for i, w := range want {
			if got := ys[i].Float32s()[0]; got != w {
				t.Errorf("%s: node y%d = %v, want %v", name, i, got, w)
			}
		}
	}
	clear := func() {
		for _, y := range ys {
			for i := range y.Float32s() {
				y.Float32s()[i] = 0
			}
		}
	}
	abortAfter.Store(-100)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	check("plain run", []float32{2, 3, 4, 5, 6, 7})
	pl, err := makePlan(g, 3, false, false, activeMMKernels())
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range pl.execNodes(g.Nodes()) {
		if (n == ys[0] || n == ys[3]) && (pl.tasks[i] != 1 || pl.waits[i]) {
			t.Fatalf("y0 and y3 should be one-task nodes without a barrier: tasks %d, barrier %v", pl.tasks[i], pl.waits[i])
		}
	}

	for _, c := range []struct {
		name string
		hook func(p *params, n *core.Tensor)
		want string
	}{
		{"fail", func(p *params, n *core.Tensor) {
			if n == ys[0] {
				p.fail(errors.New("the test's failure"))
			}
		}, "the test's failure"},
		{"panic", func(p *params, n *core.Tensor) {
			if n == ys[3] {
				panic("the test's panic")
			}
		}, "the test's panic"},
	} {
		clear()
		kernelHook = c.hook
		done := make(chan error, 1)
		go func() { done <- be.GraphCompute(g) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
			}
		case <-time.After(10 * time.Second):
			hung = true
			t.Fatalf("%s: the run did not return (a worker waits at a barrier)", c.name)
		}
		kernelHook = nil
		if got := ys[5].Float32s()[0]; got != 0 {
			t.Errorf("%s: the last node ran after the failure: %v", c.name, got)
		}
	}
	kernelHook = nil

	clear()
	abortAfter.Store(1) // stop after the first node that computes (y0: one task, no barrier)
	done := make(chan error, 1)
	go func() { done <- be.GraphCompute(g) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrAborted) {
			t.Errorf("abort after y0: error %v", err)
		}
	case <-time.After(10 * time.Second):
		hung = true
		t.Fatal("abort after a one-task node: the run did not return")
	}
	check("abort after y0", []float32{2, 0, 0, 0, 0, 0})

	abortAfter.Store(-100)
	clear()
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	check("after the stops", []float32{2, 3, 4, 5, 6, 7})
}
