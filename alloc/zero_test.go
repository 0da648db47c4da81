package alloc_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// A zero GraphAllocator panicked in AllocGraph, Free, PlaceAgain and Stats; now its methods say
// to use alloc.NewGraphAllocator (Free does nothing). A zero DynAllocator works as
// NewDynAllocator(1, 0); a zero TensorAllocator says how to make one; a zero MultiBuffer is an
// empty buffer.
func TestZeroValues(t *testing.T) {
	zerotest.Methods[alloc.GraphAllocator](t, "create one with alloc.NewGraphAllocator")
	zerotest.Methods[alloc.TensorAllocator](t, "create one with alloc.NewTensorAllocator")
	zerotest.Methods[alloc.DynAllocator](t, "")
	zerotest.Methods[alloc.MultiBuffer](t, "")

	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(core.TypeF32, 2)
	g := core.NewGraph(0)
	g.BuildForwardExpand(ctx.Add(x, x))
	var ga alloc.GraphAllocator
	if err := ga.AllocGraph(g); err == nil || !strings.Contains(err.Error(), "zero GraphAllocator") {
		t.Fatalf("AllocGraph on a zero GraphAllocator: %v", err)
	}
	if err := ga.Err(); err == nil {
		t.Fatal("Err on a zero GraphAllocator: nil")
	}
	var ta alloc.TensorAllocator
	if err := ta.Alloc(x); err == nil || !strings.Contains(err.Error(), "alloc.NewTensorAllocator") {
		t.Fatalf("Alloc on a zero TensorAllocator: %v", err)
	}

	var d alloc.DynAllocator
	a0, a1 := d.Alloc(10), d.Alloc(6)
	if a0.Chunk != 0 || a0.Offset != 0 || a1.Chunk != 0 || a1.Offset != 10 || d.Size() != 16 || d.Alignment() != 1 {
		t.Fatalf("zero DynAllocator: %+v %+v size %d alignment %d", a0, a1, d.Size(), d.Alignment())
	}
}
