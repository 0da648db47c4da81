package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// Thresholds of ggml's test-backend-ops.
const (
	nmseDefault = 1e-7
	nmseMatMul  = 5e-4
	nmseSoftMax = 1e-6
)

// Cases returns the op table: every op of the foundation in F32 on odd shapes, views, permuted and
// broadcast inputs, and MUL_MAT/GET_ROWS/CPY over the weight types.
func Cases() []Case {
	var cs []Case
	add := func(name string, limit float64, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build, MaxNMSE: limit})
	}
	f32 := core.TypeF32
	odd := []int64{5, 7, 3, 2}

	// Binary ops with broadcasting and a permuted first operand.
	for _, op := range []string{"ADD", "SUB", "MUL", "DIV"} {
		for _, bne := range [][]int64{{5, 7, 3, 2}, {5, 1, 1, 1}, {5, 7, 1, 2}, {1, 1, 3, 1}} {
			op, bne := op, bne
			cs = append(cs, Case{Name: fmt.Sprintf("%s(a=%v,b=%v)", op, odd, bne), Init: binaryInit(op),
				Build: func(c *core.Context) *core.Tensor {
					return binary(c, op, c.NewTensor(f32, odd...), c.NewTensor(f32, bne...))
				}})
		}
		op := op
		cs = append(cs, Case{Name: fmt.Sprintf("%s(permuted a)", op), Init: binaryInit(op),
			Build: func(c *core.Context) *core.Tensor {
				a := c.Permute(c.NewTensor(f32, 7, 5, 3, 2), 1, 0, 2, 3)
				return binary(c, op, a, c.NewTensor(f32, 5, 1, 3, 1))
			}})
	}
	add("ADD1", 0, func(c *core.Context) *core.Tensor { return c.Add1(c.NewTensor(f32, odd...), c.NewTensor1D(f32, 1)) })
	add("SCALE(0.7,bias=0.25)", 0, func(c *core.Context) *core.Tensor {
		return c.ScaleBias(c.NewTensor(f32, odd...), 0.7, 0.25)
	})
	add("CLAMP(-0.5,0.5)", 0, func(c *core.Context) *core.Tensor { return c.Clamp(c.NewTensor(f32, odd...), -0.5, 0.5) })
	add("LEAKY_RELU(0.1)", 0, func(c *core.Context) *core.Tensor { return c.LeakyRelu(c.NewTensor(f32, odd...), 0.1) })
	simple := map[string]func(*core.Context, *core.Tensor) *core.Tensor{
		"SQR": (*core.Context).Sqr, "SIN": (*core.Context).Sin, "COS": (*core.Context).Cos,
	}
	for name, f := range simple {
		f := f
		add(name, 0, func(c *core.Context) *core.Tensor { return f(c, c.NewTensor(f32, odd...)) })
	}
	positive := []struct {
		name string
		f    func(*core.Context, *core.Tensor) *core.Tensor
	}{{"SQRT", (*core.Context).Sqrt}, {"LOG", (*core.Context).Log}}
	for _, p := range positive {
		p := p
		cs = append(cs, Case{Name: p.name, Build: func(c *core.Context) *core.Tensor { return p.f(c, c.NewTensor(f32, odd...)) },
			Init: func(t *core.Tensor, r *rand.Rand) error { return Uniform(t, r, 0.1, 2) }})
	}
	for u := core.UnaryOp(0); u < core.UnaryCount; u++ {
		u := u
		add("UNARY("+u.String()+")", 0, func(c *core.Context) *core.Tensor { return unaryOf(c, c.NewTensor(f32, odd...), u) })
		add("UNARY("+u.String()+",view)", 0, func(c *core.Context) *core.Tensor {
			a := c.NewTensor(f32, 9, 7, 3)
			return unaryOf(c, c.View3D(a, 5, 7, 3, a.Nb[1], a.Nb[2], 8), u)
		})
	}
	for g := core.GLUOp(0); g < core.GLUCount; g++ {
		for _, swapped := range []bool{false, true} {
			g, swapped := g, swapped
			add(fmt.Sprintf("GLU(%v,swapped=%v)", g, swapped), 0, func(c *core.Context) *core.Tensor {
				return gluSingle(c, c.NewTensor(f32, 10, 7, 3), g, swapped)
			})
		}
		g := g
		add(fmt.Sprintf("GLU(%v,odd)", g), 0, func(c *core.Context) *core.Tensor {
			return gluSingle(c, c.NewTensor(f32, 7, 7, 3), g, false) // ggml: rows of 7/2 = 3
		})
		add(fmt.Sprintf("GLU(%v,split)", g), 0, func(c *core.Context) *core.Tensor {
			return gluSplit(c, c.NewTensor(f32, 5, 7, 3), c.NewTensor(f32, 5, 7, 3), g, false)
		})
	}

	// Reductions.
	add("SUM", 0, func(c *core.Context) *core.Tensor { return c.Sum(c.NewTensor(f32, odd...)) })
	add("SUM_ROWS", 0, func(c *core.Context) *core.Tensor { return c.SumRows(c.NewTensor(f32, 33, 7, 3, 2)) })
	add("MEAN", 0, func(c *core.Context) *core.Tensor { return c.Mean(c.NewTensor(f32, 33, 7, 3, 2)) })
	add("ARGMAX", 0, func(c *core.Context) *core.Tensor { return c.Argmax(c.NewTensor(f32, 33, 7)) })
	for _, order := range []core.SortOrder{core.SortAsc, core.SortDesc} {
		order := order
		add(fmt.Sprintf("ARGSORT(%d)", order), 0, func(c *core.Context) *core.Tensor {
			return c.Argsort(c.NewTensor(f32, 17, 5, 3), order)
		})
	}
	add("REPEAT", 0, func(c *core.Context) *core.Tensor {
		return c.Repeat(c.NewTensor(f32, 5, 1, 3, 1), c.NewTensor(f32, 10, 7, 3, 2))
	})
	for dim := 0; dim < 4; dim++ {
		dim := dim
		add(fmt.Sprintf("CONCAT(dim=%d)", dim), 0, func(c *core.Context) *core.Tensor {
			ne := []int64{5, 7, 3, 2}
			ne2 := append([]int64(nil), ne...)
			ne2[dim] = 4
			return c.Concat(c.NewTensor(f32, ne...), c.NewTensor(f32, ne2...), dim)
		})
	}

	// Copies and layout.
	add("CONT(permuted)", 0, func(c *core.Context) *core.Tensor {
		return c.Cont(c.Permute(c.NewTensor(f32, 5, 7, 3, 2), 2, 0, 1, 3))
	})
	add("DUP(transposed)", 0, func(c *core.Context) *core.Tensor { return c.Dup(c.Transpose(c.NewTensor(f32, 5, 7))) })
	for _, dst := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		dst := dst
		limit := nmseDefault
		if dst.IsQuantized() {
			// ggml derives the bound from the destination's quantization step: a value on a rounding
			// boundary may land one step away.
			limit = 1e-5
		}
		cs = append(cs, Case{Name: fmt.Sprintf("CPY(f32->%v)", dst), MaxNMSE: limit, Build: func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(f32, 64, 7, 3), c.NewTensor(dst, 64, 7, 3))
		}})
	}
	for _, src := range []core.Type{core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		src := src
		add(fmt.Sprintf("CPY(%v->f32)", src), 0, func(c *core.Context) *core.Tensor {
			return c.Cpy(c.NewTensor(src, 64, 7, 3), c.NewTensor(f32, 64, 7, 3))
		})
	}

	// Rows.
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		typ := typ
		cs = append(cs, Case{Name: fmt.Sprintf("GET_ROWS(%v)", typ), Build: func(c *core.Context) *core.Tensor {
			return c.GetRows(c.NewTensor(typ, 64, 10, 3), c.NewTensor(core.TypeI32, 7, 3))
		}, Init: indicesOr(10)})
	}
	cs = append(cs, Case{Name: "SET_ROWS(f32)", Build: func(c *core.Context) *core.Tensor {
		return c.SetRows(c.NewTensor(f32, 32, 10, 3), c.NewTensor(f32, 32, 4, 3), c.NewTensor(core.TypeI32, 4, 3))
	}, Init: indicesOr(10)})

	// Normalization, attention pieces.
	add("NORM", 0, func(c *core.Context) *core.Tensor { return c.Norm(c.NewTensor(f32, 33, 7, 3), 1e-5) })
	add("RMS_NORM", 0, func(c *core.Context) *core.Tensor { return c.RMSNorm(c.NewTensor(f32, 130, 7, 3), 1e-6) })
	add("SOFT_MAX", nmseSoftMax, func(c *core.Context) *core.Tensor { return c.SoftMax(c.NewTensor(f32, 33, 7, 3)) })
	add("SOFT_MAX(mask,scale)", nmseSoftMax, func(c *core.Context) *core.Tensor {
		return c.SoftMaxExt(c.NewTensor(f32, 33, 7, 4), c.NewTensor(f32, 33, 9, 1), 0.3, 0)
	})
	add("SOFT_MAX(f16 mask,alibi 8)", nmseSoftMax, func(c *core.Context) *core.Tensor {
		return c.SoftMaxExt(c.NewTensor(f32, 33, 7, 5), c.NewTensor(core.TypeF16, 33, 7, 1), 0.5, 8)
	})
	add("DIAG_MASK_INF(2)", 0, func(c *core.Context) *core.Tensor { return c.DiagMaskInf(c.NewTensor(f32, 9, 7, 3), 2) })
	for _, mode := range []int{core.RopeNormal, core.RopeNeox} {
		mode := mode
		cs = append(cs, Case{Name: fmt.Sprintf("ROPE(mode=%d)", mode), Build: func(c *core.Context) *core.Tensor {
			return c.Rope(c.NewTensor(f32, 32, 3, 5), c.NewTensor(core.TypeI32, 5), 32, mode)
		}, Init: indicesOr(100)})
		cs = append(cs, Case{Name: fmt.Sprintf("ROPE(mode=%d,n_dims=16,yarn)", mode), Build: func(c *core.Context) *core.Tensor {
			return c.RopeExt(c.NewTensor(f32, 32, 3, 5), c.NewTensor(core.TypeI32, 5), nil, core.RopeParams{
				NDims: 16, Mode: mode, NCtxOrig: 64, FreqBase: 10000, FreqScale: 0.5, ExtFactor: 1, AttnFactor: 1,
				BetaFast: 32, BetaSlow: 1})
		}, Init: indicesOr(100)})
	}

	// Matrix products.
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0} {
		for _, n := range []int64{1, 3, 8, 9, 33} {
			typ, n := typ, n
			add(fmt.Sprintf("MUL_MAT(%v,m=17,n=%d,k=64)", typ, n), nmseMatMul, func(c *core.Context) *core.Tensor {
				return c.MulMat(c.NewTensor(typ, 64, 17), c.NewTensor(f32, 64, n))
			})
		}
		typ := typ
		add(fmt.Sprintf("MUL_MAT(%v,broadcast)", typ), nmseMatMul, func(c *core.Context) *core.Tensor {
			return c.MulMat(c.NewTensor(typ, 64, 9, 2, 1), c.NewTensor(f32, 64, 5, 6, 2))
		})
	}
	add("MUL_MAT(f32,permuted b)", nmseMatMul, func(c *core.Context) *core.Tensor {
		return c.MulMat(c.NewTensor(f32, 32, 9, 3), c.Permute(c.NewTensor(f32, 32, 3, 5), 0, 2, 1, 3))
	})
	add("OUT_PROD", nmseMatMul, func(c *core.Context) *core.Tensor {
		return c.OutProd(c.NewTensor(f32, 9, 13, 2), c.NewTensor(f32, 7, 13, 2))
	})
	add("IM2COL(1d)", 0, func(c *core.Context) *core.Tensor {
		return c.Im2Col(c.NewTensor(f32, 3, 4, 5), c.NewTensor(f32, 17, 4, 2), core.Im2ColParams{S0: 2, P0: 1, D0: 1}, f32)
	})
	add("IM2COL(2d)", 0, func(c *core.Context) *core.Tensor {
		return c.Im2Col(c.NewTensor(f32, 3, 3, 4, 5), c.NewTensor(f32, 11, 9, 4, 2),
			core.Im2ColParams{S0: 1, S1: 2, P0: 1, P1: 0, D0: 1, D1: 2, Is2D: true}, f32)
	})
	add("CONV_2D", nmseMatMul, func(c *core.Context) *core.Tensor {
		return c.Conv2D(c.NewTensor(f32, 3, 3, 4, 5), c.NewTensor(f32, 11, 9, 4, 2), 1, 1, 1, 1, 1, 1)
	})
	add("CONV_1D", nmseMatMul, func(c *core.Context) *core.Tensor {
		return c.Conv1D(c.NewTensor(f32, 3, 4, 5), c.NewTensor(f32, 17, 4, 2), 1, 1, 1)
	})
	for _, op := range []core.PoolOp{core.PoolMax, core.PoolAvg} {
		op := op
		add(fmt.Sprintf("POOL_1D(%d)", op), 0, func(c *core.Context) *core.Tensor {
			return c.Pool1D(c.NewTensor(f32, 17, 5, 3), op, 3, 2, 1)
		})
		add(fmt.Sprintf("POOL_2D(%d)", op), 0, func(c *core.Context) *core.Tensor {
			return c.Pool2D(c.NewTensor(f32, 11, 9, 3, 2), op, 3, 2, 2, 2, 1, 0)
		})
	}
	for _, extra := range extraCases {
		cs = append(cs, extra()...)
	}
	return cs
}

// extraCases lets other files of this package add case families (append from init).
var extraCases []func() []Case

func binary(c *core.Context, op string, a, b *core.Tensor) *core.Tensor {
	switch op {
	case "ADD":
		return c.Add(a, b)
	case "SUB":
		return c.Sub(a, b)
	case "MUL":
		return c.Mul(a, b)
	}
	return c.Div(a, b)
}

// indicesOr fills I32 tensors with indices in [0, n) and everything else uniformly; DIV-style
// denominators stay away from zero because values are uniform in [-1, 1) with no special care.
func indicesOr(n int) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		if t.Type == core.TypeI32 {
			return Uniform(t, r, 0, float32(n))
		}
		return Uniform(t, r, -1, 1)
	}
}

// binaryInit keeps MUL and DIV operands near 1, as ggml's harness does.
func binaryInit(op string) func(t *core.Tensor, r *rand.Rand) error {
	if op != "MUL" && op != "DIV" {
		return nil
	}
	return func(t *core.Tensor, r *rand.Rand) error { return Uniform(t, r, 0.9, 1.1) }
}
