package cpu

import (
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// CONV_2D, CONV_3D (direct), CONV_TRANSPOSE_1D, CONV_TRANSPOSE_2D, CONV_2D_DW, IM2COL_3D and
// COL2IM_1D, with ggml's semantics (ggml/src/ggml-cpu/ops.cpp). Every kernel follows the
// operands' strides; results do not depend on the thread count.
//
// CONV_2D and CONV_3D are one code path (a 2-D convolution is a 3-D one of depth 1): each worker
// takes tiles of output positions in turn, unfolds a tile's patches (im2col) into its own
// scratch and multiplies them by the kernel rows with kern.Sgemm (SgemmF16A for f16 kernels,
// whose patches are rounded to f16 first, as ggml's CPU converts them to the kernel's type).
// CONV_TRANSPOSE_1D and _2D are one path too: the team packs the kernel as rows (co, kh, kw)
// over Cin and the input as rows (n, y, x) over Cin, runs one team GEMM giving every product of
// an input position and a kernel tap, then gathers each output from the taps that land on it
// (col2im), summing in input order.

func init() {
	register(core.OpConv2D, opImpl{compute: computeConvGemm, work: convGemmWork, supports: convDirectSupports})
	register(core.OpConv3D, opImpl{compute: computeConvGemm, work: convGemmWork, supports: convDirectSupports})
	register(core.OpConvTranspose1D, opImpl{compute: computeConvTranspose, work: convTransposeWork, supports: convDirectSupports})
	register(core.OpConvTranspose2D, opImpl{compute: computeConvTranspose, work: convTransposeWork, supports: convDirectSupports})
	register(core.OpConv2DDw, opImpl{compute: computeConv2DDw, work: conv2DDwWork, supports: convDirectSupports})
	register(core.OpIm2Col3D, opImpl{compute: computeIm2Col3D, work: im2col3DWork, supports: im2col3DSupports})
	register(core.OpCol2Im1D, opImpl{compute: computeCol2Im1D, supports: col2im1DSupports})
}

// convDirectSupports: an f32 or f16 kernel, an f32 input and an f32 result (the constructors'
// rules), on a node its constructor would build (core.ConvNodeValid: the kernels trust the
// geometry).
func convDirectSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return a != nil && b != nil && (a.Type == core.TypeF32 || a.Type == core.TypeF16) &&
		b.Type == core.TypeF32 && dst.Type == core.TypeF32 && core.ConvNodeValid(dst)
}

// roundF16 rounds v to the nearest f16 value.
func roundF16(v float32) float32 { return quant.FP16ToFP32(quant.FP32ToFP16(v)) }

// convGeom is a convolution's geometry as a 3-D one: sizes, parameters and element strides of
// the input b (x, y, z, channel, batch), the kernel a (x, y, z, input channel, output channel)
// and dst (x, y, z, output channel, batch).
type convGeom struct {
	iw, ih, id, ic, n  int64
	kw, kh, kd, oc     int64
	ow, oh, od         int64
	s0, s1, s2         int64
	p0, p1, p2         int64
	d0, d1, d2         int64
	bx, by, bz, bc, bn int64
	ax, ay, az, ac, ao int64
	dx, dy, dz, dc, dn int64
}

// k is the length of one patch (IC·KD·KH·KW).
func (g *convGeom) k() int64 { return g.ic * g.kd * g.kh * g.kw }

func convGeomOf(dst *core.Tensor) convGeom {
	a, b := dst.Src[0], dst.Src[1]
	ae, be, de := a.Type.Size(), b.Type.Size(), dst.Type.Size()
	var g convGeom
	g.iw, g.ih, g.kw, g.kh, g.ow, g.oh = b.Ne[0], b.Ne[1], a.Ne[0], a.Ne[1], dst.Ne[0], dst.Ne[1]
	g.bx, g.by, g.ax, g.ay, g.dx, g.dy = b.Nb[0]/be, b.Nb[1]/be, a.Nb[0]/ae, a.Nb[1]/ae, dst.Nb[0]/de, dst.Nb[1]/de
	if dst.Op == core.OpConv2D {
		pr := core.Conv2DParamsOf(dst)
		g.id, g.kd, g.od = 1, 1, 1
		g.ic, g.n, g.oc = b.Ne[2], b.Ne[3], a.Ne[3]
		g.s0, g.s1, g.s2 = int64(pr.S0), int64(pr.S1), 1
		g.p0, g.p1 = int64(pr.P0), int64(pr.P1)
		g.d0, g.d1, g.d2 = int64(pr.D0), int64(pr.D1), 1
		g.bc, g.bn = b.Nb[2]/be, b.Nb[3]/be
		g.ac, g.ao = a.Nb[2]/ae, a.Nb[3]/ae
		g.dc, g.dn = dst.Nb[2]/de, dst.Nb[3]/de
		return g
	}
	pr := core.Conv3DParamsOf(dst)
	g.ic, g.n, g.oc = int64(dst.Params[9]), int64(dst.Params[10]), int64(dst.Params[11])
	g.id, g.kd, g.od = b.Ne[2], a.Ne[2], dst.Ne[2]
	g.s0, g.s1, g.s2 = int64(pr.S0), int64(pr.S1), int64(pr.S2)
	g.p0, g.p1, g.p2 = int64(pr.P0), int64(pr.P1), int64(pr.P2)
	g.d0, g.d1, g.d2 = int64(pr.D0), int64(pr.D1), int64(pr.D2)
	g.bz, g.az, g.dz = b.Nb[2]/be, a.Nb[2]/ae, dst.Nb[2]/de
	g.bc, g.bn = b.Nb[3]/be, g.ic*b.Nb[3]/be
	g.ac, g.ao = a.Nb[3]/ae, g.ic*a.Nb[3]/ae
	g.dc, g.dn = dst.Nb[3]/de, g.oc*dst.Nb[3]/de
	return g
}

// kernelDense reports whether the kernel's rows (one per output channel, K elements ordered ic,
// kz, ky, kx) are dense in memory, so the GEMM can read it in place.
func (g *convGeom) kernelDense() bool {
	return (g.kw == 1 || g.ax == 1) && (g.kh == 1 || g.ay == g.kw) && (g.kd == 1 || g.az == g.kw*g.kh) &&
		(g.ic == 1 || g.ac == g.kw*g.kh*g.kd) && (g.oc == 1 || g.ao == g.k())
}

// convTile is the number of output positions a worker unfolds and multiplies at a time: about
// 64 Ki floats of patches, 12 to 96 rows (a multiple of the GEMM's 6-row tiles).
func convTile(k int64) int64 {
	t := 65536 / max(k, 1)
	t = min(max(t, 12), 96)
	return t / 6 * 6
}

// convGemmLayout is the work buffer of CONV_2D / CONV_3D: the packed kernel (only when it is not
// dense; K·OC elements of its type), then per worker the patches (tile·K floats), the GEMM
// result (tile·OC floats), the GEMM's scratch and (f16 kernels) one patch of halves, each part
// 64-byte aligned.
type convGemmLayout struct {
	tile, packBytes, patches, out, gemm, half, perWorker int64
}

func convGemmLayoutOf(dst *core.Tensor) convGemmLayout {
	g := convGeomOf(dst)
	k := g.k()
	var l convGemmLayout
	l.tile = convTile(k)
	if !g.kernelDense() {
		l.packBytes = core.AlignUp(k*g.oc*dst.Src[0].Type.Size(), 64)
	}
	l.patches = core.AlignUp(l.tile*k*4, 64)
	l.out = core.AlignUp(l.tile*g.oc*4, 64)
	l.gemm = core.AlignUp(int64(kern.SgemmWorkSize(int(g.oc), int(l.tile), int(k), 1))*4, 64)
	if dst.Src[0].Type == core.TypeF16 {
		l.half = core.AlignUp(k*2, 64) // one patch as f16, for rounding
	}
	l.perWorker = l.patches + l.out + l.gemm + l.half
	return l
}

func convGemmWork(dst *core.Tensor, nTasks int) int64 {
	l := convGemmLayoutOf(dst)
	return 64 + l.packBytes + l.perWorker*int64(nTasks)
}

func computeConvGemm(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	g := convGeomOf(dst)
	if p.ref {
		convRef(p, dst, &g)
		return
	}
	l := convGemmLayoutOf(dst)
	k := g.k()
	work := p.work[core.AlignUp(int64(uintptrOf(p.work)), 64)-int64(uintptrOf(p.work)):]
	f16 := a.Type == core.TypeF16
	ad := a.Data()
	var kf32 []float32
	var kf16 []uint16
	if l.packBytes > 0 {
		// Pack the kernel rows (oc) densely; each worker packs its share, then all wait.
		r0, r1 := rowRange(g.oc, p.ith, p.nth)
		if f16 {
			kf16 = u16s(work[:l.packBytes])
			src := u16s(ad)
			for o := r0; o < r1; o++ {
				packKernelRow(&g, o, func(i, off int64) { kf16[o*k+i] = src[off] })
			}
		} else {
			kf32 = f32s(work[:l.packBytes])
			src := f32s(ad)
			for o := r0; o < r1; o++ {
				packKernelRow(&g, o, func(i, off int64) { kf32[o*k+i] = src[off] })
			}
		}
		p.barrier()
	} else if f16 {
		kf16 = u16s(ad)
	} else {
		kf32 = f32s(ad)
	}
	ws := work[l.packBytes+int64(p.ith)*l.perWorker:]
	patches := f32s(ws[:l.patches])
	out := f32s(ws[l.patches : l.patches+l.out])
	gw := f32s(ws[l.patches+l.out : l.patches+l.out+l.gemm])
	var half []uint16
	if f16 {
		half = u16s(ws[l.patches+l.out+l.gemm : l.patches+l.out+l.gemm+l.half])[:k]
	}
	bd, dd := f32s(b.Data()), f32s(dst.Data())
	total := g.n * g.od * g.oh * g.ow
	tiles := (total + l.tile - 1) / l.tile
	oc := int(g.oc)
	for t := int64(p.ith); t < tiles; t += int64(p.nth) {
		q0 := t * l.tile
		cnt := min(l.tile, total-q0)
		for j := int64(0); j < cnt; j++ {
			row := patches[j*k : (j+1)*k]
			unfoldPatch(&g, bd, q0+j, row)
			if f16 { // round to f16 as ggml converts the patches to the kernel's type
				kern.F32ToF16Row(row, half)
				kern.F16ToF32Row(half, row)
			}
		}
		var ctr atomic.Int64
		if f16 {
			kern.SgemmF16A(0, 1, nil, &ctr, gw, oc, int(cnt), int(k), kf16, int(k), patches, int(k), out, oc)
		} else {
			kern.Sgemm(0, 1, nil, &ctr, gw, oc, int(cnt), int(k), kf32, int(k), patches, int(k), out, oc)
		}
		for j := int64(0); j < cnt; j++ {
			x, y, z, n := convPos(&g, q0+j)
			base := x*g.dx + y*g.dy + z*g.dz + n*g.dn
			res := out[j*g.oc : (j+1)*g.oc]
			for o, v := range res {
				dd[base+int64(o)*g.dc] = v
			}
		}
	}
}

// kernelReader returns a reader of the kernel's elements (by element offset) as f32.
func kernelReader(a *core.Tensor) func(off int64) float32 {
	if a.Type == core.TypeF16 {
		k := u16s(a.Data())
		return func(off int64) float32 { return quant.FP16ToFP32(k[off]) }
	}
	k := f32s(a.Data())
	return func(off int64) float32 { return k[off] }
}

// convRef is the reference CONV_2D / CONV_3D: each dst element summed directly in f32 over
// (c, kz, ky, kx), the input rounded to f16 for an f16 kernel; workers split the elements.
func convRef(p *params, dst *core.Tensor, g *convGeom) {
	a, b := dst.Src[0], dst.Src[1]
	kat := kernelReader(a)
	bd, dd := f32s(b.Data()), f32s(dst.Data())
	f16 := a.Type == core.TypeF16
	total := g.n * g.od * g.oh * g.ow
	q0, q1 := rowRange(total*g.oc, p.ith, p.nth)
	for e := q0; e < q1; e++ {
		o, q := e/total, e%total
		x, y, z, n := convPos(g, q)
		sum := float32(0)
		for c := int64(0); c < g.ic; c++ {
			for kz := int64(0); kz < g.kd; kz++ {
				iz := z*g.s2 + kz*g.d2 - g.p2
				if iz < 0 || iz >= g.id {
					continue
				}
				for ky := int64(0); ky < g.kh; ky++ {
					iy := y*g.s1 + ky*g.d1 - g.p1
					if iy < 0 || iy >= g.ih {
						continue
					}
					for kx := int64(0); kx < g.kw; kx++ {
						ix := x*g.s0 + kx*g.d0 - g.p0
						if ix < 0 || ix >= g.iw {
							continue
						}
						v := bd[n*g.bn+c*g.bc+iz*g.bz+iy*g.by+ix*g.bx]
						if f16 {
							v = roundF16(v)
						}
						sum += kat(o*g.ao+c*g.ac+kz*g.az+ky*g.ay+kx*g.ax) * v
					}
				}
			}
		}
		dd[x*g.dx+y*g.dy+z*g.dz+o*g.dc+n*g.dn] = sum
	}
}

// packKernelRow calls put(i, off) for every element i of output channel o's kernel row with the
// element offset off of that element in the kernel's data.
func packKernelRow(g *convGeom, o int64, put func(i, off int64)) {
	i := int64(0)
	for c := int64(0); c < g.ic; c++ {
		for z := int64(0); z < g.kd; z++ {
			for y := int64(0); y < g.kh; y++ {
				base := o*g.ao + c*g.ac + z*g.az + y*g.ay
				for x := int64(0); x < g.kw; x++ {
					put(i, base+x*g.ax)
					i++
				}
			}
		}
	}
}

// convPos splits output position q (x fastest, then y, z, batch) into its coordinates.
func convPos(g *convGeom, q int64) (x, y, z, n int64) {
	x = q % g.ow
	q /= g.ow
	y = q % g.oh
	q /= g.oh
	z = q % g.od
	return x, y, z, q / g.od
}

// unfoldPatch writes output position q's patch (ic, kz, ky, kx order; zero in the padding) to row.
func unfoldPatch(g *convGeom, bd []float32, q int64, row []float32) {
	ox, oy, oz, n := convPos(g, q)
	i := 0
	for c := int64(0); c < g.ic; c++ {
		cb := n*g.bn + c*g.bc
		for kz := int64(0); kz < g.kd; kz++ {
			iz := oz*g.s2 + kz*g.d2 - g.p2
			for ky := int64(0); ky < g.kh; ky++ {
				iy := oy*g.s1 + ky*g.d1 - g.p1
				seg := row[i : i+int(g.kw)]
				i += int(g.kw)
				if iz < 0 || iz >= g.id || iy < 0 || iy >= g.ih {
					clear(seg)
					continue
				}
				rb := cb + iz*g.bz + iy*g.by
				ix := ox*g.s0 - g.p0
				if g.d0 == 1 && g.bx == 1 && ix >= 0 && ix+g.kw <= g.iw {
					// The common case: a dense run of the input row (short runs copied in line).
					src := bd[rb+ix : rb+ix+g.kw]
					if len(src) > 8 {
						copy(seg, src)
					} else {
						for kx, v := range src {
							seg[kx] = v
						}
					}
					continue
				}
				for kx := range seg {
					if ix >= 0 && ix < g.iw {
						seg[kx] = bd[rb+ix*g.bx]
					} else {
						seg[kx] = 0
					}
					ix += g.d0
				}
			}
		}
	}
}

// convTGeom is a transposed convolution's geometry as a 2-D one (1-D: H = KH = 1, one batch):
// kernel a [KW, KH, Cout, Cin], input b [W, H, Cin, N], element strides of each.
type convTGeom struct {
	w, h, cin, n, kw, kh, cout, s int64
	ax, ay, aco, aci              int64
	bx, by, bc, bn                int64
}

func convTGeomOf(dst *core.Tensor) convTGeom {
	a, b := dst.Src[0], dst.Src[1]
	ae, be := a.Type.Size(), b.Type.Size()
	g := convTGeom{s: int64(dst.Params[0]), w: b.Ne[0], kw: a.Ne[0], ax: a.Nb[0] / ae, bx: b.Nb[0] / be}
	if dst.Op == core.OpConvTranspose1D {
		g.h, g.kh, g.n = 1, 1, 1
		g.cout, g.cin = a.Ne[1], a.Ne[2]
		g.aco, g.aci = a.Nb[1]/ae, a.Nb[2]/ae
		g.bc = b.Nb[1] / be
		return g
	}
	g.h, g.kh, g.cout, g.cin, g.n = b.Ne[1], a.Ne[1], a.Ne[2], a.Ne[3], b.Ne[3]
	g.ay, g.aco, g.aci = a.Nb[1]/ae, a.Nb[2]/ae, a.Nb[3]/ae
	g.by, g.bc, g.bn = b.Nb[1]/be, b.Nb[2]/be, b.Nb[3]/be
	return g
}

// convTLayout: the packed kernel (m = Cout·KH·KW rows of Cin floats), the packed input
// (N·H·W rows of Cin floats), the GEMM result (m rows of N·H·W floats: tap (co, ky, kx) of every
// input position, so the gather reads runs along x) and the team GEMM's scratch, then per worker
// one dst row of floats, each 64-byte aligned.
type convTLayout struct {
	m, rows, kernel, input, out, gemm, row int64
}

func convTLayoutOf(dst *core.Tensor, nTasks int) convTLayout {
	g := convTGeomOf(dst)
	var l convTLayout
	l.m, l.rows = g.cout*g.kh*g.kw, g.n*g.h*g.w
	l.kernel = core.AlignUp(l.m*g.cin*4, 64)
	l.input = core.AlignUp(l.rows*g.cin*4, 64)
	l.out = core.AlignUp(l.rows*l.m*4, 64)
	l.gemm = core.AlignUp(int64(kern.SgemmWorkSize(int(l.rows), int(l.m), int(g.cin), nTasks))*4, 64)
	l.row = core.AlignUp(dst.Ne[0]*4, 64)
	return l
}

func convTransposeWork(dst *core.Tensor, nTasks int) int64 {
	l := convTLayoutOf(dst, nTasks)
	return 64 + l.kernel + l.input + l.out + l.gemm + l.row*int64(nTasks)
}

func computeConvTranspose(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	g := convTGeomOf(dst)
	if p.ref {
		convTransposeRef(p, dst, &g)
		return
	}
	l := convTLayoutOf(dst, p.nth)
	work := p.work[core.AlignUp(int64(uintptrOf(p.work)), 64)-int64(uintptrOf(p.work)):]
	f16 := a.Type == core.TypeF16
	kb := f32s(work[:l.kernel])
	in := f32s(work[l.kernel : l.kernel+l.input])
	out := f32s(work[l.kernel+l.input : l.kernel+l.input+l.out])
	gw := f32s(work[l.kernel+l.input+l.out : l.kernel+l.input+l.out+l.gemm])
	cin := g.cin

	// Pack: kernel row r = (co·KH + ky)·KW + kx over ci (f16 widened, exactly); input row
	// (n·H + y)·W + x over ci (rounded to f16 for an f16 kernel, as ggml converts it).
	if p.ith == 0 {
		p.pool.chunk.Store(0) // nobody claims from it before the barrier below
	}
	kat := kernelReader(a)
	bd := f32s(b.Data())
	r0, r1 := rowRange(l.m, p.ith, p.nth)
	for r := r0; r < r1; r++ {
		kx := r % g.kw
		ky := r / g.kw % g.kh
		co := r / (g.kw * g.kh)
		base := kx*g.ax + ky*g.ay + co*g.aco
		d := kb[r*cin : (r+1)*cin]
		for ci := range d {
			d[ci] = kat(base + int64(ci)*g.aci)
		}
	}
	r0, r1 = rowRange(l.rows, p.ith, p.nth)
	for r := r0; r < r1; r++ {
		x := r % g.w
		y := r / g.w % g.h
		n := r / (g.w * g.h)
		base := x*g.bx + y*g.by + n*g.bn
		d := in[r*cin : (r+1)*cin]
		for ci := range d {
			v := bd[base+int64(ci)*g.bc]
			if f16 {
				v = roundF16(v)
			}
			d[ci] = v
		}
	}
	p.barrier()
	// out[r·rows + q] = Σ_ci kernel row r · input row q (the input rows in the GEMM's weight role).
	m, rows := int(l.m), int(l.rows)
	kern.Sgemm(p.ith, p.nth, p.barrier, &p.pool.chunk, gw, rows, m, int(cin), in, int(cin), kb, int(cin), out, rows)
	p.barrier()

	// Gather: dst[ox, oy, co, n] = Σ_{y, kx} out[(co, ky, kx)][(n, y, x)] with x·s + kx = ox and
	// y·s + ky = oy: each tap adds a run of W inputs to every s-th output of the row.
	dd := dst.Data()
	rb := l.kernel + l.input + l.out + l.gemm + int64(p.ith)*l.row
	row := f32s(work[rb : rb+l.row])[:dst.Ne[0]]
	r0, r1 = rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		oy, co, n := unravel(ir, dst.Ne)
		if dst.Op == core.OpConvTranspose1D {
			oy, co, n = 0, ir%g.cout, 0
		}
		clear(row)
		for y := int64(0); y < g.h; y++ {
			ky := oy - y*g.s
			if ky < 0 || ky >= g.kh {
				continue
			}
			for kx := int64(0); kx < g.kw; kx++ {
				src := out[((co*g.kh+ky)*g.kw+kx)*l.rows+(n*g.h+y)*g.w:][:g.w]
				if g.s == 1 {
					d := row[kx : kx+g.w]
					kern.AddF32(d, d, src)
					continue
				}
				for x, v := range src {
					row[int64(x)*g.s+kx] += v
				}
			}
		}
		i1, i2, i3 := unravel(ir, dst.Ne)
		storeRow(dst, dd, i1, i2, i3, row)
	}
}

// convTransposeRef is the reference transposed convolution: each dst element gathered directly
// in f32 over the input positions (y, x) whose taps land on it, then the input channels; the
// input rounded to f16 for an f16 kernel.
func convTransposeRef(p *params, dst *core.Tensor, g *convTGeom) {
	a, b := dst.Src[0], dst.Src[1]
	kat := kernelReader(a)
	bd, dd := f32s(b.Data()), f32s(dst.Data())
	f16 := a.Type == core.TypeF16
	ow, oh := dst.Ne[0], int64(1)
	if dst.Op == core.OpConvTranspose2D {
		oh = dst.Ne[1]
	}
	e0, e1 := rowRange(dst.NElements(), p.ith, p.nth)
	for e := e0; e < e1; e++ {
		ox, oy, r := e%ow, e/ow%oh, e/(ow*oh)
		co, n := r%g.cout, r/g.cout
		sum := float32(0)
		for y := int64(0); y < g.h; y++ {
			ky := oy - y*g.s
			if ky < 0 || ky >= g.kh {
				continue
			}
			for x := int64(0); x < g.w; x++ {
				kx := ox - x*g.s
				if kx < 0 || kx >= g.kw {
					continue
				}
				for ci := int64(0); ci < g.cin; ci++ {
					v := bd[n*g.bn+y*g.by+x*g.bx+ci*g.bc]
					if f16 {
						v = roundF16(v)
					}
					sum += kat(co*g.aco+ky*g.ay+kx*g.ax+ci*g.aci) * v
				}
			}
		}
		dd[e] = sum
	}
}

// CONV_2D_DW: one kernel per channel. Each worker takes dst rows (oy, c, n); the kernel is
// converted to f32 per channel on the fly.

func conv2DDwWork(dst *core.Tensor, nTasks int) int64 {
	a := dst.Src[0]
	return scratchBytes(dst.Ne[0]+a.Ne[0]*a.Ne[1], nTasks)
}

func computeConv2DDw(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	pr := core.Conv2DParamsOf(dst)
	s0, s1, p0, p1, d0, d1 := int64(pr.S0), int64(pr.S1), int64(pr.P0), int64(pr.P1), int64(pr.D0), int64(pr.D1)
	kw, kh := a.Ne[0], a.Ne[1]
	iw, ih := b.Ne[0], b.Ne[1]
	be := b.Type.Size()
	bx, by, bc, bn := b.Nb[0]/be, b.Nb[1]/be, b.Nb[2]/be, b.Nb[3]/be
	ad, bd, dd := a.Data(), f32s(b.Data()), dst.Data()
	buf := scratch(p, dst.Ne[0]+kw*kh)
	row, knl := buf[:dst.Ne[0]], buf[dst.Ne[0]:]
	lastC := int64(-1)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		oy, c, n := unravel(ir, dst.Ne)
		if c != lastC {
			for ky := int64(0); ky < kh; ky++ {
				for kx := int64(0); kx < kw; kx++ {
					knl[ky*kw+kx] = convElem(a.Type, ad, kx*a.Nb[0]+ky*a.Nb[1]+c*a.Nb[3])
				}
			}
			lastC = c
		}
		clear(row)
		plane := c*bc + n*bn
		for ky := int64(0); ky < kh; ky++ {
			iy := oy*s1 + ky*d1 - p1
			if iy < 0 || iy >= ih {
				continue
			}
			rb := plane + iy*by
			for kx := int64(0); kx < kw; kx++ {
				w := knl[ky*kw+kx]
				off := kx*d0 - p0 // input x of output 0
				// outputs ox with 0 ≤ ox·s0 + off < iw
				lo := int64(0)
				if off < 0 {
					lo = (-off + s0 - 1) / s0
				}
				hi := int64(len(row)) - 1
				if last := (iw - 1 - off); last < hi*s0 {
					if last < 0 {
						continue
					}
					hi = last / s0
				}
				if lo > hi {
					continue
				}
				if s0 == 1 && bx == 1 && !p.ref {
					kern.AxpyF32(w, bd[rb+lo+off:rb+hi+off+1], row[lo:hi+1])
					continue
				}
				ix := rb + (lo*s0+off)*bx
				for ox := lo; ox <= hi; ox++ {
					row[ox] += w * bd[ix]
					ix += s0 * bx
				}
			}
		}
		storeRow(dst, dd, oy, c, n, row)
	}
}

// IM2COL_3D: each worker fills whole dst rows (one patch of IC·KD·KH·KW values) in f32 scratch
// and stores them (rounding to f16 for an f16 result).

func im2col3DSupports(dst *core.Tensor) bool {
	b := dst.Src[1]
	return b != nil && b.Type == core.TypeF32 && (dst.Type == core.TypeF32 || dst.Type == core.TypeF16) &&
		core.ConvNodeValid(dst)
}

func im2col3DWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

func computeIm2Col3D(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	pr := core.Conv3DParamsOf(dst)
	ic := int64(dst.Params[9])
	if dst.NElements() == 0 || b.Ne[3] < ic {
		return // no batch of IC channels: an empty result
	}
	be := b.Type.Size()
	g := convGeom{
		iw: b.Ne[0], ih: b.Ne[1], id: b.Ne[2], ic: ic, n: b.Ne[3] / ic,
		kw: a.Ne[0], kh: a.Ne[1], kd: a.Ne[2],
		ow: dst.Ne[1], oh: dst.Ne[2], od: dst.Ne[3] / (b.Ne[3] / ic),
		s0: int64(pr.S0), s1: int64(pr.S1), s2: int64(pr.S2),
		p0: int64(pr.P0), p1: int64(pr.P1), p2: int64(pr.P2),
		d0: int64(pr.D0), d1: int64(pr.D1), d2: int64(pr.D2),
		bx: b.Nb[0] / be, by: b.Nb[1] / be, bz: b.Nb[2] / be, bc: b.Nb[3] / be, bn: ic * b.Nb[3] / be,
	}
	bd, dd := f32s(b.Data()), dst.Data()
	row := scratch(p, dst.Ne[0])
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		// Row (ow, oh, od + n·OD) is output position q = ow + OW·(oh + OH·(od + OD·n)).
		unfoldPatch(&g, bd, ir, row)
		i1, i2, i3 := unravel(ir, dst.Ne)
		storeRow(dst, dd, i1, i2, i3, row)
	}
}

// COL2IM_1D: each worker takes a range of output times for every channel (ggml's split: balanced
// whatever OC is) and gathers the columns that land there, summing in f32 in input order.

func col2im1DSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && convFloatType(a.Type) && dst.Type == a.Type && a.IsContiguous() && core.ConvNodeValid(dst)
}

func computeCol2Im1D(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	s0, oc, p0 := int64(dst.Params[0]), int64(dst.Params[1]), int64(dst.Params[2])
	kOC, tIn := a.Ne[0], a.Ne[1]
	k := kOC / oc
	tOut := dst.Ne[0]
	ad, dd := a.Data(), dst.Data()
	es := a.Type.Size()
	t0, t1 := rowRange(tOut, p.ith, p.nth)
	for c := int64(0); c < oc; c++ {
		for t := t0; t < t1; t++ {
			abs := t + p0
			lo := max(0, (abs-k+s0)/s0) // ceil((abs-k+1)/s0), or ≤ 0
			hi := min(abs/s0, tIn-1)
			sum := float32(0)
			for ti := lo; ti <= hi; ti++ {
				kk := abs - ti*s0
				if kk >= 0 && kk < k {
					sum += convElem(a.Type, ad, ((c*k+kk)+ti*kOC)*es)
				}
			}
			off := t*dst.Nb[0] + c*dst.Nb[1]
			switch dst.Type {
			case core.TypeF32:
				setF32(dd, off, sum)
			case core.TypeF16:
				u16s(dd[off : off+2])[0] = quant.FP32ToFP16(sum)
			default:
				u16s(dd[off : off+2])[0] = quant.FP32ToBF16(sum)
			}
		}
	}
}
