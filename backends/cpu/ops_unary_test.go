package cpu_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// eltOp is one elementwise op under test: its constructor, its float64 reference, the input range,
// and the types its constructor accepts.
type eltOp struct {
	name   string
	build  func(ctx *core.Context, a *core.Tensor) *core.Tensor
	ref    func(x float64) float64
	lo, hi float64
	f32    bool // only F32 inputs (SCALE)
}

func eltGeluRef(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

func eltHardsigmoidRef(x float64) float64 { return math.Min(1, math.Max(0, (x+3)/6)) }

func eltUnaryRefs() []eltOp {
	un := func(u core.UnaryOp, ref func(float64) float64) eltOp {
		return eltOp{name: u.String(), build: func(ctx *core.Context, a *core.Tensor) *core.Tensor { return ctx.Unary(a, u) },
			ref: ref, lo: -5, hi: 5}
	}
	ops := []eltOp{
		{name: "SQR", build: (*core.Context).Sqr, ref: func(x float64) float64 { return x * x }, lo: -4, hi: 4},
		{name: "SQRT", build: (*core.Context).Sqrt, ref: math.Sqrt, lo: 0.01, hi: 9},
		{name: "LOG", build: (*core.Context).Log, ref: math.Log, lo: 0.05, hi: 9},
		{name: "SIN", build: (*core.Context).Sin, ref: math.Sin, lo: -7, hi: 7},
		{name: "COS", build: (*core.Context).Cos, ref: math.Cos, lo: -7, hi: 7},
		{name: "SCALE", build: func(ctx *core.Context, a *core.Tensor) *core.Tensor { return ctx.Scale(a, -1.75) },
			ref: func(x float64) float64 { return -1.75 * x }, lo: -4, hi: 4, f32: true},
		{name: "SCALE_BIAS", build: func(ctx *core.Context, a *core.Tensor) *core.Tensor { return ctx.ScaleBias(a, 0.3, 2.5) },
			ref: func(x float64) float64 { return 0.3*x + 2.5 }, lo: -4, hi: 4, f32: true},
		{name: "CLAMP", build: func(ctx *core.Context, a *core.Tensor) *core.Tensor { return ctx.Clamp(a, -1.5, 0.75) },
			ref: func(x float64) float64 { return math.Min(math.Max(x, -1.5), 0.75) }, lo: -3, hi: 3},
		{name: "LEAKY_RELU", build: func(ctx *core.Context, a *core.Tensor) *core.Tensor { return ctx.LeakyRelu(a, 0.1) },
			ref: func(x float64) float64 {
				if x > 0 {
					return x
				}
				return 0.1 * x
			}, lo: -3, hi: 3},
		un(core.UnaryAbs, math.Abs),
		un(core.UnarySgn, func(x float64) float64 {
			if x > 0 {
				return 1
			} else if x < 0 {
				return -1
			}
			return 0
		}),
		un(core.UnaryNeg, func(x float64) float64 { return -x }),
		un(core.UnaryStep, func(x float64) float64 {
			if x > 0 {
				return 1
			}
			return 0
		}),
		un(core.UnaryTanh, math.Tanh),
		un(core.UnaryElu, func(x float64) float64 {
			if x > 0 {
				return x
			}
			return math.Expm1(x)
		}),
		un(core.UnaryRelu, func(x float64) float64 { return math.Max(x, 0) }),
		un(core.UnarySigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }),
		un(core.UnaryGelu, eltGeluRef),
		un(core.UnaryGeluQuick, func(x float64) float64 { return x / (1 + math.Exp(-1.702*x)) }),
		un(core.UnarySilu, func(x float64) float64 { return x / (1 + math.Exp(-x)) }),
		un(core.UnaryHardswish, func(x float64) float64 { return x * eltHardsigmoidRef(x) }),
		un(core.UnaryHardsigmoid, eltHardsigmoidRef),
		un(core.UnaryExp, math.Exp),
	}
	if len(ops) != 9+int(core.UnaryCount) {
		panic("eltUnaryRefs: not every unary function is covered")
	}
	return ops
}

// TestEltUnaryOps checks every one-input elementwise op on every float type, on dense, permuted and
// strided-view sources, and in place (dst sharing src's memory).
func TestEltUnaryOps(t *testing.T) {
	ne := [4]int64{5, 7, 3, 2}
	for _, op := range eltUnaryRefs() {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
			if op.f32 && typ != core.TypeF32 {
				continue
			}
			for _, layout := range append(eltLayouts, "inplace") {
				op, typ, layout := op, typ, layout
				eltCheck(t, eltName(op.name, typ, layout), 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					srcLayout := layout
					if layout == "inplace" {
						srcLayout = "contig"
					}
					a, x := eltSource(t, ctx, rng, typ, ne, srcLayout, op.lo, op.hi)
					out := op.build(ctx, a)
					if layout == "inplace" {
						out.Buffer, out.Offset = a.Buffer, a.Offset
					}
					want := make([]float64, len(x))
					for i, v := range x {
						want[i] = op.ref(v)
					}
					return out, eltRound(t, typ, want)
				})
			}
		}
	}
}

// TestEltUnaryLarge runs a few elementwise ops on a [5,7,11,13] tensor with more rows than workers
// can split evenly.
func TestEltUnaryLarge(t *testing.T) {
	ne := [4]int64{5, 7, 11, 13}
	for _, op := range eltUnaryRefs() {
		switch op.name {
		case "SQRT", "SCALE_BIAS", "GELU", "SILU", "CLAMP":
		default:
			continue
		}
		for _, layout := range []string{"contig", "perm"} {
			op, layout := op, layout
			eltCheck(t, eltName(op.name, "large", layout), 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
				a, x := eltSource(t, ctx, rng, core.TypeF32, ne, layout, op.lo, op.hi)
				want := make([]float64, len(x))
				for i, v := range x {
					want[i] = op.ref(v)
				}
				return op.build(ctx, a), want
			})
		}
	}
}

// TestEltAdd1 adds a scalar tensor (of any float type) to every element.
func TestEltAdd1(t *testing.T) {
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
		for _, btyp := range []core.Type{core.TypeF32, core.TypeF16} {
			for _, layout := range append(eltLayouts, "inplace") {
				typ, btyp, layout := typ, btyp, layout
				eltCheck(t, eltName("ADD1", typ, btyp, layout), 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					srcLayout := layout
					if layout == "inplace" {
						srcLayout = "contig"
					}
					a, x := eltSource(t, ctx, rng, typ, [4]int64{5, 7, 3, 2}, srcLayout, -3, 3)
					b, bv := eltSource(t, ctx, rng, btyp, [4]int64{1, 1, 1, 1}, "contig", 1, 2)
					out := ctx.Add1(a, b)
					if layout == "inplace" {
						out.Buffer, out.Offset = a.Buffer, a.Offset
					}
					want := make([]float64, len(x))
					for i, v := range x {
						want[i] = v + bv[0]
					}
					return out, eltRound(t, typ, want)
				})
			}
		}
	}
}

// TestEltSpecialValues pins the NaN and infinity behaviour taken from ggml's formulas.
func TestEltSpecialValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	in := []float32{float32(nan), float32(inf), float32(-inf), 0, -0.5, 2}
	cases := []struct {
		name  string
		build func(ctx *core.Context, a *core.Tensor) *core.Tensor
		want  []float64 // NaN entries must be NaN
	}{
		{"CLAMP", func(ctx *core.Context, a *core.Tensor) *core.Tensor { return ctx.Clamp(a, -1, 1) }, []float64{1, 1, -1, 0, -0.5, 1}},
		{"RELU", (*core.Context).Relu, []float64{0, inf, 0, 0, 0, 2}},
		{"HARDSIGMOID", (*core.Context).Hardsigmoid, []float64{0, 1, 0, 0.5, 2.5 / 6, 5.0 / 6}},
		{"SILU", (*core.Context).Silu, []float64{nan, inf, nan, 0, -0.5 / (1 + math.Exp(0.5)), 2 / (1 + math.Exp(-2))}},
		{"STEP", (*core.Context).Step, []float64{0, 1, 0, 0, 0, 1}},
		{"SGN", (*core.Context).Sgn, []float64{0, 1, -1, 0, -1, 1}},
	}
	for _, c := range cases {
		ctx := eltCtx()
		a := ctx.NewTensor1D(core.TypeF32, int64(len(in)))
		copy(a.Float32s(), in)
		out := c.build(ctx, a)
		eltCompute(t, ctx, out, 1)
		got := out.Float32s()
		for i, w := range c.want {
			g := float64(got[i])
			if math.IsNaN(w) != math.IsNaN(g) || (!math.IsNaN(w) && math.Abs(g-w) > 1e-6*math.Max(1, math.Abs(w))) {
				t.Errorf("%s(%v) = %v, want %v", c.name, in[i], g, w)
			}
		}
	}
}

// TestEltGLU checks REGLU, GEGLU and SWIGLU in the single-tensor form (halves, also swapped) and
// the split form, on f32 and f16, dense and strided-row sources.
func TestEltGLU(t *testing.T) {
	acts := map[core.GLUOp]func(float64) float64{
		core.GLUReglu:  func(x float64) float64 { return math.Max(x, 0) },
		core.GLUGeglu:  eltGeluRef,
		core.GLUSwiglu: func(x float64) float64 { return x / (1 + math.Exp(-x)) },
	}
	for g := core.GLUOp(0); g < core.GLUCount; g++ {
		act := acts[g]
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
			for _, layout := range []string{"contig", "view"} {
				for _, split := range []bool{false, true} {
					for _, swapped := range []bool{false, true} {
						g, typ, layout, split, swapped := g, typ, layout, split, swapped
						name := eltName(g, typ, layout, "split", split, "swapped", swapped)
						eltCheck(t, name, 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
							nc := int64(5)
							if !split {
								a, av := eltSource(t, ctx, rng, typ, [4]int64{2 * nc, 7, 3, 2}, layout, -4, 4)
								out := ctx.GLUSingle(a, g, swapped)
								want := make([]float64, 0, len(av)/2)
								for r := 0; r < len(av); r += int(2 * nc) {
									for i := 0; i < int(nc); i++ {
										x, gate := av[r+i], av[r+int(nc)+i]
										if swapped {
											x, gate = gate, x
										}
										want = append(want, act(x)*gate)
									}
								}
								return out, eltRound(t, typ, want)
							}
							a, av := eltSource(t, ctx, rng, typ, [4]int64{nc, 7, 3, 2}, layout, -4, 4)
							b, bv := eltSource(t, ctx, rng, typ, [4]int64{nc, 7, 3, 2}, "contig", -4, 4)
							out := ctx.GLU(a, b, g, swapped)
							want := make([]float64, len(av))
							for i := range av {
								x, gate := av[i], bv[i]
								if swapped {
									x, gate = gate, x
								}
								want[i] = act(x) * gate
							}
							return out, eltRound(t, typ, want)
						})
					}
				}
			}
		}
	}
}

// TestEltUnaryBadInput: constructor errors name the op.
func TestEltUnaryBadInput(t *testing.T) {
	eltWantErr(t, "ADD1", func(ctx *core.Context) {
		ctx.Add1(ctx.NewTensor1D(core.TypeF32, 4), ctx.NewTensor1D(core.TypeF32, 2))
	})
	eltWantErr(t, "ADD1", func(ctx *core.Context) {
		ctx.Add1(ctx.NewTensor1D(core.TypeI32, 4), ctx.NewTensor1D(core.TypeF32, 1))
	})
	eltWantErr(t, "SCALE", func(ctx *core.Context) { ctx.Scale(ctx.NewTensor1D(core.TypeF16, 4), 2) })
	eltWantErr(t, "SQRT", func(ctx *core.Context) { ctx.Sqrt(ctx.NewTensor1D(core.TypeQ8_0, 32)) })
	eltWantErr(t, "CLAMP", func(ctx *core.Context) { ctx.Clamp(ctx.NewTensor1D(core.TypeF32, 4), 2, 1) })
	eltWantErr(t, "LEAKY_RELU", func(ctx *core.Context) { ctx.LeakyRelu(ctx.NewTensor1D(core.TypeI32, 4), 0.1) })
	eltWantErr(t, "UNARY", func(ctx *core.Context) { ctx.Unary(ctx.NewTensor1D(core.TypeF32, 4), core.UnaryCount) })
	eltWantErr(t, "UNARY", func(ctx *core.Context) { ctx.Silu(ctx.NewTensor1D(core.TypeI32, 4)) })
	eltWantErr(t, "SWIGLU", func(ctx *core.Context) { ctx.Swiglu(ctx.NewTensor2D(core.TypeF32, 5, 2)) })
	eltWantErr(t, "GEGLU", func(ctx *core.Context) {
		ctx.GegluSplit(ctx.NewTensor2D(core.TypeF32, 4, 2), ctx.NewTensor2D(core.TypeF32, 4, 3))
	})
	eltWantErr(t, "REGLU", func(ctx *core.Context) {
		ctx.Reglu(ctx.Transpose(ctx.NewTensor2D(core.TypeF32, 4, 4)))
	})
}
