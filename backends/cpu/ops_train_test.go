package cpu_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// Hand-computed values for the training ops' CPU kernels.

func newTrainCtx() *core.Context { return core.NewContext(core.ContextParams{MemSize: 8 << 20}) }

func f32T(ctx *core.Context, v []float32, ne ...int64) *core.Tensor {
	t := ctx.NewTensor(core.TypeF32, ne...)
	copy(t.Float32s(), v)
	return t
}

func computeNode(t *testing.T, n *core.Tensor, threads int) {
	t.Helper()
	if err := n.Context().Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(n)
	if err := cpu.Compute(g, threads); err != nil {
		t.Fatal(err)
	}
}

func expectClose(t *testing.T, what string, got []float32, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Abs(float64(got[i])-want[i]) > tol*math.Max(1, math.Abs(want[i])) {
			t.Errorf("%s[%d] = %.9g, want %.9g", what, i, got[i], want[i])
		}
	}
}

func TestSiluBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	g := f32T(ctx, []float32{1, 2, -1}, 3)
	x := f32T(ctx, []float32{0, 1, -2}, 3)
	r := ctx.SiluBack(g, x)
	computeNode(t, r, 2)
	// silu'(x) = s(1 + x(1−s)); s(0) = 0.5 → 0.5; s(1) = 0.7310585786 → 0.7310585786·(1+0.2689414214) = 0.9276705;
	// s(−2) = 0.1192029220 → 0.1192029220·(1 − 2·0.8807970780) = −0.0907842
	expectClose(t, "silu_back", r.Float32s(), []float64{0.5, 2 * 0.9276705118714867, -1 * -0.09078424878489536}, 1e-6)
}

func TestRMSNormBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	x := f32T(ctx, []float32{1, 2, 2}, 3)
	g := f32T(ctx, []float32{1, 0, 0}, 3)
	r := ctx.RMSNormBack(g, x, 0)
	computeNode(t, r, 1)
	// mean(x²) = 3, rms = √3; Σx·g = 1; dx = (g − x·1/(3·3))/√3
	s3 := math.Sqrt(3)
	expectClose(t, "rms_norm_back", r.Float32s(), []float64{(1 - 1.0/9) / s3, (0 - 2.0/9) / s3, (0 - 2.0/9) / s3}, 1e-6)
}

func TestSoftMaxBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	y := f32T(ctx, []float32{0.2, 0.3, 0.5, 0.25, 0.25, 0.5}, 3, 2)
	g := f32T(ctx, []float32{1, 2, 3, 0, 1, 0}, 3, 2)
	r := ctx.SoftMaxExtBack(g, y, 2, 0)
	computeNode(t, r, 2)
	// row 0: dot = 0.2+0.6+1.5 = 2.3; dx = 2·y·(g − 2.3) = 2·[0.2·−1.3, 0.3·−0.3, 0.5·0.7]
	// row 1: dot = 0.25; dx = 2·[0.25·−0.25, 0.25·0.75, 0.5·−0.25]
	expectClose(t, "soft_max_back", r.Float32s(), []float64{-0.52, -0.18, 0.7, -0.125, 0.375, -0.25}, 1e-6)
}

func TestRopeBackInvertsRope(t *testing.T) {
	ctx := newTrainCtx()
	for _, mode := range []int{core.RopeNormal, core.RopeNeox} {
		x := f32T(ctx, []float32{1, 2, 3, 4, 5, 6, -1, 0.5, 0.25, 2, 1, -3}, 6, 1, 2)
		pos := ctx.NewTensor1D(core.TypeI32, 2)
		copy(pos.Int32s(), []int32{3, 17})
		back := ctx.RopeBack(ctx.Rope(x, pos, 4, mode), pos, 4, mode)
		computeNode(t, back, 2)
		want := make([]float64, 12)
		for i, v := range x.Float32s() {
			want[i] = float64(v)
		}
		expectClose(t, "rope_back(rope(x))", back.Float32s(), want, 1e-5)
	}
	// One pair by hand: position 1, θ = 1 rad, normal mode: back rotates (1, 0) by −1 rad.
	x := f32T(ctx, []float32{1, 0}, 2, 1, 1)
	pos := ctx.NewTensor1D(core.TypeI32, 1)
	pos.Int32s()[0] = 1
	r := ctx.RopeBack(x, pos, 2, core.RopeNormal)
	computeNode(t, r, 1)
	expectClose(t, "rope_back", r.Float32s(), []float64{math.Cos(1), -math.Sin(1)}, 1e-6)
}

func TestGetRowsBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	g := f32T(ctx, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	idx := ctx.NewTensor1D(core.TypeI32, 3)
	copy(idx.Int32s(), []int32{2, 0, 2})
	like := ctx.NewTensor2D(core.TypeF32, 2, 4)
	r := ctx.GetRowsBack(g, idx, like)
	computeNode(t, r, 2)
	expectClose(t, "get_rows_back", r.Float32s(), []float64{3, 4, 0, 0, 1 + 5, 2 + 6, 0, 0}, 0)

	// As ggml's: two indices read the first two rows of g only; more indices than rows are refused.
	two := ctx.NewTensor1D(core.TypeI32, 2)
	copy(two.Int32s(), []int32{3, 3})
	r2 := ctx.GetRowsBack(g, two, like)
	computeNode(t, r2, 1)
	expectClose(t, "get_rows_back(2 of 3 rows)", r2.Float32s(), []float64{0, 0, 0, 0, 0, 0, 1 + 3, 2 + 4}, 0)
	ectx := newTrainCtx()
	ectx.GetRowsBack(ectx.NewTensor2D(core.TypeF32, 2, 3), ectx.NewTensor1D(core.TypeI32, 4), ectx.NewTensor2D(core.TypeF32, 2, 4))
	if ectx.Err() == nil {
		t.Error("GET_ROWS_BACK with more indices than gradient rows gave no error")
	}

	bad := ctx.NewTensor1D(core.TypeI32, 3)
	copy(bad.Int32s(), []int32{0, 4, 1})
	gr := core.NewGraph(16)
	gr.BuildForwardExpand(ctx.GetRowsBack(g, bad, like))
	if err := cpu.Compute(gr, 1); err == nil {
		t.Error("out-of-range index gave no error")
	}
}

func TestRepeatBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	a := f32T(ctx, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4, 3)
	r := ctx.RepeatBack(a, ctx.NewTensor2D(core.TypeF32, 2, 1))
	computeNode(t, r, 2)
	// columns 0,2 of every row: 1+3+5+7+9+11 = 36; columns 1,3: 2+4+…+12 = 42
	expectClose(t, "repeat_back", r.Float32s(), []float64{36, 42}, 0)
}

func TestAccAndDiagMaskZeroKernels(t *testing.T) {
	ctx := newTrainCtx()
	a := f32T(ctx, []float32{1, 1, 1, 1, 1, 1}, 3, 2)
	b := f32T(ctx, []float32{10, 20}, 1, 2)
	r := ctx.Acc(a, b, 12, 24, 24, 8) // column 2 of both rows
	computeNode(t, r, 1)
	expectClose(t, "acc", r.Float32s(), []float64{1, 1, 11, 1, 1, 21}, 0)

	m := f32T(ctx, []float32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3)
	z := ctx.DiagMaskZero(m, 0)
	computeNode(t, z, 2)
	expectClose(t, "diag_mask_zero", z.Float32s(), []float64{1, 0, 0, 4, 5, 0, 7, 8, 9}, 0)
}

func TestIm2ColBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	// 1-D: input length 4, kernel 2, stride 1, no padding: OL = 3; g [2, 3]: g[k, o] adds to x[o+k].
	k := ctx.NewTensor3D(core.TypeF32, 2, 1, 1)
	g := f32T(ctx, []float32{1, 2, 3, 4, 5, 6}, 2, 3, 1)
	r := ctx.Im2ColBack(g, k, [4]int64{4, 1, 1, 1}, core.Im2ColParams{S0: 1, D0: 1})
	computeNode(t, r, 2)
	// x0 ← g[0,0] = 1; x1 ← g[1,0] + g[0,1] = 2+3; x2 ← g[1,1] + g[0,2] = 4+5; x3 ← g[1,2] = 6
	expectClose(t, "im2col_back", r.Float32s(), []float64{1, 5, 9, 6}, 0)
}

func TestPool2DBackKernel(t *testing.T) {
	ctx := newTrainCtx()
	x := f32T(ctx, []float32{1, 5, 2, 3, 4, 0, 7, 7, 6, 1, 1, 8, 2, 2, 9, 3}, 4, 4)
	g := f32T(ctx, []float32{1, 2, 3, 4}, 2, 2)
	r := ctx.Pool2DBack(g, x, core.PoolMax, 2, 2, 2, 2, 0, 0)
	computeNode(t, r, 1)
	// windows: (1,5,4,0)→max 5 at (1,0); (2,3,7,7)→first 7 at (2,1); (6,1,2,2)→6 at (0,2); (1,8,9,3)→9 at (2,3)
	expectClose(t, "pool_2d_back max", r.Float32s(), []float64{0, 1, 0, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 4, 0}, 0)
	a := ctx.Pool2DBack(g, x, core.PoolAvg, 2, 2, 2, 2, 0, 0)
	computeNode(t, a, 1)
	expectClose(t, "pool_2d_back avg", a.Float32s(), []float64{0.25, 0.25, 0.5, 0.5, 0.25, 0.25, 0.5, 0.5, 0.75, 0.75, 1, 1, 0.75, 0.75, 1, 1}, 0)
}

func TestCrossEntropyKernels(t *testing.T) {
	ctx := newTrainCtx()
	logits := f32T(ctx, []float32{0, 0, 0, 1, 2, 3}, 3, 2)
	labels := f32T(ctx, []float32{1, 0, 0, 0, 0.5, 0.5}, 3, 2)
	l := ctx.CrossEntropyLoss(logits, labels)
	computeNode(t, l, 2)
	// row 0: −log(1/3); row 1: lse = 3 + log(1 + e^−1 + e^−2); −(0.5(2 − lse) + 0.5(3 − lse))
	lse := 3 + math.Log(1+math.Exp(-1)+math.Exp(-2))
	want := (math.Log(3) - (0.5*(2-lse) + 0.5*(3-lse))) / 2
	expectClose(t, "cross_entropy_loss", l.Float32s(), []float64{want}, 1e-6)

	gs := f32T(ctx, []float32{2}, 1)
	d := ctx.CrossEntropyLossBack(gs, logits, labels)
	computeNode(t, d, 2)
	p := []float64{math.Exp(1 - lse), math.Exp(2 - lse), math.Exp(3 - lse)}
	expectClose(t, "cross_entropy_loss_back", d.Float32s(), []float64{
		(1.0/3 - 1) * 2 / 2, (1.0 / 3) * 2 / 2, (1.0 / 3) * 2 / 2,
		p[0] * 2 / 2, (p[1] - 0.5) * 2 / 2, (p[2] - 0.5) * 2 / 2}, 1e-6)
}

// AdamW and SGD over several steps against the formulas in float64 (decoupled weight decay; the
// bias corrections come from the params tensor, updated between runs of the same graph).
func TestOptimizerStepsMatchFormulas(t *testing.T) {
	ctx := newTrainCtx()
	n := 7
	w := ctx.NewTensor2D(core.TypeF32, int64(n), 1)
	ctx.SetParam(w)
	grad := ctx.NewTensorLike(w)
	m, v := ctx.NewTensorLike(w), ctx.NewTensorLike(w)
	ap := ctx.NewTensor1D(core.TypeF32, core.AdamWNParams)
	step := ctx.OptStepAdamW(w, grad, m, v, ap)
	ws := ctx.NewTensor2D(core.TypeF32, 3, 2)
	ctx.SetParam(ws)
	gs := ctx.NewTensorLike(ws)
	sp := ctx.NewTensor1D(core.TypeF32, core.SGDNParams)
	sgd := ctx.OptStepSGD(ws, gs, sp)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(16)
	g.BuildForwardExpand(step)
	g.BuildForwardExpand(sgd)

	const alpha, beta1, beta2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.1
	wRef, mRef, vRef := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range wRef {
		wRef[i] = float64(i)*0.3 - 1
		w.Float32s()[i] = float32(wRef[i])
	}
	sRef := []float64{1, -2, 0.5, 3, -0.25, 0}
	for i, x := range sRef {
		ws.Float32s()[i] = float32(x)
	}
	for it := 1; it <= 5; it++ {
		gv := make([]float64, n)
		for i := range gv {
			gv[i] = math.Sin(float64(i*it)) * 0.5
			grad.Float32s()[i] = float32(gv[i])
		}
		b1h := 1 / (1 - math.Pow(beta1, float64(it)))
		b2h := 1 / (1 - math.Pow(beta2, float64(it)))
		copy(ap.Float32s(), []float32{alpha, beta1, beta2, eps, wd, float32(b1h), float32(b2h)})
		copy(sp.Float32s(), []float32{0.1, 0.05})
		gsv := []float64{0.5, -1, 2, 0, 0.25, -0.5}
		for i, x := range gsv {
			gs.Float32s()[i] = float32(x) * float32(it)
		}
		if err := cpu.Compute(g, 2); err != nil {
			t.Fatal(err)
		}
		for i := range wRef {
			mRef[i] = beta1*mRef[i] + (1-beta1)*gv[i]
			vRef[i] = beta2*vRef[i] + (1-beta2)*gv[i]*gv[i]
			wRef[i] = wRef[i]*(1-alpha*wd) - alpha*(mRef[i]*b1h)/(math.Sqrt(vRef[i]*b2h)+eps)
		}
		for i := range sRef {
			sRef[i] = sRef[i]*(1-0.1*0.05) - 0.1*gsv[i]*float64(it)
		}
		expectClose(t, "adamw w", w.Float32s(), wRef, 2e-6)
		expectClose(t, "adamw m", m.Float32s(), mRef, 2e-6)
		expectClose(t, "adamw v", v.Float32s(), vRef, 2e-6)
		expectClose(t, "sgd w", ws.Float32s(), sRef, 2e-6)
	}
}
