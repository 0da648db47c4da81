package cpu

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// hostileAdd builds y = a + b over [4, 3] F32 tensors in host memory and lets mutate change a (its
// public shape and stride fields, as a hostile caller may) after construction.
func hostileAdd(t *testing.T, mutate func(a *core.Tensor)) *core.Graph {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor2D(core.TypeF32, 4, 3)
	b := ctx.NewTensor2D(core.TypeF32, 4, 3)
	y := ctx.Add(a, b)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	if mutate != nil {
		mutate(a)
	}
	return g
}

// TestCPUBadInput calls the CPU backend's exported API with hostile arguments: each call must
// return an error naming the problem (or succeed where documented), never panic or hang. Classes
// are issue 10's: 2 strides and extents, 3 nil and range, 4 panics inside kernels.
func TestCPUBadInput(t *testing.T) {
	good := func() *core.Graph { return hostileAdd(t, nil) }
	var nilBE *Backend
	closed, err := New(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	withBE := func(threads int, f func(be *Backend) error) func() error {
		return func() error {
			be, err := New(Options{Threads: threads})
			if err != nil {
				return err
			}
			defer be.Close()
			return f(be)
		}
	}
	panicAt := func(threads, node, worker int, inner bool) func() error {
		return func() error {
			kernelHook = func(p *params, n *core.Tensor) {
				if p.node != node {
					return
				}
				if p.ith == worker {
					panic("injected kernel panic")
				}
				if inner && p.nth == p.pool.n {
					p.barrier()
				}
			}
			defer func() { kernelHook = nil }()
			g, _ := addChain(t, 3, 256, 12) // 12 KiB a node: split over the workers
			return Compute(g, threads)
		}
	}
	noAlloc := func() *core.Graph {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor1D(core.TypeF32, 4)
		g := core.NewGraph(8)
		g.BuildForwardExpand(ctx.Add(a, a))
		return g
	}
	failed := func() *core.Graph {
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
		r := ctx.MulMat(ctx.NewTensor2D(core.TypeF32, 4, 4), ctx.NewTensor2D(core.TypeF32, 5, 4))
		g := core.NewGraph(8)
		g.BuildForwardExpand(r)
		return g
	}

	cases := []struct {
		class int
		name  string
		call  func() error
		want  string // substring of the error; "" means the call must succeed
	}{
		{3, "Compute(nil, 1)", func() error { return Compute(nil, 1) }, "graph is nil"},
		{3, "Compute(nil, 3)", func() error { return Compute(nil, 3) }, "graph is nil"},
		{3, "Compute(g, -1)", func() error { return Compute(good(), -1) }, "-1 threads is out of range"},
		{3, "Compute(g, 513)", func() error { return Compute(good(), 513) }, "513 threads is out of range"},
		{3, "New(Threads: -3)", func() error { _, err := New(Options{Threads: -3}); return err }, "-3 threads is out of range"},
		{3, "nil *Backend GraphCompute", func() error { return nilBE.GraphCompute(good()) }, "backend is nil"},
		{3, "nil *Backend GraphComputeContext", func() error { return nilBE.GraphComputeContext(context.Background(), good()) }, "backend is nil"},
		{3, "nil *Backend SetThreads", func() error { return nilBE.SetThreads(2) }, "backend is nil"},
		{3, "GraphCompute(nil)", withBE(2, func(be *Backend) error { return be.GraphCompute(nil) }), "graph is nil"},
		{3, "GraphComputeContext(ctx, nil)", withBE(2, func(be *Backend) error { return be.GraphComputeContext(context.Background(), nil) }), "graph is nil"},
		// A nil context is documented to mean context.Background().
		{3, "GraphComputeContext(nil ctx, g) runs", withBE(2, func(be *Backend) error { return be.GraphComputeContext(nil, good()) }), ""},
		{3, "SetThreads(0)", withBE(2, func(be *Backend) error { return be.SetThreads(0) }), "0 threads is out of range"},
		{3, "SetThreads(513)", withBE(2, func(be *Backend) error { return be.SetThreads(513) }), "513 threads is out of range"},
		{3, "closed GraphCompute", func() error { return closed.GraphCompute(good()) }, "backend is closed"},
		{3, "closed SetThreads", func() error { return closed.SetThreads(3) }, "backend is closed"},
		{3, "graph without memory", func() error { return Compute(noAlloc(), 2) }, "no host memory (no buffer"},
		{3, "graph with a construction error", func() error { return Compute(failed(), 2) }, "MUL_MAT"},
		{3, "node with an unknown op", func() error {
			g := good()
			g.Node(-1).Op = core.Op(9999)
			return Compute(g, 2)
		}, "unknown op 9999"},
		{2, "negative stride", func() error {
			return Compute(hostileAdd(t, func(a *core.Tensor) { a.Nb[1] = -16 }), 2)
		}, "negative stride -16 in dimension 1"},
		{2, "negative size", func() error {
			return Compute(hostileAdd(t, func(a *core.Tensor) { a.Ne[2] = -1 }), 2)
		}, "negative size -1 in dimension 2"},
		{2, "strides past the buffer", func() error {
			return Compute(hostileAdd(t, func(a *core.Tensor) { a.Nb[1] = 1 << 20 }), 2)
		}, "lie outside its"},
		{2, "offset past the buffer", func() error {
			return Compute(hostileAdd(t, func(a *core.Tensor) { a.Offset = 1 << 40 }), 2)
		}, "lie outside its"},
		{2, "extent overflows int64", func() error {
			return Compute(hostileAdd(t, func(a *core.Tensor) { a.Nb[1], a.Nb[2], a.Ne[2] = math.MaxInt64/2, math.MaxInt64/2, 3 }), 2)
		}, "spans more bytes than an int64 holds"},
		{2, "node's own strides past its buffer", func() error {
			g := good()
			g.Node(-1).Nb[1] = 1 << 30
			return Compute(g, 3)
		}, "lie outside its"},
		{4, "kernel panic, 1 thread", panicAt(1, 1, 0, false), "node 1 "},
		{4, "abort callback panics, 3 threads", func() error {
			be, err := New(Options{Threads: 3, Abort: func() bool { panic("abort exploded") }})
			if err != nil {
				return err
			}
			defer be.Close()
			g, ys := addChain(t, 3, 256, 12)
			err = be.GraphCompute(g)
			if err == nil {
				return nil
			}
			// The backend still works once the callback is gone.
			be.SetAbort(nil)
			if err2 := be.GraphCompute(g); err2 != nil || ys[2].Float32s()[0] != 3 {
				return fmt.Errorf("after the panic: %v, last %v", err2, ys[2].Float32s()[0])
			}
			return err
		}, "the abort callback panicked: abort exploded"},
		{4, "kernel panic on worker 2 of 3", panicAt(3, 1, 2, false), "injected kernel panic"},
		{4, "kernel panic on worker 0 of 3", panicAt(3, 2, 0, false), "kernel for op ADD panicked"},
		{4, "kernel panic, others at an inner barrier", panicAt(3, 0, 1, true), "node 0 "},
	}
	counts := map[int]int{}
	for _, c := range cases {
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("class %d %s: panicked: %v", c.class, c.name, v)
				}
			}()
			err = c.call()
		}()
		counts[c.class]++
		switch {
		case c.want == "" && err != nil:
			t.Errorf("class %d %s: unexpected error %v", c.class, c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("class %d %s: accepted, want an error saying %q", c.class, c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("class %d %s: error %q does not say %q", c.class, c.name, err, c.want)
		}
	}
	t.Logf("bad-input cases per class: %v", counts)

	// Values documented for nil: no panic, the zero answer.
	if nilBE.Threads() != 0 || nilBE.Close() != nil {
		t.Error("nil *Backend: Threads/Close not zero")
	}
	nilBE.SetAbort(nil)
	if theDevice.SupportsOp(nil) || theDevice.SupportsBufferType(nil) {
		t.Error("device: SupportsOp(nil) or SupportsBufferType(nil) is true")
	}
}

// TestPlanReuseRechecksHostData: a cached plan skips the host-memory checks of nodes whose tensors
// are unchanged since the last run, so a change after a successful run (a stride or an offset
// past the memory, a freed buffer) must still be refused on the next one, and undoing it must
// run again.
func TestPlanReuseRechecksHostData(t *testing.T) {
	be, err := New(Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	for _, c := range []struct {
		name   string
		mutate func(a *core.Tensor) (undo func())
	}{
		{"stride past the memory", func(a *core.Tensor) func() {
			nb := a.Nb[1]
			a.Nb[1] = 1 << 20
			return func() { a.Nb[1] = nb }
		}},
		{"offset past the memory", func(a *core.Tensor) func() {
			off := a.Offset
			a.Offset = 1 << 30
			return func() { a.Offset = off }
		}},
		{"freed buffer", func(a *core.Tensor) func() {
			a.Buffer.Free()
			return nil
		}},
	} {
		g := hostileAdd(t, nil)
		for range 2 { // the second run reuses the plan and its snapshots
			if err := be.GraphCompute(g); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if be.plan == nil || !be.plan.layoutHolds() {
			t.Fatalf("%s: the reused plan's layout snapshot does not hold before the change", c.name)
		}
		undo := c.mutate(g.Nodes()[0].Src[0])
		if be.plan.layoutHolds() {
			t.Fatalf("%s: the layout snapshot holds after the change", c.name)
		}
		if err := be.GraphCompute(g); err == nil {
			t.Fatalf("%s: the cached plan ran", c.name)
		} else if msg := err.Error(); !strings.Contains(msg, "node 0") || !strings.Contains(msg, "no host memory") || strings.Contains(msg, "panicked") {
			// the check before the run refuses it, not a kernel reading past the memory
			t.Fatalf("%s: error %q, want the host-memory check's, naming node 0", c.name, err)
		}
		if undo != nil {
			undo()
			if err := be.GraphCompute(g); err != nil {
				t.Fatalf("%s undone: %v", c.name, err)
			}
		}
	}
	// A source swapped for a tensor without memory after runs that took the layout snapshot:
	// refused before any kernel runs.
	for name, mutate := range map[string]func(n *core.Tensor){
		"source without memory": func(n *core.Tensor) {
			ctx := core.NewContext(core.ContextParams{NoAlloc: true})
			n.Src[1] = ctx.NewTensor2D(core.TypeF32, 4, 3)
		},
	} {
		g := hostileAdd(t, nil)
		for range 2 {
			if err := be.GraphCompute(g); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		mutate(g.Nodes()[0])
		if err := be.GraphCompute(g); err == nil || strings.Contains(err.Error(), "panicked") {
			t.Fatalf("%s: the reused plan ran: %v", name, err)
		}
	}
}
