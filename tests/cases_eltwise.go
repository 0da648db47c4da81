package tests

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// The elementwise family beyond the base table: F16/BF16, permuted and strided inputs, wide
// argument ranges and special values for the transcendental functions, cancellation in sums,
// ties and NaNs for ARGMAX/ARGSORT, long rows, and REPEAT/CONCAT of other element types.

// nmseExact demands identical results (index outputs and copies): an NMSE limit of 0 would mean
// the default, and one wrong index among many barely moves the NMSE.
const nmseExact = 1e-300

func init() {
	extraCases = append(extraCases, eltwiseCases)
}

// eltUniform fills every input uniformly in [lo, hi).
func eltUniform(lo, hi float32) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error { return Uniform(t, r, lo, hi) }
}

// unaryOf builds UNARY function u on a: XIELU, which takes parameters, with Apertus' initial
// values (alpha_n = alpha_p = 0.8, beta = 0.5, eps = -1e-6).
func unaryOf(c *core.Context, a *core.Tensor, u core.UnaryOp) *core.Tensor {
	if u == core.UnaryXielu {
		return c.Xielu(a, 0.8, 0.8, 0.5, -1e-6)
	}
	return c.Unary(a, u)
}

// SWIGLU_OAI's parameters in the cases: gpt-oss's alpha, and a limit that clamps part of inputs
// drawn from [-4, 4).
const (
	oaiAlpha = 1.702
	oaiLimit = 1.5
)

// gluSingle builds GLU variant g on the halves of a's rows (SWIGLU_OAI with oaiAlpha, oaiLimit).
func gluSingle(c *core.Context, a *core.Tensor, g core.GLUOp, swapped bool) *core.Tensor {
	if g == core.GLUSwigluOAI {
		return c.SwigluOAI(a, oaiAlpha, oaiLimit, swapped)
	}
	return c.GLUSingle(a, g, swapped)
}

// gluSplit builds GLU variant g of a and b (SWIGLU_OAI with oaiAlpha, oaiLimit).
func gluSplit(c *core.Context, a, b *core.Tensor, g core.GLUOp, swapped bool) *core.Tensor {
	if g == core.GLUSwigluOAI {
		return c.SwigluOAISplit(a, b, oaiAlpha, oaiLimit, swapped)
	}
	return c.GLU(a, b, g, swapped)
}

// eltSpecials fills inputs with random values in [-3, 3) mixed with special values: NaN, the
// infinities, signed zeros, huge, tiny and subnormal numbers, and values where the functions
// change regime.
func eltSpecials(t *core.Tensor, r *rand.Rand) error {
	inf := float32(math.Inf(1))
	specials := []float32{float32(math.NaN()), inf, -inf, 0, float32(math.Copysign(0, -1)), 1e30, -1e30,
		3e38, -3e38, 1e-30, -1e-30, 1e-40, -1e-40, 88, 89, -88, -89, -104, 9, -9, 10, -10, 0.5, -0.5,
		1e-4, -1e-4, 3, -3, 8000, -8000, 1e5, 2.5e7}
	v := make([]float32, t.NElements())
	for i := range v {
		if i%2 == 0 && i/2 < len(specials) {
			v[i] = specials[i/2]
		} else {
			v[i] = -3 + 6*r.Float32()
		}
	}
	return core.SetFloat32s(t, v)
}

// eltHalves fills inputs with k/2 for k = -20..20 in the first row, the float just below each
// in the second and just above in the third.
func eltHalves(t *core.Tensor, _ *rand.Rand) error {
	v := make([]float32, t.NElements())
	for i := range v {
		h := float32(i%41-20) / 2
		switch i / 41 % 3 {
		case 1:
			h = math.Nextafter32(h, float32(math.Inf(-1)))
		case 2:
			h = math.Nextafter32(h, float32(math.Inf(1)))
		}
		v[i] = h
	}
	return core.SetFloat32s(t, v)
}

// eltDiscrete fills inputs with few distinct values (ties), some NaNs and -Inf when withNaN.
func eltDiscrete(withNaN bool) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		v := make([]float32, t.NElements())
		for i := range v {
			v[i] = float32(r.IntN(5)) - 2
			if v[i] == 0 && r.IntN(2) == 0 {
				v[i] = float32(math.Copysign(0, -1))
			}
			if withNaN {
				switch r.IntN(12) {
				case 0:
					v[i] = float32(math.NaN())
				case 1:
					v[i] = float32(math.Inf(-1))
				case 2:
					v[i] = float32(math.Inf(1))
				}
			}
		}
		return core.SetFloat32s(t, v)
	}
}

// eltCancel fills inputs with pairs x, -x (in order) plus small values, so sums nearly cancel.
func eltCancel(t *core.Tensor, r *rand.Rand) error {
	v := make([]float32, t.NElements())
	for i := 0; i+1 < len(v); i += 2 {
		x := (r.Float32() - 0.5) * 2000
		v[i], v[i+1] = x, -x
		if r.IntN(4) == 0 {
			v[i+1] += r.Float32() * 1e-3
		}
	}
	return core.SetFloat32s(t, v)
}

func eltwiseCases() []Case {
	var cs []Case
	add := func(name string, limit float64, init func(*core.Tensor, *rand.Rand) error, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: "eltwise/" + name, Build: build, Init: init, MaxNMSE: limit})
	}
	f32, f16, bf16 := core.TypeF32, core.TypeF16, core.TypeBF16

	type unaryFn struct {
		name string
		f    func(*core.Context, *core.Tensor) *core.Tensor
		lo   float32 // argument range
		hi   float32
	}
	fns := []unaryFn{
		{"SQR", (*core.Context).Sqr, -10, 10},
		{"SQRT", (*core.Context).Sqrt, 0, 100},
		{"LOG", (*core.Context).Log, 1e-3, 1e3},
		{"SIN", (*core.Context).Sin, -100, 100},
		{"COS", (*core.Context).Cos, -100, 100},
		{"ADD1", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Add1(a, c.NewTensor1D(a.Type, 1)) }, -2, 2},
		{"SCALE", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Scale(a, -1.3) }, -2, 2},
		{"SCALE_BIAS", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.ScaleBias(a, 0.3, -0.7) }, -2, 2},
		{"CLAMP", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Clamp(a, -0.25, 1) }, -2, 2},
		{"LEAKY_RELU", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.LeakyRelu(a, 0.01) }, -2, 2},
	}
	for u := core.UnaryOp(0); u < core.UnaryCount; u++ {
		u := u
		lo, hi := float32(-10), float32(10)
		switch u {
		case core.UnaryExp, core.UnaryExpm1:
			lo, hi = -20, 20
		case core.UnarySoftplus:
			lo, hi = -30, 30 // both sides of the cut-over at 20
		}
		fns = append(fns, unaryFn{"UNARY(" + u.String() + ")", func(c *core.Context, a *core.Tensor) *core.Tensor { return unaryOf(c, a, u) }, lo, hi})
	}
	for _, fn := range fns {
		fn := fn
		// f32 over a wide range, on a permuted input.
		add(fn.name+",wide,permuted", 0, eltUniform(fn.lo, fn.hi), func(c *core.Context) *core.Tensor {
			return fn.f(c, c.Permute(c.NewTensor(f32, 7, 5, 3, 2), 2, 0, 1, 3))
		})
		// 16-bit types on a strided view.
		for _, typ := range []core.Type{f16, bf16} {
			typ := typ
			if fn.name == "SCALE" || fn.name == "SCALE_BIAS" {
				continue // SCALE is f32 only
			}
			add(fmt.Sprintf("%s,%v,view", fn.name, typ), 0, eltUniform(fn.lo, fn.hi), func(c *core.Context) *core.Tensor {
				a := c.NewTensor(typ, 9, 7, 3)
				return fn.f(c, c.View3D(a, 5, 7, 3, a.Nb[1], a.Nb[2], 2*a.Nb[0]))
			})
		}
		// Special values (NaN, infinities, zeros, huge, subnormal).
		if fn.name != "ADD1" {
			add(fn.name+",specials", 0, eltSpecials, func(c *core.Context) *core.Tensor {
				return fn.f(c, c.NewTensor(f32, 16, 5))
			})
		}
	}
	// Several workgroups.
	add("UNARY(GELU),large", 0, nil, func(c *core.Context) *core.Tensor { return c.Gelu(c.NewTensor(f32, 1000, 3, 5)) })
	// A chain of dependent nodes (barriers between them), every node checked.
	add("chain", 0, nil, func(c *core.Context) *core.Tensor {
		x := c.NewTensor(f32, 33, 5, 2)
		y := c.Silu(c.Scale(c.Sin(x), 2))
		z := c.Concat(c.Repeat(c.SumRows(y), c.NewTensor(f32, 3, 5, 2)), c.Tanh(y), 0)
		return c.Mean(c.GLUSingle(z, core.GLUSwiglu, false))
	})

	// GLU: 16-bit types, rows with gaps, permuted outer dims, swapped split form.
	for g := core.GLUOp(0); g < core.GLUCount; g++ {
		g := g
		for _, typ := range []core.Type{f16, bf16} {
			typ := typ
			add(fmt.Sprintf("GLU(%v,%v)", g, typ), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
				return gluSingle(c, c.NewTensor(typ, 12, 5, 3), g, true)
			})
		}
		add(fmt.Sprintf("GLU(%v,view,swapped)", g), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
			a := c.NewTensor(f32, 14, 5, 3)
			return gluSingle(c, c.View3D(a, 10, 5, 3, a.Nb[1], a.Nb[2], 2*a.Nb[0]), g, true)
		})
		add(fmt.Sprintf("GLU(%v,permuted)", g), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
			return gluSingle(c, c.Permute(c.NewTensor(f32, 10, 5, 3, 2), 0, 2, 1, 3), g, false)
		})
		// Odd rows (ggml: halves of ne0/2, the last element unread), dense and as a strided view.
		for _, swapped := range []bool{false, true} {
			swapped := swapped
			add(fmt.Sprintf("GLU(%v,ne0=11,swapped=%v)", g, swapped), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
				return gluSingle(c, c.NewTensor(f32, 11, 5, 3), g, swapped)
			})
		}
		add(fmt.Sprintf("GLU(%v,ne0=9,view,f16)", g), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
			a := c.NewTensor(f16, 14, 5, 3)
			return gluSingle(c, c.View3D(a, 9, 5, 3, a.Nb[1], a.Nb[2], 2*a.Nb[0]), g, false)
		})
		add(fmt.Sprintf("GLU(%v,split,swapped,permuted)", g), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
			a := c.Permute(c.NewTensor(f32, 7, 3, 5), 0, 2, 1, 3)
			return gluSplit(c, a, c.NewTensor(f32, 7, 5, 3), g, true)
		})
		add(fmt.Sprintf("GLU(%v,split,f16)", g), 0, eltUniform(-4, 4), func(c *core.Context) *core.Tensor {
			return gluSplit(c, c.NewTensor(f16, 7, 5, 3), c.NewTensor(f16, 7, 5, 3), g, false)
		})
	}
	// Rounding at and next to halves: k/2 and the floats either side of it, as in ROUND(2.5) = 3,
	// ROUND(-2.5) = -3, ROUND(0.49999997) = 0.
	for _, u := range []core.UnaryOp{core.UnaryFloor, core.UnaryCeil, core.UnaryRound, core.UnaryTrunc} {
		u := u
		add("UNARY("+u.String()+",halves)", nmseExact, eltHalves, func(c *core.Context) *core.Tensor {
			return c.Unary(c.NewTensor(f32, 41, 3), u)
		})
	}
	// SWIGLU_OAI without clamping (gpt-oss's limit 7) and with an infinite limit.
	for _, limit := range []float32{7, float32(math.Inf(1))} {
		limit := limit
		add(fmt.Sprintf("GLU(SWIGLU_OAI,limit=%v)", limit), 0, eltUniform(-8, 8), func(c *core.Context) *core.Tensor {
			return c.SwigluOAI(c.NewTensor(f32, 16, 5, 3), 1.702, limit, false)
		})
	}
	// XIELU with other coefficients: a negative beta and eps, and a positive eps (ggml does not
	// forbid it: min(x, eps) then picks x for x up to 0).
	for _, p := range [][4]float32{{0.2, 1.5, -0.25, -1e-3}, {-2, -3, 0, 1e-2}} {
		p := p
		add(fmt.Sprintf("UNARY(XIELU,%v)", p), 0, eltUniform(-6, 6), func(c *core.Context) *core.Tensor {
			return c.Xielu(c.NewTensor(f32, 16, 5, 3), p[0], p[1], p[2], p[3])
		})
	}

	// Reductions.
	add("SUM(permuted)", 0, nil, func(c *core.Context) *core.Tensor {
		return c.Sum(c.Permute(c.NewTensor(f32, 5, 7, 3, 2), 3, 1, 0, 2))
	})
	add("SUM(cancelling)", 0, eltCancel, func(c *core.Context) *core.Tensor { return c.Sum(c.NewTensor(f32, 1000, 3)) })
	add("SUM(large)", 0, nil, func(c *core.Context) *core.Tensor { return c.Sum(c.NewTensor(f32, 300, 40, 3)) })
	for _, typ := range []core.Type{f16, bf16} {
		typ := typ
		add(fmt.Sprintf("SUM(%v)", typ), 0, nil, func(c *core.Context) *core.Tensor { return c.Sum(c.NewTensor(typ, 33, 7, 3)) })
	}
	// eltSpecials puts +inf at element 2 and -inf at element 4.
	add("SUM(inf)", 0, eltSpecials, func(c *core.Context) *core.Tensor {
		return c.Sum(c.View1D(c.NewTensor(f32, 16, 5), 2, 2*4)) // +inf, x: +inf
	})
	add("SUM(inf-inf)", 0, eltSpecials, func(c *core.Context) *core.Tensor {
		return c.Sum(c.View1D(c.NewTensor(f32, 16, 5), 3, 2*4)) // +inf, x, -inf: NaN
	})
	add("SUM_ROWS(cancelling)", 0, eltCancel, func(c *core.Context) *core.Tensor { return c.SumRows(c.NewTensor(f32, 600, 4, 2)) })
	add("SUM_ROWS(transposed)", 0, nil, func(c *core.Context) *core.Tensor {
		return c.SumRows(c.Transpose(c.NewTensor(f32, 7, 33)))
	})
	add("SUM_ROWS(ne0=1)", 0, nil, func(c *core.Context) *core.Tensor { return c.SumRows(c.NewTensor(f32, 1, 9, 2)) })
	add("SUM_ROWS(long,permuted)", 0, nil, func(c *core.Context) *core.Tensor {
		return c.SumRows(c.Permute(c.NewTensor(f32, 3, 517, 2), 1, 0, 2, 3))
	})
	add("MEAN(long)", 0, nil, func(c *core.Context) *core.Tensor { return c.Mean(c.NewTensor(f32, 1001, 3, 2)) })
	add("MEAN(view)", 0, nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 40, 6, 2)
		return c.Mean(c.View3D(a, 37, 5, 2, a.Nb[1], a.Nb[2], a.Nb[1]))
	})

	// ARGMAX: ties (first wins), NaN and infinities, long rows, transposed input.
	add("ARGMAX(ties,nan)", nmseExact, eltDiscrete(true), func(c *core.Context) *core.Tensor {
		return c.Argmax(c.NewTensor(f32, 300, 11))
	})
	add("ARGMAX(ties)", nmseExact, eltDiscrete(false), func(c *core.Context) *core.Tensor {
		return c.Argmax(c.NewTensor(f32, 37, 11))
	})
	add("ARGMAX(transposed)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Argmax(c.Transpose(c.NewTensor(f32, 9, 600)))
	})
	add("ARGMAX(nan,-inf rows)", nmseExact, func(t *core.Tensor, r *rand.Rand) error {
		v := make([]float32, t.NElements())
		for i := range v {
			switch row := i / 5; {
			case row == 0:
				v[i] = float32(math.NaN())
			case row == 1:
				v[i] = float32(math.Inf(-1))
			case row == 2 && i%5 == 3:
				v[i] = float32(math.Inf(-1))
			case row == 2:
				v[i] = float32(math.NaN())
			default:
				v[i] = r.Float32()
			}
		}
		return core.SetFloat32s(t, v)
	}, func(c *core.Context) *core.Tensor { return c.Argmax(c.NewTensor(f32, 5, 4)) })

	// ARGSORT: stable on ties, NaNs, signed zeros; short, padded and long rows; permuted input.
	for _, order := range []core.SortOrder{core.SortAsc, core.SortDesc} {
		order := order
		for _, ne0 := range []int64{1, 2, 3, 31, 64, 1000, 1024} {
			ne0 := ne0
			add(fmt.Sprintf("ARGSORT(%d,ne0=%d,ties)", order, ne0), nmseExact, eltDiscrete(ne0 > 30), func(c *core.Context) *core.Tensor {
				return c.Argsort(c.NewTensor(f32, ne0, 3, 2), order)
			})
		}
		add(fmt.Sprintf("ARGSORT(%d,permuted)", order), nmseExact, nil, func(c *core.Context) *core.Tensor {
			return c.Argsort(c.Permute(c.NewTensor(f32, 5, 19, 3), 1, 2, 0, 3), order)
		})
		add(fmt.Sprintf("ARGSORT(%d,ne0=1500)", order), nmseExact, nil, func(c *core.Context) *core.Tensor {
			return c.Argsort(c.NewTensor(f32, 1500, 2), order)
		})
	}

	// REPEAT and CONCAT: other element types, permuted sources, every dimension.
	for _, typ := range []core.Type{f16, bf16, core.TypeI32} {
		typ := typ
		add(fmt.Sprintf("REPEAT(%v)", typ), nmseExact, nil, func(c *core.Context) *core.Tensor {
			return c.Repeat(c.NewTensor(typ, 3, 2, 1, 2), c.NewTensor(typ, 6, 4, 3, 2))
		})
		add(fmt.Sprintf("CONCAT(%v,dim=1)", typ), nmseExact, nil, func(c *core.Context) *core.Tensor {
			return c.Concat(c.NewTensor(typ, 5, 3, 2), c.NewTensor(typ, 5, 4, 2), 1)
		})
	}
	// CONCAT of quantized tensors: whole blocks, along rows (dim 0) and the other dimensions
	add("CONCAT(q4_0,dim=0)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Concat(c.NewTensor(core.TypeQ4_0, 64, 3, 2), c.NewTensor(core.TypeQ4_0, 32, 3, 2), 0)
	})
	add("CONCAT(q8_0,dim=1)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Concat(c.NewTensor(core.TypeQ8_0, 32, 3, 2), c.NewTensor(core.TypeQ8_0, 32, 4, 2), 1)
	})
	add("CONCAT(q4_K,dim=2)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Concat(c.NewTensor(core.TypeQ4_K, 256, 2, 1, 2), c.NewTensor(core.TypeQ4_K, 256, 2, 3, 2), 2)
	})
	add("REPEAT(permuted,all dims)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Repeat(c.Permute(c.NewTensor(f32, 2, 3, 1, 2), 1, 0, 2, 3), c.NewTensor(f32, 9, 4, 2, 4))
	})
	add("REPEAT(same shape)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Repeat(c.NewTensor(f32, 5, 3), c.NewTensor(f32, 5, 3))
	})
	for dim := 0; dim < 4; dim++ {
		dim := dim
		add(fmt.Sprintf("CONCAT(permuted,dim=%d)", dim), nmseExact, nil, func(c *core.Context) *core.Tensor {
			a := c.Permute(c.NewTensor(f32, 3, 4, 2, 2), 1, 0, 3, 2) // ne = 4, 3, 2, 2
			ne := []int64{4, 3, 2, 2}
			ne[dim] = 3
			b := c.Transpose(c.NewTensor(f32, append([]int64{ne[1], ne[0]}, ne[2:]...)...))
			return c.Concat(a, b, dim)
		})
	}

	// Empty operands: a sum of nothing is 0, an empty row's argmax 0, CONCAT with an empty side.
	add("SUM(empty)", 0, nil, func(c *core.Context) *core.Tensor { return c.Sum(c.NewTensor(f32, 5, 0, 2)) })
	add("SUM_ROWS(empty rows)", 0, nil, func(c *core.Context) *core.Tensor { return c.SumRows(c.NewTensor(f32, 0, 3, 2)) })
	add("ARGMAX(empty rows)", nmseExact, nil, func(c *core.Context) *core.Tensor { return c.Argmax(c.NewTensor(f32, 0, 3)) })
	add("CONCAT(empty a)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Concat(c.NewTensor(f32, 5, 0, 2), c.NewTensor(f32, 5, 4, 2), 1)
	})
	add("CONCAT(empty b)", nmseExact, nil, func(c *core.Context) *core.Tensor {
		return c.Concat(c.NewTensor(f32, 5, 4, 2), c.NewTensor(f32, 5, 0, 2), 1)
	})
	return cs
}
