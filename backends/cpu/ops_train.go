package cpu

import (
	"fmt"
	"math"

	"github.com/tandem-ml/tandem/core"
)

// CROSS_ENTROPY_LOSS(_BACK) and the optimizer steps OPT_STEP_ADAMW / OPT_STEP_SGD, after
// ggml_compute_forward_cross_entropy_loss(_back) and ggml_compute_forward_opt_step_adamw/_sgd
// (ggml/src/ggml-cpu/ops.cpp). The loss runs on one worker with float64 sums (the result does not
// depend on the thread count, unlike ggml's); its backward and the steps split rows among workers.
// The optimizer steps evaluate ggml's formula in float32 with every operation rounded (explicit
// float32 conversions keep Go from fusing multiply-adds), and write the parameter and the moments in
// place.

func init() {
	register(core.OpCrossEntropyLoss, opImpl{compute: computeCrossEntropyLoss, tasks: single, work: twoSrcRowsWork,
		supports: crossEntropySupports})
	register(core.OpCrossEntropyLossBack, opImpl{compute: computeCrossEntropyLossBack, tasks: rowsTasks, work: twoRowsWork,
		supports: crossEntropyBackSupports})
	register(core.OpOptStepAdamW, opImpl{compute: computeOptStepAdamW, tasks: rowsTasks, work: fourRowsWork,
		supports: optStepSupports})
	register(core.OpOptStepSGD, opImpl{compute: computeOptStepSGD, tasks: rowsTasks, work: twoRowsWork,
		supports: optStepSupports})
}

func errorfCPU(format string, args ...any) error { return fmt.Errorf("tandem: cpu: "+format, args...) }

func twoSrcRowsWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(2*dst.Src[0].Ne[0], nTasks)
}
func fourRowsWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(4*dst.Ne[0], nTasks) }

func crossEntropySupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return a != nil && b != nil && a.Type == core.TypeF32 && b.Type == core.TypeF32 && a.Ne == b.Ne &&
		dst.Type == core.TypeF32 && dst.NElements() == 1
}

func crossEntropyBackSupports(dst *core.Tensor) bool {
	g, a, b := dst.Src[0], dst.Src[1], dst.Src[2]
	return g != nil && a != nil && b != nil && g.Type == core.TypeF32 && g.NElements() == 1 &&
		a.Type == core.TypeF32 && b.Type == core.TypeF32 && a.Ne == b.Ne && a.Ne == dst.Ne && dst.Type == core.TypeF32
}

// logSumExp returns max(x) and log Σ exp(x − max) in float64.
func logSumExp(x []float32) (float64, float64) {
	m := math.Inf(-1)
	for _, v := range x {
		m = math.Max(m, float64(v))
	}
	var s float64
	for _, v := range x {
		s += math.Exp(float64(v) - m)
	}
	return m, math.Log(s)
}

// computeCrossEntropyLoss: −(1/rows)·Σ_rows Σ_i labels_i·(logits_i − max − log Σ exp(logits − max)).
func computeCrossEntropyLoss(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	da, db := a.Data(), b.Data()
	ne0 := a.Ne[0]
	buf := scratch(p, 2*ne0)
	lr, yr := buf[:ne0], buf[ne0:]
	var total float64
	for ir := int64(0); ir < a.NRows(); ir++ {
		i1, i2, i3 := unravel(ir, a.Ne)
		loadRow(a, da, i1, i2, i3, lr)
		loadRow(b, db, i1, i2, i3, yr)
		m, lse := logSumExp(lr)
		for i, v := range lr {
			total += float64(yr[i]) * (float64(v) - m - lse)
		}
	}
	setF32(dst.Data(), 0, float32(-total/float64(a.NRows())))
}

// computeCrossEntropyLossBack: d logits = (softmax(logits) − labels)·g/rows.
func computeCrossEntropyLossBack(p *params, dst *core.Tensor) {
	g, a, b := dst.Src[0], dst.Src[1], dst.Src[2]
	da, db, dd := a.Data(), b.Data(), dst.Data()
	k := float64(getF32(g.Data(), 0)) / float64(a.NRows())
	ne0 := dst.Ne[0]
	buf := scratch(p, 2*ne0)
	lr, yr := buf[:ne0], buf[ne0:]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(a, da, i1, i2, i3, lr)
		loadRow(b, db, i1, i2, i3, yr)
		m, lse := logSumExp(lr)
		for i, v := range lr {
			lr[i] = float32((math.Exp(float64(v)-m-lse) - float64(yr[i])) * k)
		}
		storeRow(dst, dd, i1, i2, i3, lr)
	}
}

func optStepSupports(dst *core.Tensor) bool {
	w := dst.Src[0]
	if w == nil || w.Type != core.TypeF32 || dst.Type != core.TypeF32 || w.Ne != dst.Ne {
		return false
	}
	n, np := 2, core.SGDNParams
	if dst.Op == core.OpOptStepAdamW {
		n, np = 4, core.AdamWNParams
	}
	for i := 1; i < n; i++ {
		if s := dst.Src[i]; s == nil || s.Type != core.TypeF32 || s.Ne != w.Ne {
			return false
		}
	}
	ps := dst.Src[n]
	return ps != nil && ps.Type == core.TypeF32 && ps.NElements() == int64(np) && ps.IsContiguous()
}

// computeOptStepAdamW: per element, in float32 as ggml writes it,
//
//	m = m·β1 + g·(1−β1);  v = v·β2 + (g·g)·(1−β2)
//	w = w·(1 − α·wd) − (α·(m·β1h)) / (sqrt(v·β2h) + ε)
func computeOptStepAdamW(p *params, dst *core.Tensor) {
	w, g, m, v, ps := dst.Src[0], dst.Src[1], dst.Src[2], dst.Src[3], dst.Src[4]
	dw, dg, dm, dv, dp := w.Data(), g.Data(), m.Data(), v.Data(), ps.Data()
	alpha, beta1, beta2 := getF32(dp, 4*core.AdamWAlpha), getF32(dp, 4*core.AdamWBeta1), getF32(dp, 4*core.AdamWBeta2)
	eps, wd := getF32(dp, 4*core.AdamWEps), getF32(dp, 4*core.AdamWWD)
	beta1h, beta2h := getF32(dp, 4*core.AdamWBeta1H), getF32(dp, 4*core.AdamWBeta2H)
	keep := 1 - float32(alpha*wd)
	omb1, omb2 := 1-beta1, 1-beta2
	ne0 := dst.Ne[0]
	buf := scratch(p, 4*ne0)
	wr, gr, mr, vr := buf[:ne0], buf[ne0:2*ne0], buf[2*ne0:3*ne0], buf[3*ne0:]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(w, dw, i1, i2, i3, wr)
		loadRow(g, dg, i1, i2, i3, gr)
		loadRow(m, dm, i1, i2, i3, mr)
		loadRow(v, dv, i1, i2, i3, vr)
		for i, gi := range gr {
			mi := float32(mr[i]*beta1) + float32(gi*omb1)
			vi := float32(vr[i]*beta2) + float32(float32(gi*gi)*omb2)
			mh := float32(mi * beta1h)
			vh := float32(math.Sqrt(float64(float32(vi*beta2h)))) + eps
			wr[i] = float32(wr[i]*keep) - float32(float32(alpha*mh)/vh)
			mr[i], vr[i] = mi, vi
		}
		storeRow(m, dm, i1, i2, i3, mr)
		storeRow(v, dv, i1, i2, i3, vr)
		storeRow(w, dw, i1, i2, i3, wr)
	}
}

// computeOptStepSGD: w = w·(1 − α·wd) − α·g in float32.
func computeOptStepSGD(p *params, dst *core.Tensor) {
	w, g, ps := dst.Src[0], dst.Src[1], dst.Src[2]
	dw, dg, dp := w.Data(), g.Data(), ps.Data()
	alpha, wd := getF32(dp, 4*core.SGDAlpha), getF32(dp, 4*core.SGDWD)
	keep := 1 - float32(alpha*wd)
	ne0 := dst.Ne[0]
	buf := scratch(p, 2*ne0)
	wr, gr := buf[:ne0], buf[ne0:]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(w, dw, i1, i2, i3, wr)
		loadRow(g, dg, i1, i2, i3, gr)
		for i, gi := range gr {
			wr[i] = float32(wr[i]*keep) - float32(alpha*gi)
		}
		storeRow(w, dw, i1, i2, i3, wr)
	}
}
