package cpu_test

import (
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

func mustF32(t *testing.T, x *core.Tensor) []float32 {
	t.Helper()
	v, err := core.GetFloat32s(x)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func equalF32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: element %d = %v, want %v (got %v)", what, i, got[i], want[i], got)
		}
	}
}

// Seed 000: A is 4x2, B is 3x2; mul_mat(A, B) = A·Bᵀ printed as a 4 x 3 (ne0 x ne1) result.
func TestSeed000MulMat(t *testing.T) {
	for _, threads := range []int{1, 2, 3} {
		ctx := core.NewContext(core.ContextParams{MemSize: 4*2*4 + 3*2*4 + 3*core.TensorOverhead + core.GraphOverhead + 1024})
		a := ctx.NewTensor2D(core.TypeF32, 2, 4)
		b := ctx.NewTensor2D(core.TypeF32, 2, 3)
		copy(a.Float32s(), []float32{2, 8, 5, 1, 4, 2, 8, 6})
		copy(b.Float32s(), []float32{10, 5, 9, 9, 5, 4})
		r := ctx.MulMat(a, b)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(r)
		if err := cpu.Compute(g, threads); err != nil {
			t.Fatal(err)
		}
		if r.Ne[0] != 4 || r.Ne[1] != 3 {
			t.Fatalf("result shape %v, want [4 3 1 1]", r.Ne)
		}
		equalF32(t, "seed 000", r.Float32s(), []float32{60, 55, 50, 110, 90, 54, 54, 126, 42, 29, 28, 64})
	}
}

// Seed 001: C = A (4x3) × B (3x4). In ggml terms mul_mat(A, Bᵀ) with Bᵀ stored as 4 rows of 3.
func TestSeed001Product(t *testing.T) {
	for _, threads := range []int{1, 2, 4} {
		ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
		a := ctx.NewTensor2D(core.TypeF32, 3, 4) // rows of A
		bt := ctx.NewTensor2D(core.TypeF32, 4, 3)
		copy(a.Float32s(), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
		copy(bt.Float32s(), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
		// mul_mat(x, y)[i, j] = x_row_i · y_row_j; C[r][c] = A_row_r · B_col_c, so x = columns of B
		// (B transposed, made contiguous) and y = rows of A; the result's ne0 runs over C's columns.
		c := ctx.MulMat(ctx.Cont(ctx.Transpose(bt)), a)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(c)
		if err := cpu.Compute(g, threads); err != nil {
			t.Fatal(err)
		}
		equalF32(t, "seed 001", c.Float32s(), []float32{38, 44, 50, 56, 83, 98, 113, 128, 128, 152, 176, 200, 173, 206, 239, 272})
	}
}

// Seed 001's chunking walk-through: 4x4 with chunk size 2 and 2 threads gives 3x3 chunks of 2x2.
func TestSeed003Add(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 30})
	a := ctx.NewTensor2D(core.TypeF32, 2, 3)
	b := ctx.NewTensor2D(core.TypeF32, 2, 3)
	copy(a.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	copy(b.Float32s(), []float32{1, 1, 1, 1, 1, 1})
	if a.Ne != [4]int64{2, 3, 1, 1} || a.Nb != [4]int64{4, 8, 24, 24} {
		t.Fatalf("f32 [2,3]: ne %v nb %v, want [2 3 1 1] [4 8 24 24]", a.Ne, a.Nb)
	}
	r := ctx.Add(a, b)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(r)
	if err := cpu.Compute(g, 1); err != nil {
		t.Fatal(err)
	}
	equalF32(t, "seed 003 add", r.Float32s(), []float32{2, 3, 4, 5, 6, 7})
}

// Seed 004: f(x) = a·x² + b at x = 2, a = 3, b = 4 is 16.
func TestSeed004Polynomial(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
	x := ctx.NewTensor1D(core.TypeF32, 1).SetParam()
	a := ctx.NewTensor1D(core.TypeF32, 1)
	b := ctx.NewTensor1D(core.TypeF32, 1)
	x2 := ctx.Mul(x, x)
	f := ctx.Add(ctx.Mul(a, x2), b)
	x.Float32s()[0], a.Float32s()[0], b.Float32s()[0] = 2, 3, 4
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(f)
	if err := cpu.Compute(g, 2); err != nil {
		t.Fatal(err)
	}
	if got := f.Float32s()[0]; got != 16 {
		t.Fatalf("f(2) = %v, want 16", got)
	}
	// x is a parameter, so it is a node, not a leaf; a and b are leafs.
	if len(g.Leafs()) != 2 || g.NNodes() != 4 {
		t.Fatalf("leafs %d nodes %d, want 2 and 4", len(g.Leafs()), g.NNodes())
	}
}
