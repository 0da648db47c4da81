package cpu_test

import (
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// fp4Types are ggml's MXFP4, NVFP4 and Q1_0 (MUL_MAT, MUL_MAT_ID, GET_ROWS and CPY run them in
// kquant_test.go and mulmat_id_test.go with the other block types).
var fp4Types = []core.Type{core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0}

// TestFP4SetRows scatters f32 rows into MXFP4, NVFP4, Q1_0, TQ1_0 and TQ2_0 tensors (rows of two
// blocks, i32 and i64 indices, broadcast index shapes): the written rows are the reference
// quantizer's bytes and the other rows keep theirs.
func TestFP4SetRows(t *testing.T) {
	idxShapes := [][3]int64{{4, 3, 2}, {4, 1, 2}, {4, 3, 1}}
	for _, typ := range append(fp4Types, tqTypes...) {
		for _, ityp := range []core.Type{core.TypeI32, core.TypeI64} {
			for si, ishape := range idxShapes {
				aLayout := eltLayoutsFor(typ)[si%len(eltLayoutsFor(typ))]
				name := eltName("SET_ROWS", typ, ityp, ishape, aLayout)
				eltCheckRaw(t, name, func(t *testing.T, ctx *core.Context, rng *randv2.Rand) (*core.Tensor, []byte) {
					ne := [4]int64{2 * typ.BlockSize(), 10, 3, 2}
					a, _ := eltSourceAny(t, ctx, rng, typ, ne, aLayout)
					nb := [4]int64{ne[0], 4, 3, 2}
					b, xb := eltSource(t, ctx, rng, core.TypeF32, nb, "contig", -3, 3)
					idx, iv := eltIndices(t, ctx, rng, ityp, ishape, false, ne[1])
					want := eltRaw(t, a)
					rowBytes := typ.RowSize(ne[0])
					for i3 := int64(0); i3 < nb[3]; i3++ {
						for i2 := int64(0); i2 < nb[2]; i2++ {
							for i1 := int64(0); i1 < nb[1]; i1++ {
								r := iv[(i3%ishape[2]*ishape[1]+i2%ishape[1])*ishape[0]+i1]
								src := eltAt(nb, 0, i1, i2, i3)
								dst := eltAt(ne, 0, r, i2, i3) / ne[0] * rowBytes
								copy(want[dst:dst+rowBytes], eltFromFloat(t, typ, xb[src:src+ne[0]]))
							}
						}
					}
					return ctx.SetRows(a, b, idx), want
				})
			}
		}
	}
}

// TestFP4OutProd: OUT_PROD with MXFP4, NVFP4, Q1_0, TQ1_0 and TQ2_0 first operands (dequantized
// rows), dense and with row gaps, broadcast over dims 2 and 3, against a float64 product.
func TestFP4OutProd(t *testing.T) {
	for ti, typ := range append(fp4Types, tqTypes...) {
		for li, layout := range []string{"", "row-gaps"} {
			ane := [4]int64{2 * typ.BlockSize(), 7, 2, 1}
			bne := [4]int64{5, 7, 4, 3}
			name := fmt.Sprintf("out_prod %v %v (%s) × %v", typ, ane, layout, bne)
			nnRun(t, name, 5e-4, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewSource(int64(400 + 2*ti + li)))
				a := nnSource(ctx, typ, ane, layout)
				av := nnFill(t, a, rng, -1, 1)
				b := ctx.NewTensor4D(core.TypeF32, bne[0], bne[1], bne[2], bne[3])
				bv := nnFill(t, b, rng, -1, 1)
				return ctx.OutProd(a, b), nnOutProdRef(av, ane, bv, bne)
			})
		}
	}
}
