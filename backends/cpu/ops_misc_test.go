package cpu_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// eltAt is the row-major index of (i0, i1, i2, i3) in shape ne.
func eltAt(ne [4]int64, i0, i1, i2, i3 int64) int64 {
	return ((i3*ne[2]+i2)*ne[1]+i1)*ne[0] + i0
}

func TestEltRepeat(t *testing.T) {
	cases := []struct{ a, b [4]int64 }{
		{[4]int64{5, 1, 3, 1}, [4]int64{10, 7, 3, 2}},
		{[4]int64{1, 7, 1, 2}, [4]int64{5, 7, 3, 2}},
		{[4]int64{5, 7, 3, 2}, [4]int64{5, 7, 3, 2}},
		{[4]int64{1, 1, 1, 1}, [4]int64{5, 7, 11, 13}},
		{[4]int64{5, 7, 1, 1}, [4]int64{5, 7, 11, 13}},
	}
	for _, c := range cases {
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeI32} {
			for _, layout := range eltLayouts {
				c, typ, layout := c, typ, layout
				eltCheck(t, eltName("REPEAT", c.a, c.b, typ, layout), 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, x := eltSourceAny(t, ctx, rng, typ, c.a, layout)
					b := ctx.NewTensor(core.TypeF32, c.b[:]...)
					want := make([]float64, 0, b.NElements())
					for i3 := int64(0); i3 < c.b[3]; i3++ {
						for i2 := int64(0); i2 < c.b[2]; i2++ {
							for i1 := int64(0); i1 < c.b[1]; i1++ {
								for i0 := int64(0); i0 < c.b[0]; i0++ {
									want = append(want, x[eltAt(c.a, i0%c.a[0], i1%c.a[1], i2%c.a[2], i3%c.a[3])])
								}
							}
						}
					}
					return ctx.Repeat(a, b), want
				})
			}
		}
	}
}

func TestEltConcat(t *testing.T) {
	ne := [4]int64{5, 7, 3, 2}
	for dim := 0; dim < 4; dim++ {
		nb := ne
		nb[dim] = 4
		for _, typ := range []core.Type{core.TypeF32, core.TypeF16, core.TypeI32} {
			for i, la := range eltLayouts {
				lb := eltLayouts[(i+1)%len(eltLayouts)]
				dim, nb, typ, la := dim, nb, typ, la
				eltCheck(t, eltName("CONCAT", dim, typ, la, lb), 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
					a, xa := eltSourceAny(t, ctx, rng, typ, ne, la)
					b, xb := eltSourceAny(t, ctx, rng, typ, nb, lb)
					nd := ne
					nd[dim] += nb[dim]
					want := make([]float64, 0, nd[0]*nd[1]*nd[2]*nd[3])
					for i3 := int64(0); i3 < nd[3]; i3++ {
						for i2 := int64(0); i2 < nd[2]; i2++ {
							for i1 := int64(0); i1 < nd[1]; i1++ {
								for i0 := int64(0); i0 < nd[0]; i0++ {
									idx := [4]int64{i0, i1, i2, i3}
									if idx[dim] < ne[dim] {
										want = append(want, xa[eltAt(ne, i0, i1, i2, i3)])
										continue
									}
									idx[dim] -= ne[dim]
									want = append(want, xb[eltAt(nb, idx[0], idx[1], idx[2], idx[3])])
								}
							}
						}
					}
					return ctx.Concat(a, b, dim), want
				})
			}
		}
	}
}

func TestEltMiscBadInput(t *testing.T) {
	eltWantErr(t, "REPEAT", func(ctx *core.Context) {
		ctx.Repeat(ctx.NewTensor2D(core.TypeF32, 3, 2), ctx.NewTensor2D(core.TypeF32, 5, 2))
	})
	eltWantErr(t, "REPEAT", func(ctx *core.Context) {
		ctx.Repeat(ctx.NewTensor1D(core.TypeQ8_0, 32), ctx.NewTensor1D(core.TypeF32, 64))
	})
	eltWantErr(t, "CONCAT", func(ctx *core.Context) {
		ctx.Concat(ctx.NewTensor2D(core.TypeF32, 3, 2), ctx.NewTensor2D(core.TypeF16, 3, 2), 0)
	})
	eltWantErr(t, "CONCAT", func(ctx *core.Context) {
		ctx.Concat(ctx.NewTensor2D(core.TypeF32, 3, 2), ctx.NewTensor2D(core.TypeF32, 4, 2), 1)
	})
	eltWantErr(t, "CONCAT", func(ctx *core.Context) {
		ctx.Concat(ctx.NewTensor2D(core.TypeF32, 3, 2), ctx.NewTensor2D(core.TypeF32, 3, 2), 4)
	})
}
