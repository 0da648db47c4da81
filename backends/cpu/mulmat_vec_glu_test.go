package cpu_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// gluCase is one feed-forward of gluGraph: the gate and up weights' types, rows and experts (0:
// a dense MUL_MAT), the GLU op and whether its sources are swapped, and an extra sibling product
// before the pair.
type gluCase struct {
	gate, up core.Type
	m        int64
	experts  int64
	op       core.GLUOp
	swapped  bool
	extra    bool
}

// gluCases: dense Q4_0 with an infinite gate scale and another up scale (non-finite outputs), Q8_0 geglu swapped
// behind a third sibling, Q4_K reglu, an MoE layer's experts, and a pair of two weight types
// (no fusion: its tasks differ). Every pair is over smallProductBytes of weights.
var gluCases = []gluCase{
	{gate: core.TypeQ4_0, up: core.TypeQ4_0, m: 200, op: core.GLUSwiglu},
	{gate: core.TypeQ8_0, up: core.TypeQ8_0, m: 300, op: core.GLUGeglu, swapped: true, extra: true},
	{gate: core.TypeQ4_K, up: core.TypeQ4_K, m: 136, op: core.GLUReglu},
	{gate: core.TypeQ4_0, up: core.TypeQ4_0, m: 56, experts: 4, op: core.GLUSwiglu},
	{gate: core.TypeQ4_0, up: core.TypeQ8_0, m: 48, op: core.GLUSwiglu},
}

// gluGraph builds gluCases' feed-forwards of one activation row (up, then gate, then the GLU of
// gate and up, as llm expands them), the weights in CPU_REPACK where their type has a repacked
// layout and the activations in CPU memory, the nodes allocated by the graph allocator. It
// returns the graph, the GLUs, every product, the number of pairs that can fuse, and a release.
func gluGraph(t *testing.T, be *cpu.Backend, k int64) (*core.Graph, []*core.Tensor, []*core.Tensor, int, func()) {
	t.Helper()
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := wctx.NewTensor2D(core.TypeF32, k, 1)
	xb := wctx.NewTensor3D(core.TypeF32, k, 1, 1)
	ids := wctx.NewTensor2D(core.TypeI32, 2, 1)
	type ws struct{ gate, up, extra *core.Tensor }
	var weights []ws
	for _, c := range gluCases {
		ne := []int64{k, c.m}
		if c.experts > 0 {
			ne = append(ne, c.experts)
		}
		w := ws{gate: wctx.NewTensor(c.gate, ne...), up: wctx.NewTensor(c.up, ne...)}
		if c.extra {
			w.extra = wctx.NewTensor2D(core.TypeQ4_0, k, 64)
		}
		weights = append(weights, w)
	}
	wbuf, err := alloc.AllocCtxTensorsWithOptions(wctx, be.DefaultBufferType(), alloc.CtxAllocOptions{})
	if err != nil {
		t.Fatal(err)
	}
	fusable := 0
	seed := uint64(70)
	for i, w := range weights {
		for _, wt := range []*core.Tensor{w.gate, w.up, w.extra} {
			if wt == nil {
				continue
			}
			raw := quantBytes(t, wt.Type, wt.NElements(), seed)
			seed++
			if i == 0 && wt == w.gate {
				raw[wt.Type.RowSize(k)*3], raw[wt.Type.RowSize(k)*3+1] = 0x00, 0x7c // row 3, block 0: scale +Inf
			}
			if i == 0 && wt == w.up {
				raw[wt.Type.RowSize(k)*5], raw[wt.Type.RowSize(k)*5+1] = 0x00, 0xfc // row 5, block 0: scale -Inf
			}
			if err := core.TensorSet(wt, raw, 0); err != nil {
				t.Fatal(err)
			}
		}
		if c := gluCases[i]; c.gate == c.up && w.gate.Buffer.Type().Name() == cpu.RepackBufferTypeName {
			fusable++
		}
	}
	for i, v := range []*core.Tensor{x, xb} {
		if err := core.SetFloat32s(v, randF32(k, uint64(90+i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := core.SetInt32s(ids, []int32{3, 1}); err != nil {
		t.Fatal(err)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	g := core.NewGraph(core.DefaultGraphSize)
	var glus, products []*core.Tensor
	for i, c := range gluCases {
		w := weights[i]
		var gate, up *core.Tensor
		if c.experts > 0 {
			up = ctx.MulMatID(w.up, xb, ids)
			gate = ctx.MulMatID(w.gate, xb, ids)
		} else {
			if w.extra != nil {
				e := ctx.MulMat(w.extra, x)
				g.BuildForwardExpand(e)
				products = append(products, e)
			}
			up = ctx.MulMat(w.up, x)
			gate = ctx.MulMat(w.gate, x)
		}
		a, b := gate, up
		if c.swapped {
			a, b = up, gate
		}
		glu := ctx.GLU(a, b, c.op, c.swapped)
		g.BuildForwardExpand(glu)
		glus = append(glus, glu)
		products = append(products, up, gate)
	}
	// the products stay outputs (a later node reads them), so the allocator keeps them apart
	// from the GLUs; the GLUs themselves reuse freed memory as the allocator decides
	for _, p := range products {
		g.BuildForwardExpand(ctx.Scale(p, 1))
	}
	ga := alloc.NewGraphAllocator(be.DefaultBufferType())
	if err := ga.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	return g, glus, products, fusable, func() { ga.Free(); wbuf.Free() }
}

// TestMatVecGroupGLU: the GLU of a gate and an up product (dense and MoE, swiglu, geglu with its
// sources swapped, reglu; Q4_0, Q8_0, Q4_K; a partial last weight group; non-finite gate
// outputs; a third sibling in the group) computed by the group of the two gives, bit for bit, the
// GLU and the products of the nodes run one by one (NoFusion), at one to three workers, planned
// and reused; a pair of two weight types keeps its GLU node.
func TestMatVecGroupGLU(t *testing.T) {
	for _, k := range []int64{1024, 2560} {
		for _, threads := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("k%d_threads%d", k, threads), func(t *testing.T) {
				var want [][]float32
				var gluNodes [2]int
				fusable := 0
				for fi, noFusion := range []bool{true, false} {
					be, err := cpu.New(cpu.Options{Threads: threads, NoFusion: noFusion})
					if err != nil {
						t.Fatal(err)
					}
					g, glus, products, nf, free := gluGraph(t, be, k)
					fusable = nf
					be.SetOpProfile(true)
					var got [][]float32
					for run := 0; run < 2; run++ { // planned, then the plan reused
						for _, o := range append(glus[:len(glus):len(glus)], products...) {
							core.SetFloat32s(o, make([]float32, o.NElements())) // nothing left from the last run
						}
						if err := be.GraphCompute(g); err != nil {
							t.Fatal(err)
						}
						got = got[:0]
						for _, o := range append(glus[:len(glus):len(glus)], products...) {
							got = append(got, append([]float32(nil), o.Float32s()...))
						}
						if want != nil {
							sameBits(t, fmt.Sprintf("fused (run %d)", run), got, want)
						}
					}
					for _, o := range be.OpProfile() {
						if strings.HasPrefix(o.Op, "GLU") {
							gluNodes[fi] += o.Nodes / 2
						}
					}
					free()
					be.Close()
					if want == nil {
						want = got
						nonFinite := 0
						for _, f := range want[0] {
							if f-f != 0 {
								nonFinite++
							}
						}
						if nonFinite == 0 {
							t.Fatal("no non-finite GLU output: the infinite scale did not reach it")
						}
					}
				}
				wantFused := len(gluCases)
				if threads > 1 {
					wantFused -= fusable
				}
				if fusable < len(gluCases)-2 || gluNodes[0] != len(gluCases) || gluNodes[1] != wantFused {
					t.Errorf("GLU nodes timed: %d alone, %d fused (%d pairs fusable); want %d and %d",
						gluNodes[0], gluNodes[1], fusable, len(gluCases), wantFused)
				}
			})
		}
	}
}

// TestMatVecGroupGLUPlacement: a GLU placed over the activation its products read runs as its
// own node (the group's tasks would overwrite rows another task still has to fix), one placed
// exactly over its gate product runs in the group (each task overwrites only rows it has read),
// and both give the nodes run one by one, bit for bit.
func TestMatVecGroupGLUPlacement(t *testing.T) {
	const k, m = 1024, 200
	for _, over := range []string{"activation", "gate"} {
		t.Run(over, func(t *testing.T) {
			var want []float32
			var gluNodes [2]int
			for fi, noFusion := range []bool{true, false} {
				be, err := cpu.New(cpu.Options{Threads: 2, NoFusion: noFusion})
				if err != nil {
					t.Fatal(err)
				}
				wctx := core.NewContext(core.ContextParams{NoAlloc: true})
				wg, wu := wctx.NewTensor2D(core.TypeQ4_0, k, m), wctx.NewTensor2D(core.TypeQ4_0, k, m)
				wbuf, err := alloc.AllocCtxTensorsWithOptions(wctx, be.DefaultBufferType(), alloc.CtxAllocOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for i, w := range []*core.Tensor{wg, wu} {
					if err := core.TensorSet(w, quantBytes(t, w.Type, w.NElements(), uint64(80+i)), 0); err != nil {
						t.Fatal(err)
					}
				}
				ctx := core.NewContext(core.ContextParams{NoAlloc: true})
				x := ctx.NewTensor2D(core.TypeF32, k, 1)
				up := ctx.MulMat(wu, x)
				gate := ctx.MulMat(wg, x)
				glu := ctx.SwigluSplit(gate, up)
				g := core.NewGraph(core.DefaultGraphSize)
				g.BuildForwardExpand(glu)
				buf, err := be.DefaultBufferType().Alloc(1 << 16)
				if err != nil {
					t.Fatal(err)
				}
				at := map[*core.Tensor]int64{x: 0, up: 8192, gate: 16384, glu: 0}
				if over == "gate" {
					at[glu] = 16384
				}
				for _, tt := range []*core.Tensor{x, up, gate, glu} {
					if err := core.TensorAlloc(buf, tt, at[tt]); err != nil {
						t.Fatal(err)
					}
				}
				be.SetOpProfile(true)
				for run := 0; run < 2; run++ {
					if err := core.SetFloat32s(x, randF32(k, 95)); err != nil {
						t.Fatal(err)
					}
					if err := be.GraphCompute(g); err != nil {
						t.Fatal(err)
					}
					got := append([]float32(nil), glu.Float32s()...)
					if want == nil {
						want = got
					} else {
						sameBits(t, fmt.Sprintf("fused %v (run %d)", !noFusion, run), [][]float32{got}, [][]float32{want})
					}
				}
				for _, o := range be.OpProfile() {
					if strings.HasPrefix(o.Op, "GLU") {
						gluNodes[fi] += o.Nodes / 2
					}
				}
				buf.Free()
				wbuf.Free()
				be.Close()
			}
			wantFused := 0
			if over == "activation" {
				wantFused = 1
			}
			if gluNodes[0] != 1 || gluNodes[1] != wantFused {
				t.Errorf("GLU nodes timed: %d alone, %d fused; want 1 and %d", gluNodes[0], gluNodes[1], wantFused)
			}
		})
	}
}
