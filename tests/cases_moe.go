package tests

import (
	"fmt"
	"math/rand/v2"

	"github.com/tandem-ml/tandem/core"
)

// MUL_MAT_ID (mixture of experts) over every weight type MUL_MAT takes: activations broadcast over
// the slots or one row per slot, a single token (decode) and enough tokens that experts get many
// rows, and the ids as llama.cpp's routing hands them over (the top-k view of a descending
// argsort of the gate's softmax, rows n_expert apart). Shapes stay small: lavapipe runs them too.

func init() {
	extraCases = append(extraCases, moeCases)
}

// moeIDs draws expert ids in [0, nExp) for i32 inputs, uniform [-1, 1) for the rest.
func moeIDs(nExp int) func(t *core.Tensor, r *rand.Rand) error {
	return func(t *core.Tensor, r *rand.Rand) error {
		if t.Type == core.TypeI32 {
			return Uniform(t, r, 0, float32(nExp))
		}
		return Uniform(t, r, -1, 1)
	}
}

func moeCases() []Case {
	var cs []Case
	f32 := core.TypeF32
	add := func(name string, nExp int, build func(*core.Context) *core.Tensor) {
		cs = append(cs, Case{Name: name, Build: build, Init: moeIDs(nExp), MaxNMSE: nmseMatMul})
	}
	types := append([]core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1,
		core.TypeQ8_0}, kquantTypes...)
	for _, typ := range types {
		typ := typ
		// k = 256: a whole K-quant block.
		add(fmt.Sprintf("MUL_MAT_ID(%v,k=256,m=9,experts=4,used=2,b broadcast,tokens=5)", typ), 4, func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor(typ, 256, 9, 4), c.NewTensor(f32, 256, 1, 5), c.NewTensor(core.TypeI32, 2, 5))
		})
		add(fmt.Sprintf("MUL_MAT_ID(%v,k=256,m=5,experts=3,used=3,b per slot,tokens=1)", typ), 3, func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor(typ, 256, 5, 3), c.NewTensor(f32, 256, 3, 1), c.NewTensor(core.TypeI32, 3, 1))
		})
	}
	for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeQ4_0, core.TypeQ8_0, core.TypeQ4_K, core.TypeQ6_K} {
		typ := typ
		add(fmt.Sprintf("MUL_MAT_ID(%v,k=256,m=33,experts=4,used=2,b broadcast,tokens=24)", typ), 4, func(c *core.Context) *core.Tensor {
			return c.MulMatID(c.NewTensor(typ, 256, 33, 4), c.NewTensor(f32, 256, 1, 24), c.NewTensor(core.TypeI32, 2, 24))
		})
	}
	for _, typ := range []core.Type{core.TypeF32, core.TypeQ4_0, core.TypeQ4_K} {
		typ := typ
		add(fmt.Sprintf("MUL_MAT_ID(%v,routed ids,strided b)", typ), 6, func(c *core.Context) *core.Tensor {
			const nExp, nUsed, nTok = 6, 2, 7
			logits := c.NewTensor(f32, nExp, nTok)
			sorted := c.Argsort(c.SoftMax(logits), core.SortDesc)
			ids := c.View2D(sorted, nUsed, nTok, sorted.Nb[1], 0)
			big := c.NewTensor(f32, 256+32, 2, nTok)
			b := c.View3D(big, 256, 2, nTok, big.Nb[1], big.Nb[2], 8*4)
			return c.MulMatID(c.NewTensor(typ, 256, 7, nExp), b, ids)
		})
	}
	return cs
}
