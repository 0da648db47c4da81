package scheduler_test

import (
	"sync/atomic"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// countingBackend counts how often a GraphCompute started while another backend's was running.
type countingBackend struct {
	core.Backend
	active, overlaps *atomic.Int32
}

func (c *countingBackend) GraphCompute(g *core.Graph) error {
	if c.active.Add(1) > 1 {
		c.overlaps.Add(1)
	}
	defer c.active.Add(-1)
	return c.Backend.GraphCompute(g)
}

// pipeGraph: x (input, CPU) → mul_mat with GPU weights → silu (GPU) → mul_mat with host weights
// and sqrt(sqr(.)) on the CPU: two splits of similar weight.
func pipeGraph(t *testing.T, bt core.BufferType) (*core.Graph, *core.Tensor, *core.Tensor) {
	t.Helper()
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := wctx.NewTensor2D(core.TypeF32, 256, 512).SetName("w")
	weightsOn(t, wctx, bt)
	hctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w2 := hctx.NewTensor2D(core.TypeF32, 512, 256).SetName("w2")
	weightsOn(t, hctx, core.HostBufferType())
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, 256, 48).SetName("x").SetInput()
	h := ctx.Silu(ctx.MulMat(w, x))
	out := ctx.Sqrt(ctx.Sqr(ctx.MulMat(w2, h))).SetName("out").SetOutput()
	g := core.NewGraph(32)
	g.BuildForwardExpand(out)
	return g, x, out
}

func inputFor(k int) []float32 {
	v := make([]float32, 256*48)
	for i := range v {
		v[i] = float32((i*7+k*13)%29)/14.5 - 1
	}
	return v
}

// Pipelined runs (Options.Parallel): ten GraphComputeAsync calls without waiting, the input
// overwritten right after each call; the final output equals a sequential run of the last input,
// inputs are snapshotted per run, and the pipeline never holds more than Copies runs.
func TestPipelinedRuns(t *testing.T) {
	dev := newFakeGPU("FakeGPU", core.OpMulMat, core.OpUnary)
	gb, _ := dev.NewBackend()
	cb, _ := cpu.New(cpu.Options{Threads: 1})
	defer gb.Close()
	defer cb.Close()
	var active, overlaps atomic.Int32
	g1 := &countingBackend{gb, &active, &overlaps}
	c1 := &countingBackend{cb, &active, &overlaps}
	s, err := scheduler.New([]core.Backend{g1, c1}, scheduler.Options{Parallel: true, Copies: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.NPipeline() != 3 {
		t.Fatalf("NPipeline %d", s.NPipeline())
	}
	g, x, out := pipeGraph(t, dev.bt)
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	garbage := make([]float32, 256*48)
	for i := range garbage {
		garbage[i] = 1e6
	}
	const runs = 10
	for k := 0; k < runs; k++ {
		if err := core.SetFloat32s(x, inputFor(k)); err != nil {
			t.Fatal(err)
		}
		if err := s.GraphComputeAsync(g); err != nil {
			t.Fatal(err)
		}
		// The run took a snapshot: writing the next input now must not change it.
		if err := core.SetFloat32s(x, garbage); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	got, _ := core.GetFloat32s(out)

	// Reference: the same graph, sequential scheduler, last input.
	dev2 := newFakeGPU("FakeGPU", core.OpMulMat, core.OpUnary)
	r := newRig(t, dev2, scheduler.Options{})
	g2, x2, out2 := pipeGraph(t, dev2.bt)
	if err := r.s.AllocGraph(g2); err != nil {
		t.Fatal(err)
	}
	_ = core.SetFloat32s(x2, inputFor(runs-1))
	if err := r.s.GraphCompute(g2); err != nil {
		t.Fatal(err)
	}
	want, _ := core.GetFloat32s(out2)
	if e := nmse(got, want); e != 0 {
		t.Fatalf("pipelined result differs from the sequential one: NMSE %g", e)
	}
	st := s.Stats()
	if st.Runs != runs || st.Plans != 1 || s.NSplits() != 2 {
		t.Fatalf("stats %+v, splits %d", st, s.NSplits())
	}
	t.Logf("%d of %d split computations overlapped another backend's", overlaps.Load(), 2*runs)
}
