//go:build cgo && !novulkan

package vulkan

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// badCase is one hostile call: it must return an error whose text contains want, never panic.
type badCase struct {
	class string // the reliability class of issue 10 it belongs to
	name  string
	call  func() error
	want  string
}

// TestBadInput calls the backend, its buffers and its device with nil, out-of-range, overflowing,
// freed and closed inputs and checks each is refused with an error that names the problem. The
// count of cases per class is logged (and asserted, so cases are not lost silently).
func TestBadInput(t *testing.T) {
	be := newBackend(t)
	bt := be.DefaultBufferType()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 16).SetName("a")
	b := ctx.NewTensor1D(core.TypeF32, 16).SetName("b")
	sum := ctx.Add(a, b)
	buf := allocCtx(t, ctx, bt)
	other := allocCtx(t, core.NewContext(core.ContextParams{NoAlloc: true}), bt) // an empty buffer
	hostCtx := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	h := hostCtx.NewTensor1D(core.TypeF32, 16).SetName("h")

	freed, err := bt.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	ft := &core.Tensor{Type: core.TypeF32, Ne: [4]int64{4, 1, 1, 1}, Nb: [4]int64{4, 16, 16, 16}, Name: "f"}
	ft.Buffer = freed
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	if err := freed.Free(); err != nil { // twice: a no-op
		t.Fatalf("second Free: %v", err)
	}

	closed, err := New(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	graph := func(out *core.Tensor) *core.Graph {
		g := core.NewGraph(16)
		g.BuildForwardExpand(out)
		return g
	}
	// A node placed past the end of its buffer, and one with an offset that overflows.
	past := &core.Tensor{Type: core.TypeF32, Op: core.OpAdd, Ne: [4]int64{16, 1, 1, 1}, Nb: [4]int64{4, 64, 64, 64},
		Src: [core.MaxSrc]*core.Tensor{a, b}, Name: "past"}
	past.Buffer, past.Offset = buf, buf.Size()-8
	wrap := &core.Tensor{Type: core.TypeF32, Op: core.OpAdd, Ne: [4]int64{16, 1, 1, 1}, Nb: [4]int64{4, 64, 64, 64},
		Src: [core.MaxSrc]*core.Tensor{a, b}, Name: "wrap"}
	wrap.Buffer, wrap.Offset = buf, math.MaxInt64-8
	// A hand-built ADD without its second source.
	lone := &core.Tensor{Type: core.TypeF32, Op: core.OpAdd, Ne: [4]int64{16, 1, 1, 1}, Nb: [4]int64{4, 64, 64, 64},
		Src: [core.MaxSrc]*core.Tensor{a}, Name: "lone"}
	lone.Buffer, lone.Offset = buf, 0

	// A hand-built node with a negative stride.
	neg := &core.Tensor{Type: core.TypeF32, Op: core.OpScale, Ne: [4]int64{4, 2, 1, 1}, Nb: [4]int64{4, -16, 32, 32},
		Src: [core.MaxSrc]*core.Tensor{a}, Name: "neg"}
	neg.Buffer, neg.Offset = buf, 32
	cases := []badCase{
		// Class 3: nil and closed.
		{"nil", "GraphCompute(nil)", func() error { return be.GraphCompute(nil) }, "nil graph"},
		{"nil", "nil *Backend GraphCompute", func() error { return (*Backend)(nil).GraphCompute(graph(sum)) }, "nil *Backend"},
		{"nil", "nil *Backend Close", func() error { return (*Backend)(nil).Close() }, "nil *Backend"},
		{"nil", "nil *Backend Synchronize", func() error { return (*Backend)(nil).Synchronize() }, "nil *Backend"},
		{"nil", "SetTensor(nil)", func() error { return buf.SetTensor(nil, make([]byte, 4), 0) }, "nil tensor"},
		{"nil", "GetTensor(nil)", func() error { return buf.GetTensor(nil, make([]byte, 4), 0) }, "nil tensor"},
		{"nil", "MemsetTensor(nil)", func() error { return buf.MemsetTensor(nil, 0, 0, 4) }, "nil tensor"},
		{"nil", "CopyTensor(nil, dst)", func() error {
			_, err := buf.(core.TensorCopier).CopyTensor(nil, a)
			return err
		}, "nil tensor"},
		{"nil", "CopyTensor(src, nil)", func() error {
			_, err := buf.(core.TensorCopier).CopyTensor(a, nil)
			return err
		}, "nil tensor"},
		{"nil", "node with no buffer", func() error {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			return be.GraphCompute(graph(c.Add(c.NewTensor1D(core.TypeF32, 4), c.NewTensor1D(core.TypeF32, 4))))
		}, "not in Vulkan memory (buffer none)"},
		{"nil", "hand-built node missing a source", func() error { return be.GraphCompute(graph(lone)) }, "not supported"},
		{"closed", "GraphCompute on a closed backend", func() error { return closed.GraphCompute(graph(sum)) }, "backend is closed"},
		{"closed", "Synchronize on a closed backend", func() error { return closed.Synchronize() }, "backend is closed"},
		{"closed", "SetTensor on a freed buffer", func() error { return freed.SetTensor(ft, make([]byte, 4), 0) }, "destroyed buffer"},
		{"closed", "GetTensor on a freed buffer", func() error { return freed.GetTensor(ft, make([]byte, 4), 0) }, "destroyed buffer"},
		{"closed", "MemsetTensor on a freed buffer", func() error { return freed.MemsetTensor(ft, 1, 0, 4) }, "destroyed buffer"},
		{"closed", "Clear on a freed buffer", func() error { return freed.Clear(0) }, "destroyed buffer"},
		// Class 1: ranges and overflowing offsets.
		{"range", "SetTensor past the end", func() error { return core.TensorSet(a, make([]byte, 8), 60) }, "out of range"},
		{"range", "buffer SetTensor past the end", func() error { return buf.SetTensor(a, make([]byte, 8), buf.Size()-4) }, "lie outside"},
		{"range", "SetTensor offset MaxInt64-1", func() error { return buf.SetTensor(a, make([]byte, 4), math.MaxInt64-1) }, "lie outside"},
		{"range", "GetTensor offset MaxInt64", func() error { return buf.GetTensor(a, make([]byte, 4), math.MaxInt64) }, "lie outside"},
		{"range", "MemsetTensor size MaxInt64", func() error { return buf.MemsetTensor(a, 0, 4, math.MaxInt64) }, "lie outside"},
		{"range", "MemsetTensor negative offset", func() error { return buf.MemsetTensor(a, 0, -4, 4) }, "lie outside"},
		{"range", "tensor of another buffer", func() error { return other.SetTensor(a, make([]byte, 4), 0) }, "not in this"},
		{"range", "Alloc(-1)", func() error { _, err := bt.Alloc(-1); return err }, "negative size"},
		{"range", "Alloc(MaxInt64)", func() error { _, err := bt.Alloc(math.MaxInt64); return err }, "exceeds the maximum"},
		{"range", "node past the end of its buffer", func() error { return be.GraphCompute(graph(past)) }, "lie outside"},
		{"range", "node offset near MaxInt64", func() error { return be.GraphCompute(graph(wrap)) }, "lie outside"},
		{"range", "New(-1)", func() error { _, err := New(-1); return err }, "no Vulkan device -1"},
		{"range", "New(count)", func() error { _, err := New(DeviceCount()); return err }, "no Vulkan device"},
		// Placement: tensors the backend cannot reach.
		{"placement", "host tensors", func() error { return be.GraphCompute(graph(ctx2Add(h))) }, "not in Vulkan memory"},
		{"range", "node with a negative stride", func() error { return be.GraphCompute(graph(neg)) }, "not supported"},
		{"placement", "unsupported op", func() error {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			x := c.NewTensor1D(core.TypeF32, 8)
			y := c.Sqr(x)
			y.Op = core.OpCount
			allocCtx(t, c, bt)
			return be.GraphCompute(graph(y))
		}, "not supported"},
		{"placement", "graph with a construction error", func() error {
			c := core.NewContext(core.ContextParams{NoAlloc: true})
			return be.GraphCompute(graph(c.Add(c.NewTensor1D(core.TypeF32, 4), c.NewTensor1D(core.TypeF32, 5))))
		}, "ADD"},
	}
	counts := map[string]int{}
	for _, c := range cases {
		t.Run(c.class+"/"+c.name, func(t *testing.T) {
			var err error
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("panic: %v", r)
					}
				}()
				err = c.call()
			}()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
		counts[c.class]++
	}
	t.Logf("bad-input cases per class: %v", counts)
	if counts["nil"] < 11 || counts["closed"] < 6 || counts["range"] < 14 || counts["placement"] < 3 {
		t.Errorf("cases per class %v: some were lost", counts)
	}

	// What must not panic and answers false or zero.
	d := be.Device()
	if d.SupportsOp(nil) || d.SupportsOp(lone) || d.SupportsBufferType(nil) {
		t.Error("SupportsOp(nil), SupportsOp(node missing a source) or SupportsBufferType(nil) is true")
	}
	if bt.AllocSize(nil) != 0 {
		t.Error("AllocSize(nil) != 0")
	}
	// A tensor in freed pinned host memory has no bytes (never a slice of unmapped memory), and
	// writing it is an error.
	hbt := be.Device().(core.HostBufferTyper).HostBufferType()
	hbuf, err := hbt.Alloc(256)
	if err != nil {
		t.Fatal(err)
	}
	ht := &core.Tensor{Type: core.TypeF32, Ne: [4]int64{4, 1, 1, 1}, Nb: [4]int64{4, 16, 16, 16}, Name: "pinned"}
	ht.Buffer = hbuf
	if ht.Data() == nil {
		t.Fatal("a pinned host tensor has no bytes")
	}
	if err := hbuf.Free(); err != nil {
		t.Fatal(err)
	}
	if ht.Data() != nil || ht.Float32s() != nil {
		t.Error("a tensor in a freed pinned host buffer still has bytes")
	}
	if err := core.SetFloat32s(ht, make([]float32, 4)); err == nil || !strings.Contains(err.Error(), "destroyed") {
		t.Errorf("SetFloat32s into a freed pinned buffer: %v", err)
	}
}

func ctx2Add(h *core.Tensor) *core.Tensor {
	c := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	return c.Add(h, h)
}

// TestUseAfterShutdown: a backend and a buffer from before Shutdown return errors (the device is
// gone), and the package opens again afterwards.
func TestUseAfterShutdown(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 16)
	out := ctx.Scale(a, 2)
	bt := be.DefaultBufferType()
	buf, err := bt.Alloc(1024)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range []*core.Tensor{a, out} {
		if err := core.TensorAlloc(buf, x, int64(i)*256); err != nil {
			t.Fatal(err)
		}
	}
	if err := Shutdown(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(8)
	g.BuildForwardExpand(out)
	if err := be.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("GraphCompute after Shutdown: %v", err)
	}
	if err := core.SetFloat32s(a, make([]float32, 16)); err == nil || !strings.Contains(err.Error(), "destroyed") {
		t.Errorf("SetTensor after Shutdown: %v", err)
	}
	if _, err := bt.Alloc(64); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("Alloc on a buffer type from before Shutdown: %v", err)
	}
	if err := buf.Free(); err != nil {
		t.Errorf("Free after Shutdown: %v", err)
	}
	if _, err := be.Device().NewBackend(); err == nil || !strings.Contains(err.Error(), "shut down") {
		t.Errorf("NewBackend on a device from before Shutdown: %v", err)
	}
	be2, err := New(0)
	if err != nil {
		t.Fatalf("New after Shutdown: %v", err)
	}
	if err := be2.Close(); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(func() error { _, err := New(-1); return err }(), ErrUnavailable) {
		t.Error("New(-1) does not wrap ErrUnavailable")
	}
}
