package alloc_test

import (
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Weights for the CPU go to CPU_REPACK by default when the CPU's extra buffer type accepts them,
// and stay in host memory with NoExtraBufferTypes.
func TestAllocCtxTensorsPlacesWeights(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	repack := cpu.RepackBufferType()

	// A context of weights only: their uses are unknown, type and shape decide.
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	q4 := wctx.NewTensor2D(core.TypeQ4_0, 64, 10)
	q8 := wctx.NewTensor3D(core.TypeQ8_0, 32, 3, 2)
	f16 := wctx.NewTensor2D(core.TypeF16, 64, 10)
	param := wctx.NewTensor2D(core.TypeQ4_1, 32, 4).SetParam()
	viewed := wctx.NewTensor2D(core.TypeQ4_0, 64, 10)
	view := wctx.View1D(viewed, 32, 0) // a weight with a view stays in the standard layout
	buf, err := alloc.AllocCtxTensors(wctx, be)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x    *core.Tensor
		want core.BufferType
	}{{q4, repack}, {q8, repack}, {f16, core.HostBufferType()}, {param, core.HostBufferType()},
		{viewed, core.HostBufferType()}, {view, core.HostBufferType()}} {
		if c.x.Buffer == nil || c.x.Buffer.Type() != c.want {
			t.Errorf("%v placed in %s, want %s", c.x, bufName(c.x), c.want.Name())
		}
	}
	if buf.Type() != core.HostBufferType() || buf.Size() < repack.AllocSize(q4)+repack.AllocSize(q8) {
		t.Errorf("joint buffer: type %s, size %d", buf.Type().Name(), buf.Size())
	}
	buf.SetUsage(core.BufferUsageWeights)
	if q4.Buffer.Usage() != core.BufferUsageWeights {
		t.Error("SetUsage did not reach the CPU_REPACK part")
	}
	if err := buf.Free(); err != nil {
		t.Fatal(err)
	}

	// A context with nodes: a weight is repacked only when a MUL_MAT reads it as src0 and nothing
	// but MUL_MAT and GET_ROWS reads it.
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	mm := ctx.NewTensor2D(core.TypeQ4_0, 64, 8)
	emb := ctx.NewTensor2D(core.TypeQ4_0, 64, 8)   // GET_ROWS only
	tied := ctx.NewTensor2D(core.TypeQ8_0, 64, 8)  // GET_ROWS and MUL_MAT
	other := ctx.NewTensor2D(core.TypeQ8_0, 64, 8) // MUL_MAT and CPY
	unused := ctx.NewTensor2D(core.TypeQ8_0, 64, 8)
	x := ctx.NewTensor2D(core.TypeF32, 64, 2)
	idx := ctx.NewTensor1D(core.TypeI32, 2)
	ctx.MulMat(mm, x)
	ctx.GetRows(emb, idx)
	ctx.GetRows(tied, idx)
	ctx.MulMat(tied, x)
	ctx.MulMat(other, x)
	ctx.Cpy(other, ctx.NewTensor2D(core.TypeF32, 64, 8))
	for _, opt := range []bool{false, true} {
		for _, t := range ctx.Tensors() {
			t.Buffer, t.Offset = nil, 0
		}
		b, err := alloc.AllocCtxTensorsWithOptions(ctx, be.DefaultBufferType(), alloc.CtxAllocOptions{NoExtraBufferTypes: opt})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			x        *core.Tensor
			repacked bool
		}{{mm, true}, {emb, false}, {tied, true}, {other, false}, {unused, false}, {x, false}} {
			want := core.HostBufferType()
			if c.repacked && !opt {
				want = repack
			}
			if c.x.Buffer.Type() != want {
				t.Errorf("opt-out %v: %v in %s, want %s", opt, c.x, c.x.Buffer.Type().Name(), want.Name())
			}
		}
		b.Free()
	}
}

func bufName(x *core.Tensor) string {
	if x.Buffer == nil || x.Buffer.Type() == nil {
		return "no buffer"
	}
	return x.Buffer.Type().Name()
}
