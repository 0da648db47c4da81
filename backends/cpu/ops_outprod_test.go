package cpu_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func TestNNOutProdHand(t *testing.T) {
	// a [2, 1] = (1, 2), b [3, 1] = (3, 4, 5): result[i, j] = a_i·b_j, [2, 3].
	got := nnRun(t, "out_prod hand", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor2D(core.TypeF32, 2, 1)
		nnSet(t, a, []float32{1, 2})
		b := ctx.NewTensor2D(core.TypeF32, 3, 1)
		nnSet(t, b, []float32{3, 4, 5})
		return ctx.OutProd(a, b), []float64{3, 6, 4, 8, 5, 10}
	})
	nnClose(t, "out_prod hand", got, []float64{3, 6, 4, 8, 5, 10}, 0)

	// Sum over the shared dimension 1: a [2, 2] rows (1, 2), (3, 4); b [1, 2] = (10, 100).
	got = nnRun(t, "out_prod sum", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor2D(core.TypeF32, 2, 2)
		nnSet(t, a, []float32{1, 2, 3, 4})
		b := ctx.NewTensor2D(core.TypeF32, 1, 2)
		nnSet(t, b, []float32{10, 100})
		return ctx.OutProd(a, b), []float64{310, 420}
	})
	nnClose(t, "out_prod sum", got, []float64{310, 420}, 0)
}

// nnOutProdRef: dst[i, j, i2, i3] = Σ_l a[i, l, i2/(ne2/ane2), i3/(ne3/ane3)]·b[j, l, i2, i3].
func nnOutProdRef(a []float64, ane [4]int64, b []float64, bne [4]int64) []float64 {
	ne := [4]int64{ane[0], bne[0], bne[2], bne[3]}
	out := make([]float64, ne[0]*ne[1]*ne[2]*ne[3])
	d2, d3 := ne[2]/ane[2], ne[3]/ane[3]
	for i3 := int64(0); i3 < ne[3]; i3++ {
		for i2 := int64(0); i2 < ne[2]; i2++ {
			for j := int64(0); j < ne[1]; j++ {
				for i := int64(0); i < ne[0]; i++ {
					var s float64
					for l := int64(0); l < ane[1]; l++ {
						s += a[nnIdx(ane, i, l, i2/d2, i3/d3)] * b[nnIdx(bne, j, l, i2, i3)]
					}
					out[nnIdx(ne, i, j, i2, i3)] = s
				}
			}
		}
	}
	return out
}

func TestNNOutProdRandom(t *testing.T) {
	type tc struct {
		typ      core.Type
		ane, bne [4]int64
		aLayout  string
		bTrans   bool // b is a transposed view
	}
	cases := []tc{
		{typ: core.TypeF32, ane: [4]int64{5, 7, 3, 2}, bne: [4]int64{4, 7, 3, 2}},
		{typ: core.TypeF32, ane: [4]int64{5, 7, 3, 1}, bne: [4]int64{4, 7, 6, 2}}, // broadcast by division
		{typ: core.TypeF32, ane: [4]int64{5, 7, 3, 2}, bne: [4]int64{4, 7, 3, 2}, aLayout: "permuted"},
		{typ: core.TypeF32, ane: [4]int64{33, 9, 1, 1}, bne: [4]int64{6, 9, 1, 1}, aLayout: "row-gaps", bTrans: true},
		{typ: core.TypeF16, ane: [4]int64{5, 7, 3, 2}, bne: [4]int64{4, 7, 3, 2}},
		{typ: core.TypeF16, ane: [4]int64{6, 5, 2, 1}, bne: [4]int64{3, 5, 4, 1}, aLayout: "permuted", bTrans: true},
		{typ: core.TypeBF16, ane: [4]int64{7, 5, 1, 1}, bne: [4]int64{3, 5, 2, 1}},
		{typ: core.TypeQ4_0, ane: [4]int64{64, 7, 1, 1}, bne: [4]int64{5, 7, 2, 1}},
		{typ: core.TypeQ4_1, ane: [4]int64{32, 5, 2, 1}, bne: [4]int64{3, 5, 2, 2}},
		{typ: core.TypeQ8_0, ane: [4]int64{64, 6, 1, 1}, bne: [4]int64{4, 6, 1, 1}, aLayout: "row-gaps", bTrans: true},
	}
	for ci, c := range cases {
		name := fmt.Sprintf("out_prod %v %v (%s) × %v transposed=%v", c.typ, c.ane, c.aLayout, c.bne, c.bTrans)
		nnRun(t, name, 5e-4, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
			rng := rand.New(rand.NewSource(int64(300 + ci)))
			a := nnSource(ctx, c.typ, c.ane, c.aLayout)
			av := nnFill(t, a, rng, -1, 1)
			var b *core.Tensor
			if c.bTrans {
				bt := ctx.NewTensor4D(core.TypeF32, c.bne[1], c.bne[0], c.bne[2], c.bne[3])
				b = ctx.Transpose(bt)
			} else {
				b = ctx.NewTensor4D(core.TypeF32, c.bne[0], c.bne[1], c.bne[2], c.bne[3])
			}
			bv := nnFill(t, b, rng, -1, 1)
			return ctx.OutProd(a, b), nnOutProdRef(av, c.ane, bv, c.bne)
		})
	}
	// The f32 path must be much tighter than the matmul tolerance.
	nnRun(t, "out_prod f32 tight", 1e-10, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		rng := rand.New(rand.NewSource(7))
		a := ctx.NewTensor4D(core.TypeF32, 9, 11, 2, 1)
		av := nnFill(t, a, rng, -1, 1)
		b := ctx.NewTensor4D(core.TypeF32, 5, 11, 4, 3)
		bv := nnFill(t, b, rng, -1, 1)
		return ctx.OutProd(a, b), nnOutProdRef(av, a.Ne, bv, b.Ne)
	})
}
