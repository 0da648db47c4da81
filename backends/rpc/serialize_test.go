package rpc

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// offlineDevice is a device of a client with no connection: enough to serialize graphs.
func offlineDevice() (*Device, *Buffer) {
	c := &Client{addr: "127.0.0.1:1"}
	d := &Device{c: c, index: 0, name: "RPC0[test]"}
	d.bt = &BufferType{d: d, align: 32}
	return d, &Buffer{bt: d.bt, handle: 0x9240, base: 0xd240, size: 352}
}

// A worked trace of ggml's serializer (checked against a real client): R = mul_mat(A, B) + C in
// one 352-byte buffer. The payload is 1508 bytes,
// the tensors come sources first (A, B, AB, C, R), AB has flags COMPUTE, R COMPUTE|OUTPUT, the
// use counts are A 1, B 1, AB 1, C 1, R 0, and data addresses are base + offset.
func TestSerializeWorkedExample(t *testing.T) {
	d, buf := offlineDevice()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	A := ctx.NewTensor2D(core.TypeF32, 8, 3).SetName("A")
	B := ctx.NewTensor2D(core.TypeF32, 8, 2).SetName("B")
	C := ctx.NewTensor2D(core.TypeF32, 3, 2).SetName("C")
	AB := ctx.MulMat(A, B).SetName("AB")
	R := ctx.Add(AB, C).SetName("R").SetOutput()
	for tt, off := range map[*core.Tensor]int64{A: 0, B: 0x60, C: 0xa0, AB: 0x120, R: 0x140} {
		tt.Buffer, tt.Offset = buf, off
	}
	g := core.NewGraph(16)
	g.BuildForwardExpand(R)
	p, err := (&Backend{d: d}).serialize(g)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1508 {
		t.Fatalf("payload %d bytes, want 1508", len(p))
	}
	gp, err := decodeGraph(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name        string
		op          uint32
		flags, uses int32
		data        uint64
		ne, nb      [4]uint32
	}{
		{"A", 0, 0, 1, 0xd240, [4]uint32{8, 3, 1, 1}, [4]uint32{4, 32, 96, 96}},
		{"B", 0, 0, 1, 0xd240 + 0x60, [4]uint32{8, 2, 1, 1}, [4]uint32{4, 32, 64, 64}},
		{"AB", 29, 16, 1, 0xd240 + 0x120, [4]uint32{3, 2, 1, 1}, [4]uint32{4, 12, 24, 24}},
		{"C", 0, 0, 1, 0xd240 + 0xa0, [4]uint32{3, 2, 1, 1}, [4]uint32{4, 12, 24, 24}},
		{"R", 2, 18, 0, 0xd240 + 0x140, [4]uint32{3, 2, 1, 1}, [4]uint32{4, 12, 24, 24}},
	}
	ids := map[string]uint64{}
	for i, w := range want {
		got := gp.Tensors[i]
		ids[got.name()] = got.ID
		if got.name() != w.name || got.Op != w.op || got.Flags != w.flags || got.UseCount != w.uses ||
			got.Data != w.data || got.Ne != w.ne || got.Nb != w.nb || got.Buffer != 0x9240 {
			t.Errorf("tensor %d: %s op %d flags %d use %d data %#x ne %v nb %v buffer %#x, want %+v", i, got.name(),
				got.Op, got.Flags, got.UseCount, got.Data, got.Ne, got.Nb, got.Buffer, w)
		}
	}
	if gp.Nodes[0] != ids["AB"] || gp.Nodes[1] != ids["R"] || len(gp.Nodes) != 2 {
		t.Errorf("nodes %v, want [AB R]", gp.Nodes)
	}
	if ab := gp.Tensors[2]; ab.Src[0] != ids["A"] || ab.Src[1] != ids["B"] {
		t.Errorf("AB sources %v", ab.Src[:2])
	}
}

// Views carry view_src, view_offs and data = source + offset; a cast lists itself as src1; an
// in-place source used twice counts twice.
func TestSerializeViewsAndCast(t *testing.T) {
	d, buf := offlineDevice()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 3, 2).SetName("a")
	tr := ctx.Transpose(a).SetName("tr")
	v := ctx.View1D(a, 2, 8).SetName("v")
	cast := ctx.Cast(ctx.Cont(tr), core.TypeF16).SetName("cast")
	sum := ctx.Add(ctx.Cont(v), ctx.Cont(v)).SetName("sum")
	off := int64(0)
	for _, tt := range ctx.Tensors() {
		if tt.ViewSrc == nil {
			tt.Buffer, tt.Offset = buf, off
			off += 32
		}
	}
	for _, tt := range ctx.Tensors() {
		if tt.ViewSrc != nil {
			if err := core.ViewInit(tt); err != nil {
				t.Fatal(err)
			}
		}
	}
	g := core.NewGraph(16)
	g.BuildForwardExpand(cast)
	g.BuildForwardExpand(sum)
	p, err := (&Backend{d: d}).serialize(g)
	if err != nil {
		t.Fatal(err)
	}
	gp, err := decodeGraph(p)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]wireTensor{}
	for _, w := range gp.Tensors {
		by[w.name()] = w
	}
	if w := by["tr"]; w.Op != 39 || w.ViewSrc != by["a"].ID || w.Data != by["a"].Data || w.Nb != [4]uint32{12, 4, 24, 24} || w.Flags != 16 || w.Params != [16]int32{} {
		t.Errorf("transpose: %+v", w)
	}
	if w := by["v"]; w.Op != 37 || w.ViewOffs != 8 || w.Data != by["a"].Data+8 || w.Params[0] != 8 || w.Params[1] != 0 {
		t.Errorf("view: %+v", w)
	}
	if w := by["cast"]; w.Op != 34 || w.Src[1] != w.ID || w.Type != 1 || w.Flags != 16 {
		t.Errorf("cast: %+v", w)
	}
	if w := by["v"]; w.UseCount != 2 {
		t.Errorf("v is used by two CONTs: use_count %d", w.UseCount)
	}
	if w := by["a"]; w.UseCount != 2 {
		t.Errorf("a is the source of the transpose and the view: use_count %d", w.UseCount)
	}
}
