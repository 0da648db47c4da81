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

func eltSoftplusRef(x float64) float64 {
	if x > 20 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func eltGeluErfRef(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }

func eltGeluQuickRef(x float64) float64 { return x / (1 + math.Exp(-1.702*x)) }

// XIELU's arguments in the tests (Apertus' initial values).
const (
	eltXieluAlphaN = 0.8
	eltXieluAlphaP = 0.8
	eltXieluBeta   = 0.5
	eltXieluEps    = -1e-6
)

// eltXieluRef is xielu with the coefficients ggml_xielu derives from the test's arguments, each
// rounded to float32 as the node stores them.
func eltXieluRef(x float64) float64 {
	f := func(v float64) float64 { return float64(float32(v)) }
	ap := f(eltSoftplusRef(eltXieluAlphaP))
	an := f(float64(float32(eltXieluBeta) + float32(eltSoftplusRef(eltXieluAlphaN))))
	beta, eps := f(eltXieluBeta), f(eltXieluEps)
	if x > 0 {
		return ap*x*x + beta*x
	}
	return (math.Expm1(math.Min(x, eps))-x)*an + beta*x
}

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
		un(core.UnaryGeluQuick, eltGeluQuickRef),
		un(core.UnarySilu, func(x float64) float64 { return x / (1 + math.Exp(-x)) }),
		un(core.UnaryHardswish, func(x float64) float64 { return x * eltHardsigmoidRef(x) }),
		un(core.UnaryHardsigmoid, eltHardsigmoidRef),
		un(core.UnaryExp, math.Exp),
		un(core.UnaryExpm1, math.Expm1),
		un(core.UnarySoftplus, eltSoftplusRef),
		un(core.UnaryGeluErf, eltGeluErfRef),
		{name: "XIELU", build: func(ctx *core.Context, a *core.Tensor) *core.Tensor {
			return ctx.Xielu(a, eltXieluAlphaN, eltXieluAlphaP, eltXieluBeta, eltXieluEps)
		}, ref: eltXieluRef, lo: -5, hi: 5},
		un(core.UnaryFloor, math.Floor),
		un(core.UnaryCeil, math.Ceil),
		un(core.UnaryRound, math.Round),
		un(core.UnaryTrunc, math.Trunc),
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

// SWIGLU_OAI's parameters in the tests (gpt-oss's): limit 1.5 clamps part of the inputs in [-4, 4].
const (
	eltOAIAlpha = 1.702
	eltOAILimit = 1.5
)

// eltGLURef is y = act(x)·g of variant op (SWIGLU_OAI with eltOAIAlpha and eltOAILimit).
func eltGLURef(op core.GLUOp, x, g float64) float64 {
	switch op {
	case core.GLUReglu:
		return math.Max(x, 0) * g
	case core.GLUGeglu:
		return eltGeluRef(x) * g
	case core.GLUSwiglu:
		return x / (1 + math.Exp(-x)) * g
	case core.GLUSwigluOAI:
		a, l := float64(float32(eltOAIAlpha)), float64(float32(eltOAILimit))
		x = math.Min(x, l)
		g = math.Max(-l, math.Min(g, l))
		return x / (1 + math.Exp(-a*x)) * (g + 1)
	case core.GLUGegluErf:
		return eltGeluErfRef(x) * g
	case core.GLUGegluQuick:
		return eltGeluQuickRef(x) * g
	}
	panic("eltGLURef: variant " + op.String())
}

// eltGLUSingle and eltGLUSplit build a GLU node of any variant (SWIGLU_OAI through its own
// constructors, with eltOAIAlpha and eltOAILimit).
func eltGLUSingle(ctx *core.Context, a *core.Tensor, g core.GLUOp, swapped bool) *core.Tensor {
	if g == core.GLUSwigluOAI {
		return ctx.SwigluOAI(a, eltOAIAlpha, eltOAILimit, swapped)
	}
	return ctx.GLUSingle(a, g, swapped)
}

func eltGLUSplit(ctx *core.Context, a, b *core.Tensor, g core.GLUOp, swapped bool) *core.Tensor {
	if g == core.GLUSwigluOAI {
		return ctx.SwigluOAISplit(a, b, eltOAIAlpha, eltOAILimit, swapped)
	}
	return ctx.GLU(a, b, g, swapped)
}

// TestEltUnaryHandValues pins the new unary functions on values computed by hand: rounding's
// halves and signs, softplus' cut-over at 20, expm1 near 0, and xielu's two branches.
func TestEltUnaryHandValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	in := []float32{-2.5, -1.7, -0.5, 0, 0.49999997, 0.5, 1.5, 2.5, 1e-6, 30, -30, float32(inf), float32(-inf), float32(nan)}
	sp := func(x float64) float64 { return math.Log1p(math.Exp(x)) }
	cases := []struct {
		name  string
		build func(ctx *core.Context, a *core.Tensor) *core.Tensor
		want  []float64 // NaN entries must be NaN
		rel   float64   // relative tolerance (0: exact)
	}{
		{"FLOOR", (*core.Context).Floor, []float64{-3, -2, -1, 0, 0, 0, 1, 2, 0, 30, -30, inf, -inf, nan}, 0},
		{"CEIL", (*core.Context).Ceil, []float64{-2, -1, 0, 0, 1, 1, 2, 3, 1, 30, -30, inf, -inf, nan}, 0},
		// roundf: halves away from zero; 0.49999997 (the float below 0.5) rounds down.
		{"ROUND", (*core.Context).Round, []float64{-3, -2, -1, 0, 0, 1, 2, 3, 0, 30, -30, inf, -inf, nan}, 0},
		{"TRUNC", (*core.Context).Trunc, []float64{-2, -1, 0, 0, 0, 0, 1, 2, 0, 30, -30, inf, -inf, nan}, 0},
		// softplus: x itself above 20; ln(1+e^-30) = 9.357622968839737e-14.
		{"SOFTPLUS", (*core.Context).Softplus, []float64{sp(-2.5), sp(-1.7), sp(-0.5), math.Ln2, sp(0.49999997), sp(0.5),
			sp(1.5), sp(2.5), sp(1e-6), 30, 9.357622968839737e-14, inf, 0, nan}, 1e-7},
		// expm1(1e-6) = 1.0000005000001667e-06 (expf(x)-1 in float32 would give 9.5367e-07).
		{"EXPM1", (*core.Context).Expm1, []float64{math.Expm1(-2.5), math.Expm1(-1.7), -0.3934693402873666, 0,
			math.Expm1(0.49999997), 0.6487212707001282, math.Expm1(1.5), math.Expm1(2.5), 1.0000005000001667e-06,
			1.0686474581523463e+13, -0.9999999999999064, inf, -1, nan}, 1e-7},
		// gelu_erf(x) = x·Φ(x): Φ(-0.5) = 0.3085375387259869, Φ(2.5) = 0.9937903346742238.
		{"GELU_ERF", (*core.Context).GeluErf, []float64{-2.5 * (1 - 0.9937903346742238), -1.7 * 0.044565462758543, -0.5 * 0.3085375387259869, 0,
			0.49999997 * 0.6914624612740131, 0.5 * 0.6914624612740131, 1.5 * 0.9331927987311419, 2.5 * 0.9937903346742238,
			1e-6 * 0.5000003989422804, 30, 0, inf, nan, nan}, 1e-6}, // -30·Φ(-30) ≈ -1.5e-196 underflows to -0
	}
	for _, c := range cases {
		ctx := eltCtx()
		a := ctx.NewTensor1D(core.TypeF32, int64(len(in)))
		copy(a.Float32s(), in)
		out := c.build(ctx, a)
		eltCompute(t, ctx, out, 1)
		for i, w := range c.want {
			g := float64(out.Float32s()[i])
			if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) && math.Abs(g-w) > c.rel*math.Abs(w) {
				t.Errorf("%s(%v) = %v, want %v", c.name, in[i], g, w)
			}
		}
	}
	// ROUND's signs: roundf(-0.3) is -0.
	ctx := eltCtx()
	a := ctx.NewTensor1D(core.TypeF32, 1)
	a.Float32s()[0] = -0.3
	out := ctx.Round(a)
	eltCompute(t, ctx, out, 1)
	if g := out.Float32s()[0]; g != 0 || !math.Signbit(float64(g)) {
		t.Errorf("ROUND(-0.3) = %v (sign bit %v), want -0", g, math.Signbit(float64(g)))
	}
}

// TestEltXieluHandValues checks xielu with alpha_n = alpha_p = 0.8, beta = 0.5, eps = -1e-6 by
// hand: softplus(0.8) = 1.1711006659477776, so αp = 1.1711007 and αn = 1.6711007 (as float32).
func TestEltXieluHandValues(t *testing.T) {
	ctx := eltCtx()
	a := ctx.NewTensor1D(core.TypeF32, 6)
	copy(a.Float32s(), []float32{2, 0.5, 0, -1e-7, -1, float32(math.NaN())})
	out := ctx.Xielu(a, 0.8, 0.8, 0.5, -1e-6)
	eltCompute(t, ctx, out, 1)
	p := core.XieluParamsOf(out)
	sp := float32(math.Log1p(math.Exp(float64(float32(0.8))))) // 1.1711007
	if p.AlphaP != sp || p.AlphaN != 0.5+sp || p.Beta != 0.5 || p.Eps != -1e-6 || math.Abs(float64(sp)-1.1711006659477776) > 1e-7 {
		t.Fatalf("stored coefficients %+v", p)
	}
	ap, an := float64(p.AlphaP), float64(p.AlphaN)
	eps := float64(float32(-1e-6))
	want := []float64{
		ap*4 + 1, // x > 0: αp x² + βx
		ap*0.25 + 0.25,
		(math.Expm1(eps) - 0) * an, // x = 0: expm1(min(0, eps)) - 0, times αn
		(math.Expm1(eps)-float64(float32(-1e-7)))*an + 0.5*float64(float32(-1e-7)), // x > eps: min picks eps
		(math.Expm1(-1)+1)*an - 0.5, // (e^-1 - 1 + 1)·αn - 0.5
		math.NaN(),
	}
	for i, w := range want {
		g := float64(out.Float32s()[i])
		if math.IsNaN(w) != math.IsNaN(g) || !math.IsNaN(w) && math.Abs(g-w) > 1e-6*math.Max(math.Abs(w), 1e-6) {
			t.Errorf("XIELU(%v) = %v, want %v", a.Float32s()[i], g, w)
		}
	}
}

// TestEltSwigluOAIHandValues checks SWIGLU_OAI (alpha 1.702, limit 7) on values computed by hand:
// x is clamped above at 7, g to [-7, 7].
func TestEltSwigluOAIHandValues(t *testing.T) {
	ctx := eltCtx()
	x := ctx.NewTensor1D(core.TypeF32, 4)
	g := ctx.NewTensor1D(core.TypeF32, 4)
	copy(x.Float32s(), []float32{1, 10, -2, 0})
	copy(g.Float32s(), []float32{0.5, 20, -9, 3})
	out := ctx.SwigluOAISplit(x, g, 1.702, 7, false)
	eltCompute(t, ctx, out, 1)
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	a := float64(float32(1.702))
	want := []float64{1 * sig(a) * 1.5, 7 * sig(7*a) * 8, -2 * sig(-2*a) * -6, 0}
	for i, w := range want {
		if g := float64(out.Float32s()[i]); math.Abs(g-w) > 1e-6*math.Abs(w) {
			t.Errorf("SWIGLU_OAI element %d = %v, want %v", i, g, w)
		}
	}
}

// TestEltGLU checks every GLU variant in the single-tensor form (halves, also swapped; even and
// odd row lengths) and the split form, on f32, f16 and bf16, dense and strided-row sources.
func TestEltGLU(t *testing.T) {
	for g := core.GLUOp(0); g < core.GLUCount; g++ {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16} {
			for _, layout := range []string{"contig", "view"} {
				for _, form := range []string{"even", "odd", "split"} {
					for _, swapped := range []bool{false, true} {
						g, typ, layout, form, swapped := g, typ, layout, form, swapped
						name := eltName(g, typ, layout, form, "swapped", swapped)
						eltCheck(t, name, 1e-7, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
							nc := int64(5)
							if form != "split" {
								ne0 := 2 * nc
								if form == "odd" {
									ne0++ // ggml: halves of ne0/2, the last element unread
								}
								a, av := eltSource(t, ctx, rng, typ, [4]int64{ne0, 7, 3, 2}, layout, -4, 4)
								out := eltGLUSingle(ctx, a, g, swapped)
								if out.Ne[0] != nc {
									t.Fatalf("%v of a row of %d: result rows of %d, want %d", g, ne0, out.Ne[0], nc)
								}
								want := make([]float64, 0, len(av)/2)
								for r := 0; r < len(av); r += int(ne0) {
									for i := 0; i < int(nc); i++ {
										x, gate := av[r+i], av[r+int(nc)+i]
										if swapped {
											x, gate = gate, x
										}
										want = append(want, eltGLURef(g, x, gate))
									}
								}
								return out, eltRound(t, typ, want)
							}
							a, av := eltSource(t, ctx, rng, typ, [4]int64{nc, 7, 3, 2}, layout, -4, 4)
							b, bv := eltSource(t, ctx, rng, typ, [4]int64{nc, 7, 3, 2}, "contig", -4, 4)
							out := eltGLUSplit(ctx, a, b, g, swapped)
							want := make([]float64, len(av))
							for i := range av {
								x, gate := av[i], bv[i]
								if swapped {
									x, gate = gate, x
								}
								want[i] = eltGLURef(g, x, gate)
							}
							return out, eltRound(t, typ, want)
						})
					}
				}
			}
		}
	}
}

// TestEltGLUOddRow pins ggml's split of an odd row by hand: a row of 5 gives halves [0,1] and
// [2,3], element 4 unread (a NaN there must not reach the result).
func TestEltGLUOddRow(t *testing.T) {
	ctx := eltCtx()
	a := ctx.NewTensor2D(core.TypeF32, 5, 2)
	nan := float32(math.NaN())
	copy(a.Float32s(), []float32{1, -2, 3, 4, nan, 0, 2, -1, 5, nan})
	out := ctx.Reglu(a)
	sw := ctx.GLUSingle(a, core.GLUReglu, true)
	eltCompute(t, ctx, out, 2)
	eltCompute(t, ctx, sw, 2)
	if out.Ne != [4]int64{2, 2, 1, 1} {
		t.Fatalf("REGLU of [5,2]: shape %v, want [2 2 1 1]", out.Ne)
	}
	// relu(x)·g: row 0 x=[1,-2] g=[3,4]; row 1 x=[0,2] g=[-1,5].
	want := []float32{3, 0, 0, 10}
	// swapped: relu(g)·x: row 0 [3·1, 4·-2]; row 1 [0·0, 5·2].
	wantSw := []float32{3, -8, 0, 10}
	for i, w := range want {
		if got := out.Float32s()[i]; got != w {
			t.Errorf("REGLU element %d = %v, want %v", i, got, w)
		}
		if got := sw.Float32s()[i]; got != wantSw[i] {
			t.Errorf("REGLU swapped element %d = %v, want %v", i, got, wantSw[i])
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
	eltWantErr(t, "XIELU", func(ctx *core.Context) { ctx.Unary(ctx.NewTensor1D(core.TypeF32, 4), core.UnaryXielu) })
	eltWantErr(t, "XIELU", func(ctx *core.Context) {
		ctx.Xielu(ctx.NewTensor1D(core.TypeF32, 4), 0.8, float32(math.Inf(1)), 0.5, -1e-6)
	})
	eltWantErr(t, "XIELU", func(ctx *core.Context) { ctx.Xielu(ctx.NewTensor1D(core.TypeI32, 4), 0.8, 0.8, 0.5, -1e-6) })
	eltWantErr(t, "SWIGLU_OAI", func(ctx *core.Context) {
		ctx.GLUSingle(ctx.NewTensor2D(core.TypeF32, 4, 2), core.GLUSwigluOAI, false)
	})
	eltWantErr(t, "SWIGLU_OAI", func(ctx *core.Context) {
		ctx.GLU(ctx.NewTensor2D(core.TypeF32, 4, 2), ctx.NewTensor2D(core.TypeF32, 4, 2), core.GLUSwigluOAI, false)
	})
	eltWantErr(t, "SWIGLU_OAI", func(ctx *core.Context) { ctx.SwigluOAI(ctx.NewTensor2D(core.TypeF32, 4, 2), 1.702, -1, false) })
	eltWantErr(t, "SWIGLU_OAI", func(ctx *core.Context) {
		ctx.SwigluOAI(ctx.NewTensor2D(core.TypeF32, 4, 2), float32(math.NaN()), 7, false)
	})
	eltWantErr(t, "SWIGLU_OAI", func(ctx *core.Context) {
		ctx.SwigluOAISplit(ctx.NewTensor2D(core.TypeF32, 4, 2), ctx.NewTensor2D(core.TypeF32, 4, 3), 1.702, 7, false)
	})
	eltWantErr(t, "GEGLU_ERF", func(ctx *core.Context) {
		ctx.GegluErfSplit(ctx.NewTensor2D(core.TypeF32, 4, 2), ctx.NewTensor2D(core.TypeF16, 4, 2))
	})
	eltWantErr(t, "GEGLU_QUICK", func(ctx *core.Context) { ctx.GegluQuick(ctx.Transpose(ctx.NewTensor2D(core.TypeF32, 4, 4))) })
	eltWantErr(t, "GEGLU", func(ctx *core.Context) {
		ctx.GegluSplit(ctx.NewTensor2D(core.TypeF32, 4, 2), ctx.NewTensor2D(core.TypeF32, 4, 3))
	})
	eltWantErr(t, "REGLU", func(ctx *core.Context) {
		ctx.Reglu(ctx.Transpose(ctx.NewTensor2D(core.TypeF32, 4, 4)))
	})
}
