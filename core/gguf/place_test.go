package gguf

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// hugeType reports a size for every tensor that overflows once aligned.
type hugeType struct{ sinkType }

func (*hugeType) AllocSize(*core.Tensor) int64 { return math.MaxInt64 - 3 }

// Issue 21: Load places what it does not map through alloc, so it has alloc's overflow checks: a
// buffer type whose sizes overflow is an error naming the tensor (Load's own packing wrapped the
// sum and asked the buffer type for a negative size).
func TestLoadOverflowIsAnError(t *testing.T) {
	f, err := Open(modelFile(t, 1, 64, 8))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	huge := &hugeType{sinkType{name: "Huge", align: 32}}
	_, err = f.Load(&LoadOptions{Placement: func(string, TensorInfo) core.BufferType { return huge }})
	if !errors.Is(err, core.ErrOverflow) || !strings.Contains(err.Error(), "token_embd.weight") {
		t.Fatalf("got %v, want core.ErrOverflow naming token_embd.weight", err)
	}
}

// Load and alloc follow one rule for extra buffer types: the tensors Load puts in CPU_REPACK are
// exactly those alloc.WeightBufferTypes (and so AllocCtxTensors on a context of the same weights)
// sends there, and NoExtraBufferTypes keeps them all in host memory.
func TestLoadExtraBufferTypesAreAllocs(t *testing.T) {
	f, err := Open(modelFile(t, 2, 64, 16))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := f.Load(&LoadOptions{NoMmap: true})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()

	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	for _, ti := range f.Tensors {
		wctx.NewTensor(ti.Type, ti.Ne[:]...).SetName(ti.Name)
	}
	want := alloc.WeightBufferTypes(wctx.Tensors(), core.HostBufferType())
	buf, err := alloc.AllocCtxTensors(wctx, mustCPU(t))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	nRepacked := 0
	for i, x := range m.Ctx.Tensors() {
		w := wctx.Tensors()[i]
		got := x.Buffer.Type()
		if w.Buffer.Type() != got {
			t.Fatalf("%s: Load put it in %s, AllocCtxTensors in %s", x.Name, got.Name(), w.Buffer.Type().Name())
		}
		if xbt := want[w]; (xbt != nil) != (got == cpu.RepackBufferType()) {
			t.Fatalf("%s: in %s, WeightBufferTypes says %v", x.Name, got.Name(), xbt)
		}
		if got == cpu.RepackBufferType() {
			nRepacked++
			if x.Type != core.TypeQ8_0 {
				t.Fatalf("%s of type %v repacked", x.Name, x.Type)
			}
		}
	}
	if nRepacked != 2 { // blk.0.attn_q.weight, blk.1.attn_q.weight
		t.Fatalf("%d tensors repacked, want 2", nRepacked)
	}

	plain, err := f.Load(&LoadOptions{NoMmap: true, NoExtraBufferTypes: true})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	for _, x := range plain.Ctx.Tensors() {
		if x.Buffer.Type() != core.HostBufferType() {
			t.Fatalf("NoExtraBufferTypes: %s in %s", x.Name, x.Buffer.Type().Name())
		}
	}
}

func mustCPU(t *testing.T) core.Backend {
	t.Helper()
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}
