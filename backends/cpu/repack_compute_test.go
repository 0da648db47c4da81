package cpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// randF32 returns n uniform [-1, 1) values.
func randF32(n int64, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 5))
	v := make([]float32, n)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return v
}

// mulMatRun computes MulMat(w, x) with w of typ [k, m, ne2w] and x f32 [k, n, ne2x], the context
// allocated with or without extra buffer types, and returns the result and w's buffer type.
func mulMatRun(t *testing.T, be *cpu.Backend, typ core.Type, k, m, n, ne2w, ne2x int64, extra bool) ([]float32, string) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := ctx.NewTensor(typ, k, m, ne2w)
	x := ctx.NewTensor(core.TypeF32, k, n, ne2x)
	y := ctx.MulMat(w, x)
	buf, err := alloc.AllocCtxTensorsWithOptions(ctx, be.DefaultBufferType(), alloc.CtxAllocOptions{NoExtraBufferTypes: !extra})
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := core.TensorSet(w, quantBytes(t, typ, w.NElements(), uint64(k*m)), 0); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(x, randF32(x.NElements(), uint64(n))); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	if err := be.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	out, err := core.GetFloat32s(y)
	if err != nil {
		t.Fatal(err)
	}
	return out, w.Buffer.Type().Name()
}

func TestRepackMulMatMatchesPlain(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	ref, err := cpu.New(cpu.Options{Threads: 2, Reference: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, typ := range repackTypes {
		for _, c := range []struct{ k, m, n, ne2w, ne2x int64 }{
			{64, 17, 1, 1, 1}, {96, 33, 3, 1, 1}, {128, 16, 17, 1, 1}, {64, 40, 64, 1, 1}, {64, 19, 5, 2, 4},
		} {
			c.k = repackK(typ, c.k)
			t.Run(fmt.Sprint(typ, c), func(t *testing.T) {
				plain, pbt := mulMatRun(t, be, typ, c.k, c.m, c.n, c.ne2w, c.ne2x, false)
				rp, rbt := mulMatRun(t, be, typ, c.k, c.m, c.n, c.ne2w, c.ne2x, true)
				rref, _ := mulMatRun(t, ref, typ, c.k, c.m, c.n, c.ne2w, c.ne2x, true)
				if pbt != "CPU" || rbt != repackPlaced(typ) {
					t.Fatalf("weights placed in %s and %s, want CPU and %s", pbt, rbt, repackPlaced(typ))
				}
				want := make([]float64, len(plain))
				for i, v := range plain {
					want[i] = float64(v)
				}
				if e := nmse(rp, want); e > 5e-4 {
					t.Errorf("repacked vs plain: NMSE %g", e)
				}
				if e := nmse(rref, want); e > 5e-4 {
					t.Errorf("repacked (reference backend) vs plain: NMSE %g", e)
				}
			})
		}
	}
}

// repackedWeight places a weight of typ [k, m] with known values in a CPU_REPACK buffer and
// returns it with its dequantized values.
func repackedWeight(t *testing.T, typ core.Type, k, m int64) (*core.Tensor, []float32, core.Buffer) {
	t.Helper()
	w, buf := newRepacked(t, typ, k, m)
	raw := quantBytes(t, typ, k*m, 42)
	if err := core.TensorSet(w, raw, 0); err != nil {
		t.Fatal(err)
	}
	deq := make([]float32, k*m)
	if err := typ.ToFloat(raw, deq); err != nil {
		t.Fatal(err)
	}
	return w, deq, buf
}

// TestRepackOtherUses: GET_ROWS of a repacked weight (every repacked type) unpacks the rows it
// gathers, other ops and views read a standard copy, and MUL_MAT runs the repacked product, each
// checked against the dequantized weight, on the fast and the reference backend, twice (the
// second run reuses the cached plan).
func TestRepackOtherUses(t *testing.T) {
	for _, typ := range repackTypes {
		t.Run(typ.String(), func(t *testing.T) { testRepackOtherUses(t, typ) })
	}
}

func testRepackOtherUses(t *testing.T, typ core.Type) {
	k, m := repackK(typ, 64), int64(21)
	w, deq, wbuf := repackedWeight(t, typ, k, m)
	defer wbuf.Free()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	idx := ctx.NewTensor1D(core.TypeI32, 4)
	rows := ctx.GetRows(w, idx)                               // routed: unpacks 4 rows
	deqAll := ctx.Cpy(w, ctx.NewTensor2D(core.TypeF32, k, m)) // another op: standard copy
	view := ctx.View2D(w, k, 5, w.Nb[1], 3*w.Nb[1])           // rows 3..7
	x := ctx.NewTensor2D(core.TypeF32, k, 2)
	mmView := ctx.MulMat(view, x) // MUL_MAT of a view: standard copy
	mm := ctx.MulMat(w, x)        // routed
	buf, err := alloc.AllocCtxTensors(ctx, mustCPU(t))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	if err := core.SetInt32s(idx, []int32{20, 0, 7, 7}); err != nil {
		t.Fatal(err)
	}
	xv := randF32(2*k, 9)
	if err := core.SetFloat32s(x, xv); err != nil {
		t.Fatal(err)
	}
	for _, ref := range []bool{false, true} {
		be, err := cpu.New(cpu.Options{Threads: 2, Reference: ref})
		if err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		for _, out := range []*core.Tensor{rows, deqAll, mmView, mm} {
			g.BuildForwardExpand(out)
		}
		for run := 0; run < 2; run++ { // the second run uses the cached plan
			if err := be.GraphCompute(g); err != nil {
				t.Fatal(err)
			}
			got, _ := core.GetFloat32s(rows)
			for i, r := range []int64{20, 0, 7, 7} {
				for j := int64(0); j < k; j++ {
					if got[int64(i)*k+j] != deq[r*k+j] {
						t.Fatalf("ref %v: GET_ROWS row %d element %d = %g, want %g", ref, i, j, got[int64(i)*k+j], deq[r*k+j])
					}
				}
			}
			all, _ := core.GetFloat32s(deqAll)
			for i := range deq {
				if all[i] != deq[i] {
					t.Fatalf("ref %v: CPY to f32 element %d = %g, want %g", ref, i, all[i], deq[i])
				}
			}
			checkDots := func(name string, got []float32, first, nrows int64) {
				want := make([]float64, 0, len(got))
				for j := int64(0); j < 2; j++ {
					for i := first; i < first+nrows; i++ {
						var s float64
						for e := int64(0); e < k; e++ {
							s += float64(deq[i*k+e]) * float64(xv[j*k+e])
						}
						want = append(want, s)
					}
				}
				if e := nmse(got, want); e > 5e-4 {
					t.Errorf("ref %v: %s: NMSE %g against f64 dots of the dequantized weight", ref, name, e)
				}
			}
			gv, _ := core.GetFloat32s(mmView)
			checkDots("MUL_MAT of a view", gv, 3, 5)
			gm, _ := core.GetFloat32s(mm)
			checkDots("MUL_MAT", gm, 0, m)
		}
		be.Close()
	}
}

func mustCPU(t *testing.T) *cpu.Backend {
	t.Helper()
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.Close() })
	return be
}

// A node may not write into CPU_REPACK memory: the error names the buffer type.
func TestRepackDstRefused(t *testing.T) {
	w, buf := newRepacked(t, core.TypeQ8_0, 32, 4)
	defer buf.Free()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	src := ctx.NewTensor2D(core.TypeF32, 32, 4)
	cp := ctx.Cpy(src, w)
	b, err := alloc.AllocCtxTensors(ctx, mustCPU(t))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(cp)
	err = mustCPU(t).GraphCompute(g)
	if err == nil || !contains(err.Error(), "CPU_REPACK") {
		t.Fatalf("CPY into a CPU_REPACK tensor: %v, want an error naming CPU_REPACK", err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
