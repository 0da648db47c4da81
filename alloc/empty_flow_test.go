package alloc_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

const (
	f32 = core.TypeF32
	i32 = core.TypeI32
)

// TestEmptyTensorsFlow checks core's gate for empty tensors on the CPU reference (it lives here
// because core's own tests must not link a backend: its registry test needs a registry without
// one). It builds ops on empty tensors — empty views with non-zero strides given
// included (issue 10's View2D(a, 0, 3, 4, 0)) — and computes them on the CPU reference with one and
// several threads: the constructors either accept them and the result is right (zero-size, or the
// defined value of a reduction over nothing), never a panic.
func TestEmptyTensorsFlow(t *testing.T) {
	for _, threads := range []int{1, 4} {
		c := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		a := c.NewTensor1D(f32, 8)
		b := c.NewTensor2D(f32, 4, 3)
		idx := c.NewTensor1D(i32, 0)
		w0 := c.NewTensor2D(f32, 4, 0)
		if err := core.SetFloat32s(a, []float32{1, 2, 3, 4, 5, 6, 7, 8}); err != nil {
			t.Fatal(err)
		}
		if err := core.SetFloat32s(b, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}); err != nil {
			t.Fatal(err)
		}
		ev := c.View2D(a, 0, 3, 4, 0)
		if ev.Ne != [4]int64{0, 3, 1, 1} || ev.NBytes() != 0 || ev.Nb[1] != 0 {
			t.Fatalf("empty view: ne %v nb %v nbytes %d; want dense strides of its shape", ev.Ne, ev.Nb, ev.NBytes())
		}
		ev3 := c.View3D(a, 2, 0, 2, 8, 16, 4)
		sumRows := c.SumRows(ev)
		sum := c.Sum(ev)
		mean := c.Mean(ev)
		cat := c.Concat(c.View2D(a, 0, 3, 4, 0), b, 0)
		amax := c.Argmax(ev)
		empties := []*core.Tensor{
			c.Add(ev, ev), c.Mul(ev3, ev3), c.Norm(ev, 1e-5), c.RMSNorm(ev, 1e-5), c.SoftMax(ev),
			c.Cont(ev), c.Scale(ev3, 2), c.Silu(ev), c.Cont(c.Transpose(ev)), c.Argsort(ev, core.SortAsc),
			c.GetRows(b, idx), c.MulMat(w0, b), c.Cpy(ev, c.NewTensor2D(f32, 0, 3)), c.Repeat(ev, ev),
		}
		if err := c.Err(); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		for _, out := range append([]*core.Tensor{sumRows, sum, mean, cat, amax}, empties...) {
			g.BuildForwardExpand(out)
		}
		if err := cpu.Compute(g, threads); err != nil {
			t.Fatalf("threads %d: %v", threads, err)
		}
		for _, e := range empties {
			if !e.IsEmpty() {
				t.Fatalf("%v is not empty", e)
			}
		}
		want := map[*core.Tensor][]float32{sumRows: {0, 0, 0}, sum: {0}, cat: {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}
		for out, w := range want {
			got, err := core.GetFloat32s(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(w) {
				t.Fatalf("%v: %v, want %v", out, got, w)
			}
			for i := range w {
				if got[i] != w[i] {
					t.Fatalf("threads %d: %v = %v, want %v", threads, out, got, w)
				}
			}
		}
		if am, err := core.GetFloat32s(amax); err != nil || len(am) != 3 || am[0] != 0 || am[1] != 0 || am[2] != 0 {
			t.Fatalf("argmax of empty rows = %v (%v), want 0 0 0", am, err)
		}
		m, err := core.GetFloat32s(mean)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range m {
			if !math.IsNaN(float64(v)) {
				t.Fatalf("mean of no elements = %v, want NaN (0/0, as ggml)", m)
			}
		}
	}
}
