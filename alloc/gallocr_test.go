package alloc

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

func newCPU(t testing.TB) *cpu.Backend {
	t.Helper()
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

func bitsOf(t *core.Tensor) ([]uint32, error) {
	v, err := core.GetFloat32s(t)
	if err != nil {
		return nil, err
	}
	out := make([]uint32, len(v))
	for i, x := range v {
		out[i] = math.Float32bits(x)
	}
	return out, nil
}

// runGallocr places a random graph with the graph allocator, checks the placement, computes it
// (runs times, setting the inputs once) and returns the outputs' bits (and the inputs' bits after
// the runs).
func runGallocr(be core.Backend, bt core.BufferType, seed uint64, o genOpts, runs int) (outs, ins [][]uint32, ga *GraphAllocator, err error) {
	gg := genRandomGraph(seed, o)
	ga = NewGraphAllocator(bt)
	if err := ga.AllocGraph(gg.g); err != nil {
		return nil, nil, ga, err
	}
	if err := checkPlacement(gg.g, ga); err != nil {
		return nil, nil, ga, fmt.Errorf("placement (policy %s): %w", ga.Stats().Policy, err)
	}
	if o.compute {
		if err := gg.setInputs(); err != nil {
			return nil, nil, ga, err
		}
		for range runs {
			if err := be.GraphCompute(gg.g); err != nil {
				return nil, nil, ga, err
			}
		}
		for _, t := range gg.outputs {
			b, err := bitsOf(t)
			if err != nil {
				return nil, nil, ga, err
			}
			outs = append(outs, b)
		}
		for _, t := range gg.inputs {
			if t.Buffer == nil {
				ins = append(ins, nil)
				continue
			}
			b, err := bitsOf(t)
			if err != nil {
				return nil, nil, ga, err
			}
			ins = append(ins, b)
		}
	}
	return outs, ins, ga, nil
}

// runNoReuse computes the same random graph with every tensor in memory of its own.
func runNoReuse(be core.Backend, seed uint64, o genOpts) (outs, ins [][]uint32, err error) {
	gg := genRandomGraph(seed, o)
	buf, err := AllocCtxTensors(gg.ctx, be)
	switch {
	case errors.Is(err, ErrNothingToAllocate): // every tensor already had memory
	case err != nil:
		return nil, nil, err
	default:
		defer buf.Free()
	}
	if err := gg.setInputs(); err != nil {
		return nil, nil, err
	}
	if err := be.GraphCompute(gg.g); err != nil {
		return nil, nil, err
	}
	for _, t := range gg.outputs {
		b, err := bitsOf(t)
		if err != nil {
			return nil, nil, err
		}
		outs = append(outs, b)
	}
	for i := range gg.inputs {
		b := make([]uint32, len(gg.values[i]))
		for j, v := range gg.values[i] {
			b[j] = math.Float32bits(v)
		}
		ins = append(ins, b)
	}
	return outs, ins, nil
}

func equalBits(a, b []uint32) int {
	if len(a) != len(b) {
		return 0
	}
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// checkSeed runs the whole safety property for one random graph, computed once or (twice) two
// times with the inputs set once.
func checkSeed(be core.Backend, bt core.BufferType, seed uint64, nOps int, twice bool) error {
	o := genOpts{nOps: nOps, compute: true, viewOutputs: true}
	runs := 1
	if twice {
		runs = 2
	}
	outs, ins, ga, err := runGallocr(be, bt, seed, o, runs)
	if err != nil {
		return err
	}
	want, wantIns, err := runNoReuse(be, seed, o)
	if err != nil {
		return fmt.Errorf("no-reuse reference: %w", err)
	}
	for i := range want {
		if k := equalBits(outs[i], want[i]); k >= 0 {
			return fmt.Errorf("output %d differs from the no-reuse run at element %d (policy %s)", i, k, ga.Stats().Policy)
		}
	}
	for i := range ins {
		if ins[i] == nil {
			continue
		}
		if k := equalBits(ins[i], wantIns[i]); k >= 0 {
			return fmt.Errorf("input %d was overwritten (element %d)", i, k)
		}
	}
	return nil
}

// Safety as a property: on many random graphs (broadcasting binary ops, views, reshapes, permutes,
// mul_mat and whatever other kernels exist) no two tensors with overlapping lifetimes share bytes,
// every tensor is inside its buffer and aligned, views point into their source, outputs and inputs
// (flagged or not) survive to the end, and the results are bit-identical to a run where every
// tensor has memory of its own, also when the graph is computed a second time.
func TestSafetyRandomGraphs(t *testing.T) {
	be := newCPU(t)
	n := 300
	if testing.Short() {
		n = 60
	}
	policies := map[string]int{}
	chunked := &hostBT{align: 64, maxSize: 2048}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		for _, twice := range []bool{false, true} {
			nOps := 4 + int(seed%40)
			bt := be.DefaultBufferType()
			if seed%3 == 0 {
				bt = chunked // several chunk buffers
			}
			if err := checkSeed(be, bt, seed, nOps, twice); err != nil {
				t.Fatalf("seed %d (%d ops, computed twice %v, %s): %v", seed, nOps, twice, bt.Name(), err)
			}
		}
		_, _, ga, _ := runGallocr(be, be.DefaultBufferType(), seed, genOpts{nOps: 4 + int(seed%40), compute: true, viewOutputs: true}, 1)
		policies[ga.Stats().Policy]++
	}
	t.Logf("winning placements over %d graphs: %v", n, policies)
}

func FuzzGraphAllocator(f *testing.F) {
	for _, s := range []uint64{1, 2, 3, 42, 1000, 123456789} {
		f.Add(s, uint8(20), false)
		f.Add(s, uint8(60), true)
		f.Add(s, uint8(0x80|30), false)
	}
	be := newCPU(f)
	chunked := &hostBT{align: 128, maxSize: 1024}
	f.Fuzz(func(t *testing.T, seed uint64, nOps uint8, twice bool) {
		bt := be.DefaultBufferType()
		if nOps&0x80 != 0 {
			bt = chunked
		}
		if err := checkSeed(be, bt, seed, 1+int(nOps%96), twice); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	})
}

// A graph changed behind the same node count must be re-planned; an unchanged one (even rebuilt
// from new tensor objects) must not.
func TestReplanOnChangedGraph(t *testing.T) {
	be := newCPU(t)
	build := func(variant int) (*core.Graph, *core.Tensor, *core.Tensor) {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor1D(core.TypeF32, 64).SetName("x").SetInput()
		y := ctx.NewTensor1D(core.TypeF32, 64).SetName("y").SetInput()
		var out *core.Tensor
		switch variant {
		case 0:
			out = ctx.Mul(ctx.Add(x, y), y)
		case 1: // same node count and sizes, different wiring (ggml would reuse its stale plan)
			out = ctx.Mul(ctx.Add(x, y), x)
		case 2: // same wiring, smaller tensors
			x2 := ctx.NewTensor1D(core.TypeF32, 32).SetInput()
			y2 := ctx.NewTensor1D(core.TypeF32, 32).SetInput()
			x, y = x2, y2
			out = ctx.Mul(ctx.Add(x, y), y)
		}
		g := core.NewGraph(16)
		g.BuildForwardExpand(out.SetOutput())
		return g, x, y
	}
	ga := NewGraphAllocator(be.DefaultBufferType())
	defer ga.Free()
	g0, _, _ := build(0)
	if err := ga.Reserve(g0); err != nil {
		t.Fatal(err)
	}
	if ga.Replans() != 1 {
		t.Fatalf("Reserve made %d plans", ga.Replans())
	}
	for _, tc := range []struct {
		variant int
		replan  bool
	}{{0, false}, {0, false}, {1, true}, {1, false}, {2, true}, {0, true}} {
		g, x, y := build(tc.variant)
		before := ga.Replans()
		if err := ga.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if ga.Replanned() != tc.replan || (ga.Replans() > before) != tc.replan {
			t.Fatalf("variant %d: replanned %v (plans %d→%d), want %v", tc.variant, ga.Replanned(), before, ga.Replans(), tc.replan)
		}
		if err := checkPlacement(g, ga); err != nil {
			t.Fatal(err)
		}
		n := int(x.Ne[0])
		xs, ys := make([]float32, n), make([]float32, n)
		for i := range xs {
			xs[i], ys[i] = float32(i), float32(2*i+1)
		}
		if err := core.SetFloat32s(x, xs); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(y, ys); err != nil {
			t.Fatal(err)
		}
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		got, err := core.GetFloat32s(g.Node(-1))
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			w := (xs[i] + ys[i]) * ys[i]
			if tc.variant == 1 {
				w = (xs[i] + ys[i]) * xs[i]
			}
			if got[i] != w {
				t.Fatalf("variant %d: element %d = %v, want %v", tc.variant, i, got[i], w)
			}
		}
	}
	// the same graph object again: no new plan, same places
	g, _, _ := build(1)
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	offs := []int64{}
	for _, n := range g.Nodes() {
		offs = append(offs, n.Offset)
	}
	before := ga.Replans()
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if ga.Replans() != before {
		t.Fatalf("re-allocating the same graph object made a new plan")
	}
	for i, n := range g.Nodes() {
		if n.Offset != offs[i] {
			t.Fatalf("node %d moved from %d to %d", i, offs[i], n.Offset)
		}
	}
}

// Buffers grow only when a plan needs more, and the compute buffers are tagged as such.
func TestBuffersGrowOnly(t *testing.T) {
	bt := &fakeBT{name: "fake", align: 32}
	ga := NewGraphAllocator(bt)
	build := func(n int64) *core.Graph {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor1D(core.TypeF32, n).SetInput()
		g := core.NewGraph(16)
		g.BuildForwardExpand(ctx.Scale(ctx.Sqr(ctx.Cont(x)), 2))
		return g
	}
	if err := ga.Reserve(build(1024)); err != nil {
		t.Fatal(err)
	}
	big := ga.BufferSize(0)
	if err := ga.Reserve(build(16)); err != nil {
		t.Fatal(err)
	}
	if ga.BufferSize(0) != big || len(bt.allocs) != 1 {
		t.Fatalf("smaller plan changed the buffer: size %d→%d, %d allocations", big, ga.BufferSize(0), len(bt.allocs))
	}
	if got := ga.Stats().Planned[0]; got >= big {
		t.Fatalf("small plan needs %d bytes, the big one %d", got, big)
	}
	if err := ga.Reserve(build(4096)); err != nil {
		t.Fatal(err)
	}
	if ga.BufferSize(0) <= big || len(bt.allocs) != 2 {
		t.Fatalf("bigger plan did not grow the buffer: %d, %d allocations", ga.BufferSize(0), len(bt.allocs))
	}
	for _, b := range ga.Buffers(0) {
		if b.Usage() != core.BufferUsageCompute {
			t.Fatalf("graph allocator buffer has usage %v", b.Usage())
		}
	}
	bufs := ga.Buffers(0)
	if err := ga.Free(); err != nil {
		t.Fatal(err)
	}
	for _, b := range bufs {
		if !b.(*fakeBuf).freed {
			t.Fatalf("Free left a buffer")
		}
	}
	if ga.BufferSize(0) != 0 {
		t.Fatalf("size after Free: %d", ga.BufferSize(0))
	}
}

// A buffer type that cannot allocate gives an error naming the type, the size and the device's
// memory, not a panic.
func TestAllocFailure(t *testing.T) {
	bt := &fakeBT{name: "FakeGPU0", align: 256, failWith: errors.New("out of device memory"),
		dev: &fakeDevice{name: "FakeGPU0", free: 1 << 20, total: 8 << 30}}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, 1000, 1000)
	g := core.NewGraph(16)
	g.BuildForwardExpand(ctx.Sqr(x))

	// x is an input: it keeps its memory, so SQR cannot be computed in place (4 MB each)
	ga := NewGraphAllocator(bt)
	err := ga.Reserve(g)
	if err == nil {
		t.Fatal("Reserve succeeded on a failing buffer type")
	}
	var ae *AllocError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v is not an *AllocError", err)
	}
	msg := err.Error()
	for _, want := range []string{"FakeGPU0", "8000000", "1048576", "8589934592", "out of device memory"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if ae.Size != 8000000 || ae.Free != 1<<20 || ae.Total != 8<<30 {
		t.Errorf("AllocError %+v", ae)
	}
	if err := ga.AllocGraph(g); err == nil {
		t.Fatal("AllocGraph succeeded on a failing buffer type")
	}
	if x.Buffer != nil {
		t.Fatal("a tensor got memory from a failed allocation")
	}

	// the same from AllocCtxTensors, and without a device
	bt2 := &fakeBT{name: "NoDev", align: 32, failWith: errors.New("nope")}
	if _, err := AllocCtxTensorsFromBufferType(ctx, bt2); err == nil || !strings.Contains(err.Error(), "NoDev") ||
		!strings.Contains(err.Error(), "8000000") {
		t.Fatalf("AllocCtxTensors error %v", err)
	}
	if x.Buffer != nil {
		t.Fatal("a tensor kept memory from a failed AllocCtxTensors")
	}
}

// With several buffer ids a stale plan is not silently re-planned by AllocGraph; AllocGraphN and
// ReserveN do it, and each node lands in its buffer id's memory.
func TestBufferIDs(t *testing.T) {
	btA := &fakeBT{name: "A", align: 64}
	btB := &fakeBT{name: "B", align: 16}
	ga := NewGraphAllocator(btA, btB, btA)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 100).SetInput()
	a := ctx.Sqr(x)
	b := ctx.Scale(a, 2)
	c := ctx.Add(b, x)
	g := core.NewGraph(16)
	g.BuildForwardExpand(c)
	if err := ga.AllocGraph(g); !errors.Is(err, ErrNeedReserve) {
		t.Fatalf("AllocGraph with several buffer ids and no plan: %v", err)
	}
	nodeIDs := []int{0, 1, 2}
	if err := ga.ReserveN(g, nodeIDs, []int{2}); err != nil {
		t.Fatal(err)
	}
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if ga.Replanned() {
		t.Fatal("AllocGraph re-planned a graph that matches the plan")
	}
	if a.Buffer.Type() != btA || b.Buffer.Type() != btB || c.Buffer.Type() != btA || x.Buffer.Type() != btA {
		t.Fatalf("buffer types: x %s a %s b %s c %s", x.Buffer.Type().Name(), a.Buffer.Type().Name(), b.Buffer.Type().Name(), c.Buffer.Type().Name())
	}
	if b.Offset%16 != 0 || a.Offset%64 != 0 || c.Offset%64 != 0 {
		t.Fatal("misaligned")
	}
	if ga.BufferSize(2) != 0 || ga.BufferSize(0) == 0 || ga.BufferSize(1) == 0 {
		t.Fatalf("buffer sizes %d %d %d", ga.BufferSize(0), ga.BufferSize(1), ga.BufferSize(2))
	}
	// b (SCALE, in place capable) must not take a's memory: another buffer type
	if err := checkPlacement(g, ga); err != nil {
		t.Fatal(err)
	}
	// other ids: AllocGraph refuses, AllocGraphN re-plans
	if err := ga.AllocGraphN(g, []int{1, 1, 1}, []int{1}); err != nil {
		t.Fatal(err)
	}
	if !ga.Replanned() || c.Buffer.Type() != btB {
		t.Fatalf("AllocGraphN with new ids: replanned %v, c in %s", ga.Replanned(), c.Buffer.Type().Name())
	}
	if err := ga.ReserveN(g, []int{0, 3, 0}, nil); err == nil {
		t.Fatal("buffer id 3 of 3 accepted")
	}
	if err := ga.ReserveN(g, []int{0}, nil); err == nil {
		t.Fatal("wrong number of node ids accepted")
	}
}

// Tensors that already have memory of their own (weights, user allocations) are left alone.
func TestExternalTensorsLeftAlone(t *testing.T) {
	be := newCPU(t)
	wctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	w := wctx.NewTensor1D(core.TypeF32, 16)
	copy(w.Float32s(), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	wbuf, woff := w.Buffer, w.Offset
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 16).SetInput()
	wv := ctx.Reshape2D(w, 4, 4)
	y := ctx.Add(ctx.Reshape1D(wv, 16), x) // in place over w would corrupt the weights
	g := core.NewGraph(16)
	g.BuildForwardExpand(ctx.Mul(y, w))
	ga := NewGraphAllocator(be.DefaultBufferType())
	for round := 0; round < 2; round++ {
		if err := ga.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if w.Buffer != wbuf || w.Offset != woff {
			t.Fatal("a weight was moved")
		}
		if wv.Buffer != wbuf || wv.Offset != woff {
			t.Fatal("a view of a weight does not point at it")
		}
		if err := core.SetFloat32s(x, make([]float32, 16)); err != nil {
			t.Fatal(err)
		}
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		got, _ := core.GetFloat32s(g.Node(-1))
		for i, v := range got {
			if v != float32((i+1)*(i+1)) {
				t.Fatalf("round %d: element %d = %v", round, i, v)
			}
		}
	}
}
