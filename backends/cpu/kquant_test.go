package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// kquantTypes are the Q5, K-quant, IQ4, FP4 (MXFP4, NVFP4), Q1_0 and ternary (TQ1_0, TQ2_0)
// weight types (Q8_K is only an activation format).
var kquantTypes = []core.Type{core.TypeQ5_0, core.TypeQ5_1, core.TypeQ2_K, core.TypeQ3_K, core.TypeQ4_K,
	core.TypeQ5_K, core.TypeQ6_K, core.TypeIQ4_NL, core.TypeIQ4_XS, core.TypeMXFP4, core.TypeNVFP4, core.TypeQ1_0,
	core.TypeTQ1_0, core.TypeTQ2_0}

// TestKQuantMulMat multiplies weights of every new type (mat-vec and matrix shapes, odd row
// counts, broadcast batches, enough rows for the routes of many activation rows) with f32 activations and compares with a float64 product of the
// dequantized weights; results are identical at 1, 2 and 3 threads.
func TestKQuantMulMat(t *testing.T) {
	shapes := []mmShape{
		{256, 5, 1, 1, 1, 1, 1},
		{512, 17, 7, 1, 1, 1, 1},
		{256, 33, 9, 2, 1, 6, 1},
		{768, 3, 4, 1, 2, 3, 4},
		{4608, 35, 133, 1, 1, 1, 1}, // Q4_K's, Q6_K's on-the-fly repacked GEMM on avx2: partial group and quad, k past its chunk
		{256, 48, 128, 2, 1, 2, 1},
		{256, 1100, 1, 1, 1, 1, 1}, // a mat-vec of many rows: the tiled path's chunks of tileVecBytes, the last partial
	}
	for _, typ := range kquantTypes {
		for _, s := range shapes {
			t.Run(s.name(typ), func(t *testing.T) { mulMatVsFloat64(t, typ, s, 1, 2) })
		}
	}
}

// mmShape is a MUL_MAT problem: weights [k, m, a2, a3], activations [k, n, b2, b3].
type mmShape struct{ k, m, n, a2, a3, b2, b3 int64 }

func (s mmShape) name(typ core.Type) string {
	return fmt.Sprintf("%v_k%d_m%d_n%d_b%dx%d", typ, s.k, s.m, s.n, s.b2, s.b3)
}

// mulMatVsFloat64 multiplies random weights of typ (seeded seedA) by random f32 activations
// (seedB) at 1, 2 and 3 threads: the result is within ggml's bound of a float64 product of the
// dequantized weights, and the same at every thread count. It returns the operands and result.
func mulMatVsFloat64(t *testing.T, typ core.Type, s mmShape, seedA, seedB uint64) (a, b *core.Tensor, got []float32) {
	t.Helper()
	var first []float32
	for _, threads := range []int{1, 2, 3} {
		ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
		a = ctx.NewTensor4D(typ, s.k, s.m, s.a2, s.a3)
		b = ctx.NewTensor4D(core.TypeF32, s.k, s.n, s.b2, s.b3)
		fillRandom(t, a, seedA)
		fillRandom(t, b, seedB)
		r := ctx.MulMat(a, b)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(r)
		if err := cpu.Compute(g, threads); err != nil {
			t.Fatal(err)
		}
		got = mustF32(t, r)
		ref := refMulMat(mustF32(t, a), mustF32(t, b), a.Ne, b.Ne)
		if e := nmse(got, ref); !(e <= 5e-4) || e == 0 {
			t.Fatalf("threads %d: NMSE %g, want (0, 5e-4]", threads, e)
		}
		if first == nil {
			first = got
		} else {
			equalF32(t, "threads vs 1 thread", got, first)
		}
	}
	return a, b, got
}

// TestKQuantGetRows gathers rows of every new type (dense and strided views) into f32, exactly
// the dequantized rows.
func TestKQuantGetRows(t *testing.T) {
	for _, typ := range append(kquantTypes, core.TypeQ8_K) {
		for _, layout := range []string{"contig", "view"} {
			eltCheck(t, eltName("GET_ROWS", typ, layout), 0, func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []float64) {
				ne := [4]int64{typ.BlockSize() * 2, 9, 3, 2}
				a, x := eltSourceAny(t, ctx, rng, typ, ne, layout)
				b, idx := eltIndices(t, ctx, rng, core.TypeI32, [3]int64{4, 3, 2}, true, ne[1])
				var want []float64
				k := 0
				for i12 := int64(0); i12 < 2; i12++ {
					for i11 := int64(0); i11 < 3; i11++ {
						for range 4 {
							row := eltAt(ne, 0, idx[k], i11, i12)
							k++
							want = append(want, x[row:row+ne[0]]...)
						}
					}
				}
				return ctx.GetRows(a, b), want
			})
		}
	}
}

// TestKQuantCpy copies every new type into F32 and F16 (dequantizing) and F32/F16 into every new
// type (quantize-on-write with the reference quantizer), bit for bit.
func TestKQuantCpy(t *testing.T) {
	for _, typ := range append(kquantTypes, core.TypeQ8_K) {
		ne := [4]int64{typ.BlockSize() * 2, 5, 3, 1}
		for _, pair := range [][2]core.Type{{typ, core.TypeF32}, {typ, core.TypeF16}, {core.TypeF32, typ}, {core.TypeF16, typ}} {
			for _, layout := range []string{"contig", "view"} {
				eltCheckRaw(t, eltName("CAST", pair[0], pair[1], layout), func(t *testing.T, ctx *core.Context, rng *rand.Rand) (*core.Tensor, []byte) {
					a, _ := eltSourceAny(t, ctx, rng, pair[0], ne, layout)
					return ctx.Cast(a, pair[1]), eltCopyWant(t, a, pair[1])
				})
			}
		}
	}
	// Quantized to quantized is not allowed (ggml dequantizes only into float types).
	eltWantErr(t, "CPY", func(ctx *core.Context) { ctx.Cast(ctx.NewTensor1D(core.TypeQ4_K, 256), core.TypeQ6_K) })
}

// TestKQuantFastVsReference runs MUL_MAT on the SIMD kernels and on the reference (ggml's
// generic dots): the results agree to float rounding. The integer sums are exact either way,
// but the tiled kernels scale them in float lanes (K-quants: one scaling per super-block;
// IQ4: per 4-element dword, by d·dy or dx·dy of its sub-block) and add the lanes in another
// order than ggml's per-sub-block loop, so not even IQ4 can be bit for bit; the row dots
// (kern.DotIQ4_XSQ8_K, kern.DotIQ4_NLQ8_0) stay exact, see kern's TestKQuantDots.
func TestKQuantFastVsReference(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 3})
	defer fast.Close()
	for _, typ := range kquantTypes {
		for _, s := range [][3]int64{{256, 5, 1}, {512, 33, 3}, {1024, 70, 17}} {
			k, m, n := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%v_k%d_m%d_n%d", typ, k, m, n), func(t *testing.T) {
				ctx := core.NewContext(core.ContextParams{MemSize: 8 << 20})
				a := ctx.NewTensor3D(typ, k, m, 2)
				b := ctx.NewTensor3D(core.TypeF32, k, n, 4)
				fillRandom(t, a, 5)
				fillRandom(t, b, 6)
				_, e := mulMatFastVsRef(t, ref, fast, ctx, a, b)
				if e > 1e-10 {
					t.Fatalf("NMSE %g > 1e-10", e)
				}
			})
		}
	}
}

// BenchmarkKQuantMulMatVec: 4096×14336 weights of each new SIMD type (and q4_0, q8_0 for
// comparison) times one column, two threads.
func BenchmarkKQuantMulMatVec(b *testing.B) {
	for _, typ := range []core.Type{core.TypeQ4_0, core.TypeQ8_0, core.TypeQ4_K, core.TypeQ5_K, core.TypeQ6_K, core.TypeIQ4_XS} {
		b.Run(typ.String(), func(b *testing.B) { benchMulMat(b, typ, 14336, 1, 4096, 2) })
	}
}
