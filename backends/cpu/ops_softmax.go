package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"math"

	"github.com/tandem-ml/tandem/core"
)

// SOFT_MAX and DIAG_MASK_INF.
//
// SOFT_MAX follows ggml_compute_forward_soft_max_f32 (ggml/src/ggml-cpu/ops.cpp): per row of a
// (i1, i2, i3), w = a·scale + slope·mask[i1, i2 % ne12, i3 % ne13] in f32, where slope is the ALiBi
// slope of head i2 (core.AlibiSlope; 1 when max_bias is 0) and the mask row index is i1 itself
// (mask.ne1 ≥ a.ne1, extra mask rows unused); then y = exp(w - max) / Σ exp(w - max), the sum in
// float64. One deliberate difference: a row whose every w is -inf (fully masked) gives all zeros,
// where ggml computes exp(-inf - -inf) = NaN; zeros is what ggml's flash attention produces for
// such rows (S == 0 → 0), and what a scheduler mixing both paths wants. Rows are split among
// min(threads, rows) workers; each row goes through per-worker scratch, so dst may alias a.
// With sinks (src2, ggml_soft_max_add_sinks) head i2's sink s joins the maximum and the denominator
// only: m = max(max w, s), y = exp(w - m) / (Σ exp(w - m) + exp(s - m)); a fully masked row then
// gives zeros, as in ggml.

func init() {
	register(core.OpSoftMax, opImpl{compute: computeSoftMax, tasks: rowsTasks, work: softMaxWork,
		supports: softMaxSupports})
	register(core.OpDiagMaskInf, opImpl{compute: computeDiagMaskInf, supports: diagMaskSupports})
	register(core.OpDiagMaskZero, opImpl{compute: computeDiagMaskInf, supports: diagMaskSupports})
}

func softMaxSupports(dst *core.Tensor) bool {
	a, m, sk := dst.Src[0], dst.Src[1], dst.Src[2]
	if a == nil || a.Type != core.TypeF32 || dst.Type != core.TypeF32 || a.Ne != dst.Ne {
		return false
	}
	if sk != nil && (sk.Type != core.TypeF32 || sk.Ne[0] != a.Ne[2]) {
		return false
	}
	if m == nil {
		return core.SoftMaxParamsOf(dst).MaxBias <= 0
	}
	return (m.Type == core.TypeF32 || m.Type == core.TypeF16) && m.Ne[0] == a.Ne[0] && m.Ne[1] >= a.Ne[1] &&
		m.Ne[2] > 0 && m.Ne[3] > 0 && a.Ne[2]%m.Ne[2] == 0 && a.Ne[3]%m.Ne[3] == 0
}

// softMaxWork: a row of a and a row of the mask per worker.
func softMaxWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(2*dst.Ne[0], nTasks) }

func computeSoftMax(p *params, dst *core.Tensor) {
	a, m, sk := dst.Src[0], dst.Src[1], dst.Src[2]
	da, dd := a.Data(), dst.Data()
	var dm, dsk []byte
	if m != nil {
		dm = m.Data()
	}
	if sk != nil {
		dsk = sk.Data()
	}
	ne0 := dst.Ne[0]
	buf := scratch(p, 2*ne0)
	w, mrow := buf[:ne0], buf[ne0:2*ne0]
	sp := core.SoftMaxParamsOf(dst)
	scale, maxBias := sp.Scale, sp.MaxBias
	nHead := a.Ne[2]
	slope, slopeHead := float32(1), int64(-1)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(a, da, i1, i2, i3, w)
		for i := range w {
			w[i] *= scale
		}
		if m != nil {
			if i2 != slopeHead {
				slope, slopeHead = core.AlibiSlope(i2, nHead, maxBias), i2
			}
			loadRow(m, dm, i1, i2%m.Ne[2], i3%m.Ne[3], mrow)
			for i := range w {
				w[i] += slope * mrow[i]
			}
		}
		switch {
		case sk != nil:
			softMaxRowSink(w, getF32(dsk, i2*sk.Nb[0]))
		case p.ref:
			softMaxRow(w)
		default:
			softMaxRowFast(w)
		}
		storeRow(dst, dd, i1, i2, i3, w)
	}
}

// softMaxRow replaces w by its softmax (all zeros when every entry is -inf).
func softMaxRow(w []float32) {
	mx := float32(math.Inf(-1))
	for _, v := range w {
		if v > mx {
			mx = v
		}
	}
	if math.IsInf(float64(mx), -1) {
		// every entry is -inf, or NaN (which then poisons the row as it would otherwise)
		fill := float32(0)
		for _, v := range w {
			if v != mx {
				fill = float32(math.NaN())
				break
			}
		}
		for i := range w {
			w[i] = fill
		}
		return
	}
	m64 := float64(mx)
	var sum float64
	for i, v := range w {
		e := math.Exp(float64(v) - m64)
		sum += e
		w[i] = float32(e)
	}
	inv := 1 / sum
	for i, v := range w {
		w[i] = float32(float64(v) * inv)
	}
}

// softMaxRowSink replaces w by its softmax with the sink logit sink in the denominator: the
// maximum m covers the sink too, so a row of -inf gives zeros; a NaN anywhere poisons the row.
func softMaxRowSink(w []float32, sink float32) {
	mx := sink
	for _, v := range w {
		if v > mx {
			mx = v
		}
	}
	m64 := float64(mx)
	sum := math.Exp(float64(sink) - m64)
	for i, v := range w {
		e := math.Exp(float64(v) - m64)
		sum += e
		w[i] = float32(e)
	}
	inv := 1 / sum
	for i, v := range w {
		w[i] = float32(float64(v) * inv)
	}
}

// softMaxRowFast is softMaxRow with the SIMD exp-and-sum and scale kernels.
func softMaxRowFast(w []float32) {
	mx := kern.MaxF32(w)
	if math.IsInf(float64(mx), -1) || mx != mx {
		softMaxRow(w) // all -inf or NaN rows: the reference's rules
		return
	}
	sum := kern.ExpSumF32(w, w, mx)
	kern.ScaleF32(1/sum, w)
}

// DIAG_MASK_INF follows ggml_compute_forward_diag_mask_f32: element (i0, i1, i2, i3) becomes -inf
// when i0 > n_past + i1, everything else is copied. Rows are split among all workers; elements are
// read and written at the same position, so dst may alias a (the in-place form).

func diagMaskSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF32 && dst.Type == core.TypeF32 && a.Ne == dst.Ne
}

func computeDiagMaskInf(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	nPast := core.NPastOf(dst)
	ne0 := dst.Ne[0]
	negInf := float32(math.Inf(-1)) // the fill value; DIAG_MASK_ZERO fills 0
	if dst.Op == core.OpDiagMaskZero {
		negInf = 0
	}
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		oa := i1*a.Nb[1] + i2*a.Nb[2] + i3*a.Nb[3]
		od := i1*dst.Nb[1] + i2*dst.Nb[2] + i3*dst.Nb[3]
		// first masked column: i0 > nPast + i1
		cut := min(max(nPast+i1+1, 0), ne0)
		if a.Nb[0] == 4 && dst.Nb[0] == 4 {
			src := f32s(da[oa:])[:ne0]
			out := f32s(dd[od:])[:ne0]
			copy(out[:cut], src[:cut])
			for i := cut; i < ne0; i++ {
				out[i] = negInf
			}
			continue
		}
		for i := int64(0); i < cut; i++ {
			setF32(dd, od+i*dst.Nb[0], getF32(da, oa+i*a.Nb[0]))
		}
		for i := cut; i < ne0; i++ {
			setF32(dd, od+i*dst.Nb[0], negInf)
		}
	}
}
