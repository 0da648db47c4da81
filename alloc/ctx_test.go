package alloc

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// AllocCtxTensors packs tensors in runs no larger than the buffer type's maximum size; several runs
// make a MultiBuffer that behaves as one buffer.
func TestAllocCtxTensorsMultiBuffer(t *testing.T) {
	bt := &hostBT{align: 64, maxSize: 1024}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	var ts []*core.Tensor
	for _, n := range []int64{100, 100, 50, 300, 10, 64} { // f32: 400, 400, 200, 1200 (oversize), 40, 256 bytes
		ts = append(ts, ctx.NewTensor1D(core.TypeF32, n))
	}
	view := ctx.View1D(ts[3], 4, 8) // a view: no memory of its own
	ext := core.NewContext(core.ContextParams{MemSize: 4096}).NewTensor1D(core.TypeF32, 8)
	extView := ctx.View1D(ext, 2, 4) // view of a tensor that already has memory

	buf, err := AllocCtxTensorsFromBufferType(ctx, bt)
	if err != nil {
		t.Fatal(err)
	}
	mb, ok := buf.(*MultiBuffer)
	if !ok {
		t.Fatalf("got %T, want a MultiBuffer", buf)
	}
	parts := mb.Buffers()
	// runs: [400+400+200 → 448+448+256 = 1152 > 1024 → 448+448=896], [256], [1216 oversize], [64+256=320]
	wantSizes := []int64{896, 256, 1216, 320}
	if len(parts) != len(wantSizes) {
		t.Fatalf("%d buffers, want %d", len(parts), len(wantSizes))
	}
	var total int64
	for i, p := range parts {
		if p.Size() != wantSizes[i] {
			t.Errorf("buffer %d holds %d bytes, want %d", i, p.Size(), wantSizes[i])
		}
		total += p.Size()
	}
	if mb.Size() != total || mb.Type() != core.BufferType(bt) {
		t.Fatalf("multi-buffer size %d (want %d), type %v", mb.Size(), total, mb.Type())
	}
	for i, x := range ts {
		if x.Buffer == nil || !mb.Contains(x.Buffer) || x.Offset%64 != 0 {
			t.Fatalf("tensor %d: buffer %v offset %d", i, x.Buffer, x.Offset)
		}
	}
	if view.Buffer != ts[3].Buffer || view.Offset != ts[3].Offset+8 {
		t.Fatal("view not initialised from its source")
	}
	if extView.Buffer != ext.Buffer || extView.Offset != ext.Offset+4 {
		t.Fatal("view of a pre-allocated tensor not initialised")
	}

	// it behaves as one buffer
	mb.SetUsage(core.BufferUsageWeights)
	for _, p := range parts {
		if p.Usage() != core.BufferUsageWeights {
			t.Fatal("usage not propagated")
		}
	}
	vals := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	if err := core.SetFloat32s(ts[4], vals); err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 40)
	if err := mb.GetTensor(ts[4], data, 0); err != nil {
		t.Fatal(err)
	}
	if err := mb.Clear(0); err != nil {
		t.Fatal(err)
	}
	got, _ := core.GetFloat32s(ts[4])
	for _, v := range got {
		if v != 0 {
			t.Fatal("Clear missed a part")
		}
	}
	if err := mb.SetTensor(ext, data, 0); err == nil {
		t.Fatal("a tensor from elsewhere went through the multi-buffer")
	}
	if err := mb.Free(); err != nil {
		t.Fatal(err)
	}
	if mb.Size() != 0 {
		t.Fatal("size after Free")
	}

	// everything allocated already: no buffer, and an error that says so (never nil, nil)
	b2, err := AllocCtxTensorsFromBufferType(ctx, bt)
	if b2 != nil || !errors.Is(err, ErrNothingToAllocate) || !strings.Contains(err.Error(), "needs memory") {
		t.Fatalf("second call: %v, %v", b2, err)
	}
	// a context that allocates its own memory is refused
	if _, err := AllocCtxTensorsFromBufferType(core.NewContext(core.ContextParams{MemSize: 1024}), bt); err == nil {
		t.Fatal("allocating context accepted")
	}
}

// One run gives a plain buffer; no maximum size means one run.
func TestAllocCtxTensorsSingle(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 3, 5)
	b := ctx.NewTensor2D(core.TypeF16, 7, 2)
	buf, err := AllocCtxTensorsFromBufferType(ctx, core.HostBufferType())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := buf.(*MultiBuffer); ok || a.Buffer != buf || b.Buffer != buf || b.Offset != 64 || buf.Size() != 64+32 {
		t.Fatalf("buffer %T size %d, offsets %d %d", buf, buf.Size(), a.Offset, b.Offset)
	}
}
