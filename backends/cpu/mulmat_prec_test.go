package cpu_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// TestMulMatF16PrecBF16: a MUL_MAT of F16 weights at core.PrecBF16 with at least 64 activation
// rows, on a CPU with the bf16 pair path, is the product of both operands rounded to bf16 (to
// float32 rounding of the float64 product of the rounded values) and within ggml's 5e-4 of the
// exact one; with fewer rows, without the pair path, and at PrecDefault and PrecF32 it is bit for
// bit the f32 product.
func TestMulMatF16PrecBF16(t *testing.T) {
	for _, threads := range []int{1, 2} {
		be, err := cpu.New(cpu.Options{Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		defer be.Close()
		for _, s := range [][3]int64{{200, 70, 64}, {96, 33, 130}, {64, 40, 63}} {
			k, m, n := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("th%d/k%d_m%d_n%d", threads, k, m, n), func(t *testing.T) {
				run := func(prec core.Prec) ([]float32, []float32, []float32) {
					ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
					a := ctx.NewTensor2D(core.TypeF16, k, m)
					b := ctx.NewTensor2D(core.TypeF32, k, n)
					fillRandom(t, a, 21)
					fillRandom(t, b, 22)
					r := ctx.MulMat(a, b)
					ctx.MulMatSetPrec(r, prec)
					g := core.NewGraph(4)
					g.BuildForwardExpand(r)
					if err := be.GraphCompute(g); err != nil {
						t.Fatal(err)
					}
					return mustF32(t, r), mustF32(t, a), mustF32(t, b)
				}
				def, av, bv := run(core.PrecDefault)
				f32, _, _ := run(core.PrecF32)
				bf, _, _ := run(core.PrecBF16)
				same := func(what string, got []float32) {
					for i := range def {
						if math.Float32bits(got[i]) != math.Float32bits(def[i]) {
							t.Fatalf("%s: C[%d] = %g, PrecDefault gives %g", what, i, got[i], def[i])
						}
					}
				}
				same("PrecF32", f32)
				exact := refMulMat(av, bv, [4]int64{k, m, 1, 1}, [4]int64{k, n, 1, 1})
				if e := nmse(def, exact); e > 1e-10 {
					t.Fatalf("PrecDefault vs float64: NMSE %g", e)
				}
				if n < 64 || !cpu.HasBF16Pairs() {
					same("PrecBF16", bf)
					return
				}
				for i := range av {
					av[i] = quant.BF16ToFP32(quant.FP32ToBF16(av[i]))
				}
				for i := range bv {
					bv[i] = quant.BF16ToFP32(quant.FP32ToBF16(bv[i]))
				}
				rounded := refMulMat(av, bv, [4]int64{k, m, 1, 1}, [4]int64{k, n, 1, 1})
				if e := nmse(bf, rounded); e > 1e-10 {
					t.Fatalf("PrecBF16 vs float64 product of the bf16-rounded operands: NMSE %g", e)
				}
				e := nmse(bf, exact)
				if e > 5e-4 || e < 1e-9 {
					t.Fatalf("PrecBF16 vs the exact product: NMSE %g, want rounding error within 5e-4", e)
				}
				t.Logf("PrecBF16: NMSE %.3g against the exact product", e)
			})
		}
	}
}
