package cpu_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Hand-computed values for ADD_ID, L2_NORM, COUNT_EQUAL, SET, TOP_K, ARANGE, FILL, TRI, DIAG,
// CUMSUM, ROLL, PAD, PAD_REFLECT_1D and TIMESTEP_EMBEDDING, at one and three threads.

// ixF32 makes an f32 tensor of shape ne holding vals.
func ixF32(t *testing.T, ctx *core.Context, vals []float32, ne ...int64) *core.Tensor {
	t.Helper()
	x := ctx.NewTensor(core.TypeF32, ne...)
	if err := core.SetFloat32s(x, vals); err != nil {
		t.Fatal(err)
	}
	return x
}

// ixI32 makes an i32 tensor of shape ne holding vals.
func ixI32(t *testing.T, ctx *core.Context, vals []int32, ne ...int64) *core.Tensor {
	t.Helper()
	x := ctx.NewTensor(core.TypeI32, ne...)
	if err := core.SetInt32s(x, vals); err != nil {
		t.Fatal(err)
	}
	return x
}

// ixSeq is 1, 2, … n as float32.
func ixSeq(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i + 1)
	}
	return v
}

// ixRun builds the graph made by build at 1 and 3 threads and checks the result's values against
// want exactly.
func ixRun(t *testing.T, name string, want []float32, build func(t *testing.T, ctx *core.Context) *core.Tensor) {
	t.Helper()
	for _, th := range []int{1, 3} {
		ctx := eltCtx()
		out := build(t, ctx)
		eltCompute(t, ctx, out, th)
		got, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s, %d threads:\n got %v\nwant %v", name, th, got, want)
		}
	}
}

func TestAddID(t *testing.T) {
	// a [3, 2, 2]: rows (e, tok); b [3, 3] experts 0..2; ids [2, 2].
	ixRun(t, "ADD_ID", []float32{
		1 + 20, 2 + 21, 3 + 22, 4 + 0, 5 + 1, 6 + 2,
		7 + 10, 8 + 11, 9 + 12, 10 + 20, 11 + 21, 12 + 22,
	}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ixF32(t, ctx, ixSeq(12), 3, 2, 2)
		b := ixF32(t, ctx, []float32{0, 1, 2, 10, 11, 12, 20, 21, 22}, 3, 3)
		return ctx.AddID(a, b, ixI32(t, ctx, []int32{2, 0, 1, 2}, 2, 2))
	})
	ctx := eltCtx()
	a := ixF32(t, ctx, ixSeq(6), 3, 2, 1)
	out := ctx.AddID(a, ixF32(t, ctx, ixSeq(6), 3, 2), ixI32(t, ctx, []int32{0, 2}, 2, 1))
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := cpu.Compute(g, 2); err == nil || !strings.Contains(err.Error(), "ADD_ID") {
		t.Errorf("ADD_ID with id 2 of 2 experts: err %v, want an ADD_ID error", err)
	}
}

func TestL2Norm(t *testing.T) {
	// Rows (3, 4) → norm 5; (0, 0) → max(0, eps) = 0.5 → 0; (0.3, 0.4) → norm 0.5 < eps 1 → ×1.
	ixRun(t, "L2_NORM", []float32{0.6, 0.8, 0, 0}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.L2Norm(ixF32(t, ctx, []float32{3, 4, 0, 0}, 2, 2), 0.5)
	})
	ixRun(t, "L2_NORM(eps)", []float32{0.3, 0.4}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.L2Norm(ixF32(t, ctx, []float32{0.3, 0.4}, 2), 1)
	})
	// A transposed view: columns of [[3, 0], [4, 1]] are the rows (3, 4) and (0, 1).
	ixRun(t, "L2_NORM(transposed)", []float32{0.6, 0.8, 0, 1}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.L2Norm(ctx.Transpose(ixF32(t, ctx, []float32{3, 0, 4, 1}, 2, 2)), 0)
	})
}

func TestCountEqual(t *testing.T) {
	ixRun(t, "COUNT_EQUAL", []float32{4}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ixI32(t, ctx, []int32{1, 2, 3, 4, 5, 6}, 3, 2)
		b := ixI32(t, ctx, []int32{1, 0, 3, 4, 5, 0}, 3, 2)
		return ctx.CountEqual(a, b)
	})
	// A transposed operand: rows (1 4) (2 5) (3 6) against (1 4) (2 0) (3 0).
	ixRun(t, "COUNT_EQUAL(transposed)", []float32{4}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ctx.Transpose(ixI32(t, ctx, []int32{1, 2, 3, 4, 5, 6}, 3, 2))
		b := ixI32(t, ctx, []int32{1, 4, 2, 0, 3, 0}, 2, 3)
		return ctx.CountEqual(a, b)
	})
	ctx := eltCtx()
	out := ctx.CountEqual(ixI32(t, ctx, []int32{1}, 1), ixI32(t, ctx, []int32{1}, 1))
	if out.Type != core.TypeI64 || out.NElements() != 1 {
		t.Errorf("COUNT_EQUAL gives %v, want one i64", out)
	}
}

func TestSet(t *testing.T) {
	// a [4, 3] = 1..12; b [2, 2] written at column 1 of rows 1 and 2 (nb1 = 16, offset 4·(4+1)).
	ixRun(t, "SET", []float32{1, 2, 3, 4, 5, -1, -2, 8, 9, -3, -4, 12}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ixF32(t, ctx, ixSeq(12), 4, 3)
		return ctx.Set(a, ixF32(t, ctx, []float32{-1, -2, -3, -4}, 2, 2), 16, 32, 48, 20)
	})
	ixRun(t, "SET_1D", []float32{1, 2, -1, -2, -3, 6}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Set1D(ixF32(t, ctx, ixSeq(6), 3, 2), ixF32(t, ctx, []float32{-1, -2, -3}, 3), 8)
	})
	// Set2D with a row stride of 3 elements over a [6, 2]: rows at elements 0 and 3.
	ixRun(t, "SET_2D", []float32{-1, -2, 3, -3, -4, 6, 7, 8, 9, 10, 11, 12}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Set2D(ixF32(t, ctx, ixSeq(12), 6, 2), ixF32(t, ctx, []float32{-1, -2, -3, -4}, 2, 2), 12, 0)
	})
	// In place: the result aliases a.
	ixRun(t, "SET(inplace)", []float32{1, 9, 3, 4}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ixF32(t, ctx, ixSeq(4), 4)
		out := ctx.SetInplace(a, ixF32(t, ctx, []float32{9}, 1), 16, 16, 16, 4)
		if out.ViewSrc != a {
			t.Errorf("SetInplace: ViewSrc %v, want a", out.ViewSrc)
		}
		return out
	})
	ixRun(t, "SET(i32)", []float32{1, 7, 3}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Set1D(ixI32(t, ctx, []int32{1, 2, 3}, 3), ixI32(t, ctx, []int32{7}, 1), 4)
	})
}

func TestTopK(t *testing.T) {
	// Row 0 by value: 9 (idx 3), 7 (1), 5 (4), 2 (0) → first two swapped: 1, 3, 4.
	// Row 1 ties 4 at idx 0 and 2 go by index: 0, 2, then NaN last → 2, 0, 1.
	nan := float32(math.NaN())
	ixRun(t, "TOP_K", []float32{1, 3, 4, 2, 0, 1}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.TopK(ixF32(t, ctx, []float32{2, 7, 1, 9, 5, 4, 1, 4, 0, nan}, 5, 2), 3)
	})
	ixRun(t, "TOP_K(k=1)", []float32{3}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.TopK(ixF32(t, ctx, []float32{2, 7, 1, 9}, 4), 1)
	})
}

func TestArange(t *testing.T) {
	ixRun(t, "ARANGE", []float32{1, 1.5, 2, 2.5, 3, 3.5}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Arange(1, 3.75, 0.5) // ⌈2.75/0.5⌉ = 6
	})
	ixRun(t, "ARANGE(exact)", []float32{0, 3}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Arange(0, 6, 3)
	})
}

func TestFill(t *testing.T) {
	ixRun(t, "FILL", []float32{2.5, 2.5, 2.5, 2.5, 2.5, 2.5}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Fill(ixF32(t, ctx, ixSeq(6), 3, 2), 2.5)
	})
	// f16 rounds: 0.1 → 0.0999755859375.
	h := float32(0.0999755859375)
	ixRun(t, "FILL(f16,inplace)", []float32{h, h, h}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.FillInplace(ctx.NewTensor(core.TypeF16, 3), 0.1)
	})
}

func TestTri(t *testing.T) {
	m := ixSeq(9) // rows (1 2 3) (4 5 6) (7 8 9); i0 is the column
	for _, c := range []struct {
		tt   core.TriType
		want []float32
	}{
		{core.TriUpperDiag, []float32{1, 2, 3, 0, 5, 6, 0, 0, 9}},
		{core.TriUpper, []float32{0, 2, 3, 0, 0, 6, 0, 0, 0}},
		{core.TriLowerDiag, []float32{1, 0, 0, 4, 5, 0, 7, 8, 9}},
		{core.TriLower, []float32{0, 0, 0, 4, 0, 0, 7, 8, 0}},
	} {
		ixRun(t, "TRI", c.want, func(t *testing.T, ctx *core.Context) *core.Tensor {
			return ctx.Tri(ixF32(t, ctx, m, 3, 3), c.tt)
		})
	}
}

func TestDiag(t *testing.T) {
	ixRun(t, "DIAG", []float32{1, 0, 0, 2, 3, 0, 0, 4}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Diag(ixF32(t, ctx, ixSeq(4), 2, 1, 2))
	})
}

func TestCumsum(t *testing.T) {
	ixRun(t, "CUMSUM", []float32{1, 3, 6, 4, 9, 15}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Cumsum(ixF32(t, ctx, ixSeq(6), 3, 2))
	})
	// Rows of a permuted tensor ([3, 2] transposed to [2, 3] rows (1, 4), (2, 5), (3, 6)) need
	// unit stride: a view of every second row of [3, 4] instead.
	ixRun(t, "CUMSUM(view)", []float32{1, 3, 6, 7, 15, 24}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		a := ixF32(t, ctx, ixSeq(12), 3, 4)
		return ctx.Cumsum(ctx.View2D(a, 3, 2, 2*a.Nb[1], 0))
	})
}

func TestRoll(t *testing.T) {
	// [3, 2] rows (1 2 3) (4 5 6): shift 1 along dim 0 and 1 along dim 1.
	ixRun(t, "ROLL", []float32{6, 4, 5, 3, 1, 2}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Roll(ixF32(t, ctx, ixSeq(6), 3, 2), 1, 1, 0, 0)
	})
	ixRun(t, "ROLL(negative)", []float32{3, 4, 1, 2}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Roll(ixF32(t, ctx, ixSeq(4), 4), -2, 0, 0, 0)
	})
}

func TestPad(t *testing.T) {
	ixRun(t, "PAD", []float32{1, 2, 0, 3, 4, 0, 0, 0, 0}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Pad(ixF32(t, ctx, ixSeq(4), 2, 2), 1, 1, 0, 0)
	})
	ixRun(t, "PAD_EXT", []float32{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.PadExt(ixF32(t, ctx, ixSeq(4), 2, 2), core.PadParams{Left: [4]int{1, 1}, Right: [4]int{1, 0}})
	})
	// Circular: rows (1 2) (3 4) padded 1 left in dim 0 and 1 right in dim 1.
	ixRun(t, "PAD_EXT(circular)", []float32{2, 1, 2, 4, 3, 4, 2, 1, 2}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.PadExt(ixF32(t, ctx, ixSeq(4), 2, 2), core.PadParams{Left: [4]int{1}, Right: [4]int{0, 1}, Circular: true})
	})
	// A transposed source: rows (1 3) (2 4).
	ixRun(t, "PAD(transposed)", []float32{1, 3, 0, 2, 4, 0}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.Pad(ctx.Transpose(ixF32(t, ctx, ixSeq(4), 2, 2)), 1, 0, 0, 0)
	})
}

func TestPadReflect1D(t *testing.T) {
	ixRun(t, "PAD_REFLECT_1D", []float32{3, 2, 1, 2, 3, 4, 3, 7, 6, 5, 6, 7, 8, 7}, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.PadReflect1D(ixF32(t, ctx, ixSeq(8), 4, 2), 2, 1)
	})
}

func TestTimestepEmbedding(t *testing.T) {
	// dim 5, max_period 10000: half 2, f = (1, 10000^(-1/2) = 0.01), a trailing 0.
	ts := []float32{0, 2}
	var want []float32
	for _, v := range ts {
		f1 := float32(math.Exp(float64(float32(-float32(math.Log(10000)) / 2))))
		want = append(want, float32(math.Cos(float64(v))), float32(math.Cos(float64(v*f1))),
			float32(math.Sin(float64(v))), float32(math.Sin(float64(v*f1))), 0)
	}
	ixRun(t, "TIMESTEP_EMBEDDING", want, func(t *testing.T, ctx *core.Context) *core.Tensor {
		return ctx.TimestepEmbedding(ixF32(t, ctx, ts, 2), 5, 10000)
	})
	if math.Abs(float64(want[6])-math.Cos(0.02)) > 1e-6 || want[0] != 1 || want[2] != 0 {
		t.Errorf("TIMESTEP_EMBEDDING reference %v: want cos(0.02) at 6, cos(0) at 0 and sin(0) at 2", want)
	}
}

func TestIndexOpsBadInput(t *testing.T) {
	f32 := core.TypeF32
	cases := []struct {
		op    string
		build func(ctx *core.Context)
	}{
		{"ADD_ID", func(c *core.Context) {
			c.AddID(c.NewTensor(f32, 3, 2, 2), c.NewTensor(f32, 4, 3), c.NewTensor(core.TypeI32, 2, 2))
		}},
		{"ADD_ID", func(c *core.Context) {
			c.AddID(c.NewTensor(f32, 3, 2, 2), c.NewTensor(f32, 3, 3), c.NewTensor(f32, 2, 2))
		}},
		{"L2_NORM", func(c *core.Context) { c.L2Norm(c.NewTensor(f32, 3), -1) }},
		{"L2_NORM", func(c *core.Context) { c.L2Norm(c.NewTensor(core.TypeF16, 3), 0) }},
		{"COUNT_EQUAL", func(c *core.Context) { c.CountEqual(c.NewTensor(core.TypeI32, 3), c.NewTensor(core.TypeI32, 4)) }},
		{"COUNT_EQUAL", func(c *core.Context) { c.CountEqual(c.NewTensor(f32, 3), c.NewTensor(f32, 3)) }},
		{"SET", func(c *core.Context) { c.Set1D(c.NewTensor(f32, 4), c.NewTensor(f32, 2), 12) }},
		{"SET", func(c *core.Context) { c.Set1D(c.NewTensor(f32, 4), c.NewTensor(core.TypeI32, 2), 0) }},
		{"SET", func(c *core.Context) { c.Set1D(c.NewTensor(f32, 4), c.NewTensor(f32, 5), 0) }},
		{"SET", func(c *core.Context) { c.Set1D(c.Transpose(c.NewTensor(f32, 4, 2)), c.NewTensor(f32, 2), 0) }},
		{"SET", func(c *core.Context) { c.Set(c.NewTensor(f32, 4), c.NewTensor(f32, 2), -4, 0, 0, 0) }},
		{"TOP_K", func(c *core.Context) { c.TopK(c.NewTensor(f32, 4), 5) }},
		{"TOP_K", func(c *core.Context) { c.TopK(c.NewTensor(f32, 4), 0) }},
		{"ARANGE", func(c *core.Context) { c.Arange(3, 1, 1) }},
		{"ARANGE", func(c *core.Context) { c.Arange(0, 1, -1) }},
		{"ARANGE", func(c *core.Context) { c.Arange(0, float32(math.Inf(1)), 1) }},
		{"FILL", func(c *core.Context) { c.Fill(c.NewTensor(core.TypeI32, 4), 1) }},
		{"FILL", func(c *core.Context) { c.Fill(c.Transpose(c.NewTensor(f32, 4, 2)), 1) }},
		{"TRI", func(c *core.Context) { c.Tri(c.NewTensor(f32, 3, 4), core.TriLower) }},
		{"TRI", func(c *core.Context) { c.Tri(c.NewTensor(f32, 3, 3), core.TriType(7)) }},
		{"DIAG", func(c *core.Context) { c.Diag(c.NewTensor(f32, 3, 2)) }},
		{"CUMSUM", func(c *core.Context) { c.Cumsum(c.Transpose(c.NewTensor(f32, 3, 2))) }},
		{"ROLL", func(c *core.Context) { c.Roll(c.NewTensor(f32, 3, 2), 0, 2, 0, 0) }},
		{"ROLL", func(c *core.Context) { c.Roll(c.NewTensor(f32, 3, 2), -3, 0, 0, 0) }},
		{"PAD", func(c *core.Context) { c.Pad(c.NewTensor(f32, 3, 2), -1, 0, 0, 0) }},
		{"PAD", func(c *core.Context) {
			c.PadExt(c.NewTensor(f32, 3, 2), core.PadParams{Left: [4]int{4}, Circular: true})
		}},
		{"PAD_REFLECT_1D", func(c *core.Context) { c.PadReflect1D(c.NewTensor(f32, 3, 2), 3, 0) }},
		{"PAD_REFLECT_1D", func(c *core.Context) { c.PadReflect1D(c.Transpose(c.NewTensor(f32, 3, 2)), 1, 0) }},
		{"TIMESTEP_EMBEDDING", func(c *core.Context) { c.TimestepEmbedding(c.NewTensor(f32, 3, 2), 4, 100) }},
		{"TIMESTEP_EMBEDDING", func(c *core.Context) { c.TimestepEmbedding(c.NewTensor(f32, 3), 0, 100) }},
		{"ADD_ID", func(c *core.Context) { c.AddID(nil, nil, nil) }},
		{"SET", func(c *core.Context) { c.Set(nil, nil, 0, 0, 0, 0) }},
	}
	for _, tc := range cases {
		eltWantErr(t, tc.op, tc.build)
	}
}
