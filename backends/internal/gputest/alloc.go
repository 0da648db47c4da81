package gputest

import (
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// AllocCtx places every tensor of ctx in one buffer of bt (views share their source's memory);
// the buffer is freed when the test ends.
func AllocCtx(t testing.TB, ctx *core.Context, bt core.BufferType) core.Buffer {
	t.Helper()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	align := bt.Alignment()
	var size int64
	for _, x := range ctx.Tensors() {
		if x.ViewSrc == nil {
			size = core.AlignUp(size, align) + bt.AllocSize(x)
		}
	}
	buf, err := bt.Alloc(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { buf.Free() })
	var off int64
	for _, x := range ctx.Tensors() {
		if x.ViewSrc != nil {
			if err := core.ViewInit(x); err != nil {
				t.Fatal(err)
			}
			continue
		}
		off = core.AlignUp(off, align)
		if err := core.TensorAlloc(buf, x, off); err != nil {
			t.Fatal(err)
		}
		off += bt.AllocSize(x)
	}
	return buf
}

// Graph builds the tensors of build on be's default buffer type, fills every leaf with uniform
// values in [-1, 1) from a fixed seed and returns the graph that computes build's result.
func Graph(t testing.TB, be core.Backend, build func(ctx *core.Context) *core.Tensor) *core.Graph {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	out := build(ctx)
	AllocCtx(t, ctx, be.DefaultBufferType())
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	r := rand.New(rand.NewPCG(7, 7))
	for _, l := range g.Leafs() {
		v := make([]float32, l.NElements())
		for i := range v {
			v[i] = 2*r.Float32() - 1
		}
		if err := core.SetFloat32s(l, v); err != nil {
			t.Fatal(err)
		}
	}
	return g
}
