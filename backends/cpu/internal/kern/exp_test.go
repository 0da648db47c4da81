package kern

import (
	"math"
	"testing"
)

// expSweep returns inputs covering the whole range of exp's float32 results densely, the
// overflow and underflow edges, and special values.
func expSweep() []float32 {
	var x []float32
	for v := -105.0; v <= 90; v += 1.0 / 4096 {
		x = append(x, float32(v))
	}
	for _, v := range []float64{0, math.Copysign(0, -1), 1e-30, -1e-30, 1e-8, -1e-8, 88.72, 88.7228, 88.7229, 89, 100,
		-87.3, -87.33654, -103.9, -103.97, -103.98, -104, -1000, math.Inf(1), math.Inf(-1), math.MaxFloat32, -math.MaxFloat32} {
		x = append(x, float32(v))
		x = append(x, math.Nextafter32(float32(v), float32(math.Inf(1))), math.Nextafter32(float32(v), float32(math.Inf(-1))))
	}
	return x
}

// expErr returns the relative error of got against math.Exp(x) for results in the normal
// float32 range and, for subnormal results, the error in units of the smallest subnormal.
func expErr(x, got float32) (rel, subUlps float64, ok bool) {
	want := math.Exp(float64(x))
	g := float64(got)
	switch {
	case math.IsNaN(float64(x)):
		return 0, 0, math.IsNaN(g)
	case want > math.MaxFloat32*(1+0x1p-24):
		return 0, 0, math.IsInf(g, 1)
	case want < 0x1p-126:
		return 0, math.Abs(g-want) / 0x1p-149, true
	}
	return math.Abs(g-want) / want, 0, true
}

func TestExpAccuracy(t *testing.T) {
	x := expSweep()
	x = append(x, float32(math.NaN()))
	for _, impl := range []struct {
		name string
		f    func(dst, src []float32)
	}{{"ExpF32", ExpF32}, {"twin", expF32Go}} {
		y := make([]float32, len(x))
		impl.f(y, x)
		var maxRel, maxSub float64
		var worst float32
		for i := range x {
			rel, sub, ok := expErr(x[i], y[i])
			if !ok {
				t.Fatalf("%s(%v) = %v, want %v", impl.name, x[i], y[i], math.Exp(float64(x[i])))
			}
			if rel > maxRel {
				maxRel, worst = rel, x[i]
			}
			maxSub = max(maxSub, sub)
		}
		t.Logf("%s: max relative error %.3g (at x=%v) over normal results, max %.3g subnormal ulps", impl.name, maxRel, worst, maxSub)
		if maxRel > 2e-7 {
			t.Errorf("%s: max relative error %g > 2e-7 (at x=%v)", impl.name, maxRel, worst)
		}
		if maxSub > 1 {
			t.Errorf("%s: subnormal results off by %g ulps", impl.name, maxSub)
		}
	}
	// asm vs twin over the sweep: NMSE far below ggml's 1e-7.
	a := make([]float32, len(x))
	b := make([]float32, len(x))
	ExpF32(a, x)
	expF32Go(b, x)
	var ra, rb []float64
	for i := range x {
		if !math.IsInf(float64(a[i]), 0) && a[i] == a[i] {
			ra = append(ra, float64(b[i]))
			rb = append(rb, float64(a[i]))
		}
	}
	if e := nmse(ra, rb); e > 1e-13 {
		t.Errorf("ExpF32 vs twin: nmse %g", e)
	}
}

func TestExpTailsAndSum(t *testing.T) {
	r := newRand(20)
	for _, n := range testLengths {
		for _, off := range testOffsets {
			src := randF32(r, n, -20, 20)
			df, d := guarded(n, off)
			ExpF32(d, src)
			checkGuards(t, "ExpF32", df, off, n)
			ref := make([]float64, n)
			for i := range ref {
				ref[i] = math.Exp(float64(src[i]))
			}
			if e := nmse(ref, f64s(d)); e > 1e-13 {
				t.Fatalf("ExpF32 n=%d nmse %g", n, e)
			}
			// ExpSumF32: the soft_max step.
			sub := float32(3.5)
			sf, s := guarded(n, off)
			sum := ExpSumF32(s, src, sub)
			checkGuards(t, "ExpSumF32", sf, off, n)
			var refSum float64
			for i := range ref {
				ref[i] = math.Exp(float64(src[i] - sub))
				refSum += ref[i]
			}
			if e := nmse(ref, f64s(s)); e > 1e-13 {
				t.Fatalf("ExpSumF32 n=%d nmse %g", n, e)
			}
			// Positive terms: float32 summation in any order is within (n+8)*2^-24*sum
			// (plus the terms' own 1-ulp errors).
			bound := float64(n+10) * 0x1p-24 * refSum
			twinSum := expSumF32Go(make([]float32, n), src, sub)
			if math.Abs(float64(sum)-refSum) > bound || math.Abs(float64(twinSum)-refSum) > bound {
				t.Fatalf("ExpSumF32 n=%d asm %v twin %v want %v", n, sum, twinSum, refSum)
			}
			// In place.
			cp := append([]float32(nil), src...)
			ExpF32(cp, cp)
			for i := range cp {
				if cp[i] != d[i] {
					t.Fatalf("ExpF32 in place differs at %d", i)
				}
			}
		}
	}
}

// geluRef is ggml's tanh GELU, 0.5*x*(1+tanh(u)) with u = sqrt(2/pi)*x*(1+0.044715x²),
// evaluated in float64 through the identity 0.5*(1+tanh(u)) = 1/(1+exp(-2u)), which avoids
// the cancellation of 1+tanh(u) for negative x (TestGeluRefForms checks the two agree).
func geluRef(x float64) float64 {
	u := math.Sqrt(2/math.Pi) * x * (1 + 0.044715*x*x)
	return x / (1 + math.Exp(-2*u))
}

func TestGeluRefForms(t *testing.T) {
	for x := -5.0; x <= 10; x += 0.01 {
		tanhForm := 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*x*(1+0.044715*x*x)))
		if d := math.Abs(tanhForm - geluRef(x)); d > 1e-12*math.Max(1, math.Abs(x)) {
			t.Fatalf("gelu forms differ at %v: %v vs %v", x, tanhForm, geluRef(x))
		}
	}
}

func siluRef(x float64) float64 { return x / (1 + math.Exp(-x)) }

func TestSiluGelu(t *testing.T) {
	r := newRand(21)
	for _, c := range []struct {
		name string
		fast func(dst, src []float32)
		twin func(dst, src []float32)
		ref  func(float64) float64
		z    func(float64) float64 // the exp argument: relative errors scale with 1+|z|
	}{
		{"SiluF32", SiluF32, siluF32Go, siluRef, func(x float64) float64 { return -x }},
		{"GeluF32", GeluF32, geluF32Go, geluRef, func(x float64) float64 { return -2 * math.Sqrt(2/math.Pi) * x * (1 + 0.044715*x*x) }},
	} {
		for _, n := range testLengths {
			for _, off := range testOffsets {
				src := randF32(r, n, -12, 12)
				if n > 4 {
					src[0], src[1], src[2], src[3] = 0, -100, 100, -1e30
				}
				df, d := guarded(n, off)
				c.fast(d, src)
				checkGuards(t, c.name, df, off, n)
				tw := make([]float32, n)
				c.twin(tw, src)
				ref := make([]float64, n)
				for i := range ref {
					ref[i] = c.ref(float64(src[i]))
					// Error budget: a few ulps, plus the float32 rounding of the exp argument
					// z, which exp turns into a relative error of |z|*2^-24.
					tol := 0x1p-22 * (2 + math.Abs(c.z(float64(src[i])))) * math.Abs(ref[i])
					for _, got := range []float32{d[i], tw[i]} {
						if math.Abs(float64(got)-ref[i]) > tol+1e-37 {
							t.Fatalf("%s(%v) = %v, want %v", c.name, src[i], got, ref[i])
						}
					}
				}
				var den float64
				for _, v := range ref {
					den += v * v
				}
				if den < 1e-60 {
					continue // only results below ~1e-38, which may flush to zero
				}
				if e := nmse(ref, f64s(d)); e > 1e-9 {
					t.Fatalf("%s n=%d nmse %g", c.name, n, e)
				}
				if e := nmse(ref, f64s(tw)); e > 1e-9 {
					t.Fatalf("%s twin n=%d nmse %g", c.name, n, e)
				}
			}
		}
	}
	// Limits: silu(-inf side) -> -0, gelu(+large) -> x, NaN stays NaN.
	in := []float32{-200, 200, float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	out := make([]float32, len(in))
	SiluF32(out, in)
	if out[0] != 0 || out[1] != 200 || out[2] == out[2] || !math.IsInf(float64(out[3]), 1) {
		t.Fatalf("SiluF32 limits: %v", out)
	}
	GeluF32(out, in)
	if out[0] != 0 || out[1] != 200 || out[2] == out[2] {
		t.Fatalf("GeluF32 limits: %v", out)
	}
}
