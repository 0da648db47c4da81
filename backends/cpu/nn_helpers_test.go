package cpu_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// Helpers for the NORM / SOFT_MAX / ROPE / OUT_PROD / IM2COL / POOL tests. References are computed
// in float64 from the values the tensors actually hold (after f16 rounding or quantization).

// nnThreads are the thread counts every case runs with; their results must be bit-identical.
var nnThreads = []int{1, 3}

// nnCtx is a host context large enough for the modest shapes of these tests.
func nnCtx() *core.Context { return core.NewContext(core.ContextParams{MemSize: 32 << 20}) }

// nnRandVals returns n values uniform in [lo, hi).
func nnRandVals(rng *rand.Rand, n int64, lo, hi float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(lo + (hi-lo)*rng.Float64())
	}
	return v
}

// nnFill writes random values into t (any type and layout) and returns what t holds afterwards,
// row-major, as float64.
func nnFill(t *testing.T, x *core.Tensor, rng *rand.Rand, lo, hi float64) []float64 {
	t.Helper()
	if err := core.SetFloat32s(x, nnRandVals(rng, x.NElements(), lo, hi)); err != nil {
		t.Fatal(err)
	}
	return nnGet64(t, x)
}

// nnSet writes row-major values into t and returns what t holds afterwards.
func nnSet(t *testing.T, x *core.Tensor, vals []float32) []float64 {
	t.Helper()
	if err := core.SetFloat32s(x, vals); err != nil {
		t.Fatal(err)
	}
	return nnGet64(t, x)
}

func nnGet64(t *testing.T, x *core.Tensor) []float64 {
	t.Helper()
	v, err := core.GetFloat32s(x)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

// nnIdx is the row-major index of (i0, i1, i2, i3) in shape ne.
func nnIdx(ne [4]int64, i0, i1, i2, i3 int64) int64 {
	return ((i3*ne[2]+i2)*ne[1]+i1)*ne[0] + i0
}

// nnNMSE is Σ(got-want)²/Σwant² (ggml's metric); equal vectors give 0 even if all zero.
func nnNMSE(got []float32, want []float64) float64 {
	var num, den float64
	for i := range want {
		d := float64(got[i]) - want[i]
		num += d * d
		den += want[i] * want[i]
	}
	if num == 0 {
		return 0
	}
	return num / den
}

// nnRoundF16 rounds reference values to f16, for results stored as f16.
func nnRoundF16(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(f))))
	}
	return out
}

// nnCase builds a graph in a fresh context (build must be deterministic: seed its own rng), returns
// the result tensor and its float64 reference.
type nnCase func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64)

// nnRun builds and computes the case once per thread count, checks NMSE ≤ tol against the reference
// (no check when tol is +Inf) and that all thread counts give bit-identical results (NaN payloads
// included). It returns the result of the first run.
func nnRun(t *testing.T, name string, tol float64, build nnCase) []float32 {
	t.Helper()
	var first []float32
	for _, th := range nnThreads {
		ctx := nnCtx()
		out, want := build(t, ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("%s: building: %v", name, err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		if err := cpu.Compute(g, th); err != nil {
			t.Fatalf("%s: %d threads: %v", name, th, err)
		}
		got, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(want)) != out.NElements() {
			t.Fatalf("%s: reference has %d values for %v", name, len(want), out)
		}
		if e := nnNMSE(got, want); !math.IsInf(tol, 1) && !(e <= tol) {
			i := nnWorst(got, want)
			t.Fatalf("%s: %d threads: NMSE %.3g > %.1g (worst element %d: got %v, want %v)", name, th, e, tol, i, got[i], want[i])
		}
		if first == nil {
			first = got
			continue
		}
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
				t.Fatalf("%s: %d threads differ from %d thread(s) at element %d: %v vs %v", name, th, nnThreads[0], i, got[i], first[i])
			}
		}
	}
	return first
}

func nnWorst(got []float32, want []float64) int {
	w, wi := -1.0, 0
	for i := range want {
		d := math.Abs(float64(got[i]) - want[i])
		if math.IsNaN(d) {
			return i
		}
		if d > w {
			w, wi = d, i
		}
	}
	return wi
}

// nnInPlace makes r write into a's memory with a's layout (the in-place form of an op).
func nnInPlace(r, a *core.Tensor) *core.Tensor {
	r.Buffer, r.Offset, r.Nb = a.Buffer, a.Offset, a.Nb
	return r
}

// nnClose fails unless got is within tol (absolute) of want, element by element.
func nnClose(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !(math.Abs(float64(got[i])-want[i]) <= tol) {
			t.Fatalf("%s: element %d = %v, want %v (all: %v)", what, i, got[i], want[i], got)
		}
	}
}

// nnLayouts are the source layouts the layout-agnostic ops are tested with.
var nnLayouts = []string{"contiguous", "permuted", "row-gaps"}

// nnSource creates an F32 (or typ) source of shape ne in the given layout: contiguous; a permuted
// view (dims 1 and 2 swapped in memory, dim 0 strided when typ is F32); or a view whose rows are
// padded by 3 elements.
func nnSource(ctx *core.Context, typ core.Type, ne [4]int64, layout string) *core.Tensor {
	switch layout {
	case "permuted":
		if typ == core.TypeF32 {
			// memory [ne1, ne0, ne2, ne3]; permute(1, 0, 2, 3) gives ne with nb0 = ne1·4
			base := ctx.NewTensor4D(typ, ne[1], ne[0], ne[2], ne[3])
			return ctx.Permute(base, 1, 0, 2, 3)
		}
		base := ctx.NewTensor4D(typ, ne[0], ne[2], ne[1], ne[3])
		return ctx.Permute(base, 0, 2, 1, 3)
	case "row-gaps":
		pad := ne[0] + 3
		if typ.BlockSize() > 1 {
			pad = ne[0] + typ.BlockSize()
		}
		base := ctx.NewTensor4D(typ, pad, ne[1], ne[2], ne[3])
		rs := typ.RowSize(pad)
		return ctx.View4D(base, ne[0], ne[1], ne[2], ne[3], rs, rs*ne[1], rs*ne[1]*ne[2], 0)
	}
	return ctx.NewTensor4D(typ, ne[0], ne[1], ne[2], ne[3])
}
