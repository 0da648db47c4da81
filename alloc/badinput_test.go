package alloc_test

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// badCase is one hostile call: run returns the error it gave, whose text must contain every want
// substring (case-insensitively).
type badCase struct {
	class int // issue 10's class: 1 overflow, 3 nil, 6 silent writes and nil results
	name  string
	want  []string
	run   func(t *testing.T) error
}

// smallGraph is out = (a + b) * 2 over NoAlloc [4, 2] f32 inputs, built fresh each call.
func smallGraph() (g *core.Graph, a, out *core.Tensor) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a = ctx.NewTensor2D(core.TypeF32, 4, 2).SetInput()
	b := ctx.NewTensor2D(core.TypeF32, 4, 2).SetInput()
	out = ctx.Scale(ctx.Add(a, b), 2).SetOutput()
	g = core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	return g, a, out
}

// freedGraph allocates smallGraph with a graph allocator, then frees the allocator.
func freedGraph(t *testing.T) (a, out *core.Tensor) {
	g, a, out := smallGraph()
	ga := alloc.NewGraphAllocator(core.HostBufferType())
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := ga.Free(); err != nil {
		t.Fatal(err)
	}
	return a, out
}

func newBackend(t *testing.T) core.Backend {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// TestBadInput is issue 10's sweep for alloc: every hostile call returns an error whose text names
// the problem, and none panics.
func TestBadInput(t *testing.T) {
	host := core.HostBufferType()
	ov := []string{"overflow"}
	freed := []string{"buffer was freed"}
	noAlloc := func() *core.Context { return core.NewContext(core.ContextParams{NoAlloc: true}) }
	cases := []badCase{
		{1, "AllocCtxTensors sizes sum past int64", ov, func(*testing.T) error {
			ctx := noAlloc()
			ctx.NewTensor1D(core.TypeI8, 1<<62)
			ctx.NewTensor1D(core.TypeI8, 1<<62)
			_, err := alloc.AllocCtxTensorsFromBufferType(ctx, host)
			return err
		}},
		{1, "AllocCtxTensors of a hand-grown tensor", ov, func(*testing.T) error {
			ctx := noAlloc()
			x := ctx.NewTensor1D(core.TypeF32, 4)
			x.Ne[1] = 1 << 62
			_, err := alloc.AllocCtxTensorsFromBufferType(ctx, host)
			return err
		}},
		{1, "AllocCtxTensors larger than the machine", []string{"cannot allocate"}, func(*testing.T) error {
			ctx := noAlloc()
			ctx.NewTensor1D(core.TypeF32, 1<<50)
			_, err := alloc.AllocCtxTensorsFromBufferType(ctx, host)
			return err
		}},
		{1, "Reserve of a hand-grown tensor", ov, func(*testing.T) error {
			g, a, _ := smallGraph()
			a.Ne[2] = 1 << 62
			return alloc.NewGraphAllocator(host).Reserve(g)
		}},
		{1, "ReserveSizeN of tensors past the plan limit", ov, func(*testing.T) error {
			ctx := noAlloc()
			a := ctx.NewTensor1D(core.TypeF32, 1<<58).SetInput()
			out := ctx.Add(ctx.Add(a, a), a)
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(ctx.Cast(out, core.TypeF16))
			_, err := alloc.NewGraphAllocator(host).ReserveSizeN(g, nil, nil)
			return err
		}},
		{1, "Reserve of a graph larger than the machine", []string{"cannot allocate"}, func(*testing.T) error {
			ctx := noAlloc()
			out := ctx.Sqr(ctx.NewTensor1D(core.TypeF32, 1<<50))
			g := core.NewGraph(core.DefaultGraphSize)
			g.BuildForwardExpand(out)
			return alloc.NewGraphAllocator(host).Reserve(g)
		}},
		{1, "TensorAllocator of a hand-grown tensor", ov, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			x := noAlloc().NewTensor1D(core.TypeF32, 4)
			x.Ne[3] = math.MaxInt64
			return alloc.NewTensorAllocator(buf).Alloc(x)
		}},
		{1, "TensorAllocator past its buffer", []string{"not enough space"}, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			return alloc.NewTensorAllocator(buf).Alloc(noAlloc().NewTensor1D(core.TypeF32, 64))
		}},

		{3, "NewGraphAllocator with no buffer types: Reserve", []string{"no buffer types"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return alloc.NewGraphAllocator().Reserve(g)
		}},
		{3, "NewGraphAllocator with no buffer types: AllocGraph", []string{"no buffer types"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return alloc.NewGraphAllocator().AllocGraph(g)
		}},
		{3, "NewGraphAllocator with no buffer types: Err", []string{"no buffer types"}, func(*testing.T) error {
			return alloc.NewGraphAllocator().Err()
		}},
		{3, "NewGraphAllocator with a nil buffer type: Reserve", []string{"buffer type 1 is nil"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return alloc.NewGraphAllocator(host, nil).Reserve(g)
		}},
		{3, "NewGraphAllocator with a nil buffer type", []string{"nil"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return alloc.NewGraphAllocator(host, nil).AllocGraphN(g, nil, nil)
		}},
		{3, "Reserve nil graph", []string{"nil graph"}, func(*testing.T) error { return alloc.NewGraphAllocator(host).Reserve(nil) }},
		{3, "AllocGraph nil graph", []string{"nil graph"}, func(*testing.T) error { return alloc.NewGraphAllocator(host).AllocGraph(nil) }},
		{3, "ReserveSizeN nil graph", []string{"nil graph"}, func(*testing.T) error {
			_, err := alloc.NewGraphAllocator(host).ReserveSizeN(nil, nil, nil)
			return err
		}},
		{3, "nil allocator Reserve", []string{"nil graph allocator"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return (*alloc.GraphAllocator)(nil).Reserve(g)
		}},
		{3, "nil allocator AllocGraph", []string{"nil graph allocator"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return (*alloc.GraphAllocator)(nil).AllocGraph(g)
		}},
		{3, "graph with a nil node", []string{"nil"}, func(*testing.T) error {
			return alloc.NewGraphAllocator(host).Reserve(core.NewGraphFromLists([]*core.Tensor{nil}, nil))
		}},
		{3, "ReserveN with a buffer id out of range", []string{"buffer id"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return alloc.NewGraphAllocator(host).ReserveN(g, []int{0, 7}, nil)
		}},
		{3, "ReserveN with too few ids", []string{"node buffer ids"}, func(*testing.T) error {
			g, _, _ := smallGraph()
			return alloc.NewGraphAllocator(host).ReserveN(g, []int{0}, nil)
		}},
		{3, "AllocCtxTensors nil context", []string{"nil context"}, func(t *testing.T) error {
			_, err := alloc.AllocCtxTensors(nil, newBackend(t))
			return err
		}},
		{3, "AllocCtxTensors nil backend", []string{"nil backend"}, func(*testing.T) error {
			_, err := alloc.AllocCtxTensors(noAlloc(), nil)
			return err
		}},
		{3, "AllocCtxTensorsFromBufferType nil buffer type", []string{"nil"}, func(*testing.T) error {
			_, err := alloc.AllocCtxTensorsFromBufferType(noAlloc(), nil)
			return err
		}},
		{3, "TensorAllocator over a nil buffer", []string{"nil allocator or buffer"}, func(*testing.T) error {
			return alloc.NewTensorAllocator(nil).Alloc(noAlloc().NewTensor1D(core.TypeF32, 4))
		}},
		{3, "TensorAllocator.Alloc nil tensor", []string{"nil tensor"}, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			return alloc.NewTensorAllocator(buf).Alloc(nil)
		}},
		{3, "MultiBuffer SetTensor nil tensor", []string{"nil tensor"}, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			return alloc.NewMultiBuffer(buf, nil).SetTensor(nil, []byte{1}, 0)
		}},

		{6, "AllocCtxTensors of an empty context", []string{"needs memory"}, func(t *testing.T) error {
			buf, err := alloc.AllocCtxTensors(noAlloc(), newBackend(t))
			if buf != nil || !errors.Is(err, alloc.ErrNothingToAllocate) {
				return fmt.Errorf("got %v, %v; want nil and ErrNothingToAllocate", buf, err)
			}
			return err
		}},
		{6, "AllocCtxTensors of a context of views only", []string{"needs memory"}, func(*testing.T) error {
			ctx := noAlloc()
			ctx.View1D(hostTensor(), 2, 0)
			_, err := alloc.AllocCtxTensorsFromBufferType(ctx, host)
			return err
		}},
		{6, "AllocCtxTensors of a context holding an error", []string{"holds an error", "negative size"}, func(*testing.T) error {
			ctx := noAlloc()
			ctx.NewTensor1D(core.TypeF32, -3)
			_, err := alloc.AllocCtxTensorsFromBufferType(ctx, host)
			return err
		}},
		{6, "AllocCtxTensors of an allocating context", []string{"NoAlloc"}, func(*testing.T) error {
			_, err := alloc.AllocCtxTensorsFromBufferType(core.NewContext(core.ContextParams{MemSize: 1024}), host)
			return err
		}},
		{6, "TensorSet after the graph allocator's Free", freed, func(t *testing.T) error {
			a, _ := freedGraph(t)
			return core.TensorSet(a, make([]byte, 4), 0)
		}},
		{6, "SetFloat32s after the graph allocator's Free", freed, func(t *testing.T) error {
			a, _ := freedGraph(t)
			return core.SetFloat32s(a, make([]float32, 8))
		}},
		{6, "GetFloat32s after the graph allocator's Free", freed, func(t *testing.T) error {
			_, out := freedGraph(t)
			_, err := core.GetFloat32s(out)
			return err
		}},
		{6, "HostData after the graph allocator's Free", freed, func(t *testing.T) error {
			_, out := freedGraph(t)
			_, err := out.HostData()
			return err
		}},
		{6, "compute after the graph allocator's Free", freed, func(t *testing.T) error {
			g, _, _ := smallGraph()
			ga := alloc.NewGraphAllocator(host)
			if err := ga.AllocGraph(g); err != nil {
				return err
			}
			_ = ga.Free()
			for _, n := range g.Nodes() {
				if err := core.TensorMemset(n, 0, 0, n.NBytes()); err != nil {
					return err
				}
			}
			return nil
		}},
		{6, "AllocCtxTensors buffer freed, then TensorGet", freed, func(*testing.T) error {
			ctx := noAlloc()
			x := ctx.NewTensor1D(core.TypeF32, 4)
			buf, err := alloc.AllocCtxTensorsFromBufferType(ctx, host)
			if err != nil {
				return err
			}
			_ = buf.Free()
			return core.TensorGet(x, make([]byte, 4), 0)
		}},
		{6, "MultiBuffer SetTensor after Free", freed, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			x := noAlloc().NewTensor1D(core.TypeF32, 4)
			if err := core.TensorAlloc(buf, x, 0); err != nil {
				return err
			}
			mb := alloc.NewMultiBuffer(buf)
			_ = mb.Free()
			return mb.SetTensor(x, make([]byte, 4), 0)
		}},
		{6, "MultiBuffer Clear after Free", freed, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			mb := alloc.NewMultiBuffer(buf)
			_ = mb.Free()
			return mb.Clear(0)
		}},
		{6, "TensorAllocator into a freed buffer", freed, func(*testing.T) error {
			buf, _ := host.Alloc(64)
			ta := alloc.NewTensorAllocator(buf)
			_ = buf.Free()
			return ta.Alloc(noAlloc().NewTensor1D(core.TypeF32, 4))
		}},
	}
	counts := map[int]int{}
	for _, c := range cases {
		counts[c.class]++
		t.Run(fmt.Sprintf("class%d/%s", c.class, c.name), func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v\n%s", r, debug.Stack())
					}
				}()
				err = c.run(t)
			}()
			if err == nil {
				t.Fatalf("accepted; want an error containing %q", c.want)
			}
			for _, w := range c.want {
				if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(w)) {
					t.Fatalf("error %q does not contain %q", err, w)
				}
			}
		})
	}
	t.Logf("alloc bad-input cases per class: overflow (1) %d, nil (3) %d, silent writes / nil results (6) %d; total %d",
		counts[1], counts[3], counts[6], len(cases))
}

// hostTensor is an allocated 8-element F32 tensor of its own context.
func hostTensor() *core.Tensor {
	return core.NewContext(core.ContextParams{MemSize: 1 << 12}).NewTensor1D(core.TypeF32, 8)
}

// TestGraphAllocatorAfterFree: after Free the allocator works again, and the tensors it placed anew
// hold data again.
func TestGraphAllocatorAfterFree(t *testing.T) {
	g, a, out := smallGraph()
	ga := alloc.NewGraphAllocator(core.HostBufferType())
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := ga.Free(); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(a, make([]float32, 8)); !errors.Is(err, core.ErrBufferFreed) {
		t.Fatalf("after Free: %v, want ErrBufferFreed", err)
	}
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	be := newBackend(t)
	b := g.Leafs()[1]
	if err := core.SetFloat32s(a, []float32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(b, []float32{1, 1, 1, 1, 1, 1, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := float32(2 * (i + 2)); v != want {
			t.Fatalf("out = %v, want (a+1)*2", got)
		}
	}
}

// TestNilAllocatorMethods: the methods of a nil or argument-less allocator do not panic.
func TestNilAllocatorMethods(t *testing.T) {
	var ga *alloc.GraphAllocator
	if ga.NumBuffers() != 0 || ga.BufferSize(0) != 0 || ga.Buffers(0) != nil || ga.BufferType(0) != nil ||
		ga.Replans() != 0 || ga.Replanned() || ga.Free() != nil || ga.Stats().Policy != "" {
		t.Fatal("nil allocator accessors")
	}
	if err := ga.Err(); err == nil || !strings.Contains(err.Error(), "nil graph allocator") {
		t.Fatalf("nil allocator Err = %v", err)
	}
	if bt := alloc.NewGraphAllocator(core.HostBufferType()).BufferType(5); bt != nil {
		t.Fatalf("BufferType(5) = %v", bt)
	}
	d := alloc.NewDynAllocator(32, 0)
	d.Alloc(-5)
	d.Alloc(math.MaxInt64)
	d.Free(alloc.Addr{Chunk: 0, Offset: -1}, math.MaxInt64)
	if s := d.Size(); s <= 0 {
		t.Fatalf("DynAllocator size %d after a clamped huge allocation", s)
	}
	if mb := alloc.NewMultiBuffer(nil, nil); mb.Size() != 0 || mb.Type() != nil {
		t.Fatal("empty multi-buffer")
	}
}

// plainBT is a buffer type whose buffers cannot report Free (no core.FreedReporter), like a device
// buffer of a backend that does not implement it.
type plainBT struct{}

func (plainBT) Name() string                   { return "Plain" }
func (plainBT) Alignment() int64               { return 32 }
func (plainBT) MaxSize() int64                 { return 0 }
func (plainBT) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (plainBT) IsHost() bool                   { return false }
func (plainBT) Device() core.Device            { return nil }
func (plainBT) Alloc(size int64) (core.Buffer, error) {
	return &plainBuf{data: make([]byte, size)}, nil
}

type plainBuf struct {
	data  []byte
	usage core.BufferUsage
}

func (b *plainBuf) Type() core.BufferType       { return plainBT{} }
func (b *plainBuf) Size() int64                 { return int64(len(b.data)) }
func (b *plainBuf) Usage() core.BufferUsage     { return b.usage }
func (b *plainBuf) SetUsage(u core.BufferUsage) { b.usage = u }
func (b *plainBuf) Free() error                 { b.data = nil; return nil }
func (b *plainBuf) Clear(v byte) error          { return nil }
func (b *plainBuf) span(t *core.Tensor, off, n int64) ([]byte, error) {
	if t.Offset+off+n > int64(len(b.data)) {
		return nil, fmt.Errorf("bytes lie outside its %d-byte buffer", len(b.data))
	}
	return b.data[t.Offset+off : t.Offset+off+n], nil
}
func (b *plainBuf) SetTensor(t *core.Tensor, data []byte, off int64) error {
	d, err := b.span(t, off, int64(len(data)))
	copy(d, data)
	return err
}
func (b *plainBuf) GetTensor(t *core.Tensor, dst []byte, off int64) error {
	d, err := b.span(t, off, int64(len(dst)))
	copy(dst, d)
	return err
}
func (b *plainBuf) MemsetTensor(t *core.Tensor, v byte, off, n int64) error {
	_, err := b.span(t, off, n)
	return err
}

// TestFreeWithoutFreedReporter: after a graph allocator's Free, tensors in buffers that cannot
// report Free themselves fail with "buffer was freed" (not "outside its 0-byte buffer"), and the
// allocator places them again afterwards.
func TestFreeWithoutFreedReporter(t *testing.T) {
	g, a, out := smallGraph()
	ga := alloc.NewGraphAllocator(plainBT{})
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := core.TensorSet(a, make([]byte, 32), 0); err != nil {
		t.Fatal(err)
	}
	if err := ga.Free(); err != nil {
		t.Fatal(err)
	}
	for _, x := range []*core.Tensor{a, out} {
		if err := core.TensorSet(x, make([]byte, 4), 0); !errors.Is(err, core.ErrBufferFreed) ||
			!strings.Contains(err.Error(), "buffer was freed") {
			t.Fatalf("%v after Free: %v, want buffer was freed", x, err)
		}
	}
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Buffer.(*plainBuf); !ok {
		t.Fatalf("after a new AllocGraph the input lives in %T", a.Buffer)
	}
	if err := core.TensorSet(a, make([]byte, 32), 0); err != nil {
		t.Fatal(err)
	}
}

// TestAllocCtxTensorsEmptyTensors: tensors of 0 bytes get a place too (a 1-byte buffer), so they
// are never left without memory by a successful call.
func TestAllocCtxTensorsEmptyTensors(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	e := ctx.NewTensor2D(core.TypeF32, 0, 3)
	buf, err := alloc.AllocCtxTensorsFromBufferType(ctx, core.HostBufferType())
	if err != nil || buf == nil {
		t.Fatalf("AllocCtxTensors of an empty tensor: %v, %v", buf, err)
	}
	if e.Buffer == nil {
		t.Fatal("the empty tensor has no memory")
	}
	if v, err := core.GetFloat32s(e); err != nil || len(v) != 0 {
		t.Fatalf("GetFloat32s of the empty tensor: %v, %v", v, err)
	}
	if err := core.SetFloat32s(e, nil); err != nil {
		t.Fatal(err)
	}
}
