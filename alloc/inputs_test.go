package alloc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
)

// sumGraph builds y = Σ ((2x + x) / 2)² over x = [1 2 3]: 2.25·(1+4+9) = 31.5. The first SCALE's
// result takes the memory of nothing; the ADD, the second SCALE and SQR are computed in place,
// which is where an allocator that frees x after its last reader lets a node overwrite it.
func sumGraph(input bool) (x, y *core.Tensor, g *core.Graph) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x = ctx.NewTensor1D(core.TypeF32, 3).SetName("x")
	if input {
		x.SetInput()
	}
	y = ctx.Sum(ctx.Sqr(ctx.Scale(ctx.Add(ctx.Scale(x, 2), x), 0.5))).SetName("y")
	g = core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	return x, y, g
}

// Trap 1 of issue 21: a leaf the caller did not flag with SetInput keeps its memory for the whole
// graph, so computing the graph again (without setting x again) gives the same result. ggml frees
// such a leaf after its last reader and lets an in-place node overwrite it: 31.5, then garbage.
func TestUnflaggedLeafIsNotOverwritten(t *testing.T) {
	be := newBackend(t)
	for _, flagged := range []bool{false, true} {
		x, y, g := sumGraph(flagged)
		ga := alloc.NewGraphAllocator(be.DefaultBufferType())
		if err := ga.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(x, []float32{1, 2, 3}); err != nil {
			t.Fatal(err)
		}
		for run := 0; run < 3; run++ {
			if err := be.GraphCompute(g); err != nil {
				t.Fatalf("flagged %v, run %d: %v", flagged, run, err)
			}
			got, err := core.GetFloat32s(y)
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != 31.5 {
				t.Fatalf("flagged %v, run %d: y = %v, want 31.5 (x is now %v)", flagged, run, got[0], mustGet(t, x))
			}
		}
		if v := mustGet(t, x); v[0] != 1 || v[1] != 2 || v[2] != 3 {
			t.Fatalf("flagged %v: x = %v after three runs, want [1 2 3]", flagged, v)
		}
		ga.Free()
	}
}

func mustGet(t *testing.T, x *core.Tensor) []float32 {
	t.Helper()
	v, err := core.GetFloat32s(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Trap 2 of issue 21: after AllocGraph gives an input memory that held other bytes, computing the
// graph before the input is written is an error that names the input, on the plain
// allocator + backend path; every way of writing it clears the error.
func TestUnwrittenInputIsAnError(t *testing.T) {
	be := newBackend(t)
	ga := alloc.NewGraphAllocator(be.DefaultBufferType())
	defer ga.Free()

	// A first graph leaves its bytes in the compute buffer.
	x1, y1, g1 := sumGraph(true)
	if err := ga.AllocGraph(g1); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(x1, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if err := be.GraphCompute(g1); err != nil {
		t.Fatal(err)
	}
	if v := mustGet(t, y1); v[0] != 31.5 {
		t.Fatalf("y1 = %v, want 31.5", v[0])
	}

	writes := []struct {
		name  string
		write func(x *core.Tensor) error
		want  float32
	}{
		{"SetFloat32s", func(x *core.Tensor) error { return core.SetFloat32s(x, []float32{2, 0, 0}) }, 9},
		{"SetFloat32s through a strided view", func(x *core.Tensor) error {
			c := x.Context()
			r := c.Reshape2D(x, 3, 1)
			v := c.Transpose(r) // ne [1 3], nb [12 4]: not contiguous
			for _, t := range []*core.Tensor{r, v} {
				if err := core.ViewInit(t); err != nil {
					return err
				}
			}
			return core.SetFloat32s(v, []float32{0, 2, 0})
		}, 9},
		{"TensorSet", func(x *core.Tensor) error {
			return core.TensorSet(x, []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0}, 0) // 1, 0, 0
		}, 2.25},
		{"TensorMemset", func(x *core.Tensor) error { return core.TensorMemset(x, 0, 0, x.NBytes()) }, 0},
		{"TensorCopy", func(x *core.Tensor) error {
			src := core.NewContext(core.ContextParams{MemSize: 1 << 10}).NewTensor1D(core.TypeF32, 3)
			copy(src.Float32s(), []float32{0, 0, 2})
			return core.TensorCopy(src, x)
		}, 9},
		{"host slice", func(x *core.Tensor) error {
			if v := x.Float32s(); v != nil {
				copy(v, []float32{0, 0, 1})
				return nil
			}
			_, err := x.HostData() // says why there is no host slice
			return err
		}, 2.25},
	}
	for _, w := range writes {
		// A second graph of the same shape reuses the plan: its x gets x1's memory, which holds
		// [1 2 3] — a silent 31.5 if computed now.
		x, y, g := sumGraph(true)
		if err := ga.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		err := be.GraphCompute(g)
		if !errors.Is(err, core.ErrInputNotSet) || !strings.Contains(err.Error(), "input x") {
			t.Fatalf("%s: computing before x is written: %v, want ErrInputNotSet naming x", w.name, err)
		}
		if err := w.write(x); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
		if err := be.GraphCompute(g); err != nil {
			t.Fatalf("%s: after writing x: %v", w.name, err)
		}
		if v := mustGet(t, y); v[0] != w.want {
			t.Fatalf("%s: y = %v, want %v", w.name, v[0], w.want)
		}
		// Placed again where it was, by the allocation right before: x keeps its bytes.
		if err := ga.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if err := be.GraphCompute(g); err != nil {
			t.Fatalf("%s: x placed again at the same address: %v", w.name, err)
		}
		if v := mustGet(t, y); v[0] != w.want {
			t.Fatalf("%s: second run: y = %v, want %v", w.name, v[0], w.want)
		}
	}

	// A write through a view of x counts as a write of x.
	x, y, g := sumGraph(true)
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	vctx := core.NewContext(core.ContextParams{NoAlloc: true})
	v := vctx.View1D(x, 3, 0)
	if err := core.ViewInit(v); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(v, []float32{1, 1, 1}); err != nil {
		t.Fatal(err)
	}
	if err := be.GraphCompute(g); err != nil {
		t.Fatalf("x written through a view: %v", err)
	}
	if got := mustGet(t, y); got[0] != 6.75 {
		t.Fatalf("y = %v, want 6.75", got[0])
	}

	// Another graph placed in between may overwrite x: placing g again asks for x again.
	x2, _, g2 := sumGraph(true)
	if err := ga.AllocGraph(g2); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(x2, []float32{5, 5, 5}); err != nil {
		t.Fatal(err)
	}
	if err := be.GraphCompute(g2); err != nil {
		t.Fatal(err)
	}
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if err := be.GraphCompute(g); !errors.Is(err, core.ErrInputNotSet) {
		t.Fatalf("x after another graph used its memory: %v, want ErrInputNotSet", err)
	}
}

// Tensors with memory of their own (weights in a buffer of AllocCtxTensors, host contexts) are
// not inputs of the graph allocator: they are never asked to be written again.
func TestOwnMemoryIsNotAnInput(t *testing.T) {
	be := newBackend(t)
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := wctx.NewTensor1D(core.TypeF32, 3).SetName("w")
	buf, err := alloc.AllocCtxTensors(wctx, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := core.SetFloat32s(w, []float32{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	ga := alloc.NewGraphAllocator(be.DefaultBufferType())
	defer ga.Free()
	for run := 0; run < 2; run++ {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		y := ctx.Sum(ctx.Sqr(w))
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(y)
		if err := ga.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		if err := be.GraphCompute(g); err != nil {
			t.Fatalf("run %d: %v", run, err)
		}
		if v := mustGet(t, y); v[0] != 14 {
			t.Fatalf("run %d: y = %v, want 14", run, v[0])
		}
	}
}
