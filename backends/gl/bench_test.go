//go:build gl && cgo

package gl

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// Op benchmarks: MUL_MAT (tiled and mat-vec) in GFLOPS, and the per-dispatch
// cost of a long elementwise graph. Run, on a quiet machine:
//
//	go test -tags gl ./backends/gl -run '^$' -bench 'MulMat|AddChain' -benchtime 5x
//
// TANDEM_LONG=1 adds m=4096 n=512 k=14336 q4_0 (about 60 GFLOP per run).

// benchGraph allocates the tensors built by build on a fresh backend, fills
// every leaf with uniform values in [-1, 1) and returns the backend and graph.
func benchGraph(b *testing.B, build func(ctx *core.Context) *core.Tensor) (*Backend, *core.Graph) {
	b.Helper()
	if ok, why := Available(); !ok {
		b.Skip(why)
	}
	be, err := New()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Close() })
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := build(ctx)
	if err := ctx.Err(); err != nil {
		b.Fatal(err)
	}
	bt := be.DefaultBufferType()
	var size int64
	for _, t := range ctx.Tensors() {
		if t.ViewSrc == nil {
			size = core.AlignUp(size, bt.Alignment()) + bt.AllocSize(t)
		}
	}
	buf, err := bt.Alloc(size)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { buf.Free() })
	var off int64
	for _, t := range ctx.Tensors() {
		if t.ViewSrc != nil {
			if err := core.ViewInit(t); err != nil {
				b.Fatal(err)
			}
			continue
		}
		off = core.AlignUp(off, bt.Alignment())
		if err := core.TensorAlloc(buf, t, off); err != nil {
			b.Fatal(err)
		}
		off += bt.AllocSize(t)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	r := rand.New(rand.NewPCG(7, 7))
	for _, l := range g.Leafs() {
		v := make([]float32, l.NElements())
		for i := range v {
			v[i] = 2*r.Float32() - 1
		}
		if err := core.SetFloat32sAny(l, v); err != nil {
			b.Fatal(err)
		}
	}
	return be, g
}

// benchMulMat times MUL_MAT of a [k, m] (type typ) by b [k, n] through
// mulMatDispatch (tiled for n > 8, mat-vec otherwise) and reports GFLOPS.
func benchMulMat(b *testing.B, typ core.Type, m, n, k int64) {
	old := glOps[core.OpMulMat].encode
	glOps[core.OpMulMat].encode = (*Backend).mulMatDispatch
	b.Cleanup(func() { glOps[core.OpMulMat].encode = old })
	be, g := benchGraph(b, func(ctx *core.Context) *core.Tensor {
		return ctx.MulMat(ctx.NewTensor2D(typ, k, m), ctx.NewTensor2D(core.TypeF32, k, n))
	})
	if err := be.GraphCompute(g); err != nil { // compile the pipeline outside the timing
		b.Fatal(err)
	}
	for b.Loop() {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(2*float64(m*n*k)/sec/1e9, "GFLOPS")
	b.ReportMetric(sec*1e3, "ms/op")
}

func BenchmarkMulMatF32_256(b *testing.B)  { benchMulMat(b, core.TypeF32, 256, 256, 256) }
func BenchmarkMulMatQ4_0_256(b *testing.B) { benchMulMat(b, core.TypeQ4_0, 256, 256, 256) }

func BenchmarkMulMatVecF32_4096(b *testing.B)  { benchMulMat(b, core.TypeF32, 4096, 1, 4096) }
func BenchmarkMulMatVecQ4_0_4096(b *testing.B) { benchMulMat(b, core.TypeQ4_0, 4096, 1, 4096) }

// BenchmarkMulMatQ4_0Long is a prompt-sized feed-forward product, m=4096
// n=512 k=14336 .
func BenchmarkMulMatQ4_0Long(b *testing.B) {
	if os.Getenv("TANDEM_LONG") != "1" {
		b.Skip("set TANDEM_LONG=1 (about 60 GFLOP per iteration)")
	}
	benchMulMat(b, core.TypeQ4_0, 4096, 512, 14336)
}

// BenchmarkAddChain100 runs a graph of 100 dependent ADDs on 4096 floats:
// the cost per dispatch of recording, barriers, submit and wait.
func BenchmarkAddChain100(b *testing.B) {
	const nodes = 100
	be, g := benchGraph(b, func(ctx *core.Context) *core.Tensor {
		x := ctx.NewTensor1D(core.TypeF32, 4096)
		y := x
		for range nodes {
			y = ctx.Add(y, x)
		}
		return y
	})
	if err := be.GraphCompute(g); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/nodes, "µs/dispatch")
}
