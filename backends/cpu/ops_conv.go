package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// IM2COL, POOL_1D and POOL_2D. (CONV_1D / CONV_2D are composites built by core from IM2COL and
// MUL_MAT.)

func init() {
	register(core.OpIm2Col, opImpl{compute: computeIm2Col, work: im2colWork, supports: im2colSupports})
	register(core.OpPool1D, opImpl{compute: computePool1D, work: pool1DWork, supports: poolSupports})
	register(core.OpPool2D, opImpl{compute: computePool2D, work: pool2DWork, supports: poolSupports})
}

// convElem reads the element of float type t at byte offset off as f32.
func convElem(t core.Type, data []byte, off int64) float32 {
	switch t {
	case core.TypeF32:
		return getF32(data, off)
	case core.TypeF16:
		return quant.FP16ToFP32(u16s(data[off : off+2])[0])
	default: // BF16
		return quant.BF16ToFP32(u16s(data[off : off+2])[0])
	}
}

func convFloatType(t core.Type) bool {
	return t == core.TypeF32 || t == core.TypeF16 || t == core.TypeBF16
}

// IM2COL follows ggml_compute_forward_im2col_f32 / _f16 (ggml/src/ggml-cpu/ops.cpp). 2-D: kernel a
// [KW, KH, IC, OC] (only its shape is used), input b [IW, IH, IC, N], dst [IC·KH·KW, OW, OH, N] with
// dst[ic·KH·KW + kh·KW + kw, ow, oh, n] = b[ow·s0 + kw·d0 - p0, oh·s1 + kh·d1 - p1, ic, n], zero
// outside the input. 1-D is the same with KH = IH = OH = 1: a [K, IC, OC], b [L, IC, N], dst
// [IC·K, OL, N]. ggml splits the channels among threads; here each worker fills whole dst rows (one
// patch, ne0 values) in f32 scratch and stores them (converting to f16), so results do not depend on
// the thread count and any input strides work.

func im2colSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return a != nil && b != nil && convFloatType(b.Type) && (dst.Type == core.TypeF32 || dst.Type == core.TypeF16)
}

func im2colWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

func computeIm2Col(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	db, dd := b.Data(), dst.Data()
	pr := core.Im2ColParamsOf(dst)
	s0, s1, p0, p1 := int64(pr.S0), int64(pr.S1), int64(pr.P0), int64(pr.P1)
	d0, d1 := int64(pr.D0), int64(pr.D1)
	iw, kw := b.Ne[0], a.Ne[0]
	ih, kh, ic := int64(1), int64(1), b.Ne[1]
	nbH, nbC, nbN := int64(0), b.Nb[1], b.Nb[2]
	if pr.Is2D {
		ih, kh, ic = b.Ne[1], a.Ne[1], b.Ne[2]
		nbH, nbC, nbN = b.Nb[1], b.Nb[2], b.Nb[3]
	}
	row := scratch(p, dst.Ne[0])
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		ow, oh, n := i1, int64(0), i2
		if pr.Is2D {
			oh, n = i2, i3
		}
		k := 0
		for c := int64(0); c < ic; c++ {
			base := n*nbN + c*nbC
			for y := int64(0); y < kh; y++ {
				iy := oh*s1 + y*d1 - p1
				for x := int64(0); x < kw; x++ {
					ix := ow*s0 + x*d0 - p0
					v := float32(0)
					if iy >= 0 && iy < ih && ix >= 0 && ix < iw {
						v = convElem(b.Type, db, base+iy*nbH+ix*b.Nb[0])
					}
					row[k] = v
					k++
				}
			}
		}
		storeRow(dst, dd, i1, i2, i3, row)
	}
}

// POOL_1D / POOL_2D follow ggml_compute_forward_pool_2d (ggml/src/ggml-cpu/ops.cpp): output
// (ox, oy) covers input columns ox·s0 - p0 + [0, k0) and rows oy·s1 - p1 + [0, k1); positions in the
// padding are skipped for max and count as zero for avg, which divides by the full k0·k1. ggml's
// pool_1d supports only s0 == k0 and p0 == 0; here 1-D is the 2-D rule with k1 = 1, s1 = 1, p1 = 0.
// Sums are in float64. Max starts from -inf (ggml: -FLT_MAX; they differ only for windows holding
// nothing but -inf). ggml runs pooling on one thread; here dst rows are split among all workers,
// which computes every output the same way regardless of the split.

func poolSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && convFloatType(a.Type) && dst.Type == core.TypeF32 &&
		(core.PoolParamsOf(dst).Op == core.PoolMax || core.PoolParamsOf(dst).Op == core.PoolAvg)
}

func pool1DWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

func pool2DWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

// computePool1D is POOL_2D with k1 = s1 = 1 and p1 = 0 (PoolParamsOf says so).
func computePool1D(p *params, dst *core.Tensor) { computePool2D(p, dst) }

func computePool2D(p *params, dst *core.Tensor) {
	pp := core.PoolParamsOf(dst)
	poolRows(p, dst, pp.Op, int64(pp.K0), int64(pp.K1), int64(pp.S0), int64(pp.S1), int64(pp.P0), int64(pp.P1))
}

// poolRows pools over dims 0 (and 1 when k1 > 1 or the op is 2-D) of dst.Src[0]. For 1-D every
// row of the input is its own plane: dst row (i1, i2, i3) reads input row (i1, i2, i3).
//
// Padding positions are skipped. Average pooling keeps ggml's reference rules, which differ by
// op: POOL_2D divides by k0·k1 (ggml_compute_forward_pool_2d), POOL_1D by the number of in-bounds
// positions of the window, 0 for a window wholly in the padding (ggml_compute_forward_pool_1d_ksp).
// Max pooling starts at -FLT_MAX as ggml's does, so a window wholly in the padding (paddings may
// reach the kernel size and beyond) or holding only -Inf gives -FLT_MAX.
func poolRows(p *params, dst *core.Tensor, op core.PoolOp, k0, k1, s0, s1, p0, p1 int64) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	is2D := dst.Op == core.OpPool2D
	row := scratch(p, dst.Ne[0])
	inW, inH := a.Ne[0], int64(1)
	if is2D {
		inH = a.Ne[1]
	}
	const lowest = -math.MaxFloat32 // ggml's -FLT_MAX
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		oy := int64(0)
		plane := i1*a.Nb[1] + i2*a.Nb[2] + i3*a.Nb[3]
		if is2D {
			oy = i1
			plane = i2*a.Nb[2] + i3*a.Nb[3]
		}
		for ox := range row {
			x0, y0 := int64(ox)*s0-p0, oy*s1-p1
			mx := float32(lowest)
			var sum float64
			count := int64(0)
			for ky := max(y0, 0); ky < min(y0+k1, inH); ky++ {
				for kx := max(x0, 0); kx < min(x0+k0, inW); kx++ {
					v := convElem(a.Type, da, plane+ky*a.Nb[1]+kx*a.Nb[0])
					sum += float64(v)
					count++
					if v > mx {
						mx = v
					}
				}
			}
			switch {
			case op == core.PoolAvg && is2D:
				row[ox] = float32(sum / float64(k0*k1))
			case op == core.PoolAvg && count > 0:
				row[ox] = float32(sum / float64(count))
			case op == core.PoolAvg:
				row[ox] = 0
			default:
				row[ox] = mx
			}
		}
		storeRow(dst, dd, i1, i2, i3, row)
	}
}
