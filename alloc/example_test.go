package alloc_test

import (
	"fmt"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// ggml's simple-backend flow: the model's tensors are metadata in a NoAlloc context placed in one
// backend buffer, a graph allocator sizes the compute buffer once on a worst-case graph, and each
// freshly built graph is then allocated in it and computed.
func Example() {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer be.Close()

	mctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := mctx.NewTensor2D(core.TypeF32, 2, 4) // 4 rows of 2
	b := mctx.NewTensor2D(core.TypeF32, 2, 3) // 3 rows of 2
	buf, err := alloc.AllocCtxTensors(mctx, be)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Free()
	_ = core.SetFloat32s(a, []float32{2, 8, 5, 1, 4, 2, 8, 6})
	_ = core.SetFloat32s(b, []float32{10, 5, 9, 9, 5, 4})

	build := func() *core.Graph {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(ctx.MulMat(a, b))
		return g
	}
	ga := alloc.NewGraphAllocator(be.DefaultBufferType())
	defer ga.Free()
	if err := ga.Reserve(build()); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("compute buffer:", ga.BufferSize(0), "bytes")

	g := build()
	if err := ga.AllocGraph(g); err != nil {
		fmt.Println(err)
		return
	}
	if err := be.GraphCompute(g); err != nil {
		fmt.Println(err)
		return
	}
	out, _ := core.GetFloat32s(g.Node(-1))
	fmt.Println(out)
	// Output:
	// compute buffer: 64 bytes
	// [60 55 50 110 90 54 54 126 42 29 28 64]
}
