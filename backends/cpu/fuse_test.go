package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"

	"testing"

	"github.com/tandem-ml/tandem/core"
)

// fuseGraph builds MUL(RMS_NORM(x), w) for the weight shape wne (x [67, 5, 3]), plus a node that
// reads the norm as well when extraUse (its result must still be written), with seeded data.
func fuseGraph(t *testing.T, wne []int64, extraUse bool) (*core.Graph, []*core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 20})
	x := ctx.NewTensor(core.TypeF32, 67, 5, 3)
	w := ctx.NewTensor(core.TypeF32, wne...)
	for i, v := range []*core.Tensor{x, w} {
		r := rand.New(rand.NewPCG(uint64(i)+5, 1))
		vals := make([]float32, v.NElements())
		for k := range vals {
			vals[k] = float32(r.NormFloat64())
		}
		if err := core.SetFloat32s(v, vals); err != nil {
			t.Fatal(err)
		}
	}
	norm := ctx.RMSNorm(x, 1e-5)
	y := ctx.Mul(norm, w)
	outs := []*core.Tensor{norm, y}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	if extraUse {
		z := ctx.Scale(norm, 3)
		g.BuildForwardExpand(z)
		outs = append(outs, z)
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	return g, outs
}

// RMS_NORM then MUL by a broadcast weight is planned as one fused kernel, and its results (the
// norm's too, which another node may read) equal the unfused kernels' bit for bit at 1 to 3
// threads, for weights broadcast over rows, over one dimension, or not at all.
func TestFusedRMSNormMul(t *testing.T) {
	for _, wne := range [][]int64{{67}, {67, 5}, {67, 1, 3}, {67, 5, 3}} {
		for _, extra := range []bool{false, true} {
			for _, threads := range []int{1, 2, 3} {
				t.Run(fmt.Sprintf("w%v/extra=%v/threads%d", wne, extra, threads), func(t *testing.T) {
					var want [][]float32
					for _, noFusion := range []bool{true, false} {
						g, outs := fuseGraph(t, wne, extra)
						pl, err := makePlan(g, threads, false, noFusion, activeMMKernels())
						if err != nil {
							t.Fatal(err)
						}
						fusedPairs := 0
						for _, f := range pl.fused {
							if f == fuseRMSMul {
								fusedPairs++
							}
						}
						if want := map[bool]int{true: 0, false: 1}[noFusion]; fusedPairs != want {
							t.Fatalf("NoFusion %v: %d fused pairs planned, want %d", noFusion, fusedPairs, want)
						}
						be, err := New(Options{Threads: threads, NoFusion: noFusion})
						if err != nil {
							t.Fatal(err)
						}
						if err := be.GraphCompute(g); err != nil {
							t.Fatal(err)
						}
						be.Close()
						var got [][]float32
						for _, o := range outs {
							v, err := core.GetFloat32s(o)
							if err != nil {
								t.Fatal(err)
							}
							got = append(got, v)
						}
						if want == nil {
							want = got
							continue
						}
						for k := range got {
							for e := range got[k] {
								if math.Float32bits(got[k][e]) != math.Float32bits(want[k][e]) {
									t.Fatalf("output %d element %d: fused %v, unfused %v", k, e, got[k][e], want[k][e])
								}
							}
						}
					}
				})
			}
		}
	}
}

// Pairs that do not qualify stay apart: a MUL whose first operand is not the norm, NORM, a MUL by
// f16 weights, the reference kernels.
func TestFusionRules(t *testing.T) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	f32 := core.TypeF32
	x := ctx.NewTensor(f32, 64, 4)
	w := ctx.NewTensor(f32, 64)
	norm := ctx.RMSNorm(x, 1e-6)
	if !rmsMulFusable(norm, ctx.Mul(norm, w)) {
		t.Fatal("MUL(RMS_NORM(x), w) is not fusable")
	}
	if rmsMulFusable(norm, ctx.Mul(ctx.NewTensor(f32, 64, 4), norm)) {
		t.Error("MUL(y, RMS_NORM(x)) fused: the norm must be the first operand")
	}
	if rmsMulFusable(ctx.Norm(x, 1e-6), ctx.Mul(ctx.Norm(x, 1e-6), w)) {
		t.Error("NORM fused as RMS_NORM")
	}
	h := ctx.RMSNorm(ctx.NewTensor(f32, 64, 4), 1e-6)
	if rmsMulFusable(h, ctx.Mul(h, ctx.Cast(w, core.TypeF16))) {
		t.Error("a MUL by f16 weights fused")
	}
	if fs := planFusions([]*core.Tensor{norm, ctx.Mul(norm, w)}, true, false); fs != nil {
		t.Error("the reference kernels fuse")
	}
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
}
