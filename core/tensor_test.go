package core

import (
	"strings"
	"testing"
)

func TestSeed003Layouts(t *testing.T) {
	ctx := NewContext(ContextParams{MemSize: 1 << 20})
	a := ctx.NewTensor2D(TypeF32, 2, 3)
	if a.Ne != [4]int64{2, 3, 1, 1} || a.Nb != [4]int64{4, 8, 24, 24} {
		t.Fatalf("f32 [2,3]: ne %v nb %v", a.Ne, a.Nb)
	}
	q := ctx.NewTensor2D(TypeQ4_0, 32, 6)
	if q.Ne != [4]int64{32, 6, 1, 1} || q.Nb != [4]int64{18, 18, 108, 108} {
		t.Fatalf("q4_0 [32,6]: ne %v nb %v", q.Ne, q.Nb)
	}
	if q.NBytes() != 108 || q.RowBytes() != 18 {
		t.Fatalf("q4_0 [32,6]: nbytes %d row %d", q.NBytes(), q.RowBytes())
	}
	copy(a.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	p := ctx.Permute(a, 1, 0, 2, 3)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	if p.Ne != [4]int64{3, 2, 1, 1} || p.Nb != [4]int64{8, 4, 24, 24} {
		t.Fatalf("permute: ne %v nb %v, want [3 2 1 1] [8 4 24 24]", p.Ne, p.Nb)
	}
	if p.ViewSrc != a || p.Op != OpPermute || p.Src[0] != a {
		t.Fatalf("permute is not a view of its source: view %v op %v", p.ViewSrc, p.Op)
	}
	if !p.IsPermuted() || !p.IsTransposed() || p.IsContiguous() || !a.IsContiguous() {
		t.Fatal("permute layout predicates are wrong")
	}
	// Row 1 of the permuted tensor reads elements 2, 4, 6 (column 1 of a).
	v, err := GetFloat32s(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{1, 3, 5, 2, 4, 6}
	for i := range want {
		if v[i] != want[i] {
			t.Fatalf("permuted values %v, want %v", v, want)
		}
	}
}

func TestTypes(t *testing.T) {
	cases := []struct {
		typ        Type
		id         int32
		name       string
		block, siz int64
	}{
		{TypeF32, 0, "f32", 1, 4}, {TypeF16, 1, "f16", 1, 2}, {TypeQ4_0, 2, "q4_0", 32, 18},
		{TypeQ4_1, 3, "q4_1", 32, 20}, {TypeQ8_0, 8, "q8_0", 32, 34}, {TypeI32, 26, "i32", 1, 4},
		{TypeBF16, 30, "bf16", 1, 2},
	}
	for _, c := range cases {
		if int32(c.typ) != c.id || c.typ.String() != c.name || c.typ.BlockSize() != c.block || c.typ.Size() != c.siz {
			t.Errorf("%v: id %d block %d size %d", c.typ, int32(c.typ), c.typ.BlockSize(), c.typ.Size())
		}
	}
	if TypeQ4_0.RowSize(4096) != 4096/32*18 || TypeF16.RowSize(7) != 14 {
		t.Error("RowSize")
	}
	if Type(99).Valid() || Type(99).String() != "type(99)" {
		t.Error("unknown type")
	}
}

// Seed 000's DFS example: z = add(x, x) has one leaf, one node, and x is used twice.
func TestGraphDFS(t *testing.T) {
	ctx := NewContext(ContextParams{MemSize: 1 << 20})
	x := ctx.NewTensor1D(TypeF32, 4)
	z := ctx.Add(x, x)
	g := NewGraph(DefaultGraphSize)
	g.BuildForwardExpand(z)
	if len(g.Leafs()) != 1 || g.NNodes() != 1 || g.UseCount(x) != 2 || g.Node(0) != z || g.Node(-1) != z {
		t.Fatalf("leafs %d nodes %d uses %d", len(g.Leafs()), g.NNodes(), g.UseCount(x))
	}
	// Post-order, left to right, deduplicated.
	a := ctx.NewTensor1D(TypeF32, 4).SetName("a")
	b := ctx.NewTensor1D(TypeF32, 4).SetName("b")
	s1 := ctx.Add(a, b).SetName("s1")
	s2 := ctx.Mul(a, s1).SetName("s2")
	s3 := ctx.Sub(s2, s1).SetName("s3")
	g = NewGraph(16)
	g.BuildForwardExpand(s3)
	g.BuildForwardExpand(s3)
	var names []string
	for _, n := range g.Nodes() {
		names = append(names, n.Name)
	}
	if strings.Join(names, ",") != "s1,s2,s3" || len(g.Leafs()) != 2 || g.Leafs()[0] != a {
		t.Fatalf("order %v leafs %d", names, len(g.Leafs()))
	}
	if g.Node(-2) != s2 || g.Node(3) != nil || g.Node(-4) != nil {
		t.Fatal("Node indexing")
	}
	if v := g.View(1, 3); v.NNodes() != 2 || v.Node(0) != s2 {
		t.Fatal("graph view")
	}
	if g.UseCount(s1) != 2 || g.UseCount(a) != 2 {
		t.Fatalf("use counts s1 %d a %d", g.UseCount(s1), g.UseCount(a))
	}
}

func TestGraphSizeLimit(t *testing.T) {
	ctx := NewContext(ContextParams{NoAlloc: true})
	x := ctx.NewTensor1D(TypeF32, 4)
	y := x
	for i := 0; i < 5; i++ {
		y = ctx.Add(y, x)
	}
	g := NewGraph(3)
	g.BuildForwardExpand(y)
	if g.Err() == nil || !strings.Contains(g.Err().Error(), "graph is full") {
		t.Fatalf("want graph-full error, got %v", g.Err())
	}
}

func TestContextErrors(t *testing.T) {
	ctx := NewContext(ContextParams{MemSize: 2*TensorOverhead + 64})
	a := ctx.NewTensor1D(TypeF32, 8)
	if ctx.Err() != nil {
		t.Fatal(ctx.Err())
	}
	ctx.NewTensor1D(TypeF32, 1024)
	if err := ctx.Err(); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("want out of memory error, got %v", err)
	}
	_ = a

	ctx = NewContext(ContextParams{MemSize: 1 << 20})
	m := ctx.NewTensor2D(TypeF32, 3, 4).SetName("m")
	n := ctx.NewTensor2D(TypeF32, 5, 4).SetName("n")
	r := ctx.Add(m, n)
	if err := ctx.Err(); err == nil || !strings.Contains(err.Error(), "ADD") || !strings.Contains(err.Error(), "n(") {
		t.Fatalf("want ADD broadcast error naming n, got %v", err)
	}
	g := NewGraph(8)
	g.BuildForwardExpand(r)
	if g.Err() == nil {
		t.Fatal("a graph over a failed context must carry its error")
	}

	for name, f := range map[string]func(c *Context) *Tensor{
		"MUL_MAT inner": func(c *Context) *Tensor {
			return c.MulMat(c.NewTensor2D(TypeF32, 4, 2), c.NewTensor2D(TypeF32, 5, 2))
		},
		"MUL_MAT type": func(c *Context) *Tensor {
			return c.MulMat(c.NewTensor2D(TypeI32, 4, 2), c.NewTensor2D(TypeF32, 4, 2))
		},
		"RESHAPE count":  func(c *Context) *Tensor { return c.Reshape(c.NewTensor2D(TypeF32, 4, 2), 3, 3) },
		"GET_ROWS index": func(c *Context) *Tensor { return c.GetRows(c.NewTensor2D(TypeF32, 4, 2), c.NewTensor1D(TypeF32, 2)) },
		"VIEW bounds":    func(c *Context) *Tensor { return c.View1D(c.NewTensor1D(TypeF32, 4), 4, 4) },
		"quant row":      func(c *Context) *Tensor { return c.NewTensor1D(TypeQ4_0, 33) },
		"PERMUTE axes":   func(c *Context) *Tensor { return c.Permute(c.NewTensor1D(TypeF32, 4), 0, 0, 1, 2) },
		"SOFT_MAX bias":  func(c *Context) *Tensor { return c.SoftMaxExt(c.NewTensor1D(TypeF32, 4), nil, 1, 8) },
		"CPY count":      func(c *Context) *Tensor { return c.Cpy(c.NewTensor1D(TypeF32, 4), c.NewTensor1D(TypeF16, 5)) },
		"nil operand":    func(c *Context) *Tensor { return c.Add(nil, c.NewTensor1D(TypeF32, 4)) },
	} {
		c := NewContext(ContextParams{MemSize: 1 << 20})
		if f(c) == nil || c.Err() == nil {
			t.Errorf("%s: no error recorded", name)
		}
	}
}

func TestTensorSetGetRange(t *testing.T) {
	ctx := NewContext(ContextParams{MemSize: 1 << 20})
	a := ctx.NewTensor1D(TypeF32, 4)
	if err := TensorSet(a, make([]byte, 12), 8); err == nil {
		t.Fatal("TensorSet past the end must fail")
	}
	if err := TensorGet(a, make([]byte, 4), -4); err == nil {
		t.Fatal("TensorGet before the start must fail")
	}
	if err := SetFloat32s(a, []float32{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	b := NewContext(ContextParams{NoAlloc: true}).NewTensor1D(TypeF32, 4)
	if err := TensorSet(b, make([]byte, 4), 0); err == nil || !strings.Contains(err.Error(), "no memory") {
		t.Fatalf("unallocated tensor: %v", err)
	}
	buf, _ := HostBufferType().Alloc(64)
	if err := TensorAlloc(buf, b, 0); err != nil {
		t.Fatal(err)
	}
	if err := TensorCopy(a, b); err != nil {
		t.Fatal(err)
	}
	v, _ := GetFloat32s(b)
	if v[3] != 4 {
		t.Fatalf("copy: %v", v)
	}
	c := NewContext(ContextParams{NoAlloc: true}).NewTensor1D(TypeF32, 32)
	if err := TensorAlloc(buf, c, 0); err == nil {
		t.Fatal("TensorAlloc beyond the buffer must fail")
	}
}

func TestWriteDot(t *testing.T) {
	ctx := NewContext(ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(TypeQ4_0, 64, 8).SetName("w")
	x := ctx.NewTensor2D(TypeF32, 64, 3).SetName("x")
	y := ctx.Silu(ctx.MulMat(a, x)).SetOutput()
	g := NewGraph(8)
	g.BuildForwardExpand(y)
	var sb strings.Builder
	if err := g.WriteDot(&sb); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{"digraph", "shape=ellipse", "shape=record", "MUL_MAT", "SILU", "q4_0 [64,8,1,1]", "-> t", "src1"} {
		if !strings.Contains(out, want) {
			t.Errorf("dot output lacks %q:\n%s", want, out)
		}
	}
}
