package scheduler_test

import (
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// BenchmarkPlanAlloc measures scheduling + allocation per node of a 2,000-node graph over two
// backends (fake GPU + CPU), re-planning every iteration (a fresh graph of the same shape).
func BenchmarkPlanAlloc(b *testing.B) {
	dev := newFakeGPU("FakeGPU", core.OpAdd, core.OpMul, core.OpMulMat)
	gb, _ := dev.NewBackend()
	cb := gb.(*fakeBackend).cpu
	s, err := scheduler.New([]core.Backend{gb, cb}, scheduler.Options{GraphSize: 4096})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := wctx.NewTensor2D(core.TypeF32, 64, 8)
	if _, err := alloc.AllocCtxTensorsFromBufferType(wctx, dev.bt); err != nil {
		b.Fatal(err)
	}
	w.Buffer.SetUsage(core.BufferUsageWeights)
	build := func() *core.Graph {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor2D(core.TypeF32, 64, 8).SetInput()
		y := x
		for i := 0; i < 2000; i++ {
			switch i % 8 {
			case 0:
				y = ctx.Add(y, w) // weights on the GPU pull the region there
			case 1, 2, 4, 5, 6:
				y = ctx.Add(y, x)
			case 3:
				y = ctx.Mul(y, x)
			default:
				y = ctx.Sqrt(y) // CPU only: forces splits
			}
		}
		g := core.NewGraph(4096)
		g.BuildForwardExpand(y)
		return g
	}
	graphs := []*core.Graph{build(), build()}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.AllocGraph(graphs[i%2]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2000/1000, "µs/node")
	b.ReportMetric(float64(s.NSplits()), "splits")
}
