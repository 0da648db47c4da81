package cpu_test

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// eltTies writes small integers (many equal values per row) into x and returns them row-major.
func eltTies(t *testing.T, x *core.Tensor, rng *rand.Rand, levels int) []float64 {
	t.Helper()
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = float32(rng.IntN(levels)) - 2
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
	return eltGet64(t, x)
}

func TestEltSum(t *testing.T) {
	shapes := [][4]int64{{5, 7, 3, 2}, {5, 7, 11, 13}}
	for si, ne := range shapes {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
			for _, layout := range eltLayouts {
				if si == 1 && typ != core.TypeF32 {
					continue
				}
				ne, typ, layout := ne, typ, layout
				eltCheck(t, eltName("SUM", ne, typ, layout), 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, x := eltSource(t, ctx, rng, typ, ne, layout, -1, 2)
					var s float64
					for _, v := range x {
						s += v
					}
					return ctx.Sum(a), eltRound(t, typ, []float64{s})
				})
			}
		}
	}
}

func TestEltSumRowsMean(t *testing.T) {
	shapes := [][4]int64{{5, 7, 3, 2}, {5, 7, 11, 13}, {1, 3, 1, 1}}
	for _, ne := range shapes {
		for _, mean := range []bool{false, true} {
			for _, layout := range eltLayouts {
				ne, mean, layout := ne, mean, layout
				op := "SUM_ROWS"
				if mean {
					op = "MEAN"
				}
				eltCheck(t, eltName(op, ne, layout), 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, x := eltSource(t, ctx, rng, core.TypeF32, ne, layout, -1, 2)
					n := int(ne[0])
					want := make([]float64, len(x)/n)
					for r := range want {
						var s float64
						for _, v := range x[r*n : (r+1)*n] {
							s += v
						}
						if mean {
							s /= float64(n)
						}
						want[r] = s
					}
					if mean {
						return ctx.Mean(a), want
					}
					return ctx.SumRows(a), want
				})
			}
		}
	}
}

func TestEltArgmax(t *testing.T) {
	for _, ne := range [][4]int64{{37, 9, 1, 1}, {3, 40, 1, 1}} {
		for _, layout := range eltLayouts {
			ne, layout := ne, layout
			eltCheck(t, eltName("ARGMAX", ne, layout), 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
				a, _ := eltSource(t, ctx, rng, core.TypeF32, ne, layout, 0, 1)
				x := eltTies(t, a, rng, 6)
				n := int(ne[0])
				want := make([]float64, ne[1])
				for r := range want {
					best := 0
					for i := 1; i < n; i++ {
						if x[r*n+i] > x[r*n+best] {
							best = i
						}
					}
					want[r] = float64(best)
				}
				return ctx.Argmax(a), want
			})
		}
	}
	// NaNs never win; a row without numbers above -Inf gives 0; the first of equal maxima wins.
	ctx := eltCtx()
	a := ctx.NewTensor2D(core.TypeF32, 4, 3)
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	copy(a.Float32s(), []float32{nan, 1, 3, 3, -inf, -inf, -inf, -inf, nan, inf, 2, inf})
	out := ctx.Argmax(a)
	eltCompute(t, ctx, out, 2)
	if got := out.Int32s(); got[0] != 2 || got[1] != 0 || got[2] != 1 {
		t.Fatalf("ARGMAX special values: got %v, want [2 0 1]", got)
	}
}

func TestEltArgsort(t *testing.T) {
	for _, ne := range [][4]int64{{13, 7, 3, 2}, {100, 3, 2, 1}, {5, 7, 11, 13}} {
		for _, order := range []core.SortOrder{core.SortAsc, core.SortDesc} {
			for _, layout := range eltLayouts {
				ne, order, layout := ne, order, layout
				eltCheck(t, eltName("ARGSORT", ne, order, layout), 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, _ := eltSource(t, ctx, rng, core.TypeF32, ne, layout, 0, 1)
					x := eltTies(t, a, rng, 5)
					n := int(ne[0])
					want := make([]float64, 0, len(x))
					idx := make([]int, n)
					for r := 0; r < len(x); r += n {
						row := x[r : r+n]
						for i := range idx {
							idx[i] = i
						}
						sort.SliceStable(idx, func(i, j int) bool {
							if order == core.SortDesc {
								return row[idx[i]] > row[idx[j]]
							}
							return row[idx[i]] < row[idx[j]]
						})
						for _, i := range idx {
							want = append(want, float64(i))
						}
					}
					return ctx.Argsort(a, order), want
				})
			}
		}
	}
}

func TestEltReduceBadInput(t *testing.T) {
	eltWantErr(t, "SUM", func(ctx *core.Context) { ctx.Sum(ctx.NewTensor1D(core.TypeI32, 4)) })
	eltWantErr(t, "SUM_ROWS", func(ctx *core.Context) { ctx.SumRows(ctx.NewTensor1D(core.TypeF16, 4)) })
	eltWantErr(t, "MEAN", func(ctx *core.Context) { ctx.Mean(ctx.NewTensor1D(core.TypeQ8_0, 32)) })
	eltWantErr(t, "ARGMAX", func(ctx *core.Context) { ctx.Argmax(ctx.NewTensor3D(core.TypeF32, 4, 2, 2)) })
	eltWantErr(t, "ARGSORT", func(ctx *core.Context) { ctx.Argsort(ctx.NewTensor1D(core.TypeF32, 4), 7) })
	eltWantErr(t, "ARGSORT", func(ctx *core.Context) { ctx.Argsort(ctx.NewTensor1D(core.TypeI32, 4), core.SortAsc) })
}

// TestEltEmptyInputs: reductions of tensors without elements give zeros; concatenating an empty
// tensor copies the other one.
func TestEltEmptyInputs(t *testing.T) {
	for _, th := range eltThreads {
		ctx := eltCtx()
		a := ctx.NewTensor2D(core.TypeF16, 0, 3)
		s := ctx.Sum(a)
		rs := ctx.SumRows(ctx.NewTensor2D(core.TypeF32, 0, 3))
		b := ctx.NewTensor2D(core.TypeF32, 4, 3)
		copy(b.Float32s(), []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
		c := ctx.Concat(ctx.NewTensor2D(core.TypeF32, 0, 3), b, 0)
		for _, out := range []*core.Tensor{s, rs, c} {
			eltCompute(t, ctx, out, th)
		}
		if v := eltGet(t, s); v[0] != 0 {
			t.Fatalf("SUM of an empty tensor = %v", v)
		}
		if v := eltGet(t, rs); v[0] != 0 || v[1] != 0 || v[2] != 0 {
			t.Fatalf("SUM_ROWS of empty rows = %v", v)
		}
		if v := eltGet(t, c); v[0] != 1 || v[11] != 12 {
			t.Fatalf("CONCAT with an empty tensor = %v", v)
		}
	}
}
