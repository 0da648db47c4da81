package cpu

import (
	"cmp"
	"math"
	"slices"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// Generators, fills and index-shuffling ops: ADD_ID, L2_NORM, COUNT_EQUAL, SET, TOP_K, ARANGE,
// FILL, TRI, DIAG, CUMSUM, ROLL, PAD, PAD_REFLECT_1D, TIMESTEP_EMBEDDING. Every kernel computes
// in float32 as ggml's CPU kernels do (L2_NORM's sum of squares in float64, as ggml_float), and
// splits rows among workers where the result does not depend on the split.

func init() {
	register(core.OpAddID, opImpl{compute: computeAddID, tasks: rowsTasks, supports: addIDSupports})
	register(core.OpL2Norm, opImpl{compute: computeL2Norm, tasks: rowsTasks, supports: l2NormSupports})
	register(core.OpCountEqual, opImpl{compute: computeCountEqual, tasks: single, supports: countEqualSupports})
	register(core.OpSet, opImpl{compute: computeSet, tasks: single, supports: setSupports})
	register(core.OpTopK, opImpl{compute: computeTopK, tasks: topKTasks, work: topKWork, supports: topKSupports})
	register(core.OpArange, opImpl{compute: computeArange, tasks: single, supports: arangeSupports})
	register(core.OpFill, opImpl{compute: computeFill, tasks: rowsTasks, supports: fillSupports})
	register(core.OpTri, opImpl{compute: computeTri, tasks: rowsTasks, supports: triSupports})
	register(core.OpDiag, opImpl{compute: computeDiag, tasks: rowsTasks, supports: diagSupports})
	register(core.OpCumsum, opImpl{compute: computeCumsum, tasks: rowsTasks, supports: cumsumSupports})
	register(core.OpRoll, opImpl{compute: computeRoll, tasks: rowsTasks, supports: rollSupports})
	register(core.OpPad, opImpl{compute: computePad, tasks: rowsTasks, supports: padSupports})
	register(core.OpPadReflect1D, opImpl{compute: computePadReflect, tasks: rowsTasks, supports: padReflectSupports})
	register(core.OpTimestepEmbedding, opImpl{compute: computeTimestep, tasks: rowsTasks, supports: timestepSupports})
}

// f32Unit reports whether t is f32 with unit stride along dim 0 (or a single column).
func f32Unit(t *core.Tensor) bool {
	return t != nil && t.Type == core.TypeF32 && (t.Nb[0] == 4 || t.Ne[0] <= 1)
}

// f32Dst reports whether dst is a contiguous f32 tensor of shape ne.
func f32Dst(dst *core.Tensor, ne [4]int64) bool {
	return dst.Type == core.TypeF32 && dst.Ne == ne && dst.IsContiguous()
}

// rowOf returns the f32 elements of row (i1, i2, i3) of a tensor with unit stride along dim 0.
func rowOf(t *core.Tensor, data []byte, i1, i2, i3 int64) []float32 {
	return f32s(data[i1*t.Nb[1]+i2*t.Nb[2]+i3*t.Nb[3]:])[:t.Ne[0]]
}

func addIDSupports(dst *core.Tensor) bool {
	a, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	return f32Unit(a) && f32Unit(b) && ids != nil && ids.Type == core.TypeI32 && a.Ne[0] == b.Ne[0] &&
		ids.Ne[0] == a.Ne[1] && ids.Ne[1] == a.Ne[2] && f32Dst(dst, a.Ne)
}

// computeAddID: dst row (i1, i2, i3) = a's row + b's row ids[i1, i2]; an id outside b fails the node.
func computeAddID(p *params, dst *core.Tensor) {
	a, b, ids := dst.Src[0], dst.Src[1], dst.Src[2]
	da, db, di, dd := a.Data(), b.Data(), ids.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		id := int64(i32s(di[i1*ids.Nb[0]+i2*ids.Nb[1]:])[0])
		if id < 0 || id >= b.Ne[1] {
			p.fail(errorfCPU("ADD_ID: id %d at (%d, %d) of %v is outside [0, %d)", id, i1, i2, ids, b.Ne[1]))
			return
		}
		x, y, d := rowOf(a, da, i1, i2, i3), f32s(db[id*b.Nb[1]:])[:b.Ne[0]], rowOf(dst, dd, i1, i2, i3)
		for i := range d {
			d[i] = x[i] + y[i]
		}
	}
}

func l2NormSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF32 && f32Dst(dst, a.Ne)
}

// computeL2Norm: each row times 1/max(sqrt(Σx²), eps), the squares rounded to f32 and summed in
// float64, the root taken in f32 (ggml_compute_forward_l2_norm_f32).
func computeL2Norm(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	eps := core.EpsOf(dst)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		off := i1*a.Nb[1] + i2*a.Nb[2] + i3*a.Nb[3]
		var sum float64
		for i := int64(0); i < a.Ne[0]; i++ {
			x := getF32(da, off+i*a.Nb[0])
			sum += float64(float32(x * x))
		}
		scale := 1 / max(float32(math.Sqrt(float64(float32(sum)))), eps)
		d := rowOf(dst, dd, i1, i2, i3)
		for i := range d {
			d[i] = getF32(da, off+int64(i)*a.Nb[0]) * scale
		}
	}
}

func countEqualSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return a != nil && b != nil && a.Type == core.TypeI32 && b.Type == core.TypeI32 && a.Ne == b.Ne &&
		dst.Type == core.TypeI64 && dst.NElements() == 1
}

// computeCountEqual: the number of positions where the i32 tensors agree, as one i64.
func computeCountEqual(_ *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	da, db := a.Data(), b.Data()
	var n int64
	for ir := int64(0); ir < a.NRows(); ir++ {
		i1, i2, i3 := unravel(ir, a.Ne)
		oa, ob := i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3], i1*b.Nb[1]+i2*b.Nb[2]+i3*b.Nb[3]
		for i0 := int64(0); i0 < a.Ne[0]; i0++ {
			if i32s(da[oa+i0*a.Nb[0]:])[0] == i32s(db[ob+i0*b.Nb[0]:])[0] {
				n++
			}
		}
	}
	i64s(dst.Data())[0] = n
}

func setSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	if a == nil || b == nil || a.Type != dst.Type || b.Type != dst.Type || a.Ne != dst.Ne {
		return false
	}
	es := dst.Type.Size()
	return (dst.Type == core.TypeF32 || dst.Type == core.TypeI32) && a.IsContiguous() && dst.IsContiguous() &&
		(b.Nb[0] == es || b.Ne[0] <= 1)
}

// computeSet: dst = a (unless the node writes into a's memory), then the window of dst at the
// node's byte strides and offset (b's shape) = b. A window outside dst fails the node.
func computeSet(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	sp := core.SetParamsOf(dst)
	dd := dst.Data()
	if !sp.Inplace && !(a.Buffer == dst.Buffer && a.Offset == dst.Offset) {
		copy(dd[:dst.NBytes()], a.Data()[:a.NBytes()])
	}
	if b.IsEmpty() {
		return
	}
	es := dst.Type.Size()
	last := sp.Offset + (b.Ne[0]-1)*es + (b.Ne[1]-1)*sp.Nb1 + (b.Ne[2]-1)*sp.Nb2 + (b.Ne[3]-1)*sp.Nb3
	if sp.Offset < 0 || sp.Nb1 < 0 || sp.Nb2 < 0 || sp.Nb3 < 0 || last+es > dst.NBytes() {
		p.fail(errorfCPU("SET: window of %v at offset %d exceeds %v", b, sp.Offset, dst))
		return
	}
	db := b.Data()
	n := b.Ne[0] * es
	for ir := int64(0); ir < b.NRows(); ir++ {
		i1, i2, i3 := unravel(ir, b.Ne)
		od := sp.Offset + i1*sp.Nb1 + i2*sp.Nb2 + i3*sp.Nb3
		ob := i1*b.Nb[1] + i2*b.Nb[2] + i3*b.Nb[3]
		copy(dd[od:od+n], db[ob:ob+n])
	}
}

func topKSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF32 && dst.Type == core.TypeI32 && dst.IsContiguous() &&
		dst.Ne[0] >= 1 && dst.Ne[0] <= a.Ne[0] && a.Ne[0] <= math.MaxInt32 &&
		dst.Ne[1] == a.Ne[1] && dst.Ne[2] == a.Ne[2] && dst.Ne[3] == a.Ne[3]
}

func topKTasks(dst *core.Tensor, nth int) int { return rowsTasks(dst.Src[0], nth) }

// topKWork: per worker, one f32 row of src0 and its indices.
func topKWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(2*dst.Src[0].Ne[0], nTasks) }

// computeTopK: per row, the indices of the k largest elements by decreasing value (a stable
// order: equal values by increasing index, NaNs last), the first two swapped as ggml's CPU kernel
// does to show that the order is not part of the contract.
func computeTopK(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	ne0, k := a.Ne[0], dst.Ne[0]
	stride := (2*ne0*4 + 63) / 64 * 64 // scratch's layout of 2·ne0 words per worker
	w := p.work[int64(p.ith)*stride : int64(p.ith)*stride+2*ne0*4]
	buf, idx := f32s(w)[:ne0], i32s(w[ne0*4:])[:ne0]
	r0, r1 := rowRange(a.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, a.Ne)
		x := eltSrcRow(a, da, i1, i2, i3, buf)
		for i := range idx {
			idx[i] = int32(i)
		}
		slices.SortStableFunc(idx, func(i, j int32) int { return cmp.Compare(x[j], x[i]) })
		out := i32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:k]
		copy(out, idx[:k])
		if k > 1 {
			out[0], out[1] = out[1], out[0]
		}
	}
}

func arangeSupports(dst *core.Tensor) bool {
	start, stop, step := core.ArangeParamsOf(dst)
	return dst.Type == core.TypeF32 && dst.IsContiguous() && step > 0 &&
		dst.NElements() == int64(math.Ceil(float64((stop-start)/step)))
}

// computeArange: element i = start + step·i in float32 (the product rounded before the sum).
func computeArange(_ *params, dst *core.Tensor) {
	start, _, step := core.ArangeParamsOf(dst)
	d := f32s(dst.Data())[:dst.NElements()]
	for i := range d {
		d[i] = start + float32(step*float32(i))
	}
}

func fillSupports(dst *core.Tensor) bool {
	return (dst.Type == core.TypeF32 || dst.Type == core.TypeF16) && dst.IsContiguous()
}

// computeFill: every element of dst = the node's value (rounded to f16 for f16).
func computeFill(p *params, dst *core.Tensor) {
	v := core.FillValueOf(dst)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	n := dst.Ne[0]
	dd := dst.Data()
	if dst.Type == core.TypeF16 {
		h := quant.FP32ToFP16(v)
		row := u16s(dd)
		for i := r0 * n; i < r1*n; i++ {
			row[i] = h
		}
		return
	}
	row := f32s(dd)
	for i := r0 * n; i < r1*n; i++ {
		row[i] = v
	}
}

func triSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF32 && a.IsContiguous() && a.Ne[0] == a.Ne[1] && f32Dst(dst, a.Ne)
}

// computeTri: element (i0, i1) kept where the node's triangle holds it, else 0.
func computeTri(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	tt := core.TriTypeOf(dst)
	da, dd := a.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		x, d := rowOf(a, da, i1, i2, i3), rowOf(dst, dd, i1, i2, i3)
		for i0 := range d {
			if tt.Keeps(int64(i0), i1) {
				d[i0] = x[i0]
			} else {
				d[i0] = 0
			}
		}
	}
}

func diagSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return f32Unit(a) && a.Ne[1] == 1 && f32Dst(dst, [4]int64{a.Ne[0], a.Ne[0], a.Ne[2], a.Ne[3]})
}

// computeDiag: dst (i0, i1, i2, i3) = a[i0, 0, i2, i3] where i0 = i1, else 0.
func computeDiag(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		d := rowOf(dst, dd, i1, i2, i3)
		clear(d)
		d[i1] = rowOf(a, da, 0, i2, i3)[i1]
	}
}

func cumsumSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return f32Unit(a) && f32Dst(dst, a.Ne)
}

// computeCumsum: the running float32 sum of each row, in order.
func computeCumsum(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		x, d := rowOf(a, da, i1, i2, i3), rowOf(dst, dd, i1, i2, i3)
		var s float32
		for i, v := range x {
			s += v
			d[i] = s
		}
	}
}

// wrap returns i modulo n in [0, n) for i in [-n, 2n).
func wrap(i, n int64) int64 {
	switch {
	case i < 0:
		return i + n
	case i >= n:
		return i - n
	}
	return i
}

func rollSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if !f32Unit(a) || !f32Dst(dst, a.Ne) {
		return false
	}
	s := core.RollShiftsOf(dst)
	for i := range s {
		if max(s[i], -s[i]) >= a.Ne[i] {
			return false
		}
	}
	return true
}

// computeRoll: dst[i] = a[(i - shift) mod ne] in every dimension.
func computeRoll(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	s := core.RollShiftsOf(dst)
	da, dd := a.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	n := a.Ne[0]
	s0 := wrap(-s[0], n) // dst[i0] = x[(i0 + s0) mod n]
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		x := rowOf(a, da, wrap(i1-s[1], a.Ne[1]), wrap(i2-s[2], a.Ne[2]), wrap(i3-s[3], a.Ne[3]))
		d := rowOf(dst, dd, i1, i2, i3)
		copy(d, x[s0:])
		copy(d[n-s0:], x[:s0])
	}
}

func padSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if a == nil || a.Type != core.TypeF32 {
		return false
	}
	pp := core.PadParamsOf(dst)
	var ne [4]int64
	for i := range ne {
		l, r := int64(pp.Left[i]), int64(pp.Right[i])
		if l < 0 || r < 0 || pp.Circular && (l > a.Ne[i] || r > a.Ne[i]) {
			return false
		}
		ne[i] = a.Ne[i] + l + r
	}
	return f32Dst(dst, ne)
}

// computePad: dst element i = a[i - left] where that lies inside a, else 0 (circular: a's element
// at i - left wrapped modulo a's size).
func computePad(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	pp := core.PadParamsOf(dst)
	da, dd := a.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	var lp [4]int64
	for i := range lp {
		lp[i] = int64(pp.Left[i])
	}
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		d := rowOf(dst, dd, i1, i2, i3)
		j1, j2, j3 := i1-lp[1], i2-lp[2], i3-lp[3]
		if pp.Circular {
			j1, j2, j3 = wrap(j1, a.Ne[1]), wrap(j2, a.Ne[2]), wrap(j3, a.Ne[3])
		} else if j1 < 0 || j1 >= a.Ne[1] || j2 < 0 || j2 >= a.Ne[2] || j3 < 0 || j3 >= a.Ne[3] {
			clear(d)
			continue
		}
		off := j1*a.Nb[1] + j2*a.Nb[2] + j3*a.Nb[3]
		for i0 := range d {
			j0 := int64(i0) - lp[0]
			if pp.Circular {
				j0 = wrap(j0, a.Ne[0])
			} else if j0 < 0 || j0 >= a.Ne[0] {
				d[i0] = 0
				continue
			}
			d[i0] = getF32(da, off+j0*a.Nb[0])
		}
	}
}

func padReflectSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	p0, p1 := core.PadReflectOf(dst)
	return a != nil && a.Type == core.TypeF32 && a.IsContiguous() && p0 >= 0 && p1 >= 0 &&
		p0 < a.Ne[0] && p1 < a.Ne[0] && f32Dst(dst, [4]int64{a.Ne[0] + p0 + p1, a.Ne[1], a.Ne[2], a.Ne[3]})
}

// computePadReflect: each row copied to p0..p0+ne0-1, then mirrored about its first and last
// element into the paddings.
func computePadReflect(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	p0, _ := core.PadReflectOf(dst)
	da, dd := a.Data(), dst.Data()
	n := a.Ne[0]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		x, d := rowOf(a, da, i1, i2, i3), rowOf(dst, dd, i1, i2, i3)
		for i := range d {
			d[i] = x[reflectIndex(int64(i)-p0, n)]
		}
	}
}

// reflectIndex maps j in (-n, 2n-1) into [0, n) by mirroring about 0 and n-1.
func reflectIndex(j, n int64) int64 {
	if j < 0 {
		return -j
	}
	if j >= n {
		return 2*(n-1) - j
	}
	return j
}

func timestepSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	dim, period := core.TimestepParamsOf(dst)
	return f32Unit(a) && a.NElements() == a.Ne[0] && dim >= 1 && period >= 1 &&
		f32Dst(dst, [4]int64{dim, a.Ne[0], 1, 1})
}

// computeTimestep: row i = cos(t_i·f_j) for j < half, sin(t_i·f_j), and a trailing 0 for odd dim,
// with f_j = exp(-ln(max_period)·j/half), each step rounded to float32 as ggml's kernel computes it.
func computeTimestep(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	dim, period := core.TimestepParamsOf(dst)
	half := dim / 2
	lnp := float32(math.Log(float64(period)))
	da, dd := a.Data(), dst.Data()
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for i := r0; i < r1; i++ {
		ts := getF32(da, i*a.Nb[0])
		d := rowOf(dst, dd, i, 0, 0)
		for j := int64(0); j < half; j++ {
			freq := timestepFreq(lnp, j, half)
			arg := float64(ts * freq)
			d[j] = float32(math.Cos(arg))
			d[j+half] = float32(math.Sin(arg))
		}
		if dim%2 != 0 {
			d[dim-1] = 0
		}
	}
}

// timestepFreq is f_j = exp(-ln(max_period)·j/half) of TIMESTEP_EMBEDDING, lnp = ln(max_period)
// in float32, every step rounded to float32 (expf(-logf(max_period)*j/half) in ggml).
func timestepFreq(lnp float32, j, half int64) float32 {
	x := float32(-lnp * float32(j))
	x = float32(x / float32(half))
	return float32(math.Exp(float64(x)))
}
