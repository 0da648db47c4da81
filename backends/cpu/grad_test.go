package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Gradient checks in the manner of ggml's test-backend-ops "grad" mode: build an op on random
// inputs, reduce its output to a scalar loss, let core.BuildBackward make the gradient graph, run
// it on the CPU, and compare every parameter's gradient with central finite differences of the
// forward pass. Two changes make the check sharper than ggml's: the loss is Σ out⊙R with a fixed
// random R (ggml sums the output, so every upstream gradient is 1 and layout mistakes cancel), and
// the finite differences evaluate that loss in float64 from the f32 output (no rounding of a large
// sum in f32). The error is ggml's mean absolute asymmetry mean |gn − ga| / (|gn| + |ga|) (with the
// denominator at least 1e-3), limit 1e-3 unless a case sets another; 4-point differences as ggml's
// grad_precise. Inputs of kinked functions keep a distance from the kinks larger than the step.

type gradCase struct {
	name    string
	build   func(c *gradCtx) *core.Tensor // returns the op's output; params via c.param
	eps     float64                       // finite-difference step (default 1e-2)
	maxErr  float64                       // default 1e-3
	precise bool                          // 4-point differences
}

type gradCtx struct {
	ctx    *core.Context
	rng    *rand.Rand
	params []*core.Tensor
}

// tensor makes an F32 tensor filled with uniform values in [lo, hi].
func (c *gradCtx) tensor(lo, hi float64, ne ...int64) *core.Tensor {
	t := c.ctx.NewTensor(core.TypeF32, ne...)
	for i := range t.Float32s() {
		t.Float32s()[i] = float32(lo + (hi-lo)*c.rng.Float64())
	}
	return t
}

// param makes a parameter with uniform values in [-1, 1].
func (c *gradCtx) param(ne ...int64) *core.Tensor { return c.paramIn(-1, 1, ne...) }

// paramIn makes a parameter with uniform values in [lo, hi].
func (c *gradCtx) paramIn(lo, hi float64, ne ...int64) *core.Tensor {
	t := c.tensor(lo, hi, ne...)
	if err := c.ctx.SetParam(t); err != nil {
		panic(err)
	}
	t.SetName(fmt.Sprintf("p%d", len(c.params)))
	c.params = append(c.params, t)
	return t
}

// paramAway makes a parameter whose values keep a distance ≥ gap from every kink, so that finite
// differences with eps < gap never cross one.
func (c *gradCtx) paramAway(gap float64, kinks []float64, ne ...int64) *core.Tensor {
	t := c.param(ne...)
	d := t.Float32s()
	for i := range d {
		for {
			v := -2 + 4*c.rng.Float64()
			ok := true
			for _, k := range kinks {
				if math.Abs(v-k) < gap {
					ok = false
				}
			}
			if ok {
				d[i] = float32(v)
				break
			}
		}
	}
	return t
}

// paramDistinct makes a parameter whose values are distinct, at least gap apart (a shuffled
// ladder), so that finite differences never change which element of a window is the largest.
func (c *gradCtx) paramDistinct(gap float64, ne ...int64) *core.Tensor {
	t := c.param(ne...)
	d := t.Float32s()
	for i, j := range c.rng.Perm(len(d)) {
		d[i] = float32((float64(j) - float64(len(d))/2) * gap)
	}
	return t
}

// indices makes an I32 tensor.
func (c *gradCtx) indices(v []int32, ne ...int64) *core.Tensor {
	t := c.ctx.NewTensor(core.TypeI32, ne...)
	copy(t.Int32s(), v)
	return t
}

// readF64 reads every element of an F32 tensor (any strides) in index order.
func readF64(t *core.Tensor) []float64 {
	data := t.Data()
	out := make([]float64, 0, t.NElements())
	for i3 := int64(0); i3 < t.Ne[3]; i3++ {
		for i2 := int64(0); i2 < t.Ne[2]; i2++ {
			for i1 := int64(0); i1 < t.Ne[1]; i1++ {
				for i0 := int64(0); i0 < t.Ne[0]; i0++ {
					off := i0*t.Nb[0] + i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3]
					out = append(out, float64(math.Float32frombits(uint32(data[off])|uint32(data[off+1])<<8|uint32(data[off+2])<<16|uint32(data[off+3])<<24)))
				}
			}
		}
	}
	return out
}

func runGradCase(t *testing.T, gc gradCase, seed uint64) {
	t.Helper()
	eps := gc.eps
	if eps == 0 {
		eps = 1e-2
	}
	maxErr := gc.maxErr
	if maxErr == 0 {
		maxErr = 1e-3
	}
	c := &gradCtx{ctx: core.NewContext(core.ContextParams{MemSize: 64 << 20}), rng: rand.New(rand.NewPCG(seed, 4))}
	out := gc.build(c)
	if err := c.ctx.Err(); err != nil {
		t.Fatalf("build: %v", err)
	}
	if out.Type != core.TypeF32 {
		t.Fatalf("output %v is not f32", out)
	}
	r := c.tensor(-1, 1, out.Ne[:]...)
	rv := readF64(r)
	loss := c.ctx.Sum(c.ctx.Mul(out, r))
	if err := c.ctx.SetLoss(loss); err != nil {
		t.Fatal(err)
	}
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	gb, err := core.BuildBackward(c.ctx, gf)
	if err != nil {
		t.Fatal(err)
	}
	if err := cpu.Compute(gb, 2); err != nil {
		t.Fatal(err)
	}
	// analytic gradients first (the forward runs below overwrite intermediates)
	analytic := make([][]float64, len(c.params))
	for i, p := range c.params {
		if g := gb.Grad(p); g != nil {
			analytic[i] = readF64(g)
		} else {
			analytic[i] = make([]float64, p.NElements())
		}
		for _, v := range analytic[i] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("gradient of %v is not finite", p)
			}
		}
	}
	f := func() float64 {
		if err := cpu.Compute(gf, 2); err != nil {
			t.Fatal(err)
		}
		var s float64
		for i, v := range readF64(out) {
			s += v * rv[i]
		}
		return s
	}
	for pi, p := range c.params {
		d := p.Float32s()
		var sum float64
		var worst float64
		worstAt := -1
		for i := range d {
			x := d[i]
			at := func(h float64) float64 { d[i] = float32(float64(x) + h); return f() }
			var gn float64
			if gc.precise {
				gn = (8*at(eps/2) + at(-eps) - 8*at(-eps/2) - at(eps)) / (6 * eps)
			} else {
				gn = (at(eps) - at(-eps)) / (2 * eps)
			}
			d[i] = x
			ga := analytic[pi][i]
			// the floor keeps float32 noise on near-zero gradients from dominating the mean
			term := math.Abs(gn-ga) / math.Max(math.Abs(gn)+math.Abs(ga), 1e-3)
			sum += term
			if term > worst {
				worst, worstAt = term, i
			}
		}
		maa := sum / float64(len(d))
		if maa > maxErr || math.IsNaN(maa) {
			nw := 0.0
			if worstAt >= 0 {
				x := d[worstAt]
				d[worstAt] = x + float32(eps)
				fp := f()
				d[worstAt] = x - float32(eps)
				fm := f()
				d[worstAt] = x
				nw = (fp - fm) / (2 * eps)
			}
			t.Errorf("param %d %v: gradient error %.3g > %.3g (worst element %d: analytic %g, numeric ≈ %g)",
				pi, p, maa, maxErr, worstAt, analytic[pi][worstAt], nw)
		}
	}
}

func gradCases() []gradCase {
	smooth := func(name string, f func(c *core.Context, a *core.Tensor) *core.Tensor) gradCase {
		return gradCase{name: name, precise: true, build: func(c *gradCtx) *core.Tensor { return f(c.ctx, c.param(5, 3, 2)) }}
	}
	kinked := func(name string, kinks []float64, f func(c *core.Context, a *core.Tensor) *core.Tensor) gradCase {
		return gradCase{name: name, build: func(c *gradCtx) *core.Tensor { return f(c.ctx, c.paramAway(0.05, kinks, 7, 3)) }}
	}
	cs := []gradCase{
		{name: "ADD", build: func(c *gradCtx) *core.Tensor { return c.ctx.Add(c.param(5, 4, 3), c.param(5, 4, 3)) }},
		{name: "ADD/broadcast", build: func(c *gradCtx) *core.Tensor { return c.ctx.Add(c.param(6, 4, 3), c.param(3, 1, 3)) }},
		{name: "SUB/broadcast", build: func(c *gradCtx) *core.Tensor { return c.ctx.Sub(c.param(5, 4, 2, 2), c.param(5, 2, 1, 2)) }},
		{name: "MUL/broadcast", build: func(c *gradCtx) *core.Tensor { return c.ctx.Mul(c.param(5, 4, 3), c.param(5, 1, 3)) }},
		{name: "MUL/views", build: func(c *gradCtx) *core.Tensor {
			a := c.param(4, 5)
			b := c.param(7, 6)
			return c.ctx.Mul(c.ctx.Transpose(a), c.ctx.View2D(b, 5, 4, b.Nb[1], 4*2))
		}},
		{name: "DIV/broadcast", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Div(c.param(5, 4, 3), c.paramIn(0.5, 2, 1, 4, 1))
		}},
		{name: "SCALE", build: func(c *gradCtx) *core.Tensor { return c.ctx.ScaleBias(c.param(7, 3), 1.7, 0.3) }},
		{name: "ADD1", build: func(c *gradCtx) *core.Tensor { return c.ctx.Add1(c.param(5, 3), c.param(1)) }},
		{name: "NEG", build: func(c *gradCtx) *core.Tensor { return c.ctx.Neg(c.param(5, 3)) }},
		kinked("ABS", []float64{0}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Abs(a) }),
		kinked("SGN", []float64{0}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Mul(c.Sgn(a), c.Sqr(a)) }),
		kinked("STEP", []float64{0}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Mul(c.Step(a), a) }),
		smooth("SQR", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Sqr(a) }),
		{name: "SQRT", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.Sqrt(c.paramIn(0.3, 2, 5, 3)) }},
		{name: "LOG", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.Log(c.paramIn(0.3, 2, 5, 3)) }},
		smooth("EXP", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Exp(a) }),
		smooth("EXPM1", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Expm1(a) }),
		{name: "SET", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Mul(c.ctx.Set(c.param(4, 3, 2), c.param(2, 2, 2), 16, 48, 96, 20), c.param(4, 3, 2))
		}},
		smooth("SOFTPLUS", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Softplus(c.Scale(a, 2)) }),
		smooth("SIN", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Sin(a) }),
		smooth("COS", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Cos(a) }),
		smooth("TANH", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Tanh(a) }),
		smooth("SIGMOID", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Sigmoid(a) }),
		kinked("RELU", []float64{0}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Relu(a) }),
		kinked("LEAKY_RELU", []float64{0}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.LeakyRelu(a, 0.1) }),
		kinked("ELU", []float64{0}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Elu(a) }),
		smooth("GELU", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Gelu(c.Scale(a, 2)) }),
		smooth("GELU_QUICK", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.GeluQuick(c.Scale(a, 2)) }),
		smooth("SILU", func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Silu(c.Scale(a, 2)) }),
		kinked("HARDSWISH", []float64{-1.5, 1.5}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Hardswish(c.Scale(a, 2)) }),
		kinked("HARDSIGMOID", []float64{-1.5, 1.5}, func(c *core.Context, a *core.Tensor) *core.Tensor {
			return c.Mul(c.Hardsigmoid(c.Scale(a, 2)), a)
		}),
		kinked("CLAMP", []float64{-0.5, 0.7}, func(c *core.Context, a *core.Tensor) *core.Tensor { return c.Clamp(a, -0.5, 0.7) }),
		{name: "SUM", build: func(c *gradCtx) *core.Tensor { return c.ctx.Sum(c.ctx.Sqr(c.param(5, 3, 2))) }},
		{name: "SUM/transposed", build: func(c *gradCtx) *core.Tensor { return c.ctx.Sum(c.ctx.Transpose(c.param(5, 3))) }},
		{name: "SUM_ROWS", build: func(c *gradCtx) *core.Tensor { return c.ctx.SumRows(c.param(5, 3, 2)) }},
		{name: "MEAN", build: func(c *gradCtx) *core.Tensor { return c.ctx.Mean(c.param(5, 3, 2)) }},
		{name: "MEAN/twice", build: func(c *gradCtx) *core.Tensor {
			a := c.param(5, 3)
			return c.ctx.Add(c.ctx.Mean(a), c.ctx.Sqr(c.ctx.Mean(a)))
		}},
		{name: "REPEAT", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Repeat(c.param(3, 2, 1, 2), c.ctx.NewTensor4D(core.TypeF32, 6, 4, 3, 2))
		}},
		{name: "REPEAT_BACK", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.RepeatBack(c.param(6, 4, 2), c.ctx.NewTensor3D(core.TypeF32, 3, 2, 1))
		}},
		{name: "CONCAT/0", build: func(c *gradCtx) *core.Tensor { return c.ctx.Concat(c.param(3, 4, 2), c.param(5, 4, 2), 0) }},
		{name: "CONCAT/1", build: func(c *gradCtx) *core.Tensor { return c.ctx.Concat(c.param(3, 4, 2), c.param(3, 1, 2), 1) }},
		{name: "CONCAT/2", build: func(c *gradCtx) *core.Tensor { return c.ctx.Concat(c.param(3, 4, 2), c.param(3, 4, 3), 2) }},
		{name: "DUP", build: func(c *gradCtx) *core.Tensor { return c.ctx.Dup(c.ctx.Transpose(c.param(5, 3))) }},
		{name: "CPY", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Cpy(c.param(6, 4), c.ctx.NewTensor3D(core.TypeF32, 3, 4, 2))
		}},
		{name: "CPY/f16", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Cast(c.ctx.Cast(c.param(6, 4), core.TypeF16), core.TypeF32)
		}, eps: 5e-2, maxErr: 5e-3},
		{name: "CONT", build: func(c *gradCtx) *core.Tensor { return c.ctx.Cont(c.ctx.Permute(c.param(5, 3, 2), 2, 0, 1, 3)) }},
		{name: "RESHAPE", build: func(c *gradCtx) *core.Tensor { return c.ctx.Reshape3D(c.param(6, 5), 3, 5, 2) }},
		{name: "VIEW", build: func(c *gradCtx) *core.Tensor {
			a := c.param(7, 5)
			return c.ctx.View2D(a, 3, 4, a.Nb[1], 2*4)
		}},
		{name: "VIEW/twice", build: func(c *gradCtx) *core.Tensor {
			a := c.param(24)
			v1 := c.ctx.View2D(a, 4, 3, 16, 0)
			v2 := c.ctx.View2D(a, 4, 3, 20, 4*3)
			return c.ctx.Mul(v1, v2)
		}},
		{name: "PERMUTE", build: func(c *gradCtx) *core.Tensor { return c.ctx.Permute(c.param(5, 3, 2, 4), 1, 3, 0, 2) }},
		{name: "TRANSPOSE", build: func(c *gradCtx) *core.Tensor { return c.ctx.Transpose(c.param(5, 3)) }},
		{name: "GET_ROWS", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.GetRows(c.param(5, 6), c.indices([]int32{4, 0, 4, 2, 5}, 5))
		}},
		{name: "GET_ROWS/batched", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.GetRows(c.param(3, 4, 2), c.indices([]int32{3, 3, 1, 0, 0, 2}, 3, 2))
		}},
		{name: "NORM", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.Norm(c.param(7, 3, 2), 1e-5) }},
		{name: "RMS_NORM", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.RMSNorm(c.param(7, 3, 2), 1e-5) }},
		{name: "SOFT_MAX", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.SoftMax(c.param(7, 3, 2)) }},
		{name: "SOFT_MAX/mask+scale", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.SoftMaxExt(c.param(6, 3, 2), c.tensor(-1, 1, 6, 4), 0.7, 0)
		}},
		{name: "SOFT_MAX/alibi", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.SoftMaxExt(c.param(5, 3, 4), c.tensor(-1, 1, 5, 3), 1.3, 8)
		}},
		{name: "DIAG_MASK_INF", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.SoftMax(c.ctx.DiagMaskInf(c.param(5, 5, 2), 1))
		}},
		{name: "ROPE/normal", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Rope(c.param(8, 2, 3), c.indices([]int32{0, 5, 11}, 3), 6, core.RopeNormal)
		}},
		{name: "ROPE/neox", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.RopeExt(c.param(8, 2, 3), c.indices([]int32{3, 1, 7}, 3), nil, core.RopeParams{NDims: 8,
				Mode: core.RopeNeox, FreqBase: 1000, FreqScale: 0.5, ExtFactor: 0.5, AttnFactor: 1.1, BetaFast: 32, BetaSlow: 1, NCtxOrig: 64})
		}},
		{name: "MUL_MAT", build: func(c *gradCtx) *core.Tensor { return c.ctx.MulMat(c.param(5, 4), c.param(5, 3)) }},
		{name: "MUL_MAT/broadcast", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.MulMat(c.param(5, 3, 2, 1), c.param(5, 2, 4, 3))
		}},
		{name: "MUL_MAT/broadcast3", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.MulMat(c.param(4, 3, 1, 2), c.param(4, 2, 2, 4))
		}},
		{name: "OUT_PROD", build: func(c *gradCtx) *core.Tensor { return c.ctx.OutProd(c.param(5, 3), c.param(4, 3)) }},
		{name: "OUT_PROD/broadcast", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.OutProd(c.param(3, 4, 1, 2), c.param(2, 4, 2, 2))
		}},
		{name: "SWIGLU", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.Swiglu(c.param(8, 3)) }},
		{name: "SWIGLU/swapped", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.GLUSingle(c.param(6, 3), core.GLUSwiglu, true)
		}},
		{name: "SWIGLU/odd", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.Swiglu(c.param(9, 3)) }},
		{name: "REGLU/odd-swapped", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.GLUSingle(c.paramIn(0.2, 1, 7, 3), core.GLUReglu, true)
		}},
		{name: "SWIGLU/split", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.SwigluSplit(c.param(5, 3), c.param(5, 3)) }},
		{name: "GEGLU", precise: true, build: func(c *gradCtx) *core.Tensor { return c.ctx.Geglu(c.param(8, 3)) }},
		{name: "GEGLU/split-swapped", precise: true, build: func(c *gradCtx) *core.Tensor {
			return c.ctx.GLU(c.param(5, 3), c.param(5, 3), core.GLUGeglu, true)
		}},
		{name: "IM2COL", build: func(c *gradCtx) *core.Tensor {
			k := c.ctx.NewTensor4D(core.TypeF32, 3, 2, 2, 1)
			return c.ctx.Im2Col(k, c.param(6, 5, 2, 2), core.Im2ColParams{S0: 2, S1: 1, P0: 1, P1: 1, D0: 1, D1: 2, Is2D: true}, core.TypeF32)
		}},
		{name: "IM2COL/1d", build: func(c *gradCtx) *core.Tensor {
			k := c.ctx.NewTensor3D(core.TypeF32, 3, 2, 1)
			return c.ctx.Im2Col(k, c.param(7, 2, 2), core.Im2ColParams{S0: 2, P0: 1, D0: 1}, core.TypeF32)
		}},
		{name: "CONV_2D", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Conv2D(c.param(3, 3, 2, 2), c.param(5, 6, 2, 1), 1, 2, 1, 0, 1, 1)
		}},
		{name: "POOL_2D/max", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Pool2D(c.paramDistinct(0.05, 6, 5, 2), core.PoolMax, 2, 3, 2, 1, 1, 1)
		}},
		{name: "POOL_2D/avg", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Pool2D(c.param(6, 5, 2), core.PoolAvg, 3, 2, 2, 2, 1, 0)
		}},
		{name: "POOL_1D/max", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Pool1D(c.paramDistinct(0.05, 7, 3, 2), core.PoolMax, 3, 2, 1)
		}},
		{name: "POOL_1D/avg", build: func(c *gradCtx) *core.Tensor {
			return c.ctx.Pool1D(c.ctx.Transpose(c.param(3, 7)), core.PoolAvg, 2, 2, 1)
		}},
		{name: "CROSS_ENTROPY_LOSS", precise: true, build: func(c *gradCtx) *core.Tensor {
			labels := c.ctx.SoftMax(c.tensor(-2, 2, 5, 3, 2))
			return c.ctx.CrossEntropyLoss(c.param(5, 3, 2), labels)
		}},
		{name: "chain/mlp", precise: true, build: func(c *gradCtx) *core.Tensor {
			x := c.tensor(-1, 1, 4, 3)
			h := c.ctx.Tanh(c.ctx.Add(c.ctx.MulMat(c.param(4, 5), x), c.param(5)))
			return c.ctx.SoftMax(c.ctx.MulMat(c.param(5, 2), h))
		}, maxErr: 2e-3},
		{name: "chain/transformer-block", precise: true, eps: 0.05, maxErr: 2e-3, build: buildGradBlock},
	}
	// The same ops with their output consumed through a permutation, so that the gradient arriving
	// at them is a non-contiguous view.
	for _, base := range []string{"CONCAT/1", "OUT_PROD", "MUL_MAT/broadcast", "RESHAPE", "VIEW", "GET_ROWS", "SOFT_MAX",
		"RMS_NORM", "NORM", "ROPE/neox", "SILU", "SWIGLU", "REPEAT", "SUM_ROWS", "IM2COL", "POOL_2D/avg", "DIAG_MASK_INF", "CPY"} {
		for _, gc := range cs {
			if gc.name != base {
				continue
			}
			inner := gc.build
			gc.name += "/permuted-use"
			gc.build = func(c *gradCtx) *core.Tensor {
				out := inner(c)
				if out.Ne[1] == 1 {
					return c.ctx.Transpose(out)
				}
				return c.ctx.Permute(out, 1, 0, 2, 3)
			}
			cs = append(cs, gc)
		}
	}
	return cs
}

func TestGradients(t *testing.T) {
	for i, gc := range gradCases() {
		t.Run(gc.name, func(t *testing.T) { runGradCase(t, gc, uint64(1000+i)) })
	}
}

// buildGradBlock is a small pre-norm transformer block (as the bench's, with f32 weights): token
// embedding lookup, RMS norm, q/k/v projections, neox RoPE, causal masked scaled softmax attention,
// output projection, residual, RMS norm, SwiGLU feed-forward, residual.
func buildGradBlock(c *gradCtx) *core.Tensor {
	const nEmbd, headD, nHead, nTok, nFF, nVocab = 8, 4, 2, 3, 6, 5
	x := c.ctx
	w := func(ne ...int64) *core.Tensor {
		t := c.param(ne...)
		for i := range t.Float32s() {
			t.Float32s()[i] *= 0.7
		}
		return t
	}
	tokEmbd := w(nEmbd, nVocab)
	attnNorm := w(nEmbd)
	wq, wk, wv, wo := w(nEmbd, nEmbd), w(nEmbd, nEmbd), w(nEmbd, nEmbd), w(nEmbd, nEmbd)
	ffnNorm := w(nEmbd)
	wgu := w(nEmbd, 2*nFF)
	wdown := w(nFF, nEmbd)
	ids := c.indices([]int32{3, 0, 3}, nTok)
	pos := c.indices([]int32{2, 3, 4}, nTok)
	mask := c.ctx.NewTensor2D(core.TypeF32, nTok, nTok)
	for i := 0; i < nTok; i++ {
		for j := 0; j < nTok; j++ {
			if j > i {
				mask.Float32s()[i*nTok+j] = float32(math.Inf(-1))
			}
		}
	}
	inp := x.GetRows(tokEmbd, ids)
	cur := x.Mul(x.RMSNorm(inp, 1e-5), attnNorm)
	q := x.Reshape3D(x.MulMat(wq, cur), headD, nHead, nTok)
	k := x.Reshape3D(x.MulMat(wk, cur), headD, nHead, nTok)
	v := x.Reshape3D(x.MulMat(wv, cur), headD, nHead, nTok)
	q = x.Rope(q, pos, headD, core.RopeNeox)
	k = x.Rope(k, pos, headD, core.RopeNeox)
	kq := x.MulMat(x.Permute(k, 0, 2, 1, 3), x.Permute(q, 0, 2, 1, 3))
	kq = x.SoftMaxExt(kq, mask, float32(1/math.Sqrt(headD)), 0)
	vt := x.Cont(x.Permute(v, 1, 2, 0, 3))
	kqv := x.MulMat(vt, kq)
	merged := x.Cont(x.Permute(kqv, 0, 2, 1, 3))
	cur = x.Add(x.MulMat(wo, x.Reshape2D(merged, nEmbd, nTok)), inp)
	nrm := x.Mul(x.RMSNorm(cur, 1e-5), ffnNorm)
	h := x.Swiglu(x.MulMat(wgu, nrm))
	return x.Add(x.MulMat(wdown, h), cur)
}
