package gputest

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// BenchMulMat times MUL_MAT of a [k, m] matrix of type typ by an f32 [k, n] one on be (the
// backend's own choice of tiled or mat-vec kernel) and reports GFLOPS and ms/op. The first run,
// which compiles the pipeline, is not timed.
func BenchMulMat(b *testing.B, be core.Backend, typ core.Type, m, n, k int64) {
	g := Graph(b, be, func(ctx *core.Context) *core.Tensor {
		return ctx.MulMat(ctx.NewTensor2D(typ, k, m), ctx.NewTensor2D(core.TypeF32, k, n))
	})
	sec := timeGraph(b, be, g)
	b.ReportMetric(2*float64(m*n*k)/sec/1e9, "GFLOPS")
	b.ReportMetric(sec*1e3, "ms/op")
}

// BenchAddChain times a graph of nodes dependent ADDs on 4096 floats and reports the cost per
// dispatch (recording, barriers, submission and the wait, spread over the nodes).
func BenchAddChain(b *testing.B, be core.Backend, nodes int) {
	g := Graph(b, be, func(ctx *core.Context) *core.Tensor {
		x := ctx.NewTensor1D(core.TypeF32, 4096)
		y := x
		for range nodes {
			y = ctx.Add(y, x)
		}
		return y
	})
	sec := timeGraph(b, be, g)
	b.ReportMetric(sec*1e6/float64(nodes), "µs/dispatch")
}

// timeGraph computes g once untimed, then in the benchmark loop; it returns seconds per run.
func timeGraph(b *testing.B, be core.Backend, g *core.Graph) float64 {
	if err := be.GraphCompute(g); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	return b.Elapsed().Seconds() / float64(b.N)
}
