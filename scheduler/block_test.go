package scheduler_test

import (
	"fmt"
	"github.com/tandem-ml/tandem/alloc"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// block is a small transformer layer: embedding lookup, attention with rope and a causal mask,
// a SwiGLU feed-forward, residual adds.
type block struct {
	g         *core.Graph
	ids, pos  *core.Tensor
	mask      *core.Tensor
	out       *core.Tensor
	weightBuf core.Buffer
}

const (
	nEmbd  = 64
	nHead  = 2
	headD  = nEmbd / nHead
	nTok   = 5
	nVocab = 16
	nFF    = 128
)

// buildBlock makes the layer with its weights in buffer type bt (marked as weights).
func buildBlock(t *testing.T, bt core.BufferType) *block {
	t.Helper()
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	tokEmbd := wctx.NewTensor2D(core.TypeF32, nEmbd, nVocab).SetName("tok_embd")
	attnNorm := wctx.NewTensor1D(core.TypeF32, nEmbd).SetName("attn_norm")
	wq := wctx.NewTensor2D(core.TypeQ4_0, nEmbd, nEmbd).SetName("wq")
	wk := wctx.NewTensor2D(core.TypeQ4_0, nEmbd, nEmbd).SetName("wk")
	wv := wctx.NewTensor2D(core.TypeQ4_0, nEmbd, nEmbd).SetName("wv")
	wo := wctx.NewTensor2D(core.TypeQ4_0, nEmbd, nEmbd).SetName("wo")
	ffnNorm := wctx.NewTensor1D(core.TypeF32, nEmbd).SetName("ffn_norm")
	wgu := wctx.NewTensor2D(core.TypeQ4_0, nEmbd, 2*nFF).SetName("ffn_gate_up")
	wdown := wctx.NewTensor2D(core.TypeQ8_0, nFF, nEmbd).SetName("ffn_down")
	b := &block{weightBuf: weightsOnOpts(t, wctx, bt, alloc.CtxAllocOptions{NoExtraBufferTypes: true})}

	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	b.ids = ctx.NewTensor1D(core.TypeI32, nTok).SetName("ids").SetInput()
	b.pos = ctx.NewTensor1D(core.TypeI32, nTok).SetName("pos").SetInput()
	b.mask = ctx.NewTensor2D(core.TypeF32, nTok, nTok).SetName("mask").SetInput()

	inp := ctx.GetRows(tokEmbd, b.ids).SetName("inp")
	cur := ctx.Mul(ctx.RMSNorm(inp, 1e-5), attnNorm).SetName("attn_in")
	q := ctx.Reshape3D(ctx.MulMat(wq, cur), headD, nHead, nTok)
	k := ctx.Reshape3D(ctx.MulMat(wk, cur), headD, nHead, nTok)
	v := ctx.Reshape3D(ctx.MulMat(wv, cur), headD, nHead, nTok)
	q = ctx.Rope(q, b.pos, headD, core.RopeNeox).SetName("q_rope")
	k = ctx.Rope(k, b.pos, headD, core.RopeNeox).SetName("k_rope")
	qp := ctx.Permute(q, 0, 2, 1, 3) // [headD, nTok, nHead]
	kp := ctx.Permute(k, 0, 2, 1, 3)
	kq := ctx.MulMat(kp, qp).SetName("kq") // [nTok(kv), nTok(q), nHead]
	kq = ctx.SoftMaxExt(kq, b.mask, float32(1/math.Sqrt(headD)), 0).SetName("kq_soft")
	vt := ctx.Cont(ctx.Permute(v, 1, 2, 0, 3)).SetName("vt") // [nTok, headD, nHead]
	kqv := ctx.MulMat(vt, kq).SetName("kqv")                 // [headD, nTok, nHead]
	merged := ctx.Cont(ctx.Permute(kqv, 0, 2, 1, 3))         // [headD, nHead, nTok]
	attn := ctx.MulMat(wo, ctx.Reshape2D(merged, nEmbd, nTok)).SetName("attn_out")
	cur = ctx.Add(attn, inp).SetName("resid1")
	n := ctx.Mul(ctx.RMSNorm(cur, 1e-5), ffnNorm)
	h := ctx.Swiglu(ctx.MulMat(wgu, n)).SetName("ffn_h")
	b.out = ctx.Add(ctx.MulMat(wdown, h), cur).SetName("out").SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	b.g = core.NewGraph(256)
	b.g.BuildForwardExpand(b.out)
	return b
}

func (b *block) setInputs(t *testing.T, ids []int32) {
	t.Helper()
	pos := make([]int32, nTok)
	mask := make([]float32, nTok*nTok)
	for i := range pos {
		pos[i] = int32(i) + 3
		for j := 0; j < nTok; j++ {
			if j > i {
				mask[i*nTok+j] = float32(math.Inf(-1))
			}
		}
	}
	if err := core.SetInt32s(b.ids, ids); err != nil {
		t.Fatal(err)
	}
	if err := core.SetInt32s(b.pos, pos); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(b.mask, mask); err != nil {
		t.Fatal(err)
	}
}

func runCPUOnly(t *testing.T, ids []int32) []float32 {
	t.Helper()
	cb, _ := cpu.New(cpu.Options{Threads: 2})
	defer cb.Close()
	s, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	b := buildBlock(t, core.HostBufferType())
	if err := s.AllocGraph(b.g); err != nil {
		t.Fatal(err)
	}
	b.setInputs(t, ids)
	if err := s.GraphCompute(b.g); err != nil {
		t.Fatal(err)
	}
	out, err := core.GetFloat32s(b.out)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The block on the fake GPU (weights resident there, SOFT_MAX unsupported) and the CPU: three
// splits, four copies (ids, pos to the GPU; kq to the CPU; the softmax back), results identical to
// the CPU-only run; a second run re-plans nothing and copies only what changed.
func TestMixedBlock(t *testing.T) {
	ids := []int32{3, 1, 4, 1, 5}
	want := runCPUOnly(t, ids)

	for _, sequential := range []bool{false, true} {
		t.Run(fmt.Sprintf("sequential=%v", sequential), func(t *testing.T) {
			dev := newFakeGPU("FakeGPU", core.OpGetRows, core.OpRMSNorm, core.OpMul, core.OpMulMat, core.OpRope,
				core.OpCont, core.OpAdd, core.OpGLU)
			r := newRig(t, dev, scheduler.Options{Sequential: sequential})
			b := buildBlock(t, dev.bt)
			if err := r.s.AllocGraph(b.g); err != nil {
				t.Fatal(err)
			}
			b.setInputs(t, ids)
			if err := r.s.GraphCompute(b.g); err != nil {
				t.Fatal(err)
			}
			if r.s.NSplits() != 3 || r.s.NCopies() != 4 {
				t.Fatalf("splits %d copies %d, want 3 and 4", r.s.NSplits(), r.s.NCopies())
			}
			got, err := core.GetFloat32s(b.out)
			if err != nil {
				t.Fatal(err)
			}
			if e := nmse(got, want); e != 0 {
				t.Fatalf("mixed run differs from the CPU-only run: NMSE %g", e)
			}
			st := r.s.Stats()
			if st.Plans != 1 || st.Copies != 4 {
				t.Fatalf("first run: %+v", st)
			}
			// Second run, same inputs: no re-plan; ids and pos unchanged, so only kq and its
			// softmax cross.
			if err := r.s.GraphCompute(b.g); err != nil {
				t.Fatal(err)
			}
			st2 := r.s.Stats()
			if st2.Plans != 1 || st2.Reserves != st.Reserves || st2.Copies-st.Copies != 2 || st2.CopySkips-st.CopySkips != 2 {
				t.Fatalf("second run: before %+v after %+v", st, st2)
			}
			// Change the token ids: they are copied again, and the result follows.
			ids2 := []int32{2, 7, 1, 8, 2}
			b.setInputs(t, ids2)
			if err := r.s.GraphCompute(b.g); err != nil {
				t.Fatal(err)
			}
			st3 := r.s.Stats()
			if st3.Copies-st2.Copies != 3 || st3.Plans != 1 {
				t.Fatalf("third run: before %+v after %+v", st2, st3)
			}
			got, _ = core.GetFloat32s(b.out)
			if e := nmse(got, runCPUOnly(t, ids2)); e != 0 {
				t.Fatalf("after changing ids: NMSE %g", e)
			}
		})
	}
}

// The eval callback sees nodes in order, and stopping stops the whole graph, later splits included.
func TestEvalCallbackStops(t *testing.T) {
	dev := newFakeGPU("FakeGPU", core.OpGetRows, core.OpRMSNorm, core.OpMul, core.OpMulMat, core.OpRope,
		core.OpCont, core.OpAdd, core.OpGLU)
	r := newRig(t, dev, scheduler.Options{})
	b := buildBlock(t, dev.bt)
	if err := r.s.AllocGraph(b.g); err != nil {
		t.Fatal(err)
	}
	b.setInputs(t, []int32{0, 1, 2, 3, 4})
	var seen []string
	var lastAsked string
	r.s.SetEvalCallback(func(x *core.Tensor, ask bool) bool {
		if ask {
			lastAsked = x.Name
			return x.Name == "kq" || x.Name == "kq_soft" || x.Name == "out"
		}
		seen = append(seen, x.Name)
		return x.Name != "kq_soft"
	})
	err := r.s.GraphCompute(b.g)
	if err != scheduler.ErrStopped {
		t.Fatalf("want ErrStopped, got %v", err)
	}
	if fmt.Sprint(seen) != "[kq kq_soft]" {
		t.Fatalf("callback saw %v", seen)
	}
	if lastAsked != "kq_soft" {
		t.Fatalf("nodes after the stop were still run (last asked %q)", lastAsked)
	}
}
