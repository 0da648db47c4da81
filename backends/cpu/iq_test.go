package cpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// iqTypes are ggml's IQ2_XXS, IQ2_XS, IQ2_S, IQ1_S and IQ1_M: read-only types (no quantizer),
// so their tensors are filled with random valid blocks (fillRandom → fillRandomBlocks).
var iqTypes = []core.Type{core.TypeIQ2_XXS, core.TypeIQ2_XS, core.TypeIQ2_S, core.TypeIQ1_S, core.TypeIQ1_M}

// iqDots are ggml's generic dots of those types against Q8_K.
var iqDots = map[core.Type]func(int, []byte, []byte) float32{
	core.TypeIQ2_XXS: quant.DotIQ2_XXSQ8_K, core.TypeIQ2_XS: quant.DotIQ2_XSQ8_K, core.TypeIQ2_S: quant.DotIQ2_SQ8_K,
	core.TypeIQ1_S: quant.DotIQ1_SQ8_K, core.TypeIQ1_M: quant.DotIQ1_MQ8_K,
}

// fillRandomBlocks fills x, of a quantized type without a quantizer, with random bytes (every
// grid, sign and sub-block scale pattern decodes) and an f16 block scale in ±[2^-5, 2^-4):
// in the first two bytes of a block, or for IQ1_M in the top nibbles of its four scale words.
func fillRandomBlocks(t testing.TB, x *core.Tensor, r *rand.Rand) {
	t.Helper()
	raw := make([]byte, x.NBytes())
	for i := range raw {
		raw[i] = byte(r.Uint32())
	}
	size := int(x.Type.Size())
	for off := 0; off < len(raw); off += size {
		d := uint16(r.Uint32()&0x8000) | 10<<10 | uint16(r.IntN(1024))
		if x.Type != core.TypeIQ1_M {
			raw[off], raw[off+1] = byte(d), byte(d>>8)
			continue
		}
		for k := range 4 {
			raw[off+48+2*k+1] = raw[off+48+2*k+1]&0x0f | byte(d>>(4*k)&0xf)<<4
		}
	}
	if err := core.TensorSet(x, raw, 0); err != nil {
		t.Fatal(err)
	}
}

// TestIQMulMat multiplies random IQ weights (mat-vec, odd row counts, broadcast batches, many
// activation rows) with f32 activations: within ggml's bound of a float64 product of the
// dequantized weights, identical at 1, 2 and 3 threads, and in the mat-vec case bit for bit
// ggml's generic dot of each weight row with the Q8_K activations.
func TestIQMulMat(t *testing.T) {
	shapes := []mmShape{
		{256, 5, 1, 1, 1, 1, 1},
		{512, 17, 7, 1, 1, 1, 1},
		{768, 3, 4, 1, 2, 3, 4},
		{256, 48, 40, 2, 1, 2, 1},
	}
	for _, typ := range iqTypes {
		for si, s := range shapes {
			t.Run(s.name(typ), func(t *testing.T) {
				a, b, got := mulMatVsFloat64(t, typ, s, uint64(11+si), uint64(12+si))
				if s.n != 1 {
					return
				}
				q8 := make([]byte, quant.RowSize(int(s.k), quant.QK_K, quant.BlockQ8_KSize))
				quant.QuantizeRowQ8_K(mustF32(t, b), q8)
				w := eltRaw(t, a)
				rs := typ.RowSize(s.k)
				for i := range s.m {
					if d := iqDots[typ](int(s.k), w[i*rs:(i+1)*rs], q8); math.Float32bits(d) != math.Float32bits(got[i]) {
						t.Fatalf("row %d: %g, ggml's dot %g", i, got[i], d)
					}
				}
			})
		}
	}
}

// TestIQRowsAndCopies: GET_ROWS of dense and row-gapped IQ tensors gives exactly the dequantized
// rows; CPY into f32 (dense and permuted sources) and f16 gives the dequantized values (rounded to
// f16); OUT_PROD with an IQ first operand (dense and row gaps, broadcast) is within ggml's bound
// of a float64 product; nothing quantizes into the types (CPY, Cast and SET_ROWS are refused).
func TestIQRowsAndCopies(t *testing.T) {
	for ti, typ := range iqTypes {
		for li, layout := range []string{"", "row-gaps"} {
			ne := [4]int64{512, 9, 3, 2}
			nnRun(t, fmt.Sprintf("GET_ROWS %v %s", typ, layout), 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				rng := rand.New(rand.NewPCG(uint64(ti), uint64(li)))
				a := nnSource(ctx, typ, ne, layout)
				fillRandom(t, a, uint64(30+ti))
				x := nnGet64(t, a)
				b, idx := eltIndices(t, ctx, rng, core.TypeI32, [3]int64{4, 3, 2}, false, ne[1])
				var want []float64
				for k, row := range idx {
					i11, i12 := int64(k/4)%3, int64(k/12)
					at := ((i12*ne[2]+i11)*ne[1] + row) * ne[0]
					want = append(want, x[at:at+ne[0]]...)
				}
				return ctx.GetRows(a, b), want
			})
			ane, bne := [4]int64{512, 7, 2, 1}, [4]int64{5, 7, 4, 3}
			nnRun(t, fmt.Sprintf("OUT_PROD %v %s", typ, layout), 5e-4, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
				a := nnSource(ctx, typ, ane, layout)
				fillRandom(t, a, uint64(40+ti))
				b := ctx.NewTensor4D(core.TypeF32, bne[0], bne[1], bne[2], bne[3])
				fillRandom(t, b, uint64(45+ti))
				return ctx.OutProd(a, b), nnOutProdRef(nnGet64(t, a), ane, nnGet64(t, b), bne)
			})
		}
		for _, to := range []core.Type{core.TypeF32, core.TypeF16} {
			for _, perm := range []bool{false, true} {
				nnRun(t, fmt.Sprintf("CPY %v->%v permuted=%v", typ, to, perm), 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
					base := ctx.NewTensor3D(typ, 256, 5, 3)
					fillRandom(t, base, uint64(50+ti))
					a := base
					if perm {
						a = ctx.Permute(base, 0, 2, 1, 3)
					}
					want := nnGet64(t, a)
					if to == core.TypeF16 {
						for i, v := range want {
							want[i] = float64(quant.FP16ToFP32(quant.FP32ToFP16(float32(v))))
						}
					}
					return ctx.Cpy(a, ctx.NewTensor4D(to, a.Ne[0], a.Ne[1], a.Ne[2], a.Ne[3])), want
				})
			}
		}
		eltWantErr(t, "CPY", func(ctx *core.Context) {
			ctx.Cpy(ctx.NewTensor1D(core.TypeF32, 256), ctx.NewTensor1D(typ, 256))
		})
		eltWantErr(t, "CPY", func(ctx *core.Context) { ctx.Cast(ctx.NewTensor1D(core.TypeF16, 256), typ) })
		eltWantErr(t, "SET_ROWS", func(ctx *core.Context) {
			ctx.SetRows(ctx.NewTensor2D(typ, 256, 4), ctx.NewTensor2D(core.TypeF32, 256, 2), ctx.NewTensor1D(core.TypeI32, 2))
		})
	}
}
