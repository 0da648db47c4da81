//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/internal/gputest"
	"github.com/tandem-ml/tandem/core"
)

// BenchmarkMatVecGPU times the GPUs' mat-vec kernel (mul_mat_vec.comp, chosen with
// TANDEM_GPU_KERNELS=gpu even on a software device) on q4_0, q8_0 and f16 weights of
// TinyLlama-1.1B's generation shapes (m x k: attention 2048x2048, K/V 256x2048, feed-forward
// 5632x2048 and 2048x5632, output 32000x2048 on GPUs only), one activation row. Each graph holds
// independent products of distinct copies of the weights, as many as make 256 MiB on a GPU (so
// the weights are read from memory, not from cache; one on a software device). It reports the
// weights' bytes read per second of wall time (GB/s: whole graphs, submission and wait included)
// and per second of the device's own time per node (dev-GB/s, µs/node: timestamp queries, from a
// second, profiled set of runs). TANDEM_MATVEC_SHAPE=wg,rows replaces the encoder's workgroup
// size and rows per workgroup (gpuops' mulMatVecShape), to tune them. Only the test binary is
// needed:
//
//	go test -c ./backends/vulkan && ./vulkan.test -test.run '^$' -test.bench MatVecGPU -test.benchtime 20x
func BenchmarkMatVecGPU(b *testing.B) {
	shapes := [][2]int64{{2048, 2048}, {256, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}}
	for _, typ := range []core.Type{core.TypeQ4_0, core.TypeQ8_0, core.TypeF16} {
		for _, s := range shapes {
			b.Run(fmt.Sprintf("%v/%dx%d", typ, s[0], s[1]), func(b *testing.B) { benchMatVecGPU(b, typ, s[0], s[1]) })
		}
	}
}

func benchMatVecGPU(b *testing.B, typ core.Type, m, k int64) {
	b.Setenv(gpuops.KernelsEnv, "gpu")
	be := benchBackend(b)
	software := be.dev.gpu.Software
	if software && m > 8192 {
		b.Skip("software device: the output matrix only on GPUs")
	}
	be.sh.Encoder().UseMulMat(gpuops.MulMatVec, gpuops.Tile{})
	if env := os.Getenv("TANDEM_MATVEC_SHAPE"); env != "" {
		var wg, rows uint32
		if _, err := fmt.Sscanf(env, "%d,%d", &wg, &rows); err != nil || wg == 0 || rows == 0 {
			b.Fatalf("TANDEM_MATVEC_SHAPE=%q: want workgroup size,rows (e.g. 64,2)", env)
		}
		be.sh.Encoder().UseMulMatVec(wg, rows)
	}
	bytes := m * k * typ.Size() / typ.BlockSize()
	copies := int64(1)
	if !software {
		copies = min(max((256<<20+bytes-1)/bytes, 1), 64)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, k)
	ws := make([]*core.Tensor, copies)
	outs := make([]*core.Tensor, copies)
	for i := range ws {
		ws[i] = ctx.NewTensor2D(typ, k, m)
		outs[i] = ctx.MulMat(ws[i], x)
	}
	gputest.AllocCtx(b, ctx, be.DefaultBufferType())
	r := rand.New(rand.NewPCG(1, 2))
	v := make([]float32, m*k)
	for i := range v {
		v[i] = 2*r.Float32() - 1
	}
	if err := core.SetFloat32s(ws[0], v); err != nil {
		b.Fatal(err)
	}
	raw := make([]byte, ws[0].NBytes())
	if err := core.TensorGet(ws[0], raw, 0); err != nil {
		b.Fatal(err)
	}
	for _, w := range ws[1:] {
		if err := core.TensorSet(w, raw, 0); err != nil {
			b.Fatal(err)
		}
	}
	if err := core.SetFloat32s(x, v[:k]); err != nil {
		b.Fatal(err)
	}
	g := core.NewGraph(max(core.DefaultGraphSize, int(4*copies)))
	for _, o := range outs {
		g.BuildForwardExpand(o)
	}
	if err := be.GraphCompute(g); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(copies*bytes)/sec/1e9, "GB/s")

	be.SetOpProfile(true)
	defer be.SetOpProfile(false)
	for range 5 {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	for _, o := range be.OpProfile() {
		if o.Nodes > 0 && o.Op == "MUL_MAT "+typ.String()+" 1-row" {
			per := o.Time.Seconds() / float64(o.Nodes)
			b.ReportMetric(float64(bytes)/per/1e9, "dev-GB/s")
			b.ReportMetric(per*1e6, "µs/node")
		}
	}
}
