package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// ADD_ID, L2_NORM, COUNT_EQUAL, SET, TOP_K, ARANGE, FILL, TRI, DIAG, CUMSUM, ROLL, PAD,
// PAD_REFLECT_1D and TIMESTEP_EMBEDDING on odd sizes, with strided or permuted inputs where ggml
// accepts them.

func init() {
	extraCases = append(extraCases, indexCases)
}

// intsIn draws i32 inputs in [0, n), the rest uniform in [-1, 1).
func intsIn(n int) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		if t.Type == core.TypeI32 {
			return Uniform(t, r, 0, float32(n))
		}
		return Uniform(t, r, -1, 1)
	}
}

func indexCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, init func(*core.Tensor, *rand.Rand) error, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build, Init: init})
	}
	add("ADD_ID(a=[7,3,5,2],experts=4)", intsIn(4), func(c *core.Context) *core.Tensor {
		return c.AddID(c.NewTensor(f32, 7, 3, 5, 2), c.NewTensor(f32, 7, 4), c.NewTensor(core.TypeI32, 3, 5))
	})
	add("ADD_ID(view a, transposed ids)", intsIn(5), func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 9, 3, 4)
		ids := c.Transpose(c.NewTensor(core.TypeI32, 4, 3))
		return c.AddID(c.View3D(a, 7, 3, 4, a.Nb[1], a.Nb[2], 8), c.NewTensor(f32, 7, 5), ids)
	})
	for _, eps := range []float32{1e-6, 10} {
		eps := eps
		add(fmt.Sprintf("L2_NORM(eps=%g)", eps), nil, func(c *core.Context) *core.Tensor {
			return c.L2Norm(c.NewTensor(f32, 33, 7, 3), eps)
		})
	}
	add("L2_NORM(permuted)", nil, func(c *core.Context) *core.Tensor {
		return c.L2Norm(c.Permute(c.NewTensor(f32, 5, 13, 3), 1, 0, 2, 3), 1e-6)
	})
	add("COUNT_EQUAL([37,5,3])", intsIn(3), func(c *core.Context) *core.Tensor {
		return c.CountEqual(c.NewTensor(core.TypeI32, 37, 5, 3), c.NewTensor(core.TypeI32, 37, 5, 3))
	})
	add("COUNT_EQUAL(transposed)", intsIn(2), func(c *core.Context) *core.Tensor {
		return c.CountEqual(c.Transpose(c.NewTensor(core.TypeI32, 9, 11)), c.NewTensor(core.TypeI32, 11, 9))
	})
	add("SET(window)", nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 9, 7, 3)
		return c.Set(a, c.NewTensor(f32, 5, 3, 2), a.Nb[1], a.Nb[2], a.Nb[3], a.Nb[1]+8)
	})
	add("SET(strided b, row stride 2)", nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 9, 7, 3)
		b := c.NewTensor(f32, 6, 3, 2)
		return c.Set(a, c.View3D(b, 4, 3, 2, b.Nb[1], b.Nb[2], 4), 2*a.Nb[1], a.Nb[2], a.Nb[3], 4)
	})
	add("SET_1D", nil, func(c *core.Context) *core.Tensor {
		return c.Set1D(c.NewTensor(f32, 11, 5), c.NewTensor(f32, 17), 12)
	})
	add("SET_2D(inplace)", nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 10, 6)
		return c.SetInplace(a, c.NewTensor(f32, 3, 4), 16, a.Nb[2], a.Nb[3], 20)
	})
	add("SET(i32)", intsIn(100), func(c *core.Context) *core.Tensor {
		a := c.NewTensor(core.TypeI32, 7, 5)
		return c.Set2D(a, c.NewTensor(core.TypeI32, 3, 2), 2*a.Nb[1], 8)
	})
	for _, k := range []int{1, 3, 17} {
		k := k
		add(fmt.Sprintf("TOP_K(ne0=17,k=%d)", k), nil, func(c *core.Context) *core.Tensor {
			return c.TopK(c.NewTensor(f32, 17, 5, 3), k)
		})
	}
	add("TOP_K(ne0=300,k=40,permuted)", nil, func(c *core.Context) *core.Tensor {
		return c.TopK(c.Permute(c.NewTensor(f32, 3, 300), 1, 0, 2, 3), 40)
	})
	add("ARANGE(0,10,1)", nil, func(c *core.Context) *core.Tensor { return c.Arange(0, 10, 1) })
	add("ARANGE(-3.5,100,0.37)", nil, func(c *core.Context) *core.Tensor { return c.Arange(-3.5, 100, 0.37) })
	add("FILL(f32)", nil, func(c *core.Context) *core.Tensor { return c.Fill(c.NewTensor(f32, 5, 7, 3), -1.25) })
	add("FILL(f16,inplace)", nil, func(c *core.Context) *core.Tensor {
		return c.FillInplace(c.NewTensor(core.TypeF16, 5, 7, 3), 0.1)
	})
	for tt := core.TriUpperDiag; tt <= core.TriLower; tt++ {
		tt := tt
		add(fmt.Sprintf("TRI(%d)", tt), nil, func(c *core.Context) *core.Tensor { return c.Tri(c.NewTensor(f32, 7, 7, 3, 2), tt) })
	}
	add("DIAG", nil, func(c *core.Context) *core.Tensor { return c.Diag(c.NewTensor(f32, 7, 1, 3, 2)) })
	add("DIAG(view)", nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 9, 3, 2)
		return c.Diag(c.View3D(a, 5, 1, 2, a.Nb[1], a.Nb[2], 8))
	})
	add("CUMSUM", nil, func(c *core.Context) *core.Tensor { return c.Cumsum(c.NewTensor(f32, 37, 5, 3)) })
	add("CUMSUM(view)", nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 40, 5, 3)
		return c.Cumsum(c.View3D(a, 33, 5, 3, a.Nb[1], a.Nb[2], 12))
	})
	add("ROLL(2,-1,1,0)", nil, func(c *core.Context) *core.Tensor { return c.Roll(c.NewTensor(f32, 5, 7, 3, 2), 2, -1, 1, 0) })
	add("ROLL(view)", nil, func(c *core.Context) *core.Tensor {
		a := c.NewTensor(f32, 9, 7, 3)
		return c.Roll(c.View3D(a, 5, 7, 3, a.Nb[1], a.Nb[2], 8), -4, 3, -2, 0)
	})
	add("PAD(1,2,0,1)", nil, func(c *core.Context) *core.Tensor { return c.Pad(c.NewTensor(f32, 5, 7, 3, 2), 1, 2, 0, 1) })
	add("PAD_EXT(permuted)", nil, func(c *core.Context) *core.Tensor {
		return c.PadExt(c.Permute(c.NewTensor(f32, 7, 5, 3), 1, 0, 2, 3),
			core.PadParams{Left: [4]int{2, 1, 0, 1}, Right: [4]int{1, 3, 2, 0}})
	})
	add("PAD_EXT(circular)", nil, func(c *core.Context) *core.Tensor {
		return c.PadExt(c.NewTensor(f32, 5, 7, 3), core.PadParams{Left: [4]int{2, 1, 3, 0}, Right: [4]int{5, 3, 0, 1}, Circular: true})
	})
	add("PAD_REFLECT_1D(4,3)", nil, func(c *core.Context) *core.Tensor {
		return c.PadReflect1D(c.NewTensor(f32, 11, 5, 3), 4, 3)
	})
	for _, dim := range []int{64, 33} {
		dim := dim
		cs = append(cs, Case{Name: fmt.Sprintf("TIMESTEP_EMBEDDING(dim=%d)", dim), Init: eltUniform(0, 50),
			Build: func(c *core.Context) *core.Tensor { return c.TimestepEmbedding(c.NewTensor(f32, 7), dim, 10000) }})
	}
	return cs
}
