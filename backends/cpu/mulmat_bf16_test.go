package cpu_test

import (
	"fmt"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// BF16 weights take the packed GEMM (n > 3) or the bf16 mat-vec (n <= 3) with activations given
// in f32 (rounded to bf16 first, as ggml does) or already in bf16; both must match the reference
// path to float32 rounding and the float64 product of the rounded operands within ggml's 5e-4.
func TestMulMatBF16FastVsReference(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	for _, threads := range []int{1, 2} {
		fast, _ := cpu.New(cpu.Options{Threads: threads})
		for _, bt := range []core.Type{core.TypeF32, core.TypeBF16} {
			for _, s := range [][5]int64{{133, 37, 1, 1, 1}, {64, 9, 3, 2, 1}, {96, 40, 13, 2, 3}, {300, 70, 50, 1, 2}} {
				k, m, n, a2, r2 := s[0], s[1], s[2], s[3], s[4]
				t.Run(fmt.Sprintf("th%d/%v/k%d_m%d_n%d_b%d", threads, bt, k, m, n, a2*r2), func(t *testing.T) {
					ctx := core.NewContext(core.ContextParams{MemSize: 16 << 20})
					a := ctx.NewTensor3D(core.TypeBF16, k, m, a2)
					b := ctx.NewTensor3D(bt, k, n, a2*r2)
					fillRandom(t, a, 11)
					fillRandom(t, b, 12)
					got, e := mulMatFastVsRef(t, ref, fast, ctx, a, b)
					if e > 1e-10 {
						t.Fatalf("fast vs reference: NMSE %g > 1e-10", e)
					}
					exact := refMulMat(mustF32(t, a), mustF32(t, b), a.Ne, b.Ne)
					if e := nmse(got, exact); e > 5e-4 {
						t.Fatalf("vs float64 product: NMSE %g > 5e-4", e)
					}
				})
			}
		}
		fast.Close()
	}
}
