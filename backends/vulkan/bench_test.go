//go:build cgo && !novulkan

package vulkan

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// BenchmarkGraphChain runs a graph of 64 dependent ADDs on 1024 floats:
// per-graph cost (record, barriers, one submit, wait) divided by nodes.
func BenchmarkGraphChain(b *testing.B) {
	if ok, why := Available(); !ok {
		b.Skip(why)
	}
	be, err := New(0)
	if err != nil {
		b.Fatal(err)
	}
	defer be.Close()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 1024)
	y := x
	for range 64 {
		y = ctx.Add(y, x)
	}
	bt := be.DefaultBufferType()
	var size int64
	for _, t := range ctx.Tensors() {
		size = core.AlignUp(size, bt.Alignment()) + bt.AllocSize(t)
	}
	buf, err := bt.Alloc(size)
	if err != nil {
		b.Fatal(err)
	}
	defer buf.Free()
	var off int64
	for _, t := range ctx.Tensors() {
		off = core.AlignUp(off, bt.Alignment())
		if err := core.TensorAlloc(buf, t, off); err != nil {
			b.Fatal(err)
		}
		off += bt.AllocSize(t)
	}
	g := core.NewGraph(256)
	g.BuildForwardExpand(y)
	for b.Loop() {
		if err := be.GraphCompute(g); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/64, "µs/node")
}
