package scheduler_test

import (
	"context"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// splitGraph is x (a host input) → h = x+x (GPU) → r = sqrt(h) (CPU) → m = r·r (GPU) →
// out = m+h (GPU), and q = x+x (CPU): h, r and m read copies, out reads the GPU's own h and m,
// q reads x where it lives.
type splitGraph struct {
	x, q, h, r, m, out *core.Tensor
	g                  *core.Graph
}

// newSplitGraph builds the graph over n elements with x[i] = k²/2 (k = i%7+1), so that every
// value is exact: out = 2k².
func newSplitGraph(t *testing.T, s *scheduler.Scheduler, gpu core.Backend, n int64) *splitGraph {
	t.Helper()
	data := core.NewContext(core.ContextParams{MemSize: n*4 + core.TensorOverhead + 256})
	sg := &splitGraph{x: data.NewTensor1D(core.TypeF32, n).SetInput()}
	xs := make([]float32, n)
	for i := range xs {
		k := float32(i%7 + 1)
		xs[i] = k * k / 2
	}
	copy(sg.x.Float32s(), xs)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	sg.q = ctx.Add(sg.x, sg.x)
	sg.q.SetOutput()
	sg.h = ctx.Add(sg.x, sg.x)
	sg.r = ctx.Sqrt(sg.h)
	sg.m = ctx.Mul(sg.r, sg.r)
	sg.out = ctx.Add(sg.m, sg.h)
	sg.out.SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	sg.g = core.NewGraph(core.DefaultGraphSize)
	sg.g.BuildForwardExpand(sg.q)
	sg.g.BuildForwardExpand(sg.out)
	for _, n := range []*core.Tensor{sg.h, sg.m, sg.out} {
		if err := s.SetTensorBackend(n, gpu); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetTensorBackend(sg.q, s.Backend(s.NBackends()-1)); err != nil {
		t.Fatal(err)
	}
	return sg
}

func (sg *splitGraph) check(t *testing.T) {
	t.Helper()
	got, err := core.GetFloat32s(sg.out)
	if err != nil {
		t.Fatal(err)
	}
	q, err := core.GetFloat32s(sg.q)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		k := float32(i%7 + 1)
		if v != 2*k*k || q[i] != k*k {
			t.Fatalf("out[%d] = %v, q[%d] = %v, want %v and %v", i, v, i, q[i], 2*k*k, k*k)
		}
	}
}

func newCountedScheduler(t *testing.T) (*scheduler.Scheduler, *fakeBackend, *bufCounter) {
	t.Helper()
	dev := newFakeGPU("FakeGPU", core.OpAdd, core.OpMul)
	gb, err := dev.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gb.Close() })
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cb.Close() })
	c := &bufCounter{}
	dev.bt.counter = c
	s, err := scheduler.New([]core.Backend{gb, cb}, scheduler.Options{
		BufferTypes: []core.BufferType{nil, countedHostType{core.HostBufferType(), c}}})
	if err != nil {
		t.Fatal(err)
	}
	return s, gb.(*fakeBackend), c
}

// TestPlacementReport: after a run, every tensor of the graph lives where the graph allocator's
// report says, in the compute buffer of the backend it was assigned to; user nodes are computed
// themselves except downstream of a copy (there a shadow runs, sharing the node's memory).
func TestPlacementReport(t *testing.T) {
	s, gpu, _ := newCountedScheduler(t)
	defer s.Close()
	sg := newSplitGraph(t, s, gpu, 64)
	if err := s.GraphCompute(sg.g); err != nil {
		t.Fatal(err)
	}
	sg.check(t)
	if s.NSplits() != 4 || s.NCopies() != 3 {
		t.Fatalf("%d splits, %d copies, want 4 (q, h, r, m+out) and 3 (x and r to the GPU, h to the CPU)", s.NSplits(), s.NCopies())
	}
	for _, n := range []*core.Tensor{sg.q, sg.h, sg.r, sg.m, sg.out} {
		buf, id, ok := scheduler.PlacedIn(s, n)
		if !ok {
			t.Fatalf("%v not in the allocator's report", n)
		}
		if buf != n.Buffer {
			t.Errorf("%v lives in %v, the report says %v", n, n.Buffer, buf)
		}
		be := s.TensorBackend(n)
		if want := s.Backend(id); want != be {
			t.Errorf("%v placed in buffer id %d, assigned to %s", n, id, be.Name())
		}
		if buf.Type() != s.BufferType(id) {
			t.Errorf("%v in a %s buffer, want %s", n, buf.Type().Name(), s.BufferType(id).Name())
		}
	}
	if _, _, ok := scheduler.PlacedIn(s, sg.x); ok {
		t.Error("x has memory of its own but is in the report")
	}
	for n, want := range map[*core.Tensor]bool{sg.q: true, sg.h: false, sg.r: false, sg.m: false, sg.out: false} {
		if got := scheduler.RunsItself(s, n); got != want {
			t.Errorf("%v runs itself: %v, want %v", n, got, want)
		}
	}
}

// TestSingleBackendRunsUserNodes: with one backend nothing is copied, so no node needs a shadow.
func TestSingleBackendRunsUserNodes(t *testing.T) {
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	s, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sg := newSplitGraph(t, s, cb, 16)
	if err := s.GraphCompute(sg.g); err != nil {
		t.Fatal(err)
	}
	sg.check(t)
	for _, n := range sg.g.Nodes() {
		if !scheduler.RunsItself(s, n) {
			t.Errorf("%v runs as a shadow", n)
		}
		if buf, _, ok := scheduler.PlacedIn(s, n); !ok || buf != n.Buffer {
			t.Errorf("%v: report %v (placed %v), lives in %v", n, buf, ok, n.Buffer)
		}
	}
}

// TestOneFingerprintPerRun: a run looks at the graph once (its fingerprint is compared, not taken
// again), and a plan the allocator holds is placed without the allocator analyzing it again.
func TestOneFingerprintPerRun(t *testing.T) {
	s, gpu, _ := newCountedScheduler(t)
	defer s.Close()
	sg := newSplitGraph(t, s, gpu, 32)
	if err := s.Reserve(sg.g); err != nil {
		t.Fatal(err)
	}
	if fp, an := scheduler.Probe(s); fp != 1 || an != 1 {
		t.Fatalf("Reserve: %d fingerprints, %d analyses, want 1 and 1", fp, an)
	}
	const runs = 5
	for i := 0; i < runs; i++ {
		if err := s.GraphCompute(sg.g); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.GraphComputeAsync(sg.g); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatal(err)
	}
	sg.check(t)
	if fp, an := scheduler.Probe(s); fp != 1+runs+1 || an != 1 {
		t.Errorf("after %d runs: %d fingerprints, %d analyses, want %d and 1", runs+1, fp, an, runs+2)
	}
	// Without Reserve, the first run plans (one fingerprint taken) and the allocator analyzes once.
	other := newSplitGraph(t, s, gpu, 32)
	fp0, an0 := scheduler.Probe(s)
	for i := 0; i < runs; i++ {
		if err := s.GraphCompute(other.g); err != nil {
			t.Fatal(err)
		}
	}
	other.check(t)
	// Pinning the new graph's nodes dropped the old plan: the first run only takes a fingerprint.
	if fp, an := scheduler.Probe(s); fp-fp0 != runs || an-an0 != 1 {
		t.Errorf("new graph, %d runs: %d fingerprints, %d analyses, want %d and 1", runs, fp-fp0, an-an0, runs)
	}
}

// TestGraphComputeReused: GraphComputeReused of the graph the plan last checked looks at it no more
// (no fingerprint compared) and computes it as GraphCompute does; a graph the plan was not last
// checked against (a new one, or the old one after another graph ran) is checked and re-planned
// as GraphCompute would.
func TestGraphComputeReused(t *testing.T) {
	s, gpu, _ := newCountedScheduler(t)
	defer s.Close()
	sg := newSplitGraph(t, s, gpu, 32)
	if err := s.GraphCompute(sg.g); err != nil {
		t.Fatal(err)
	}
	fp0, an0 := scheduler.Probe(s)
	const runs = 4
	for i := 0; i < runs; i++ {
		if err := s.GraphComputeReused(context.Background(), sg.g); err != nil {
			t.Fatal(err)
		}
	}
	sg.check(t)
	if fp, an := scheduler.Probe(s); fp != fp0 || an != an0 {
		t.Errorf("%d reused runs: %d fingerprints, %d analyses more, want none", runs, fp-fp0, an-an0)
	}
	// every GPU split of every reused run is computed as reused
	perRun := gpu.reused / runs
	if perRun == 0 || gpu.reused%runs != 0 {
		t.Errorf("the GPU splits were computed as reused %d times in %d runs", gpu.reused, runs)
	}
	// New input data reaches the outputs (out = 4x): the split input is copied again.
	xs := sg.x.Float32s()
	for i := range xs {
		xs[i] += 1
	}
	if err := s.GraphComputeReused(context.Background(), sg.g); err != nil {
		t.Fatal(err)
	}
	out, err := core.GetFloat32s(sg.out)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out {
		if want := 4 * xs[i]; v != want {
			t.Fatalf("out[%d] = %v after the input changed, want %v", i, v, want)
		}
	}
	for i := range xs {
		xs[i] -= 1
	}
	// A graph the plan has not seen: compared (no match), planned, allocated, computed.
	other := newSplitGraph(t, s, gpu, 32)
	fp1, _ := scheduler.Probe(s)
	if err := s.GraphComputeReused(context.Background(), other.g); err != nil {
		t.Fatal(err)
	}
	other.check(t)
	if fp, _ := scheduler.Probe(s); fp == fp1 {
		t.Error("a new graph ran as reused without a look at it")
	}
	// The first graph again, after the other one ran: checked (and re-planned), not trusted.
	fp2, _ := scheduler.Probe(s)
	if err := s.GraphComputeReused(context.Background(), sg.g); err != nil {
		t.Fatal(err)
	}
	sg.check(t)
	if fp, _ := scheduler.Probe(s); fp == fp2 {
		t.Error("the old graph ran as reused on the other graph's plan")
	}
	if gpu.reused != (runs+1)*perRun {
		t.Errorf("graphs the scheduler looked at reached the backend as reused: %d GPU splits, want %d", gpu.reused, (runs+1)*perRun)
	}
	if err := s.GraphComputeReused(context.Background(), nil); err == nil {
		t.Error("a nil graph accepted")
	}
	if err := s.GraphComputeReused(nil, sg.g); err != nil {
		t.Fatalf("a nil ctx: %v", err)
	}
	sg.check(t)
}

// TestBuffersAcrossReplans counts the compute buffers: re-planning for a larger graph frees the
// buffers it outgrows, returning to a smaller graph allocates nothing, dropping a plan takes back
// the memory its user tensors got, and Close frees everything exactly once.
func TestBuffersAcrossReplans(t *testing.T) {
	s, gpu, c := newCountedScheduler(t)
	small := newSplitGraph(t, s, gpu, 16)
	big := newSplitGraph(t, s, gpu, 1024)
	if err := s.GraphCompute(small.g); err != nil {
		t.Fatal(err)
	}
	small.check(t)
	if live, allocs, _ := c.counts(); live != 2 || allocs != 2 {
		t.Fatalf("after the small graph: %d live buffers, %d allocated, want 2 and 2 (one per backend)", live, allocs)
	}
	smallOut := small.out.Buffer
	if err := s.GraphCompute(big.g); err != nil {
		t.Fatal(err)
	}
	big.check(t)
	if live, allocs, _ := c.counts(); live != 2 || allocs != 4 {
		t.Fatalf("after the big graph: %d live buffers, %d allocated, want 2 and 4 (both grown, the old ones freed)", live, allocs)
	}
	if small.out.Buffer != nil || small.h.Buffer != nil {
		t.Errorf("the small graph's tensors kept the memory of a dropped plan (out in %v)", small.out.Buffer)
	}
	if b, ok := smallOut.(interface{ Freed() bool }); !ok || !b.Freed() {
		t.Error("the small graph's old GPU buffer was not freed")
	}
	for i := 0; i < 3; i++ {
		for _, sg := range []*splitGraph{small, big} {
			if err := s.GraphCompute(sg.g); err != nil {
				t.Fatal(err)
			}
			sg.check(t)
			if buf, _, _ := scheduler.PlacedIn(s, sg.out); buf != sg.out.Buffer || buf.(interface{ Freed() bool }).Freed() {
				t.Fatalf("out lives in %v (freed or not the report's %v)", sg.out.Buffer, buf)
			}
		}
	}
	if live, allocs, _ := c.counts(); live != 2 || allocs != 4 {
		t.Errorf("after alternating: %d live buffers, %d allocated, want 2 and 4", live, allocs)
	}
	s.Reset()
	if big.out.Buffer != nil {
		t.Error("Reset left the plan's memory in a user tensor")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if live, _, double := c.counts(); live != 0 || double != 0 {
		t.Errorf("after Close: %d live buffers, %d double frees, want 0 and 0", live, double)
	}
}
