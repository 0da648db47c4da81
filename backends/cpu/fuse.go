package cpu

import (
	"github.com/tandem-ml/tandem/core"
)

// Node fusion: a pair of consecutive nodes computed by one kernel, with no barrier between them.
// The fused kernels still write every node's result (a scheduler split or a caller may read the
// first one), so a fusion saves the barrier and a pass over the rows, never a result; they run
// the unfused kernels' float operations in the same order, so results are bit for bit the same.
//
// RMS_NORM + MUL: MUL(RMS_NORM(x), w) with w broadcast over the rows (the weighted norm of every
// transformer layer). Each worker normalizes its rows of x, stores them as RMS_NORM's result and
// multiplies them by w into MUL's.

// fusion is a node's part in a fused pair.
type fusion uint8

const (
	fuseNone        fusion = iota
	fuseInNext             // computed by the next node's fused kernel
	fuseRMSMul             // MUL computing the RMS_NORM before it (fused with it)
	fuseMatVecGroup        // the last product of a group of sibling mat-vecs, computing all of them
	fuseInPrev             // computed by an earlier node's fused kernel (a group's GLU)
)

// computedElsewhere reports whether exec node i is computed by another node's fused kernel.
func computedElsewhere(fused []fusion, i int) bool {
	return fused != nil && (fused[i] == fuseInNext || fused[i] == fuseInPrev)
}

// planFusions marks the fusable pairs of exec (nil when there is none). The reference kernels
// (ref) and a backend with fusion off run every node alone.
func planFusions(exec []*core.Tensor, ref, off bool) []fusion {
	if ref || off {
		return nil
	}
	var fs []fusion
	for i := 0; i+1 < len(exec); i++ {
		if rmsMulFusable(exec[i], exec[i+1]) {
			if fs == nil {
				fs = make([]fusion, len(exec))
			}
			fs[i], fs[i+1] = fuseInNext, fuseRMSMul
			i++
		}
	}
	return fs
}

// rmsMulFusable reports whether mul = MUL(norm, w) can run as one kernel with norm = RMS_NORM(x):
// the fast paths of both on f32 rows of unit stride, w broadcast over MUL's rows.
func rmsMulFusable(norm, mul *core.Tensor) bool {
	if norm.Op != core.OpRMSNorm || mul.Op != core.OpMul || mul.Src[0] != norm || skipNode(norm) || skipNode(mul) {
		return false
	}
	x, w := norm.Src[0], mul.Src[1]
	f32 := func(t *core.Tensor) bool { return t != nil && t.Type == core.TypeF32 && t.Nb[0] == 4 }
	if !f32(x) || !f32(norm) || !f32(w) || !f32(mul) || !normSupports(norm) || mul.Ne != norm.Ne {
		return false
	}
	for d := 0; d < core.MaxDims; d++ {
		if w.Ne[d] == 0 || norm.Ne[d]%w.Ne[d] != 0 {
			return false
		}
	}
	return true
}

// computeRMSNormMul is the fused kernel of RMS_NORM (norm) and MUL (dst = norm · Src[1]): per row,
// computeNorm's dense-row path, then computeBinary's fast path on that row.
func computeRMSNormMul(p *params, norm, dst *core.Tensor) {
	x, w := norm.Src[0], dst.Src[1]
	dx, dn, dw, dd := x.Data(), norm.Data(), w.Data(), dst.Data()
	eps := float64(core.EpsOf(norm))
	ne0 := dst.Ne[0]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		xr := f32s(dx[i1*x.Nb[1]+i2*x.Nb[2]+i3*x.Nb[3]:])[:ne0]
		nr := f32s(dn[i1*norm.Nb[1]+i2*norm.Nb[2]+i3*norm.Nb[3]:])[:ne0]
		rmsNormRowTo(nr, xr, eps)
		j1, j2, j3 := i1%w.Ne[1], i2%w.Ne[2], i3%w.Ne[3]
		wr := f32s(dw[j1*w.Nb[1]+j2*w.Nb[2]+j3*w.Nb[3]:])[:w.Ne[0]]
		dr := f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:ne0]
		binaryRowF32Fast(core.OpMul, dr, nr, wr)
	}
}

// fusionsValid reports whether the planned fused pairs of exec still qualify.
func (pl *plan) fusionsValid(exec []*core.Tensor) bool {
	for i, f := range pl.fused {
		if f == fuseRMSMul && (i == 0 || !rmsMulFusable(exec[i-1], exec[i])) {
			return false
		}
	}
	return pl.groupsValid(exec)
}
