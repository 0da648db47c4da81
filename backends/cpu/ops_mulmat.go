package cpu

import (
	"fmt"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

func init() {
	register(core.OpMulMat, opImpl{compute: computeMulMat, plan: mulMatPlan, supports: mulMatSupports})
}

// vecDot computes the dot product of n elements of a weight row x and an activation row y already
// in the weight type's vec-dot type.
type vecDot func(n int, x, y []byte) float32

// refVecDot returns the reference dot product for weight type t.
func refVecDot(t core.Type) vecDot {
	switch t {
	case core.TypeF32:
		return dotF32Ref
	case core.TypeF16:
		return dotF16Ref
	case core.TypeBF16:
		return dotBF16Ref
	case core.TypeQ4_0:
		return quant.DotQ4_0Q8_0
	case core.TypeQ4_1:
		return quant.DotQ4_1Q8_1
	case core.TypeQ8_0:
		return quant.DotQ8_0Q8_0
	}
	return refVecDotK(t)
}

// dotF32Ref accumulates in float64, as ggml's scalar path does.
func dotF32Ref(n int, x, y []byte) float32 {
	a, b := f32s(x)[:n], f32s(y)[:n]
	var s float64
	for i := range a {
		s += float64(a[i] * b[i])
	}
	return float32(s)
}

func dotF16Ref(n int, x, y []byte) float32 {
	a, b := u16s(x)[:n], u16s(y)[:n]
	var s float64
	for i := range a {
		s += float64(quant.FP16ToFP32(a[i]) * quant.FP16ToFP32(b[i]))
	}
	return float32(s)
}

func dotBF16Ref(n int, x, y []byte) float32 {
	a, b := u16s(x)[:n], u16s(y)[:n]
	var s float64
	for i := range a {
		s += float64(quant.BF16ToFP32(a[i]) * quant.BF16ToFP32(b[i]))
	}
	return float32(s)
}

// fastVecDot returns the SIMD dot product for weight type t (pure Go where no assembly applies).
func fastVecDot(t core.Type) vecDot {
	switch t {
	case core.TypeF32:
		return func(n int, x, y []byte) float32 { return kern.DotF32(f32s(x)[:n], f32s(y)[:n]) }
	case core.TypeF16:
		return func(n int, x, y []byte) float32 { return kern.DotF16(u16s(x)[:n], u16s(y)[:n]) }
	case core.TypeBF16:
		return func(n int, x, y []byte) float32 { return kern.DotBF16(u16s(x)[:n], u16s(y)[:n]) }
	case core.TypeQ4_0:
		return kern.DotQ4_0Q8_0
	case core.TypeQ4_1:
		return kern.DotQ4_1Q8_1
	case core.TypeQ8_0:
		return kern.DotQ8_0Q8_0
	}
	return fastVecDotK(t)
}

// convertActivations converts an f32 row into the vec-dot type t with the fast converters.
func convertActivations(t core.Type, src []float32, dst []byte) {
	switch t {
	case core.TypeF16:
		kern.F32ToF16Row(src, u16s(dst)[:len(src)])
	case core.TypeBF16:
		kern.F32ToBF16Row(src, u16s(dst)[:len(src)])
	case core.TypeQ8_0:
		kern.QuantizeRowQ8_0(src, dst)
	case core.TypeQ8_1:
		kern.QuantizeRowQ8_1(src, dst)
	case core.TypeQ8_K:
		kern.QuantizeRowQ8_K(src, dst)
	default:
		fromF32(t, src, dst)
	}
}

// computeMulMatGemm runs one team GEMM per (i12, i13) batch on activations yData (byte strides
// ynb1..3: src1 itself, or for BF16 weights its bf16 copy); the GEMM scratch starts at byte
// scratchStart of the work buffer.
func computeMulMatGemm(p *params, dst *core.Tensor, yData []byte, scratchStart, ynb1, ynb2, ynb3 int64) {
	a, b := dst.Src[0], dst.Src[1]
	da, dd := a.Data(), dst.Data()
	m, n, k := int(a.Ne[1]), int(b.Ne[1]), int(a.Ne[0])
	es := a.Type.Size()
	lda, ldc := int(a.Nb[1]/es), int(dst.Nb[1]/4)
	work := teamScratch(p, scratchStart)
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	forEachBatch(p, dst, func(i12, i13 int64) {
		aoff := (i12/r2)*a.Nb[2] + (i13/r3)*a.Nb[3]
		boff := i12*ynb2 + i13*ynb3
		cs := f32s(dd[i12*dst.Nb[2]+i13*dst.Nb[3]:])
		switch a.Type {
		case core.TypeF32:
			kern.Sgemm(p.ith, p.nth, p.barrier, &p.pool.chunk, work, m, n, k, f32s(da[aoff:]), lda,
				f32s(yData[boff:]), int(ynb1/4), cs, ldc)
		case core.TypeF16:
			gemm := kern.SgemmF16A
			if f16InBF16(dst) {
				gemm = kern.SgemmF16ABF16
			}
			gemm(p.ith, p.nth, p.barrier, &p.pool.chunk, work, m, n, k, u16s(da[aoff:]), lda,
				f32s(yData[boff:]), int(ynb1/4), cs, ldc)
		default: // BF16
			kern.SgemmBF16(p.ith, p.nth, p.barrier, &p.pool.chunk, work, m, n, k, u16s(da[aoff:]), lda,
				u16s(yData[boff:]), int(ynb1/2), cs, ldc)
		}
	})
}

// f16BF16MinN is the fewest activation rows (per batch) for which a MUL_MAT of F16 weights that
// allows bf16 (core.PrecBF16) rounds its operands: prompt-sized batches, where the products'
// speed counts; fewer rows keep f32 products.
const f16BF16MinN = 64

// f16InBF16 reports whether the F16 GEMM of dst runs with its operands rounded to bf16: the node
// is a MUL_MAT at core.PrecBF16 with at least f16BF16MinN activation rows (the kernels round only
// where the CPU has the bf16 pair path; elsewhere the call is SgemmF16A's).
func f16InBF16(dst *core.Tensor) bool {
	return dst.Op == core.OpMulMat && core.Prec(dst.Params[0]) == core.PrecBF16 && dst.Src[1].Ne[1] >= f16BF16MinN
}

// teamScratch is the shared work buffer from byte start (rounded up to 64) as float32s, its
// address moved up to a 64-byte boundary (the work sizes reserve 64 bytes of slack for it).
func teamScratch(p *params, start int64) []float32 {
	w := p.work[core.AlignUp(start, 64):]
	if mis := int64(uintptrOf(w) % 64); mis != 0 {
		w = w[64-mis:]
	}
	return f32s(w)
}

// forEachBatch runs fn(i12, i13) on the whole team for every (i12, i13) batch of dst's src1, the
// team GEMMs' unit: worker 0 resets the pool's chunk counter and everyone passes a barrier before
// each batch (the first one's comes from the caller when p.counterReady is set). There is no
// barrier after the last batch: the caller passes one before reading dst (fixNonFiniteDots
// starts with one, and the node ends with one).
func forEachBatch(p *params, dst *core.Tensor, fn func(i12, i13 int64)) {
	b := dst.Src[1]
	ready := p.counterReady
	p.counterReady = false
	for i13 := int64(0); i13 < b.Ne[3]; i13++ {
		for i12 := int64(0); i12 < b.Ne[2]; i12++ {
			if !ready {
				if p.ith == 0 {
					p.pool.chunk.Store(0)
				}
				p.barrier()
			}
			ready = false
			fn(i12, i13)
			if i12 < b.Ne[2]-1 || i13 < b.Ne[3]-1 {
				p.barrier() // everyone is done with the counter before the next batch resets it
			}
		}
	}
}

func mulMatSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return refVecDot(a.Type) != nil && (b.Type == core.TypeF32 || b.Type == a.Type.VecDotType()) &&
		a.Nb[0] == a.Type.Size() && b.Nb[0] == b.Type.Size() && dst.Nb[0] == 4
}

// computeMulMatQgemm runs the quantized team GEMM per (i12, i13) batch on activations already
// in Q8_0 (yData with byte strides ynb1..3); its scratch follows the converted activations.
func computeMulMatQgemm(p *params, dst *core.Tensor, yData []byte, convBytes, ynb1, ynb2, ynb3 int64) {
	a, b := dst.Src[0], dst.Src[1]
	da, dd := a.Data(), dst.Data()
	m, n, k := int(a.Ne[1]), int(b.Ne[1]), int(a.Ne[0])
	wf := teamScratch(p, convBytes)
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	gemm := kern.GemmQ4_0Q8_0
	if a.Type == core.TypeQ8_0 {
		gemm = kern.GemmQ8_0Q8_0
	}
	forEachBatch(p, dst, func(i12, i13 int64) {
		aoff := (i12/r2)*a.Nb[2] + (i13/r3)*a.Nb[3]
		boff := i12*ynb2 + i13*ynb3
		doff := i12*dst.Nb[2] + i13*dst.Nb[3]
		gemm(p.ith, p.nth, p.barrier, &p.pool.chunk, wf, m, n, k, da[aoff:], int(a.Nb[1]), yData[boff:], int(ynb1),
			f32s(dd[doff:]), int(dst.Nb[1]/4))
	})
}

// Chunk sizes of the work-stealing split (ggml's values).
const (
	mulMatChunk     = 16
	mulMatChunkFlat = 64 // when either side has a single row or column
	mulMatBlock     = 16 // inner tiling of a chunk
)

// mulMatChunks returns how dst is cut: nchunk0 × nchunk1 chunks of dr0 × dr1 (rows of src0 ×
// rows of src1), following ggml: 16 (64 for vectors), re-cut per thread when there are fewer than
// four chunks per thread. The counts are recounted from the sizes, so no chunk is empty (a re-cut
// into nth chunks of fewer rows, or rounding, would leave chunks past the end: two output
// columns on four workers).
func mulMatChunks(nr0, nr1 int64, nth int) (nchunk0, nchunk1, dr0, dr1 int64) {
	cs := int64(mulMatChunk)
	if nr0 == 1 || nr1 == 1 {
		cs = mulMatChunkFlat
	}
	nchunk0 = (nr0 + cs - 1) / cs
	nchunk1 = (nr1 + cs - 1) / cs
	if nchunk0*nchunk1 < 4*int64(nth) {
		if nr0 > nr1 {
			nchunk0, nchunk1 = int64(nth), 1
		} else {
			nchunk0, nchunk1 = 1, int64(nth)
		}
	}
	dr0 = max(1, (nr0+nchunk0-1)/nchunk0)
	dr1 = max(1, (nr1+nchunk1-1)/nchunk1)
	nchunk0, nchunk1 = (nr0+dr0-1)/dr0, (nr1+dr1-1)/dr1
	return
}

// computeMulMat: dst[i0, i1, i2, i3] = dot(src0 row (i0, i2/r2, i3/r3), src1 row (i1, i2, i3)),
// by the route the plan decided for the node (mulMatRouteOf).
func computeMulMat(p *params, dst *core.Tensor) {
	route := p.mulMatRoute(0)
	if route == routeRepacked && dst.Src[1].NRows() == 1 {
		computeMulMatVecRepacked(p, dst) // mulmat_vec_repacked.go: fixes its non-finite outputs
		return
	}
	if mulMatPaths(p, dst, route) {
		fixNonFiniteDots(p, dst) // mulmat_nonfinite.go
	}
}

// mulMatPaths computes MUL_MAT by route. src1 is first converted to the type the route reads
// (route.actType) in the work buffer where it is not already in it (each worker its share of the
// rows, or of every row's blocks when there are fewer rows than workers); then the team routes run one team GEMM per batch, and the dot routes have the workers
// claim chunks of dst from a shared atomic counter (ggml's work stealing: a worker that finishes
// early takes the next free chunk) and fix the non-finite outputs of each chunk they finish. It
// reports whether the caller still has to fix them (fixNonFiniteDots, after the team routes).
func mulMatPaths(p *params, dst *core.Tensor, route mmRoute) (fixLater bool) {
	if route == routeNone || int(route) >= len(routeNames) {
		panic(fmt.Sprintf("cpu: MUL_MAT %v has no planned route (%v)", dst, route))
	}
	a, b := dst.Src[0], dst.Src[1]
	vdt := route.actType(a.Type)
	da := a.Data()

	// Rows of src1 in the route's type: either src1 itself or its converted copy in the work buffer.
	yData := b.Data()
	ynb1, ynb2, ynb3 := b.Nb[1], b.Nb[2], b.Nb[3]
	conv := convBytes(dst, route)
	if conv > 0 {
		rs := vdt.RowSize(b.Ne[0])
		ynb1, ynb2, ynb3 = rs, rs*b.Ne[1], rs*b.Ne[1]*b.Ne[2]
		yData = p.work[:conv]
		// src1 is f32 with dense rows here (mulMatSupports), so rows convert in place of reading.
		bd := b.Data()
		if nr := b.NRows(); nr < int64(p.nth) && route != routeRef {
			// Fewer rows than workers (a generated token's one row): each worker converts a
			// share of every row's blocks.
			bs, ys := vdt.BlockSize(), vdt.Size()
			k0, k1 := rowRange(b.Ne[0]/bs, p.ith, p.nth)
			for ir := int64(0); ir < nr && k0 < k1; ir++ {
				i1, i2, i3 := unravel(ir, b.Ne)
				row := f32s(bd[i1*b.Nb[1]+i2*b.Nb[2]+i3*b.Nb[3]:])[:b.Ne[0]]
				convertActivations(vdt, row[k0*bs:k1*bs], yData[ir*rs+k0*ys:ir*rs+k1*ys])
			}
		} else {
			r0, r1 := rowRange(nr, p.ith, p.nth)
			for ir := r0; ir < r1; ir++ {
				i1, i2, i3 := unravel(ir, b.Ne)
				row := f32s(bd[i1*b.Nb[1]+i2*b.Nb[2]+i3*b.Nb[3]:])[:b.Ne[0]]
				if route == routeRef {
					fromF32(vdt, row, yData[ir*rs:(ir+1)*rs])
				} else {
					convertActivations(vdt, row, yData[ir*rs:(ir+1)*rs])
				}
			}
		}
	}
	if route.team() {
		if conv > 0 {
			if p.ith == 0 {
				p.pool.chunk.Store(0) // nobody claims from it before the barrier
			}
			p.barrier() // the converted activations are complete
			p.counterReady = true
		}
		switch route {
		case routeRepacked:
			computeMulMatRepacked(p, dst, yData, conv, ynb1, ynb2, ynb3) // repack_compute.go
		case routeGemm:
			computeMulMatGemm(p, dst, yData, conv, ynb1, ynb2, ynb3)
		case routeGemmStd:
			computeMulMatQstd(p, dst, yData, conv, ynb1, ynb2, ynb3) // ops_mulmat_qstd.go
		case routeKStd:
			computeMulMatKStd(p, dst, yData, conv, ynb1, ynb2, ynb3) // ops_mulmat_qstd.go
		default:
			computeMulMatQgemm(p, dst, yData, conv, ynb1, ynb2, ynb3)
		}
		return a.Type != core.TypeF32
	}
	if p.ith == 0 {
		p.pool.chunk.Store(int64(p.nth))
	}
	p.barrier()

	dot := fastVecDot(a.Type)
	if route == routeRef {
		dot = refVecDot(a.Type)
	}
	nr0, nr1 := dst.Ne[0], dst.Ne[1]*dst.Ne[2]*dst.Ne[3]
	nchunk0, nchunk1, dr0, dr1 := mulMatChunks(nr0, nr1, p.nth)
	// Each chunk's non-finite outputs are fixed by the worker that computed it.
	fix := a.Type != core.TypeF32
	var dd []byte // dst's bytes for the non-finite fixes, read once per worker
	if fix {
		dd = dst.Data()
	}
	var fixer *nonFiniteFixer
	var tile kern.KTile
	if route == routeKTile {
		tile = tileDotK(a.Type) // ops_mulmat_kquant.go
	}
	if tile != nil {
		nchunk0, nchunk1, dr0, dr1 = tileChunks(nr0, nr1, a.Nb[1], p.nth)
	}
	total := nchunk0 * nchunk1
	var tmp [mulMatBlock]float32
	for cur := int64(p.ith); cur < total; {
		c0, c1 := cur%nchunk0, cur/nchunk0
		ir0s, ir0e := dr0*c0, min(dr0*c0+dr0, nr0)
		ir1s, ir1e := dr1*c1, min(dr1*c1+dr1, nr1)
		if tile != nil {
			mulMatTileChunk(tile, dst, yData, ynb1, ynb2, ynb3, ir0s, ir0e, ir1s, ir1e)
		} else {
			mulMatDotChunk(dst, dot, da, yData, ynb1, ynb2, ynb3, &tmp, ir0s, ir0e, ir1s, ir1e)
		}
		if fix {
			fixNonFiniteChunk(&fixer, dst, dd, ir0s, ir0e, ir1s, ir1e) // mulmat_nonfinite.go
		}
		if int64(p.nth) >= total {
			break
		}
		cur = p.pool.chunk.Add(1) - 1
	}
	return false
}

// mulMatDotChunk computes the chunk [ir0s, ir0e) x [ir1s, ir1e) of dst by per-row dots, in
// blocks of mulMatBlock x mulMatBlock outputs.
func mulMatDotChunk(dst *core.Tensor, dot vecDot, da, yData []byte, ynb1, ynb2, ynb3 int64, tmp *[mulMatBlock]float32, ir0s, ir0e, ir1s, ir1e int64) {
	a, b := dst.Src[0], dst.Src[1]
	ne00 := a.Ne[0]
	dd := dst.Data()
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	for iir1 := ir1s; iir1 < ir1e; iir1 += mulMatBlock {
		for iir0 := ir0s; iir0 < ir0e; iir0 += mulMatBlock {
			for ir1 := iir1; ir1 < min(iir1+mulMatBlock, ir1e); ir1++ {
				i11, i12, i13 := unravel(ir1, dst.Ne)
				i02, i03 := i12/r2, i13/r3
				yoff := i11*ynb1 + i12*ynb2 + i13*ynb3
				y := yData[yoff:]
				end := min(iir0+mulMatBlock, ir0e)
				for ir0 := iir0; ir0 < end; ir0++ {
					xoff := ir0*a.Nb[1] + i02*a.Nb[2] + i03*a.Nb[3]
					tmp[ir0-iir0] = dot(int(ne00), da[xoff:], y)
				}
				doff := i11*dst.Nb[1] + i12*dst.Nb[2] + i13*dst.Nb[3] + iir0*4
				copy(f32s(dd[doff:])[:end-iir0], tmp[:end-iir0])
			}
		}
	}
}
