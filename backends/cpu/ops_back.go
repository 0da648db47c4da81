package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// The *_BACK ops of the automatic differentiation (ggml/src/ggml-cpu/ops.cpp:
// ggml_compute_forward_silu_back, _rms_norm_back, _soft_max_ext_back, _get_rows_back, _repeat_back,
// _acc, _im2col_back_f32, _pool_2d_back), f32 reference kernels. Row kernels load each row into
// per-worker scratch (any source strides work) and reduce in float64. Scatter kernels (GET_ROWS_BACK,
// POOL_2D_BACK, ACC) run on one worker so that the order of the additions is fixed. No kernel
// allocates: scratch comes from the plan's work buffer.

func init() {
	register(core.OpSiluBack, opImpl{compute: computeSiluBack, tasks: rowsTasks, work: twoRowsWork, supports: sameShapeF32Supports(2)})
	register(core.OpRMSNormBack, opImpl{compute: computeRMSNormBack, tasks: rowsTasks, work: twoRowsWork, supports: sameShapeF32Supports(2)})
	register(core.OpSoftMaxBack, opImpl{compute: computeSoftMaxBack, tasks: rowsTasks, work: twoRowsWork, supports: sameShapeF32Supports(2)})
	register(core.OpGetRowsBack, opImpl{compute: computeGetRowsBack, tasks: single, work: oneRowWork, supports: getRowsBackSupports})
	register(core.OpRepeatBack, opImpl{compute: computeRepeatBack, tasks: rowsTasks, work: repeatBackWork, supports: repeatBackSupports})
	register(core.OpAcc, opImpl{compute: computeAcc, tasks: single, work: oneRowWork, supports: accSupports})
	register(core.OpIm2ColBack, opImpl{compute: computeIm2ColBack, supports: im2colBackSupports})
	register(core.OpPool2DBack, opImpl{compute: computePool2DBack, tasks: single, supports: pool2DBackSupports})
}

// sameShapeF32Supports accepts an F32 node whose first n sources are F32 of its shape.
func sameShapeF32Supports(n int) func(dst *core.Tensor) bool {
	return func(dst *core.Tensor) bool {
		if dst.Type != core.TypeF32 {
			return false
		}
		for i := 0; i < n; i++ {
			s := dst.Src[i]
			if s == nil || s.Type != core.TypeF32 || s.Ne != dst.Ne {
				return false
			}
		}
		return true
	}
}

func oneRowWork(dst *core.Tensor, nTasks int) int64  { return scratchBytes(dst.Ne[0], nTasks) }
func twoRowsWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(2*dst.Ne[0], nTasks) }

// computeSiluBack: dx = g·s·(1 + x·(1 − s)), s = 1/(1 + e^−x).
func computeSiluBack(p *params, dst *core.Tensor) {
	g, x := dst.Src[0], dst.Src[1]
	dg, dx, dd := g.Data(), x.Data(), dst.Data()
	ne0 := dst.Ne[0]
	buf := scratch(p, 2*ne0)
	gr, xr := buf[:ne0], buf[ne0:]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(g, dg, i1, i2, i3, gr)
		loadRow(x, dx, i1, i2, i3, xr)
		for i, xv := range xr {
			v := float64(xv)
			s := 1 / (1 + math.Exp(-v))
			gr[i] = float32(float64(gr[i]) * s * (1 + v*(1-s)))
		}
		storeRow(dst, dd, i1, i2, i3, gr)
	}
}

// computeRMSNormBack: per row of n, with ms = mean(x²) + eps:
// dx = (g − x·Σ(x·g)/(n·ms)) / sqrt(ms).
func computeRMSNormBack(p *params, dst *core.Tensor) {
	g, x := dst.Src[0], dst.Src[1]
	dg, dx, dd := g.Data(), x.Data(), dst.Data()
	ne0 := dst.Ne[0]
	eps := float64(dst.ParamF32(0))
	buf := scratch(p, 2*ne0)
	gr, xr := buf[:ne0], buf[ne0:]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(g, dg, i1, i2, i3, gr)
		loadRow(x, dx, i1, i2, i3, xr)
		var sxx, sxg float64
		for i, xv := range xr {
			sxx += float64(xv) * float64(xv)
			sxg += float64(xv) * float64(gr[i])
		}
		ms := sxx/float64(ne0) + eps
		rrms := 1 / math.Sqrt(ms)
		c := -sxg / (float64(ne0) * ms)
		for i, xv := range xr {
			gr[i] = float32((float64(gr[i]) + float64(xv)*c) * rrms)
		}
		storeRow(dst, dd, i1, i2, i3, gr)
	}
}

// computeSoftMaxBack: per row, dx = scale·y⊙(g − Σ y·g). The ALiBi max_bias parameter does not
// enter (the slope multiplies the mask, not x).
func computeSoftMaxBack(p *params, dst *core.Tensor) {
	g, y := dst.Src[0], dst.Src[1]
	dg, dy, dd := g.Data(), y.Data(), dst.Data()
	ne0 := dst.Ne[0]
	scale := float64(dst.ParamF32(0))
	buf := scratch(p, 2*ne0)
	gr, yr := buf[:ne0], buf[ne0:]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(g, dg, i1, i2, i3, gr)
		loadRow(y, dy, i1, i2, i3, yr)
		var dot float64
		for i, yv := range yr {
			dot += float64(yv) * float64(gr[i])
		}
		for i, yv := range yr {
			gr[i] = float32(scale * float64(yv) * (float64(gr[i]) - dot))
		}
		storeRow(dst, dd, i1, i2, i3, gr)
	}
}

func getRowsBackSupports(dst *core.Tensor) bool {
	g, idx := dst.Src[0], dst.Src[1]
	return g != nil && idx != nil && (g.Type == core.TypeF32 || g.Type == core.TypeF16) && dst.Type == core.TypeF32 && eltIndexType(idx.Type) &&
		idx.Ne[0] <= g.Ne[1] && idx.Ne[1] == g.Ne[2] && idx.Ne[2] == g.Ne[3] &&
		dst.Ne[0] == g.Ne[0] && dst.Ne[2] == g.Ne[2] && dst.Ne[3] == g.Ne[3]
}

// zeroRows sets every element of dst to 0 (row by row, any strides).
func zeroRows(dst *core.Tensor, dd []byte, row []float32) {
	clear(row)
	for ir := int64(0); ir < dst.NRows(); ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		storeRow(dst, dd, i1, i2, i3, row)
	}
}

// computeGetRowsBack: dst = 0, then dst[:, idx[r, i2, i3], i2, i3] += g[:, r, i2, i3] in index order.
func computeGetRowsBack(p *params, dst *core.Tensor) {
	g, idx := dst.Src[0], dst.Src[1]
	dg, di, dd := g.Data(), idx.Data(), dst.Data()
	row := scratch(p, dst.Ne[0])
	zeroRows(dst, dd, row)
	for i3 := int64(0); i3 < g.Ne[3]; i3++ {
		for i2 := int64(0); i2 < g.Ne[2]; i2++ {
			for r := int64(0); r < idx.Ne[0]; r++ { // g may hold more rows than idx (ggml)
				k := eltIndex(idx, di, r, i2, i3)
				if k < 0 || k >= dst.Ne[1] {
					p.fail(errorfCPU("GET_ROWS_BACK: index %d at [%d,%d,%d] out of range [0, %d)", k, r, i2, i3, dst.Ne[1]))
					return
				}
				loadRow(g, dg, r, i2, i3, row)
				off := k*dst.Nb[1] + i2*dst.Nb[2] + i3*dst.Nb[3]
				for i, v := range row {
					o := off + int64(i)*dst.Nb[0]
					setF32(dd, o, getF32(dd, o)+v)
				}
			}
		}
	}
}

func repeatBackSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if a == nil || a.Type != core.TypeF32 || dst.Type != core.TypeF32 {
		return false
	}
	for i := 0; i < core.MaxDims; i++ {
		if dst.Ne[i] == 0 || a.Ne[i]%dst.Ne[i] != 0 {
			return false
		}
	}
	return true
}

// repeatBackWork: an accumulator row of dst and a source row per worker.
func repeatBackWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(dst.Ne[0]+dst.Src[0].Ne[0], nTasks)
}

// computeRepeatBack: dst[k] = Σ over tiles j of a[j·ne + k], rows of dst split among workers; each
// element is summed in float32 in tile order (j3, j2, j1 outer, j0 inner).
func computeRepeatBack(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	ne0, na0 := dst.Ne[0], a.Ne[0]
	buf := scratch(p, ne0+na0)
	acc, src := buf[:ne0], buf[ne0:]
	n1, n2, n3 := a.Ne[1]/dst.Ne[1], a.Ne[2]/dst.Ne[2], a.Ne[3]/dst.Ne[3]
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		k1, k2, k3 := unravel(ir, dst.Ne)
		clear(acc)
		for j3 := int64(0); j3 < n3; j3++ {
			for j2 := int64(0); j2 < n2; j2++ {
				for j1 := int64(0); j1 < n1; j1++ {
					loadRow(a, da, j1*dst.Ne[1]+k1, j2*dst.Ne[2]+k2, j3*dst.Ne[3]+k3, src)
					for j0 := int64(0); j0 < na0; j0 += ne0 {
						for k, v := range src[j0 : j0+ne0] {
							acc[k] += v
						}
					}
				}
			}
		}
		storeRow(dst, dd, k1, k2, k3, acc)
	}
}

func accSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return a != nil && b != nil && a.Type == core.TypeF32 && b.Type == core.TypeF32 && dst.Type == core.TypeF32 &&
		a.Ne == dst.Ne && dst.IsContiguous()
}

// computeAcc: dst = a, then the view (b's shape, strides 4, nb1, nb2, nb3 bytes, byte offset) of dst
// += b. Offsets outside dst fail the node.
func computeAcc(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	da, db, dd := a.Data(), b.Data(), dst.Data()
	nb1, nb2, nb3, offset := core.AccParamsOf(dst)
	row := scratch(p, dst.Ne[0])
	for ir := int64(0); ir < dst.NRows(); ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		loadRow(a, da, i1, i2, i3, row)
		storeRow(dst, dd, i1, i2, i3, row)
	}
	if b.IsEmpty() {
		return
	}
	last := offset + (b.Ne[0]-1)*4 + (b.Ne[1]-1)*nb1 + (b.Ne[2]-1)*nb2 + (b.Ne[3]-1)*nb3
	if offset < 0 || last+4 > int64(len(dd)) || last+4 > dst.NBytes() {
		p.fail(errorfCPU("ACC: view of %v at offset %d exceeds %v", b, offset, dst))
		return
	}
	for i3 := int64(0); i3 < b.Ne[3]; i3++ {
		for i2 := int64(0); i2 < b.Ne[2]; i2++ {
			for i1 := int64(0); i1 < b.Ne[1]; i1++ {
				ob := i1*b.Nb[1] + i2*b.Nb[2] + i3*b.Nb[3]
				od := offset + i1*nb1 + i2*nb2 + i3*nb3
				for i0 := int64(0); i0 < b.Ne[0]; i0++ {
					o := od + 4*i0
					setF32(dd, o, getF32(dd, o)+getF32(db, ob+i0*b.Nb[0]))
				}
			}
		}
	}
}

func im2colBackSupports(dst *core.Tensor) bool {
	g, k := dst.Src[0], dst.Src[1]
	return g != nil && k != nil && g.Type == core.TypeF32 && dst.Type == core.TypeF32
}

// computeIm2ColBack: every image element sums the im2col entries that copied it. 2-D: image
// [W, H, IC, N], g [IC·KH·KW, OW, OH, N]; 1-D: image [L, IC, N], g [IC·K, OL, N]. Image planes
// (c, n) are split among all workers; sums are in float64 (kh outer, kw inner).
func computeIm2ColBack(p *params, dst *core.Tensor) {
	g, k := dst.Src[0], dst.Src[1]
	dg, dd := g.Data(), dst.Data()
	ip := core.Im2ColParamsOf(dst)
	s0, s1, p0, p1, d0, d1 := int64(ip.S0), int64(ip.S1), int64(ip.P0), int64(ip.P1), int64(ip.D0), int64(ip.D1)
	kw := k.Ne[0]
	kh, ih, ic, nb := int64(1), int64(1), dst.Ne[1], dst.Ne[2]
	ow, oh := g.Ne[1], int64(1)
	// strides of the image's (w, h, c, n) and of g's (col, ow, oh, n)
	iwS, ihS, icS, inS := dst.Nb[0], int64(0), dst.Nb[1], dst.Nb[2]
	gcS, gwS, ghS, gnS := g.Nb[0], g.Nb[1], int64(0), g.Nb[2]
	if ip.Is2D {
		kh, ih, ic, nb = k.Ne[1], dst.Ne[1], dst.Ne[2], dst.Ne[3]
		oh = g.Ne[2]
		ihS, icS, inS = dst.Nb[1], dst.Nb[2], dst.Nb[3]
		ghS, gnS = g.Nb[2], g.Nb[3]
	} else {
		s1, p1, d1 = 1, 0, 1
	}
	iw := dst.Ne[0]
	r0, r1 := rowRange(ic*nb, p.ith, p.nth)
	for pl := r0; pl < r1; pl++ {
		c, n := pl%ic, pl/ic
		for y := int64(0); y < ih; y++ {
			for x := int64(0); x < iw; x++ {
				var sum float64
				for ky := int64(0); ky < kh; ky++ {
					ty := y + p1 - ky*d1
					if ty%s1 != 0 {
						continue
					}
					oy := ty / s1
					if oy < 0 || oy >= oh {
						continue
					}
					for kx := int64(0); kx < kw; kx++ {
						tx := x + p0 - kx*d0
						if tx%s0 != 0 {
							continue
						}
						ox := tx / s0
						if ox < 0 || ox >= ow {
							continue
						}
						col := (c*kh+ky)*kw + kx
						sum += float64(getF32(dg, col*gcS+ox*gwS+oy*ghS+n*gnS))
					}
				}
				setF32(dd, x*iwS+y*ihS+c*icS+n*inS, float32(sum))
			}
		}
	}
}

func pool2DBackSupports(dst *core.Tensor) bool {
	g, x := dst.Src[0], dst.Src[1]
	op := core.PoolOp(dst.Params[0])
	return g != nil && x != nil && g.Type == core.TypeF32 && x.Type == core.TypeF32 && dst.Type == core.TypeF32 &&
		x.Ne == dst.Ne && (op == core.PoolMax || op == core.PoolAvg)
}

// computePool2DBack: dst = 0; for each output (ox, oy) of each plane, MAX adds g to the first
// strictly greatest in-bounds input of the window (scan ky outer, kx inner; a window of only −inf
// passes nothing), AVG adds g/(k0·k1) to every in-bounds position (the forward divides by the full
// window too).
func computePool2DBack(p *params, dst *core.Tensor) {
	g, x := dst.Src[0], dst.Src[1]
	dg, dx, dd := g.Data(), x.Data(), dst.Data()
	pp := core.PoolParamsOf(dst)
	k0, k1, s0, s1, p0, p1 := int64(pp.K0), int64(pp.K1), int64(pp.S0), int64(pp.S1), int64(pp.P0), int64(pp.P1)
	zero := [1]float32{}
	for i3 := int64(0); i3 < dst.Ne[3]; i3++ {
		for i2 := int64(0); i2 < dst.Ne[2]; i2++ {
			for i1 := int64(0); i1 < dst.Ne[1]; i1++ {
				for i0 := int64(0); i0 < dst.Ne[0]; i0++ {
					setF32(dd, i0*dst.Nb[0]+i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3], zero[0])
				}
			}
		}
	}
	inW, inH := x.Ne[0], x.Ne[1]
	area := float32(k0 * k1)
	for i3 := int64(0); i3 < g.Ne[3]; i3++ {
		for i2 := int64(0); i2 < g.Ne[2]; i2++ {
			xp := i2*x.Nb[2] + i3*x.Nb[3]
			dp := i2*dst.Nb[2] + i3*dst.Nb[3]
			for oy := int64(0); oy < g.Ne[1]; oy++ {
				for ox := int64(0); ox < g.Ne[0]; ox++ {
					gv := getF32(dg, ox*g.Nb[0]+oy*g.Nb[1]+i2*g.Nb[2]+i3*g.Nb[3])
					x0, y0 := ox*s0-p0, oy*s1-p1
					if pp.Op == core.PoolAvg {
						for ky := max(y0, 0); ky < min(y0+k1, inH); ky++ {
							for kx := max(x0, 0); kx < min(x0+k0, inW); kx++ {
								o := dp + ky*dst.Nb[1] + kx*dst.Nb[0]
								setF32(dd, o, getF32(dd, o)+gv/area)
							}
						}
						continue
					}
					best, bx, by := float32(math.Inf(-1)), int64(-1), int64(-1)
					for ky := max(y0, 0); ky < min(y0+k1, inH); ky++ {
						for kx := max(x0, 0); kx < min(x0+k0, inW); kx++ {
							if v := getF32(dx, xp+ky*x.Nb[1]+kx*x.Nb[0]); v > best {
								best, bx, by = v, kx, ky
							}
						}
					}
					if bx >= 0 {
						o := dp + by*dst.Nb[1] + bx*dst.Nb[0]
						setF32(dd, o, getF32(dd, o)+gv)
					}
				}
			}
		}
	}
}
