package cpu

import (
	"cmp"
	"math"
	"slices"

	"github.com/tandem-ml/tandem/core"
)

// Reductions: SUM, SUM_ROWS, MEAN, ARGMAX, ARGSORT. Sums accumulate in float64 (ggml's ggml_float
// for f32 rows) and round once. SUM is one global reduction on one worker (ggml: 1 task), so its
// result does not depend on the thread count; the per-row reductions split rows among workers,
// each row reduced by one worker in order, which is deterministic too.

func init() {
	register(core.OpSum, opImpl{compute: computeSum, tasks: single, work: rowScratchWork, supports: sumSupports})
	register(core.OpSumRows, opImpl{compute: computeSumRows, tasks: reduceRowsTasks, work: rowScratchWork, supports: sumSupports})
	register(core.OpMean, opImpl{compute: computeSumRows, tasks: reduceRowsTasks, work: rowScratchWork, supports: sumSupports})
	register(core.OpArgmax, opImpl{compute: computeArgmax, tasks: reduceRowsTasks, work: rowScratchWork, supports: argSupports})
	register(core.OpArgsort, opImpl{compute: computeArgsort, tasks: reduceRowsTasks, work: rowScratchWork, supports: argSupports})
}

// rowScratchWork: one f32 row of src0 per worker.
func rowScratchWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(dst.Src[0].Ne[0], nTasks)
}

// reduceRowsTasks: at most one worker per row of src0.
func reduceRowsTasks(dst *core.Tensor, nth int) int { return rowsTasks(dst.Src[0], nth) }

func sumSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if a == nil || !eltIsFloat(a.Type) || !eltIsFloat(dst.Type) {
		return false
	}
	if dst.Op == core.OpSum {
		return dst.NElements() == 1
	}
	return dst.Ne == [4]int64{1, a.Ne[1], a.Ne[2], a.Ne[3]}
}

func argSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if a == nil || !eltIsFloat(a.Type) || dst.Type != core.TypeI32 || a.Ne[0] > math.MaxInt32 {
		return false
	}
	if dst.Op == core.OpArgmax {
		return a.Ne[2] == 1 && a.Ne[3] == 1 && dst.Ne == [4]int64{a.Ne[1], 1, 1, 1}
	}
	return dst.Ne == a.Ne && dst.Nb[0] == 4
}

// eltSrcRow returns row (i1, i2, i3) of t as f32: the tensor's own memory when it is f32 with unit
// stride, else a conversion into buf.
func eltSrcRow(t *core.Tensor, data []byte, i1, i2, i3 int64, buf []float32) []float32 {
	if t.Type == core.TypeF32 && t.Nb[0] == 4 {
		return f32s(data[i1*t.Nb[1]+i2*t.Nb[2]+i3*t.Nb[3]:])[:t.Ne[0]]
	}
	loadRowStrided(t, data, i1, i2, i3, buf)
	return buf[:t.Ne[0]]
}

func eltSumF64(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

// computeSum: the sum of every element of src0 into dst's single element (of src0's type), at
// src0's strides. ggml quirk kept out: ggml-cpu's SUM reads each row as dense floats whatever nb00
// (its nb00 check is a debug assert), so for test-backend-ops' SUM(permute=[1,0,2,3]) case ggml's
// CPU sums the wrong elements and differs from tandem (docs/test-backend-ops.md).
func computeSum(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da := a.Data()
	buf := scratch(p, a.Ne[0])
	var s float64
	for ir := int64(0); ir < a.NRows(); ir++ {
		i1, i2, i3 := unravel(ir, a.Ne)
		s += eltSumF64(eltSrcRow(a, da, i1, i2, i3, buf))
	}
	out := [1]float32{float32(s)}
	storeRow(dst, dst.Data(), 0, 0, 0, out[:])
}

// computeSumRows: SUM_ROWS (the sum of each row) and MEAN (the sum divided by ne0, in float64).
func computeSumRows(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	buf := scratch(p, a.Ne[0])
	n := float64(a.Ne[0])
	r0, r1 := rowRange(a.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, a.Ne)
		s := eltSumF64(eltSrcRow(a, da, i1, i2, i3, buf))
		if dst.Op == core.OpMean {
			s /= n
		}
		if dst.Type == core.TypeF32 {
			setF32(dd, i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3], float32(s))
			continue
		}
		storeScalar(dst, dd, i1, i2, i3, float32(s))
	}
}

// storeScalar stores v as the one-element row (i1, i2, i3) of dst in dst's type. Its buffer
// escapes through the type conversion, so it lives here, off the f32 path that a generated token
// takes (which allocates nothing).
func storeScalar(dst *core.Tensor, dd []byte, i1, i2, i3 int64, v float32) {
	out := [1]float32{v}
	storeRow(dst, dd, i1, i2, i3, out[:])
}

// computeArgmax: the index of the largest element of each row; the first one wins ties and NaNs
// are never the maximum (a row of NaNs, or of -Inf, gives 0). ggml's CPU loop
// (ggml_vec_argmax_f32) keeps the last of equal maxima; tandem's contract is the first.
func computeArgmax(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	buf := scratch(p, a.Ne[0])
	r0, r1 := rowRange(a.Ne[1], p.ith, p.nth)
	for i1 := r0; i1 < r1; i1++ {
		x := eltSrcRow(a, da, i1, 0, 0, buf)
		best, idx := float32(math.Inf(-1)), 0
		for i, v := range x {
			if v > best {
				best, idx = v, i
			}
		}
		i32s(dd[i1*dst.Nb[0]:])[0] = int32(idx)
	}
}

// computeArgsort: per row, the indices that sort it ascending or descending. The sort is stable
// (equal values keep their index order; ggml uses std::sort, which is not), and NaNs sort as
// cmp.Compare orders them: before every number ascending, after every number descending.
func computeArgsort(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	buf := scratch(p, a.Ne[0])
	desc := core.SortOrderOf(dst) == core.SortDesc
	ne0 := a.Ne[0]
	r0, r1 := rowRange(a.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, a.Ne)
		x := eltSrcRow(a, da, i1, i2, i3, buf)
		idx := i32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:ne0]
		for i := range idx {
			idx[i] = int32(i)
		}
		if desc {
			slices.SortStableFunc(idx, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
		} else {
			slices.SortStableFunc(idx, func(i, j int32) int { return cmp.Compare(x[i], x[j]) })
		}
	}
}
