package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// GROUP_NORM, UPSCALE, WIN_PART, WIN_UNPART, GET_REL_POS and ADD_REL_POS, after ggml-cpu's
// ops.cpp: every value is computed in float32 with ggml's expressions in ggml's order (GROUP_NORM's
// sums in float64, as ggml_float), so results match ggml's wherever its compiler does not contract
// products into FMAs. Work is split by rows (by group for GROUP_NORM); a result never depends on
// the split. UPSCALE computes each column's taps and weights once per node and worker and then
// walks dst rows as tight loops over those tables.

func init() {
	register(core.OpGroupNorm, opImpl{compute: computeGroupNorm, tasks: groupNormTasks, supports: groupNormSupports})
	register(core.OpUpscale, opImpl{compute: computeUpscale, tasks: rowsTasks, supports: upscaleSupports})
	register(core.OpWinPart, opImpl{compute: computeWinPart, tasks: rowsTasks, supports: winSupports})
	register(core.OpWinUnpart, opImpl{compute: computeWinUnpart, tasks: rowsTasks, supports: winSupports})
	register(core.OpGetRelPos, opImpl{compute: computeGetRelPos, tasks: rowsTasks, supports: getRelPosSupports})
	register(core.OpAddRelPos, opImpl{compute: computeAddRelPos, tasks: rowsTasks, supports: addRelPosSupports})
}

func groupNormSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	g, _ := core.GroupNormParamsOf(dst)
	return f32Unit(a) && f32Unit(dst) && a.Ne == dst.Ne && g >= 1
}

// groupNormTasks: one worker per (group, i3) at most.
func groupNormTasks(dst *core.Tensor, nth int) int {
	g, _ := core.GroupNormParamsOf(dst)
	return int(max(1, min(int64(nth), int64(g)*dst.Ne[3])))
}

// computeGroupNorm: for each group of channels and each i3, the mean of the group's elements, then
// x - mean written to dst with the variance summed alongside, then dst scaled by
// 1/sqrt(var + eps) (ggml_compute_forward_group_norm_f32). Works in place.
func computeGroupNorm(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	nGroups, eps := core.GroupNormParamsOf(dst)
	ne0, ne1, nc := a.Ne[0], a.Ne[1], a.Ne[2]
	per := (nc + int64(nGroups) - 1) / int64(nGroups)
	n := int64(nGroups) * a.Ne[3]
	for task := int64(p.ith); task < n; task += int64(p.nth) {
		g, i3 := task%int64(nGroups), task/int64(nGroups)
		start, end := g*per, min(g*per+per, nc)
		if start >= end {
			continue
		}
		count := float64(ne0 * ne1 * (end - start))
		var sum float64
		for i2 := start; i2 < end; i2++ {
			for i1 := int64(0); i1 < ne1; i1++ {
				sum += sumF32F64(rowOf(a, da, i1, i2, i3))
			}
		}
		mean := float32(sum / count)
		var sum2 float64
		for i2 := start; i2 < end; i2++ {
			for i1 := int64(0); i1 < ne1; i1++ {
				sum2 += centerSquares(rowOf(dst, dd, i1, i2, i3), rowOf(a, da, i1, i2, i3), mean)
			}
		}
		variance := float32(sum2 / count)
		scale := 1 / float32(math.Sqrt(float64(variance+eps)))
		for i2 := start; i2 < end; i2++ {
			for i1 := int64(0); i1 < ne1; i1++ {
				kern.ScaleF32(scale, rowOf(dst, dd, i1, i2, i3))
			}
		}
	}
}

// sumF32F64 sums x in float64, four partial sums.
func sumF32F64(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += float64(x[i])
		s1 += float64(x[i+1])
		s2 += float64(x[i+2])
		s3 += float64(x[i+3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// centerSquares writes y = x - mean (y may be x) and returns Σ(x - mean)², each square rounded to
// float32 and summed in float64 (four partial sums).
func centerSquares(y, x []float32, mean float32) float64 {
	var s0, s1, s2, s3 float64
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v0, v1, v2, v3 := x[i]-mean, x[i+1]-mean, x[i+2]-mean, x[i+3]-mean
		y[i], y[i+1], y[i+2], y[i+3] = v0, v1, v2, v3
		s0 += float64(v0 * v0)
		s1 += float64(v1 * v1)
		s2 += float64(v2 * v2)
		s3 += float64(v3 * v3)
	}
	for ; i < len(x); i++ {
		v := x[i] - mean
		y[i] = v
		s0 += float64(v * v)
	}
	return (s0 + s1) + (s2 + s3)
}

func upscaleSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	m := core.ScaleModeOf(dst)
	return a != nil && a.Type == core.TypeF32 && !a.IsEmpty() && f32Dst(dst, dst.Ne) && m.Mode() <= core.ScaleBicubic &&
		(m&core.ScaleAntialias == 0 || m.Mode() == core.ScaleBilinear)
}

// upscaleGeom is UPSCALE's sampling geometry, as ggml_compute_forward_upscale_f32 derives it.
type upscaleGeom struct {
	sf      [4]float32
	offset  float32 // pixel offset: 0.5, or 0 with align corners
	antiAls bool
}

func newUpscaleGeom(dst *core.Tensor) upscaleGeom {
	a := dst.Src[0]
	m := core.ScaleModeOf(dst)
	var g upscaleGeom
	for i := range g.sf {
		g.sf[i] = float32(dst.Ne[i]) / float32(a.Ne[i])
	}
	g.offset = 0.5
	if m&core.ScaleAlignCorners != 0 {
		g.offset = 0
		if dst.Ne[0] > 1 && a.Ne[0] > 1 {
			g.sf[0] = float32(dst.Ne[0]-1) / float32(a.Ne[0]-1)
		}
		if dst.Ne[1] > 1 && a.Ne[1] > 1 {
			g.sf[1] = float32(dst.Ne[1]-1) / float32(a.Ne[1]-1)
		}
	}
	g.antiAls = m&core.ScaleAntialias != 0
	return g
}

// nearestIndex is ggml's i / sf truncated, kept inside [0, n).
func nearestIndex(i int64, sf float32, n int64) int64 {
	return min(max(int64(float32(i)/sf), 0), n-1)
}

// clampI is v clamped to [0, n-1].
func clampI(v, n int64) int64 { return max(0, min(v, n-1)) }

// bilinearTap is one axis of a bilinear sample at output index i: the two input indices (clamped)
// and the weight of the second, as ggml computes them.
func bilinearTap(i int64, sf, off float32, n int64) (i0, i1 int64, d float32) {
	x := (float32(i)+off)/sf - off
	f := int64(math.Floor(float64(x)))
	i0, i1 = clampI(f, n), clampI(f+1, n)
	d = min(max(x-float32(i0), 0), 1)
	return i0, i1, d
}

// bicubicWeights are the four weights of a bicubic sample at fraction d (a = -0.75, PyTorch's).
func bicubicWeights(d float32) [4]float32 {
	const a = float32(-0.75)
	w1 := func(x float32) float32 { return ((a+2)*x-(a+3))*x*x + 1 }
	w2 := func(x float32) float32 { return ((a*x-5*a)*x+8*a)*x - 4*a }
	return [4]float32{w2(d + 1), w1(d + 0), w1(1 - d), w2(2 - d)}
}

// bicubicTap is one axis of a bicubic sample at output index i: the four input indices (clamped)
// and their weights.
func bicubicTap(i int64, sf, off float32, n int64) (idx [4]int64, w [4]float32) {
	x := (float32(i)+off)/sf - off
	f := int64(math.Floor(float64(x)))
	for k := range idx {
		idx[k] = clampI(f+int64(k)-1, n)
	}
	return idx, bicubicWeights(x - float32(f))
}

// aaTap is one axis of an antialiased bilinear sample at output index i: the input range [lo, hi)
// and the triangle filter's weight of each of its indices.
func aaTap(i int64, sf, off float32, n int64, w []float32) (lo, hi int64, ws []float32) {
	support := max(1, 1/sf)
	inv := 1 / support
	x := (float32(i) + off) / sf
	lo = max(int64(x-support+off), 0)
	hi = min(int64(x+support+off), n)
	ws = w[:0]
	for s := lo; s < hi; s++ {
		ws = append(ws, max(1-float32(math.Abs(float64((float32(s)-x+off)*inv))), 0))
	}
	return lo, hi, ws
}

func computeUpscale(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	g := newUpscaleGeom(dst)
	mode := core.ScaleModeOf(dst).Mode()
	ne0 := dst.Ne[0]
	nb00 := a.Nb[0]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	if r0 >= r1 {
		return
	}
	plane := func(i2, i3 int64) int64 {
		return nearestIndex(i2, g.sf[2], a.Ne[2])*a.Nb[2] + nearestIndex(i3, g.sf[3], a.Ne[3])*a.Nb[3]
	}
	switch {
	case mode == core.ScaleNearest:
		cols := make([]int64, ne0) // byte offset of each column's source element
		for i0 := range cols {
			cols[i0] = nearestIndex(int64(i0), g.sf[0], a.Ne[0]) * nb00
		}
		for ir := r0; ir < r1; ir++ {
			i1, i2, i3 := unravel(ir, dst.Ne)
			base := plane(i2, i3) + nearestIndex(i1, g.sf[1], a.Ne[1])*a.Nb[1]
			y := rowOf(dst, dd, i1, i2, i3)
			if nb00 == 4 {
				x := f32s(da[base:])
				for i0, c := range cols {
					y[i0] = x[c>>2]
				}
				continue
			}
			for i0, c := range cols {
				y[i0] = getF32(da, base+c)
			}
		}
	case mode == core.ScaleBilinear && g.antiAls:
		type tap struct {
			lo, hi int64
			w      []float32
		}
		cols := make([]tap, ne0)
		for i0 := range cols {
			lo, hi, w := aaTap(int64(i0), g.sf[0], g.offset, a.Ne[0], nil)
			cols[i0] = tap{lo, hi, w}
		}
		var wy []float32
		var rows, bufs [][]float32 // the source rows of the output row's window
		for ir := r0; ir < r1; ir++ {
			i1, i2, i3 := unravel(ir, dst.Ne)
			base := plane(i2, i3)
			var ylo, yhi int64
			ylo, yhi, wy = aaTap(i1, g.sf[1], g.offset, a.Ne[1], wy)
			for len(bufs) < int(yhi-ylo) {
				bufs = append(bufs, nil)
			}
			rows = rows[:0]
			for sy := ylo; sy < yhi; sy++ {
				rows = append(rows, upscaleSrcRow(a, da, base, sy, &bufs[sy-ylo]))
			}
			y := rowOf(dst, dd, i1, i2, i3)
			for i0, c := range cols {
				var val, total float32
				for k, row := range rows {
					wyv := wy[k]
					for j, wx := range c.w {
						w := wx * wyv
						if w <= 0 {
							continue
						}
						val += row[c.lo+int64(j)] * w
						total += w
					}
				}
				if total > 0 {
					val /= total
				}
				y[i0] = val
			}
		}
	case mode == core.ScaleBilinear:
		x0s, x1s := make([]int32, ne0), make([]int32, ne0)
		dxs, ex := make([]float32, ne0), make([]float32, ne0) // dx and 1 - dx
		for i0 := range x0s {
			c0, c1, d := bilinearTap(int64(i0), g.sf[0], g.offset, a.Ne[0])
			x0s[i0], x1s[i0], dxs[i0], ex[i0] = int32(c0), int32(c1), d, 1-d
		}
		var bufs [2][]float32
		for ir := r0; ir < r1; ir++ {
			i1, i2, i3 := unravel(ir, dst.Ne)
			base := plane(i2, i3)
			y0, y1, dy := bilinearTap(i1, g.sf[1], g.offset, a.Ne[1])
			bilinearRow(rowOf(dst, dd, i1, i2, i3), upscaleSrcRow(a, da, base, y0, &bufs[0]), upscaleSrcRow(a, da, base, y1, &bufs[1]),
				x0s, x1s, dxs, ex, dy)
		}
	default: // bicubic
		xs := make([][4]int32, ne0)
		wxs := make([][4]float32, ne0)
		for i0 := range xs {
			idx, w := bicubicTap(int64(i0), g.sf[0], g.offset, a.Ne[0])
			for k := range idx {
				xs[i0][k] = int32(idx[k])
			}
			wxs[i0] = w
		}
		var bufs [4][]float32
		var rows [4][]float32
		for ir := r0; ir < r1; ir++ {
			i1, i2, i3 := unravel(ir, dst.Ne)
			base := plane(i2, i3)
			ys, wy := bicubicTap(i1, g.sf[1], g.offset, a.Ne[1])
			for k := range rows {
				rows[k] = upscaleSrcRow(a, da, base, ys[k], &bufs[k])
			}
			bicubicRow(rowOf(dst, dd, i1, i2, i3), &rows, xs, wxs, &wy)
		}
	}
}

// upscaleSrcRow returns row i1 of a's plane at byte offset base as ne00 contiguous values: a's
// own memory for unit-stride rows, else gathered into *buf.
func upscaleSrcRow(a *core.Tensor, da []byte, base, i1 int64, buf *[]float32) []float32 {
	off := base + i1*a.Nb[1]
	if a.Nb[0] == 4 {
		return f32s(da[off:])[:a.Ne[0]]
	}
	if *buf == nil {
		*buf = make([]float32, a.Ne[0])
	}
	b := *buf
	for i := range b {
		b[i] = getF32(da, off+int64(i)*a.Nb[0])
	}
	return b
}

// bilinearRow writes a bilinear dst row from source rows r0 (tap y0) and r1 (y1) with the
// per-column taps x0, x1 and weights dx, ex = 1 - dx, and the row weight dy, in ggml's order:
// a(1-dx)(1-dy) + b·dx(1-dy) + c(1-dx)dy + d·dx·dy.
func bilinearRow(y, r0, r1 []float32, x0, x1 []int32, dx, ex []float32, dy float32) {
	ey := 1 - dy
	x0, x1, dx, ex = x0[:len(y)], x1[:len(y)], dx[:len(y)], ex[:len(y)]
	for i := range y {
		c0, c1 := x0[i], x1[i]
		d, e := dx[i], ex[i]
		y[i] = r0[c0]*e*ey + r0[c1]*d*ey + r1[c0]*e*dy + r1[c1]*d*dy
	}
}

// bicubicRow writes a bicubic dst row from the four source rows with the per-column taps xs and
// weights wxs, and the row weights wy: each row's cubic along x, then the cubic of those along y.
func bicubicRow(y []float32, rows *[4][]float32, xs [][4]int32, wxs [][4]float32, wy *[4]float32) {
	r0, r1, r2, r3 := rows[0], rows[1], rows[2], rows[3]
	xs, wxs = xs[:len(y)], wxs[:len(y)]
	for i := range y {
		c, w := &xs[i], &wxs[i]
		h0 := r0[c[0]]*w[0] + r0[c[1]]*w[1] + r0[c[2]]*w[2] + r0[c[3]]*w[3]
		h1 := r1[c[0]]*w[0] + r1[c[1]]*w[1] + r1[c[2]]*w[2] + r1[c[3]]*w[3]
		h2 := r2[c[0]]*w[0] + r2[c[1]]*w[1] + r2[c[2]]*w[2] + r2[c[3]]*w[3]
		h3 := r3[c[0]]*w[0] + r3[c[1]]*w[1] + r3[c[2]]*w[2] + r3[c[3]]*w[3]
		y[i] = h0*wy[0] + h1*wy[1] + h2*wy[2] + h3*wy[3]
	}
}

func winSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF32 && a.Nb[0] == 4 && f32Dst(dst, dst.Ne) && core.WinShapesAgree(dst)
}

// computeWinPart: dst row (i1, i2) of window i3 = py·npx + px is a's row (px·w + i1, py·w + i2),
// or zeros past a's edge (ggml_compute_forward_win_part_f32).
func computeWinPart(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	npx, _, w := core.WinParams(dst)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		py, px := i3/int64(npx), i3%int64(npx)
		s1, s2 := px*int64(w)+i1, py*int64(w)+i2
		y := rowOf(dst, dd, i1, i2, i3)
		if s1 >= a.Ne[1] || s2 >= a.Ne[2] {
			clear(y)
			continue
		}
		copy(y, rowOf(a, da, s1, s2, 0))
	}
}

// computeWinUnpart: dst row (i1, i2) is row (i1 mod w, i2 mod w) of window (i2/w)·npx + i1/w of a
// (ggml_compute_forward_win_unpart_f32).
func computeWinUnpart(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	npx, _, w64 := core.WinParams(dst)
	w := int64(w64)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		copy(rowOf(dst, dd, i1, i2, i3), rowOf(a, da, i1%w, i2%w, (i2/w)*int64(npx)+i1/w))
	}
}

func getRelPosSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF16 && a.Nb[0] == 2 && dst.Type == core.TypeF16 && dst.IsContiguous() &&
		a.Ne[0] == dst.Ne[0] && a.Ne[1] >= 2*dst.Ne[1]-1 && dst.Ne[1] == dst.Ne[2]
}

// computeGetRelPos: dst row (k, q) is a's row (kh - 1 - k) + q, kh = dst's ne1
// (ggml_compute_forward_get_rel_pos_f16: the 16-bit values copied).
func computeGetRelPos(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	kh := dst.Ne[1]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		pos := kh - i1 - 1 + i2
		y := u16s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:dst.Ne[0]]
		copy(y, u16s(da[pos*a.Nb[1]:])[:dst.Ne[0]])
	}
}

func addRelPosSupports(dst *core.Tensor) bool {
	a, pw, ph := dst.Src[0], dst.Src[1], dst.Src[2]
	if a == nil || pw == nil || ph == nil || !f32Dst(dst, a.Ne) || !a.IsContiguous() {
		return false
	}
	k := pw.Ne[0]
	return pw.Type == core.TypeF32 && ph.Type == core.TypeF32 && pw.IsContiguous() && ph.IsContiguous() &&
		pw.Ne == ph.Ne && k*k == a.Ne[0] && pw.Ne[1]*pw.Ne[2]*pw.Ne[3] <= a.NRows()
}

// computeAddRelPos: dst = a, then in each of the first ne11·ne12·ne13 rows r of dst (pw's rows),
// element kh·k + kw += ph[r, kh] and pw[r, kw], in ggml's order: the term of the smaller index
// first, ph's on a tie (ggml_compute_forward_add_rel_pos_f32 adds ph's row terms and pw's column
// terms for i10 = 0, 1, ... in turn).
func computeAddRelPos(p *params, dst *core.Tensor) {
	a, pw, ph := dst.Src[0], dst.Src[1], dst.Src[2]
	xa, xd := f32s(a.Data()), f32s(dst.Data())
	w, h := f32s(pw.Data()), f32s(ph.Data())
	k := pw.Ne[0]
	n := a.Ne[0]
	nr := pw.Ne[1] * pw.Ne[2] * pw.Ne[3]
	r0, r1 := rowRange(a.NRows(), p.ith, p.nth)
	for r := r0; r < r1; r++ {
		y := xd[r*n : (r+1)*n]
		copy(y, xa[r*n:(r+1)*n]) // a no-op in place
		if r >= nr {
			continue
		}
		wr, hr := w[r*k:(r+1)*k], h[r*k:(r+1)*k]
		for kh := int64(0); kh < k; kh++ {
			row := y[kh*k : (kh+1)*k]
			hv := hr[kh]
			for kw, wv := range wr {
				if kh <= int64(kw) {
					row[kw] = row[kw] + hv + wv
				} else {
					row[kw] = row[kw] + wv + hv
				}
			}
		}
	}
}
