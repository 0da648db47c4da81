package scheduler_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

type rig struct {
	gpu *fakeBackend
	cpu *cpu.Backend
	s   *scheduler.Scheduler
}

func newRig(t *testing.T, dev *fakeGPU, opts scheduler.Options) *rig {
	t.Helper()
	gb, err := dev.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	s, err := scheduler.New([]core.Backend{gb, cb}, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{gpu: gb.(*fakeBackend), cpu: cb, s: s}
	t.Cleanup(func() { s.Close(); gb.Close(); cb.Close() })
	return r
}

// weightsOn allocates every tensor of a NoAlloc context in bt, marks the buffer as weights and fills
// the tensors with a deterministic pattern.
func weightsOn(t *testing.T, ctx *core.Context, bt core.BufferType) core.Buffer {
	t.Helper()
	return weightsOnOpts(t, ctx, bt, alloc.CtxAllocOptions{})
}

// weightsOnOpts is weightsOn with allocation options (NoExtraBufferTypes keeps quantized CPU
// weights in the standard layout, so that the CPU computes them with the plain kernels the fake
// GPU runs, bit for bit).
func weightsOnOpts(t *testing.T, ctx *core.Context, bt core.BufferType, o alloc.CtxAllocOptions) core.Buffer {
	t.Helper()
	buf, err := alloc.AllocCtxTensorsWithOptions(ctx, bt, o)
	if err != nil {
		t.Fatal(err)
	}
	buf.SetUsage(core.BufferUsageWeights)
	for i, w := range ctx.Tensors() {
		fillPattern(t, w, uint64(i+1))
	}
	return buf
}

func backendName(s *scheduler.Scheduler, t *core.Tensor) string {
	if b := s.TensorBackend(t); b != nil {
		return b.Name()
	}
	return "none"
}

// x (input) → mul_mat(W1 on GPU) → silu → mul_mat(W2 on GPU) → argsort (CPU only).
func TestAssignAndSplitMLP(t *testing.T) {
	dev := newFakeGPU("FakeGPU", core.OpMulMat, core.OpUnary, core.OpAdd)
	r := newRig(t, dev, scheduler.Options{})

	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w1 := wctx.NewTensor2D(core.TypeF32, 16, 8).SetName("w1")
	w2 := wctx.NewTensor2D(core.TypeF32, 8, 6).SetName("w2")
	weightsOn(t, wctx, dev.bt)

	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, 16, 3).SetName("x").SetInput()
	h := ctx.MulMat(w1, x).SetName("h")
	a := ctx.Silu(h).SetName("a")
	y := ctx.MulMat(w2, a).SetName("y")
	o := ctx.Argsort(y, core.SortDesc).SetName("o").SetOutput()
	g := core.NewGraph(64)
	g.BuildForwardExpand(o)

	if err := r.s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	want := map[*core.Tensor]string{w1: "FakeGPU", w2: "FakeGPU", x: "CPU", h: "FakeGPU", a: "FakeGPU", y: "FakeGPU", o: "CPU"}
	for tt, b := range want {
		if got := backendName(r.s, tt); got != b {
			t.Errorf("%s on %s, want %s", tt.Name, got, b)
		}
	}
	if r.s.NSplits() != 2 || r.s.NCopies() != 2 {
		var sb bytes.Buffer
		r.s.Dump(&sb, true)
		t.Fatalf("splits %d copies %d, want 2 and 2\n%s", r.s.NSplits(), r.s.NCopies(), sb.String())
	}
	var sb bytes.Buffer
	r.s.Dump(&sb, false)
	dump := sb.String()
	for _, want := range []string{"SPLIT #0: FakeGPU", "x (", "SPLIT #1: CPU", "y ("} {
		if !strings.Contains(dump, want) {
			t.Errorf("dump lacks %q:\n%s", want, dump)
		}
	}
	// The user's graph is not rewritten.
	if h.Src[1] != x || y.Src[1] != a || o.Src[0] != y {
		t.Fatal("the scheduler rewrote the user's graph")
	}
}

// Pins win; a pin to a backend that cannot run the op is an error.
func TestPinsAndBadInput(t *testing.T) {
	dev := newFakeGPU("FakeGPU", core.OpAdd, core.OpMul)
	r := newRig(t, dev, scheduler.Options{})
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 8).SetInput()
	a := ctx.Add(x, x).SetName("a")
	m := ctx.Mul(a, a).SetName("m")
	s := ctx.Sqrt(m).SetName("s") // no backend but the CPU runs SQRT
	g := core.NewGraph(16)
	g.BuildForwardExpand(s)
	if err := r.s.SetTensorBackend(a, r.gpu); err != nil {
		t.Fatal(err)
	}
	if err := r.s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if backendName(r.s, a) != "FakeGPU" || backendName(r.s, m) != "FakeGPU" || backendName(r.s, s) != "CPU" {
		t.Fatalf("a %s m %s s %s", backendName(r.s, a), backendName(r.s, m), backendName(r.s, s))
	}
	if r.s.NSplits() != 2 {
		t.Fatalf("splits %d, want 2", r.s.NSplits())
	}

	r.s.Reset()
	if err := r.s.SetTensorBackend(s, r.gpu); err != nil {
		t.Fatal(err)
	}
	if err := r.s.AllocGraph(g); err == nil || !strings.Contains(err.Error(), "pinned") {
		t.Fatalf("want pinned-to-unsupported error, got %v", err)
	}

	// CPU not last.
	if _, err := scheduler.New([]core.Backend{r.cpu, r.gpu}, scheduler.Options{}); err == nil || !strings.Contains(err.Error(), "CPU") {
		t.Fatalf("want CPU-last error, got %v", err)
	}
	if _, err := scheduler.New(nil, scheduler.Options{}); err == nil {
		t.Fatal("no backends accepted")
	}
	// An op no backend supports: a GPU-only op on a scheduler whose CPU cannot run it is impossible
	// to build with the real CPU backend, so use a fake op table on a CPU-typed fake.
	r2 := newRig(t, newFakeGPU("FakeGPU2"), scheduler.Options{})
	ctx2 := core.NewContext(core.ContextParams{NoAlloc: true})
	bad := ctx2.NewTensor1D(core.TypeF32, 4)
	bad.Op = core.OpCount // an op nobody implements
	bad.Src[0] = ctx2.NewTensor1D(core.TypeF32, 4)
	g2 := core.NewGraph(4)
	g2.BuildForwardExpand(bad)
	if err := r2.s.AllocGraph(g2); err == nil || !strings.Contains(err.Error(), "no backend supports") {
		t.Fatalf("want no-backend error, got %v", err)
	}
}

// With only the CPU backend the scheduler runs the graph in one split and copies nothing.
func TestCPUOnly(t *testing.T) {
	cb, _ := cpu.New(cpu.Options{Threads: 2})
	defer cb.Close()
	s, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 4).SetInput()
	y := ctx.Mul(ctx.Add(x, x), x).SetOutput()
	g := core.NewGraph(8)
	g.BuildForwardExpand(y)
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(x, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := s.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	if s.NSplits() != 1 || s.NCopies() != 0 {
		t.Fatalf("splits %d copies %d", s.NSplits(), s.NCopies())
	}
	got, _ := core.GetFloat32s(y)
	for i, w := range []float32{2, 8, 18, 32} {
		if got[i] != w {
			t.Fatalf("y = %v", got)
		}
	}
}
