//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// eltRun computes out (built in ctx, every tensor of ctx in one buffer) after setting the
// leaf in to vals and every other leaf to zeros; it returns out's values.
func eltRun(t *testing.T, be *Backend, ctx *core.Context, in *core.Tensor, vals []float32, out *core.Tensor) []float32 {
	t.Helper()
	allocCtx(t, ctx, be.DefaultBufferType())
	if err := core.SetFloat32s(in, vals); err != nil {
		t.Fatal(err)
	}
	for _, x := range ctx.Tensors() { // other inputs: zeros
		if x != in && x.Op == core.OpNone && x.ViewSrc == nil {
			if err := core.SetFloat32s(x, make([]float32, x.NElements())); err != nil {
				t.Fatal(err)
			}
		}
	}
	compute(t, be, out)
	got, err := core.GetFloat32s(out)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// eltAccuracyInputs are arguments across the ranges where the functions change regime: near
// zero, around the overflow and underflow thresholds, and large arguments of sin and cos.
func eltAccuracyInputs() []float32 {
	var v []float32
	for _, m := range []float64{1e-30, 1e-7, 1e-4, 0.01, 0.3, 1, 3, 9, 20, 50, 87, 100, 1e4, 1e6, 1e12, 1e30} {
		for k := 0; k < 64; k++ {
			x := m * (0.5 + float64(k)/42)
			v = append(v, float32(x), float32(-x))
		}
	}
	for k := 1; k < 200; k++ { // near multiples of pi/2, where sin or cos is small
		x := float64(k) * math.Pi / 2
		v = append(v, float32(x), math.Nextafter32(float32(x), 0), math.Nextafter32(float32(x), 1e9))
	}
	// Large arguments known to lie very close to multiples of pi/2.
	v = append(v, 0x1.921fb6p+100, 1.0e22, 0x1.2d97c8p+3, 0x1.6a09e6p+26, 8192.5, 8193, 16384.25, 3e38)
	return v
}

// TestEltwiseAccuracy compares the transcendental functions with float64 math, element by
// element: relative error within a few float32 ulps (the arguments of exp inside the
// activations are themselves rounded products, which the tolerance allows for).
func TestEltwiseAccuracy(t *testing.T) {
	be := newBackend(t)
	in := eltAccuracyInputs()
	type fn struct {
		name  string
		build func(c *core.Context, a *core.Tensor) *core.Tensor
		ref   func(x float64) float64
		ulps  func(x float64) float64 // allowed error in ulps of the result
	}
	// The activations x·s(x) (s a sigmoid or erfc form in [0, 1]): their tiny results may come
	// out as ±0 on a device that flushes f32 denormals (see below).
	tails := map[string]bool{"SILU": true, "GELU_QUICK": true, "GELU": true, "GELU_ERF": true}
	few := func(float64) float64 { return 4 }
	prod := func(k float64) func(x float64) float64 { // exp of a rounded product k*x
		return func(x float64) float64 { return 4 + math.Abs(k*x)*2 }
	}
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	// GELU's tanh form 0.5x(1+tanh z) cancels for negative x even in float64; x·σ(2z) is the
	// same function without it.
	geluZ := func(x float64) float64 { return 0.79788456080286535587989211986876 * x * (1 + 0.044715*x*x) }
	gelu := func(x float64) float64 { return x * sig(2*geluZ(x)) }
	fns := []fn{
		{"EXP", (*core.Context).Exp, math.Exp, few},
		{"LOG", (*core.Context).Log, math.Log, few},
		{"SIN", (*core.Context).Sin, math.Sin, few},
		{"COS", (*core.Context).Cos, math.Cos, few},
		{"TANH", (*core.Context).Tanh, math.Tanh, few},
		{"ELU", (*core.Context).Elu, func(x float64) float64 {
			if x > 0 {
				return x
			}
			return math.Expm1(x)
		}, few},
		{"SIGMOID", (*core.Context).Sigmoid, sig, few},
		{"SILU", (*core.Context).Silu, func(x float64) float64 { return x * sig(x) }, few},
		{"GELU_QUICK", (*core.Context).GeluQuick, func(x float64) float64 { return x * sig(1.702*x) }, prod(1.702)},
		{"GELU", (*core.Context).Gelu, gelu, func(x float64) float64 { return 8 + 10*math.Abs(geluZ(x)) }},
		{"SQRT", (*core.Context).Sqrt, math.Sqrt, few},
		{"EXPM1", (*core.Context).Expm1, math.Expm1, few},
		{"SOFTPLUS", (*core.Context).Softplus, func(x float64) float64 {
			if x > 20 {
				return x
			}
			return math.Log1p(math.Exp(x))
		}, few},
		// x·Φ(x): the argument's rounding in z = x/√2 is avoided (z² is formed exactly from x), so
		// the error stays a few ulps far into the tail.
		{"GELU_ERF", (*core.Context).GeluErf, func(x float64) float64 { return 0.5 * x * math.Erfc(-x/math.Sqrt2) },
			func(float64) float64 { return 8 }},
		{"ROUND", (*core.Context).Round, math.Round, func(float64) float64 { return 0 }},
	}
	for _, f := range fns {
		t.Run(f.name, func(t *testing.T) {
			ctx := core.NewContext(core.ContextParams{NoAlloc: true})
			a := ctx.NewTensor1D(core.TypeF32, int64(len(in)))
			got := eltRun(t, be, ctx, a, in, f.build(ctx, a))
			worst, at := 0.0, 0
			for i, x := range in {
				want := f.ref(float64(x))
				w32 := float32(want)
				g := float64(got[i])
				if math.IsNaN(want) || math.IsInf(float64(w32), 0) || w32 == 0 {
					if !(math.IsNaN(want) && math.IsNaN(g)) && float32(g) != w32 && !(w32 == 0 && math.Abs(g) < 1e-37) {
						t.Errorf("%s(%g) = %g, want %g", f.name, x, g, want)
					}
					continue
				}
				// Denormals flushed inside the activations x·s(x): a device may flush f32
				// denormals to zero (Vulkan leaves it to the implementation without the
				// DenormPreserve execution mode, which the shaders do not declare; an NVIDIA
				// H200 flushes). In the tails s(x), or the reciprocal 1/(1 + e^-x) it is formed
				// from, is then 0 once it falls below FLT_MIN = 2^-126, and the result is ±0.
				// Those factors are non-zero in f32 only for |x| < 2^7 (e^-x overflows past
				// 88.7, e^-1.702x past 52, erfc(-x/√2) is 0 past 14, GELU's 2z past 88.7), so an
				// exact result below 2^-126·2^7 = 2^-119 can come out as ±0 (either sign): that
				// is accepted below 2^-100; any other result, and a ±0 where the exact value is
				// larger, is checked as before.
				if tails[f.name] && g == 0 && math.Abs(want) < 0x1p-100 {
					continue
				}
				if math.Abs(want) < 0x1p-126 { // f32 subnormal results: flushing to zero is fine
					if math.Abs(g) > 0x1p-126 {
						t.Errorf("%s(%g) = %g, want %g", f.name, x, g, want)
					}
					continue
				}
				ulp := float64(math.Nextafter32(float32(math.Abs(want)), float32(math.Inf(1))) - float32(math.Abs(want)))
				e := math.Abs(g-want) / ulp
				if e > f.ulps(float64(x)) {
					t.Errorf("%s(%g) = %.9g, want %.9g: %.1f ulps", f.name, x, g, want, e)
				}
				if e > worst {
					worst, at = e, i
				}
			}
			t.Logf("%s: worst %.2f ulps at %g", f.name, worst, in[at])
		})
	}
}

// TestEltwiseInplace runs the unary-shader ops with dst sharing src0's memory (as the graph
// allocator places CanInplace ops) and compares with the same op out of place, bit for bit.
func TestEltwiseInplace(t *testing.T) {
	be := newBackend(t)
	type op struct {
		name  string
		build func(c *core.Context, a *core.Tensor) *core.Tensor
	}
	ops := []op{
		{"SCALE", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.ScaleBias(a, 0.5, 0.25) }},
		{"SQR", (*core.Context).Sqr},
		{"SQRT", (*core.Context).Sqrt},
		{"LOG", (*core.Context).Log},
		{"SIN", (*core.Context).Sin},
		{"ADD1", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Add1(a, c.NewTensor1D(a.Type, 1)) }},
	}
	for u := core.UnaryOp(0); u < core.UnaryCount; u++ {
		u := u
		ops = append(ops, op{"UNARY(" + u.String() + ")", func(c *core.Context, a *core.Tensor) *core.Tensor {
			if u == core.UnaryXielu {
				return c.Xielu(a, 0.8, 0.8, 0.5, -1e-6)
			}
			return c.Unary(a, u)
		}})
	}
	vals := make([]float32, 7*5*3)
	for i := range vals {
		vals[i] = float32(i%23)/7 - 1.3 + float32(i)/1000
	}
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16} {
		for _, o := range ops {
			if o.name == "SCALE" && typ != core.TypeF32 {
				continue
			}
			t.Run(fmt.Sprintf("%s/%v", o.name, typ), func(t *testing.T) {
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				a := ctx.NewTensor(typ, 7, 5, 3)
				want := eltRun(t, be, ctx, a, vals, o.build(ctx, a))

				ctx = core.NewContext(core.ContextParams{NoAlloc: true})
				a = ctx.NewTensor(typ, 7, 5, 3)
				out := o.build(ctx, a)
				var extra *core.Tensor
				if out.Src[1] != nil {
					extra = out.Src[1]
				}
				bt := be.DefaultBufferType()
				align := bt.Alignment()
				size := core.AlignUp(bt.AllocSize(a), align) + 64
				buf, err := bt.Alloc(size)
				if err != nil {
					t.Fatal(err)
				}
				defer buf.Free()
				for _, x := range []*core.Tensor{a, out} { // out shares a's memory
					if err := core.TensorAlloc(buf, x, 0); err != nil {
						t.Fatal(err)
					}
				}
				if extra != nil {
					if err := core.TensorAlloc(buf, extra, core.AlignUp(bt.AllocSize(a), align)); err != nil {
						t.Fatal(err)
					}
					if err := core.SetFloat32s(extra, []float32{0}); err != nil {
						t.Fatal(err)
					}
				}
				if err := core.SetFloat32s(a, vals); err != nil {
					t.Fatal(err)
				}
				compute(t, be, out)
				got, err := core.GetFloat32s(out)
				if err != nil {
					t.Fatal(err)
				}
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
						t.Fatalf("element %d: in place %v, out of place %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}
