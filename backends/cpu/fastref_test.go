package cpu_test

import (
	"fmt"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// The SIMD MUL_MAT (packed GEMM for f32/f16 weights, assembly dots and quantizers for the rest)
// against the reference kernels, ggml's 5e-4 matmul bound being far looser than what must hold.
func TestMulMatFastVsReference(t *testing.T) {
	ref, _ := cpu.New(cpu.Options{Threads: 2, Reference: true})
	defer ref.Close()
	fast, _ := cpu.New(cpu.Options{Threads: 3})
	defer fast.Close()
	types := []core.Type{core.TypeF32, core.TypeF16, core.TypeBF16, core.TypeQ4_0, core.TypeQ4_1, core.TypeQ8_0}
	shapes := [][3]int64{{64, 5, 1}, {96, 33, 3}, {256, 70, 17}, {512, 130, 100}, {32, 1, 9}}
	for _, typ := range types {
		for _, s := range shapes {
			k, m, n := s[0], s[1], s[2]
			t.Run(fmt.Sprintf("%v_k%d_m%d_n%d", typ, k, m, n), func(t *testing.T) {
				ctx := core.NewContext(core.ContextParams{MemSize: 8 << 20})
				a := ctx.NewTensor3D(typ, k, m, 2)
				b := ctx.NewTensor3D(core.TypeF32, k, n, 4)
				fillRandom(t, a, 5)
				fillRandom(t, b, 6)
				r := ctx.MulMat(a, b)
				g := core.NewGraph(8)
				g.BuildForwardExpand(r)
				if err := ref.GraphCompute(g); err != nil {
					t.Fatal(err)
				}
				want := append([]float32(nil), mustF32(t, r)...)
				if err := fast.GraphCompute(g); err != nil {
					t.Fatal(err)
				}
				got := mustF32(t, r)
				w64 := make([]float64, len(want))
				for i, v := range want {
					w64[i] = float64(v)
				}
				limit := 1e-10
				if typ == core.TypeF16 {
					limit = 1e-6 // the GEMM keeps activations in f32; the reference rounds them to f16
				}
				if e := nmse(got, w64); e > limit {
					t.Fatalf("NMSE %g > %g", e, limit)
				}
			})
		}
	}
}
