package cpu

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/core"
)

// addChain builds n ADD nodes y_i = y_{i-1} + 1 over a [cols, rows] tensor x of zeros.
func addChain(t *testing.T, n int, cols, rows int64) (*core.Graph, []*core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	x := ctx.NewTensor2D(core.TypeF32, cols, rows)
	one := ctx.NewTensor2D(core.TypeF32, cols, rows)
	ones := make([]float32, cols*rows)
	for i := range ones {
		ones[i] = 1
	}
	if err := core.SetFloat32s(one, ones); err != nil {
		t.Fatal(err)
	}
	ys := make([]*core.Tensor, n)
	y := x
	for i := range n {
		y = ctx.Add(y, one)
		ys[i] = y
	}
	return graphTo(t, ctx, y), ys
}

// graphTo builds the graph that computes out, failing on ctx's error.
func graphTo(t *testing.T, ctx *core.Context, out *core.Tensor) *core.Graph {
	t.Helper()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	return g
}

// withHook installs kernelHook for the duration of the test.
func withHook(t *testing.T, h func(p *params, n *core.Tensor)) {
	kernelHook = h
	t.Cleanup(func() { kernelHook = nil })
}

// waitGoroutines waits (up to five seconds: a loaded machine schedules late) until at most n
// goroutines run.
func waitGoroutines(n int) int {
	var got int
	for range 1000 {
		if got = runtime.NumGoroutine(); got <= n {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	return got
}

// TestKernelPanicBecomesError injects a panic into node 2 of an ADD chain, on the main goroutine and
// on a worker, with and without other workers waiting at a barrier inside the node; the graph must
// stop at node 2 with an error naming the node, its op and the panic value, later nodes must not
// run, the backend must stay usable and no goroutine may leak.
func TestKernelPanicBecomesError(t *testing.T) {
	cases := []struct {
		name      string
		threads   int
		panicker  int   // worker that panics
		innerWait bool  // the others wait at a barrier inside the node
		cols      int64 // of the chain's tensors: 8 makes every node a one-task node (smallNode)
	}{
		{"1 thread", 1, 0, false, 256},
		{"3 threads, worker 0", 3, 0, false, 256},
		{"3 threads, worker 2", 3, 2, false, 256},
		{"3 threads, worker 1, others at an inner barrier", 3, 1, true, 256},
		{"3 threads, worker 0, others at an inner barrier", 3, 0, true, 256},
		{"3 threads, one-task nodes", 3, 0, false, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := runtime.NumGoroutine()
			be, err := New(Options{Threads: c.threads})
			if err != nil {
				t.Fatal(err)
			}
			g, ys := addChain(t, 5, c.cols, 12)
			withHook(t, func(p *params, n *core.Tensor) {
				if p.node != 2 {
					return
				}
				if p.ith == c.panicker {
					panic("boom in the test kernel")
				}
				if c.innerWait && p.nth == p.pool.n {
					p.barrier()
					p.barrier()
				}
			})
			err = be.GraphCompute(g)
			if err == nil {
				t.Fatal("a panicking kernel gave no error")
			}
			var kp *KernelPanicError
			if !errors.As(err, &kp) || kp.Op != core.OpAdd {
				t.Fatalf("error %v is not a KernelPanicError for ADD", err)
			}
			for _, want := range []string{"node 2 ", "ADD", "panicked", "boom in the test kernel"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			// Nodes 0 and 1 ran, nodes 3 and 4 did not.
			for i, want := range []float32{1, 2, -1, 0, 0} {
				if want < 0 {
					continue
				}
				if got := ys[i].Float32s()[7]; got != want {
					t.Errorf("node %d: got %v, want %v", i, got, want)
				}
			}
			// The backend still works.
			kernelHook = nil
			if err := be.GraphCompute(g); err != nil {
				t.Fatalf("after the panic: %v", err)
			}
			if got := ys[4].Float32s()[95]; got != 5 {
				t.Errorf("after the panic: last node %v, want 5", got)
			}
			if err := be.Close(); err != nil {
				t.Fatal(err)
			}
			if got := waitGoroutines(before); got > before {
				t.Errorf("%d goroutines after Close, %d before", got, before)
			}
		})
	}
}

// TestKernelPanicEveryWorker makes every worker panic in the same node: the first error by node
// order is reported and nothing deadlocks.
func TestKernelPanicEveryWorker(t *testing.T) {
	for _, threads := range []int{1, 3} {
		be, err := New(Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		g, _ := addChain(t, 4, 256, 12)
		withHook(t, func(p *params, n *core.Tensor) {
			if p.node >= 1 {
				panic(errors.New("every worker fails"))
			}
		})
		err = be.GraphCompute(g)
		if err == nil || !strings.Contains(err.Error(), "node 1 ") || !strings.Contains(err.Error(), "every worker fails") {
			t.Fatalf("threads %d: got %v", threads, err)
		}
		be.Close()
	}
}
