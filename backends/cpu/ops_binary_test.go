package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// TestEltBinaryBroadcast: ADD, SUB, MUL and DIV of f32 rows by a broadcast b, bit for bit the
// float32 operation per element, with b of one element per row (a mixture of experts weighing
// its experts' outputs: the scalar path), one element in all, and whole rows repeated; a dense,
// permuted and strided a.
func TestEltBinaryBroadcast(t *testing.T) {
	ops := []struct {
		op core.Op
		f  func(x, y float32) float32
	}{
		{core.OpAdd, func(x, y float32) float32 { return x + y }},
		{core.OpSub, func(x, y float32) float32 { return x - y }},
		{core.OpMul, func(x, y float32) float32 { return x * y }},
		{core.OpDiv, func(x, y float32) float32 { return x / y }},
	}
	an := [4]int64{37, 3, 2, 1}
	for _, bn := range [][4]int64{{1, 3, 2, 1}, {1, 1, 1, 1}, {37, 1, 2, 1}, {37, 3, 2, 1}} {
		for _, o := range ops {
			for _, layout := range eltLayouts {
				name := fmt.Sprintf("%v b%v %s", o.op, bn, layout)
				eltCheck(t, name, 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, x := eltSource(t, ctx, rng, core.TypeF32, an, layout, -3, 3)
					b, y := eltSource(t, ctx, rng, core.TypeF32, bn, "contig", 0.5, 2)
					want := make([]float64, len(x))
					for i3 := int64(0); i3 < an[3]; i3++ {
						for i2 := int64(0); i2 < an[2]; i2++ {
							for i1 := int64(0); i1 < an[1]; i1++ {
								for i0 := int64(0); i0 < an[0]; i0++ {
									yi := eltAt(bn, i0%bn[0], i1%bn[1], i2%bn[2], i3%bn[3])
									i := eltAt(an, i0, i1, i2, i3)
									want[i] = float64(o.f(float32(x[i]), float32(y[yi])))
								}
							}
						}
					}
					return binaryOf(ctx, o.op, a, b), want
				})
			}
		}
	}
}

func binaryOf(ctx *core.Context, op core.Op, a, b *core.Tensor) *core.Tensor {
	switch op {
	case core.OpAdd:
		return ctx.Add(a, b)
	case core.OpSub:
		return ctx.Sub(a, b)
	case core.OpMul:
		return ctx.Mul(a, b)
	}
	return ctx.Div(a, b)
}
