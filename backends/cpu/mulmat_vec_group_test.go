package cpu_test

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// groupGraph builds a generated token's sibling products over repacked weights: Q4_0, Q8_0
// (one block with an infinite scale), Q8_0 and Q4_0 products of one activation row, a fifth
// (past a group's four), one of another row between them and the next two, and an MoE layer's
// gate and up expert products with the same expert ids. It returns the graph, its outputs and
// the ids tensor, allocated with the CPU_REPACK buffer type.
func groupGraph(t *testing.T, be *cpu.Backend, k int64, ids []int32) (*core.Graph, []*core.Tensor, *core.Tensor, func()) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, k, 1)
	x2 := ctx.NewTensor2D(core.TypeF32, k, 1)
	types := []core.Type{core.TypeQ4_0, core.TypeQ8_0, core.TypeQ8_0, core.TypeQ4_0, core.TypeQ8_0, core.TypeQ4_0, core.TypeQ4_0, core.TypeQ8_0}
	// over smallProductBytes (at k 1024 but the sixth, of another row, alone either way)
	rows := []int64{256, 128, 128, 160, 96, 64, 192, 96}
	srcs := []*core.Tensor{x, x, x, x, x, x2, x, x}
	var ws, outs []*core.Tensor
	for i, typ := range types {
		w := ctx.NewTensor2D(typ, k, rows[i])
		ws = append(ws, w)
		outs = append(outs, ctx.MulMat(w, srcs[i]))
	}
	gate := ctx.NewTensor3D(core.TypeQ4_0, k, 40, 4)
	up := ctx.NewTensor3D(core.TypeQ4_0, k, 40, 4)
	ws = append(ws, gate, up)
	b := ctx.NewTensor3D(core.TypeF32, k, 1, 1)
	idt := ctx.NewTensor2D(core.TypeI32, 2, 1)
	outs = append(outs, ctx.MulMatID(gate, b, idt), ctx.MulMatID(up, b, idt))
	buf, err := alloc.AllocCtxTensorsWithOptions(ctx, be.DefaultBufferType(), alloc.CtxAllocOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		raw := quantBytes(t, w.Type, w.NElements(), uint64(40+i))
		if i == 1 {
			raw[w.Type.RowSize(k)*3], raw[w.Type.RowSize(k)*3+1] = 0x00, 0x7c // row 3, block 0: scale +Inf
		}
		if err := core.TensorSet(w, raw, 0); err != nil {
			t.Fatal(err)
		}
		if w.Type != core.TypeQ4_K && w.Buffer.Type().Name() != cpu.RepackBufferTypeName {
			t.Fatalf("weight %d in %s", i, w.Buffer.Type().Name())
		}
	}
	for i, v := range []*core.Tensor{x, x2, b} {
		if err := core.SetFloat32s(v, randF32(k, uint64(60+i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := core.SetInt32s(idt, ids); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	for _, o := range outs {
		g.BuildForwardExpand(o)
	}
	return g, outs, idt, func() { buf.Free() }
}

// TestMatVecGroups: a generated token's sibling mat-vecs (one activation row, repacked weights of
// mixed types, a non-finite output; an MoE layer's gate and up experts) run as groups of at most
// four products, and give bit for bit the outputs of the products run one by one (NoFusion), at
// one to three workers; a bad expert id fails the run with the error the product alone gives.
func TestMatVecGroups(t *testing.T) {
	for _, k := range []int64{1024, 2560} {
		for _, threads := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("k%d_threads%d", k, threads), func(t *testing.T) {
				var want [][]float32
				var products map[bool]int
				for _, noFusion := range []bool{true, false} {
					be, err := cpu.New(cpu.Options{Threads: threads, NoFusion: noFusion})
					if err != nil {
						t.Fatal(err)
					}
					g, outs, _, free := groupGraph(t, be, k, []int32{3, 1})
					be.SetOpProfile(true)
					for run := 0; run < 2; run++ { // planned, then the plan reused
						if err := be.GraphCompute(g); err != nil {
							t.Fatal(err)
						}
					}
					n := 0
					for _, o := range be.OpProfile() {
						if strings.HasPrefix(o.Op, "MUL_MAT") {
							n += o.Nodes / 2
						}
					}
					if products == nil {
						products = map[bool]int{}
					}
					products[noFusion] = n
					var got [][]float32
					nonFinite := 0
					for _, o := range outs {
						v := append([]float32(nil), o.Float32s()...)
						for _, f := range v {
							if f-f != 0 {
								nonFinite++
							}
						}
						got = append(got, v)
					}
					free()
					be.Close()
					if nonFinite == 0 {
						t.Fatal("no non-finite output: the infinite scale did not reach the product")
					}
					if want == nil {
						want = got
						continue
					}
					sameBits(t, "grouped", got, want)
				}
				// alone: 10 nodes; grouped: {0..3}, 4 alone (a group holds four), 5 (another
				// row), {6, 7}, {gate, up}
				wantGrouped := 10
				if threads > 1 {
					wantGrouped = 5
				}
				if products[true] != 10 || products[false] != wantGrouped {
					t.Errorf("nodes timed: %d alone, %d grouped; want 10 and %d", products[true], products[false], wantGrouped)
				}
			})
		}
	}
}

var ctxID = regexp.MustCompile(`c[0-9]+#`)

// TestMatVecGroupBadIDs: an expert id out of range in a grouped MUL_MAT_ID fails the run with the
// error (and node) the unfused run reports.
func TestMatVecGroupBadIDs(t *testing.T) {
	var want string
	for _, noFusion := range []bool{true, false} {
		be, err := cpu.New(cpu.Options{Threads: 2, NoFusion: noFusion})
		if err != nil {
			t.Fatal(err)
		}
		g, _, _, free := groupGraph(t, be, 1024, []int32{3, 9})
		err = be.GraphCompute(g)
		free()
		be.Close()
		if err == nil {
			t.Fatalf("NoFusion %v: expert id 9 of 4 accepted", noFusion)
		}
		msg := ctxID.ReplaceAllString(err.Error(), "c#") // the contexts' numbers differ
		if want == "" {
			want = msg
			continue
		}
		if msg != want {
			t.Errorf("grouped: %q, alone: %q", err, want)
		}
	}
}

// TestMatVecGroupChangedMember: a member pointed at another activation after the plan was made
// leaves its group when the plan is next reused (the group's checks fail and the graph is
// planned again), and every product still gives the outputs of the products run one by one.
func TestMatVecGroupChangedMember(t *testing.T) {
	var want [][]float32
	for _, noFusion := range []bool{true, false} {
		be, err := cpu.New(cpu.Options{Threads: 2, NoFusion: noFusion})
		if err != nil {
			t.Fatal(err)
		}
		g, outs, _, free := groupGraph(t, be, 1024, []int32{3, 1})
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		outs[1].Src[1] = outs[5].Src[1] // K of another row than Q and V
		if err := be.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		var got [][]float32
		for _, o := range outs {
			got = append(got, append([]float32(nil), o.Float32s()...))
		}
		free()
		be.Close()
		if want == nil {
			want = got
			continue
		}
		sameBits(t, "after the change", got, want)
	}
}

// sameBits fails t unless every product's outputs in got equal those run alone (want) bit for bit.
func sameBits(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	for i := range want {
		for j := range want[i] {
			if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
				t.Fatalf("product %d output %d: %v %s, %v alone", i, j, got[i][j], what, want[i][j])
			}
		}
	}
}
