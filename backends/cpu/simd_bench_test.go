package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// BenchmarkSIMD runs the shapes of the SIMD issue (ggml's measured figures in comments) at 1 and
// 2 threads: f32 2048³ (ggml 97 GFLOPS), m=4096 k=14336 n=512 (ggml f32 97.5, f16 152.6, q4_0
// 83.3, q8_0 104.7) and the mat-vec n=1 (ggml f32 14.2, f16 24.2, q4_0 45.6, q8_0 41.5). Besides
// GFLOPS it reports GB/s: weight bytes read per second, the mat-vec's figure of merit. Skipped
// under -short (hundreds of MB per shape). The float targets at 2 threads (compare with
// OpenBLAS's f32 figures for the same shapes taken in the same run, e.g. numpy on OpenBLAS with
// OPENBLAS_NUM_THREADS=2):
//
//	go test ./backends/cpu -run '^$' -bench 'SIMD/.*/(f32|f16|bf16)/threads2' -benchtime 5x
func BenchmarkSIMD(b *testing.B) {
	shapes := []struct {
		name    string
		m, n, k int64
		types   []string
	}{
		{"2048cubed", 2048, 2048, 2048, []string{"f32", "f16", "bf16"}},
		{"m4096_k14336_n512", 4096, 512, 14336, quantBenchTypes},
		{"matvec_m4096_k14336_n1", 4096, 1, 14336, quantBenchTypes},
	}
	if testing.Short() {
		b.Skip("large shapes; run without -short")
	}
	for _, s := range shapes {
		for _, tn := range s.types {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%s/%s/threads%d", s.name, tn, th), func(b *testing.B) {
					name, repacked := strings.CutSuffix(tn, "_repacked")
					typ := typeByName(name)
					if repacked {
						benchMulMatRepacked(b, typ, s.m, s.n, s.k, th)
					} else {
						benchMulMat(b, typ, s.m, s.n, s.k, th)
					}
					b.ReportMetric(float64(typ.RowSize(s.k)*s.m)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
				})
			}
		}
	}
}

// quantBenchTypes are the weight types of BenchmarkSIMD's model-sized shapes: the float types, the
// quantized ones in the standard layout, and q4_0, q4_1, q8_0 and q4_K in the CPU_REPACK buffer
// (where alloc and gguf put CPU weights by default; q4_K only where the kernel set is avx2).
var quantBenchTypes = []string{"f32", "f16", "bf16", "q4_0", "q4_1", "q8_0", "q4_K", "q5_K", "q6_K",
	"iq4_xs", "iq4_nl", "q4_0_repacked", "q4_1_repacked", "q8_0_repacked", "q4_K_repacked"}

// benchMulMatRepacked is benchMulMat with the weights placed by alloc, which puts them in the CPU's
// CPU_REPACK buffer type; it fails if they land elsewhere.
func benchMulMatRepacked(b *testing.B, typ core.Type, m, n, k int64, threads int) {
	be, err := cpu.New(cpu.Options{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(typ, k, m)
	x := ctx.NewTensor2D(core.TypeF32, k, n)
	r := ctx.MulMat(a, x)
	buf, err := alloc.AllocCtxTensors(ctx, be)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	if got := a.Buffer.Type().Name(); got != repackPlaced(typ) {
		b.Fatalf("weights in %s, want %s", got, repackPlaced(typ))
	}
	fillRandom(b, a, 1)
	fillRandom(b, x, 2)
	g := core.NewGraph(8)
	g.BuildForwardExpand(r)
	if err := be.GraphCompute(g); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
}

// BenchmarkGonumSgemm is the baseline beside it: gonum's blas32 Sgemm (C = A·Bᵀ, the MUL_MAT
// layout) on 1024³ and 2048³ with GOMAXPROCS 1 and 2.
func BenchmarkGonumSgemm(b *testing.B) {
	for _, n := range []int{1024, 2048} {
		for _, procs := range []int{1, 2} {
			b.Run(fmt.Sprintf("%d/procs%d", n, procs), func(b *testing.B) {
				old := runtime.GOMAXPROCS(procs)
				defer runtime.GOMAXPROCS(old)
				r := rand.New(rand.NewPCG(1, 2))
				mk := func() blas32.General {
					g := blas32.General{Rows: n, Cols: n, Stride: n, Data: make([]float32, n*n)}
					for i := range g.Data {
						g.Data[i] = r.Float32()*2 - 1
					}
					return g
				}
				x, y, c := mk(), mk(), mk()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					blas32.Gemm(blas.NoTrans, blas.Trans, 1, x, y, 0, c)
				}
				b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
			})
		}
	}
}

func typeByName(s string) core.Type {
	t, ok := core.TypeByName(s)
	if !ok {
		panic("unknown type " + s)
	}
	return t
}
