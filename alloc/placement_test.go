package alloc

import (
	"errors"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// aliasGraph builds b = a+a, c = x*x where x is an alias of b (outside the graph), d = c+a: the
// graph reads b only through its alias.
func aliasGraph() (g *core.Graph, a, b, x, c, d *core.Tensor) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a = ctx.NewTensor1D(core.TypeF32, 4).SetInput()
	b = ctx.Add(a, a)
	x = ctx.NewTensor1D(core.TypeF32, 4) // stands for b wherever the graph reads it
	c = ctx.Mul(x, x)
	d = ctx.Add(c, a)
	d.SetOutput()
	g = core.NewGraphFromLists([]*core.Tensor{b, c, d}, []*core.Tensor{a})
	return g, a, b, x, c, d
}

// TestAliasSharesMemory: an alias gets exactly its tensor's place, reading it keeps that memory
// alive (the graph computes as if the node read b), and the report lists it.
func TestAliasSharesMemory(t *testing.T) {
	g, a, b, x, c, d := aliasGraph()
	ga := NewGraphAllocator(&hostBT{align: 16})
	ga.SetAliases([]Alias{{Tensor: x, Of: b}})
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if x.Buffer == nil || x.Buffer != b.Buffer || x.Offset != b.Offset {
		t.Fatalf("alias at %v+%d, its tensor at %v+%d", x.Buffer, x.Offset, b.Buffer, b.Offset)
	}
	placed := map[*core.Tensor]Placement{}
	for _, pl := range ga.AppendPlaced(nil) {
		if pl.Tensor.Buffer != pl.Buffer || pl.Tensor.Offset != pl.Offset {
			t.Errorf("report says %v is at %d, it is at %d", pl.Tensor, pl.Offset, pl.Tensor.Offset)
		}
		placed[pl.Tensor] = pl
	}
	for _, want := range []*core.Tensor{a, b, x, c, d} {
		pl, ok := placed[want]
		if !ok {
			t.Fatalf("%v missing from the report", want)
		}
		if pl.BufferID != 0 {
			t.Errorf("%v in buffer id %d, want 0", want, pl.BufferID)
		}
		if pl.Alias != (want == x) {
			t.Errorf("%v: Alias = %v", want, pl.Alias)
		}
	}
	if len(placed) != 5 {
		t.Errorf("report has %d tensors, want 5", len(placed))
	}
	// 4 tensors of 16 bytes are placed (the alias takes none): at most 64 bytes.
	if got := ga.BufferSize(0); got > 4*16 {
		t.Errorf("buffer of %d bytes, want at most 64", got)
	}
	if err := core.SetFloat32s(a, []float32{1, 2, 3, -4}); err != nil {
		t.Fatal(err)
	}
	if err := cpu.Compute(core.NewGraphFromLists([]*core.Tensor{b, c, d}, []*core.Tensor{a}), 1); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(d)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []float32{1*1*4 + 1, 2*2*4 + 2, 3*3*4 + 3, 4*4*4 - 4} { // (2a)²+a
		if got[i] != want {
			t.Errorf("d[%d] = %v, want %v", i, got[i], want)
		}
	}
}

// TestPlaceAgain: a reserved plan is placed without a new analysis; without a plan it is an error.
func TestPlaceAgain(t *testing.T) {
	g, a, b, x, _, d := aliasGraph()
	ga := NewGraphAllocator(core.HostBufferType())
	if err := ga.PlaceAgain(); !errors.Is(err, errNoPlan) {
		t.Fatalf("PlaceAgain before a plan: %v, want errNoPlan", err)
	}
	ga.SetAliases([]Alias{{Tensor: x, Of: b}})
	if err := ga.Reserve(g); err != nil {
		t.Fatal(err)
	}
	if a.Buffer != nil || d.Buffer != nil {
		t.Fatal("Reserve placed tensors")
	}
	replans := ga.Replans()
	if err := ga.PlaceAgain(); err != nil {
		t.Fatal(err)
	}
	if ga.Replans() != replans || ga.Replanned() {
		t.Errorf("PlaceAgain re-planned")
	}
	if d.Buffer == nil || x.Buffer != b.Buffer || x.Offset != b.Offset {
		t.Fatalf("PlaceAgain left d at %v, alias at %v+%d, b at %v+%d", d.Buffer, x.Buffer, x.Offset, b.Buffer, b.Offset)
	}
	if n := len(ga.AppendPlaced(nil)); n != 5 {
		t.Errorf("PlaceAgain reported %d tensors, want 5", n)
	}
	if err := ga.Free(); err != nil {
		t.Fatal(err)
	}
	if ga.AppendPlaced(nil) != nil {
		t.Error("report kept after Free")
	}
	if err := ga.PlaceAgain(); !errors.Is(err, errNoPlan) {
		t.Fatalf("PlaceAgain after Free: %v, want errNoPlan", err)
	}
}

// TestAliasOwnMemoryKept: an alias that already has memory of someone else's keeps it, and a
// tensor given memory by the user is not in the report.
func TestAliasOwnMemoryKept(t *testing.T) {
	g, a, b, x, _, _ := aliasGraph()
	own, err := core.NewHostBuffer(core.HostBufferType(), 16)
	if err != nil {
		t.Fatal(err)
	}
	if err := core.TensorAlloc(own, x, 0); err != nil {
		t.Fatal(err)
	}
	ga := NewGraphAllocator(core.HostBufferType())
	ga.SetAliases([]Alias{{Tensor: x, Of: b}})
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	if x.Buffer != own {
		t.Fatalf("alias moved out of its own buffer")
	}
	for _, pl := range ga.AppendPlaced(nil) {
		if pl.Tensor == x {
			t.Fatal("alias with its own memory reported as placed")
		}
	}
	if a.Buffer == nil || b.Buffer == nil {
		t.Fatal("graph tensors not placed")
	}
}

// TestOwnedBuffersAcrossGrowth: tensors placed before their buffer was grown away are still
// recognised as this allocator's and placed again in the new buffer.
func TestOwnedBuffersAcrossGrowth(t *testing.T) {
	build := func(n int64) (*core.Graph, *core.Tensor) {
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		a := ctx.NewTensor1D(core.TypeF32, n).SetInput()
		out := ctx.Sqr(ctx.Add(a, a))
		g := core.NewGraph(16)
		g.BuildForwardExpand(out)
		return g, out
	}
	small, sOut := build(4)
	big, _ := build(1024)
	ga := NewGraphAllocator(core.HostBufferType())
	if err := ga.AllocGraph(small); err != nil {
		t.Fatal(err)
	}
	old := sOut.Buffer
	if err := ga.AllocGraph(big); err != nil { // grows: the small graph's buffer is freed
		t.Fatal(err)
	}
	if got := len(ga.owned); got != 2 {
		t.Errorf("%d owned buffers after one growth, want 2 (current and replaced)", got)
	}
	if err := ga.AllocGraph(small); err != nil {
		t.Fatal(err)
	}
	if sOut.Buffer == old || sOut.Buffer != ga.Buffers(0)[0] {
		t.Fatalf("small graph's output left in the replaced buffer")
	}
	if got := len(ga.owned); got != 2 {
		t.Errorf("%d owned buffers, want still 2", got)
	}
}
