//go:build cgo && !novulkan

package vulkan

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// rowsGraph builds GET_ROWS (a [4,3] gathered by idx) or SET_ROWS (src [4,n] into dst [4,3] by
// idx) with the given index values, allocates it in bt and fills it. It returns the graph and its
// output.
func rowsGraph(t *testing.T, bt core.BufferType, set bool, it core.Type, ne []int64, idxv []int64) (*core.Graph, *core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	idx := ctx.NewTensor(it, ne...).SetName("idx")
	var out, a *core.Tensor
	if set {
		a = ctx.NewTensor(core.TypeF32, 4, 3, ne[1]).SetName("dst")
		src := ctx.NewTensor(core.TypeF32, 4, ne[0], ne[1]).SetName("src")
		out = ctx.SetRows(a, src, idx)
		allocCtx(t, ctx, bt)
		fillSeq(t, src)
		if err := core.SetFloat32s(a, make([]float32, a.NElements())); err != nil {
			t.Fatal(err)
		}
	} else {
		a = ctx.NewTensor(core.TypeF32, 4, 3, ne[1]).SetName("a")
		out = ctx.GetRows(a, idx)
		allocCtx(t, ctx, bt)
		fillSeq(t, a)
	}
	raw := make([]byte, idx.NBytes())
	for i, v := range idxv {
		if it == core.TypeI64 {
			binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
		} else {
			binary.LittleEndian.PutUint32(raw[4*i:], uint32(int32(v)))
		}
	}
	if err := core.TensorSet(idx, raw, 0); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	return g, out
}

func fillSeq(t *testing.T, x *core.Tensor) {
	t.Helper()
	v := make([]float32, x.NElements())
	for i := range v {
		v[i] = float32(i + 1)
	}
	if err := core.SetFloat32s(x, v); err != nil {
		t.Fatal(err)
	}
}

// opPart is the part of a compute error from the op's name on (the prefix names the backend).
func opPart(err error, op string) string {
	if err == nil {
		return ""
	}
	s := err.Error()
	if i := strings.Index(s, op+": "); i >= 0 {
		return s[i:]
	}
	return s
}

// TestRowsBadIndices: an index out of range (past the end, negative, an i64 beyond 32 bits) in
// GET_ROWS or SET_ROWS is an error on Vulkan with the CPU backend's exact words (the first bad
// index in row-major order, its position, the limit), and no access leaves the tensors; a run
// with good indices afterwards is not affected by the previous run's status.
func TestRowsBadIndices(t *testing.T) {
	be := newBackend(t)
	ref, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	cases := []struct {
		name string
		set  bool
		typ  core.Type
		ne   []int64
		idx  []int64
		want string // in the error, besides the CPU's text
	}{
		{"GET_ROWS past the end", false, core.TypeI32, []int64{5, 1}, []int64{2, 0, 3, 1, 0}, "index 3 at [2,0,0]"},
		{"GET_ROWS negative", false, core.TypeI32, []int64{3, 1}, []int64{0, -1, 7}, "index -1 at [1,0,0]"},
		{"GET_ROWS huge", false, core.TypeI32, []int64{2, 1}, []int64{0, 1 << 30}, "index 1073741824 at [1,0,0]"},
		{"GET_ROWS batch 2", false, core.TypeI32, []int64{2, 2}, []int64{0, 1, 2, 9}, "index 9 at [1,1,0]"},
		{"SET_ROWS past the end", true, core.TypeI32, []int64{3, 1}, []int64{0, 3, 1}, "index 3 at [1,0,0]"},
		{"SET_ROWS negative", true, core.TypeI32, []int64{2, 1}, []int64{-2, 1}, "index -2 at [0,0,0]"},
		{"SET_ROWS batch 2", true, core.TypeI32, []int64{2, 2}, []int64{0, 1, 2, 3}, "index 3 at [1,1,0]"},
		{"SET_ROWS i64 negative", true, core.TypeI64, []int64{3, 1}, []int64{1, -1, 1 << 32}, "index -1 at [1,0,0]"},
		{"SET_ROWS i64 2^32", true, core.TypeI64, []int64{3, 1}, []int64{1, 1 << 32, 2}, "index 4294967296 at [1,0,0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			op := "GET_ROWS"
			if c.set {
				op = "SET_ROWS"
			}
			gv, out := rowsGraph(t, be.DefaultBufferType(), c.set, c.typ, c.ne, c.idx)
			vkErr := be.GraphCompute(gv)
			gc, _ := rowsGraph(t, core.HostBufferType(), c.set, c.typ, c.ne, c.idx)
			cpuErr := ref.GraphCompute(gc)
			if vkErr == nil || cpuErr == nil {
				t.Fatalf("errors: vulkan %v, cpu %v; want both", vkErr, cpuErr)
			}
			if got, want := opPart(vkErr, op), opPart(cpuErr, op); got != want || !strings.Contains(got, c.want) {
				t.Fatalf("vulkan error %q\ncpu error    %q\nwant both to say %q", vkErr, cpuErr, c.want)
			}
			if !strings.Contains(vkErr.Error(), "node 0 ") || !strings.Contains(vkErr.Error(), "has 3 rows") {
				t.Errorf("error %q does not name the node and the limit", vkErr)
			}
			if c.set {
				return
			}
			// The rows with good indices were gathered; the others hold NaN (never other memory).
			got, err := core.GetFloat32s(out)
			if err != nil {
				t.Fatal(err)
			}
			for r := range int64(len(c.idx)) {
				v, batch := c.idx[r], r/c.ne[0]
				for i := range int64(4) {
					x := got[4*r+i]
					if v < 0 || v >= 3 {
						if !math.IsNaN(float64(x)) {
							t.Fatalf("row %d (bad index %d) = %v, want NaN", r, v, got[4*r:4*r+4])
						}
					} else if want := float32(batch*12 + v*4 + i + 1); x != want {
						t.Fatalf("row %d = %v, want row %d of batch %d", r, got[4*r:4*r+4], v, batch)
					}
				}
			}
		})
	}
	// The status words are cleared between runs: good indices after bad ones compute cleanly.
	for _, set := range []bool{false, true} {
		g, _ := rowsGraph(t, be.DefaultBufferType(), set, core.TypeI32, []int64{3, 1}, []int64{2, 1, 0})
		if err := be.GraphCompute(g); err != nil {
			t.Fatalf("good indices (set %v): %v", set, err)
		}
	}
}

// TestRowsBadIndexFirstNode: with several GET_ROWS/SET_ROWS nodes, the error names the first one
// that met a bad index, in graph order, as the CPU (which stops there) does.
func TestRowsBadIndexFirstNode(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 4, 3)
	good := ctx.NewTensor1D(core.TypeI32, 2).SetName("good")
	bad1 := ctx.NewTensor1D(core.TypeI32, 2).SetName("bad1")
	bad2 := ctx.NewTensor1D(core.TypeI32, 2).SetName("bad2")
	r0 := ctx.GetRows(a, good)
	r1 := ctx.GetRows(r0, bad1) // r0 has 2 rows
	r2 := ctx.GetRows(a, bad2)
	out := ctx.Add(r1, r2)
	allocCtx(t, ctx, be.DefaultBufferType())
	fillSeq(t, a)
	for _, s := range []struct {
		t *core.Tensor
		v []int32
	}{{good, []int32{0, 2}}, {bad1, []int32{1, 2}}, {bad2, []int32{5, 0}}} {
		if err := core.SetInt32s(s.t, s.v); err != nil {
			t.Fatal(err)
		}
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	err := be.GraphCompute(g)
	if err == nil || !strings.Contains(err.Error(), "node 1 ") ||
		!strings.Contains(err.Error(), "GET_ROWS: index 2 at [1,0,0] of") || !strings.Contains(err.Error(), "has 2 rows") {
		t.Fatalf("error %v: want node 1's index 2 at [1,0,0] against 2 rows", err)
	}
}

// TestRowsBadIndexOverwritten: when a later node of the graph overwrites the bad index with one in
// range, the error still names the node and the position, and says the value was overwritten
// instead of reporting a value that was never used.
func TestRowsBadIndexOverwritten(t *testing.T) {
	be := newBackend(t)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 4, 3).SetName("a")
	idx := ctx.NewTensor1D(core.TypeI32, 2).SetName("idx")
	fresh := ctx.NewTensor1D(core.TypeF32, 2).SetName("fresh")
	rows := ctx.GetRows(a, idx)
	over := ctx.Cpy(fresh, idx) // runs after GET_ROWS: writes indices 0 and 1
	allocCtx(t, ctx, be.DefaultBufferType())
	fillSeq(t, a)
	if err := core.SetInt32s(idx, []int32{1, 5}); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(fresh, []float32{0, 1}); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(8)
	g.BuildForwardExpand(rows)
	g.BuildForwardExpand(over)
	err := be.GraphCompute(g)
	if err == nil || !strings.Contains(err.Error(), "GET_ROWS: index at [1,0,0] of idx") ||
		!strings.Contains(err.Error(), "a later node overwrote the index") {
		t.Fatalf("error %v: want the overwritten index at [1,0,0] reported", err)
	}
}
