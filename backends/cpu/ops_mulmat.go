package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

func init() {
	register(core.OpMulMat, opImpl{compute: computeMulMat, work: mulMatWork, supports: mulMatSupports})
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

// useGemm reports whether the node runs as packed GEMMs per batch: F32 or F16 weights with F32
// activations, or BF16 weights with F32 or BF16 activations (F32 ones are first rounded to bf16,
// ggml's vec-dot type for BF16), unit element strides, dense dst rows, and strides that are whole
// elements.
func useGemm(p *params, dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	if p.ref {
		return false
	}
	switch {
	case (a.Type == core.TypeF32 || a.Type == core.TypeF16) && b.Type == core.TypeF32:
	case a.Type == core.TypeBF16 && (b.Type == core.TypeF32 || b.Type == core.TypeBF16):
	default:
		return false
	}
	es, bs := a.Type.Size(), b.Type.Size()
	return a.Nb[0] == es && a.Nb[1]%es == 0 && b.Nb[0] == bs && b.Nb[1]%bs == 0 &&
		dst.Nb[0] == 4 && dst.Nb[1]%4 == 0 && a.Nb[1]/es >= a.Ne[0] && b.Nb[1]/bs >= b.Ne[0] &&
		dst.Nb[1]/4 >= dst.Ne[0]
}

// gemmWork is the scratch (bytes) the GEMM path needs.
func gemmWork(dst *core.Tensor, nth int) int64 {
	a, b := dst.Src[0], dst.Src[1]
	return 4*int64(kern.SgemmWorkSize(int(a.Ne[1]), int(b.Ne[1]), int(a.Ne[0]), nth)) + 64
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
			kern.SgemmF16A(p.ith, p.nth, p.barrier, &p.pool.chunk, work, m, n, k, u16s(da[aoff:]), lda,
				f32s(yData[boff:]), int(ynb1/4), cs, ldc)
		default: // BF16
			kern.SgemmBF16(p.ith, p.nth, p.barrier, &p.pool.chunk, work, m, n, k, u16s(da[aoff:]), lda,
				u16s(yData[boff:]), int(ynb1/2), cs, ldc)
		}
	})
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
// team GEMMs' unit: worker 0 resets the pool's chunk counter, then everyone passes a barrier
// before the batch and another after it.
func forEachBatch(p *params, dst *core.Tensor, fn func(i12, i13 int64)) {
	b := dst.Src[1]
	for i13 := int64(0); i13 < b.Ne[3]; i13++ {
		for i12 := int64(0); i12 < b.Ne[2]; i12++ {
			if p.ith == 0 {
				p.pool.chunk.Store(0)
			}
			p.barrier()
			fn(i12, i13)
			p.barrier()
		}
	}
}

func mulMatSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	return refVecDot(a.Type) != nil && (b.Type == core.TypeF32 || b.Type == a.Type.VecDotType()) &&
		a.Nb[0] == a.Type.Size() && b.Nb[0] == b.Type.Size() && dst.Nb[0] == 4
}

// mulMatWork is the size of src1 converted to the vec-dot type (zero when no conversion is
// needed), or the GEMM scratch when the node may take the GEMM path.
func mulMatWork(dst *core.Tensor, nTasks int) int64 {
	a, b := dst.Src[0], dst.Src[1]
	if _, _, ok := repackedOf(a); ok {
		return repackedMulMatWork(dst, nTasks) // repack_compute.go
	}
	vdt := a.Type.VecDotType()
	var conv int64
	if b.Type != vdt {
		conv = vdt.RowSize(b.Ne[0]) * b.Ne[1] * b.Ne[2] * b.Ne[3]
	}
	switch {
	case (a.Type == core.TypeF32 || a.Type == core.TypeF16) && b.Type == core.TypeF32:
		conv = max(conv, gemmWork(dst, nTasks))
	case a.Type == core.TypeBF16:
		// The GEMM scratch follows the bf16 copy of the activations.
		conv = core.AlignUp(conv, 64) + gemmWork(dst, nTasks)
	}
	qw := qstdWork(dst, nTasks) // ops_mulmat_qstd.go
	if a.Type == core.TypeQ4_0 || a.Type == core.TypeQ8_0 {
		qw = max(qw, 4*int64(kern.QgemmWorkSize(int(a.Ne[1]), int(b.Ne[1]), int(a.Ne[0]), nTasks))+64)
	}
	if qw > 0 {
		conv = core.AlignUp(conv, 64) + qw
	}
	return conv
}

// useQgemm reports whether a quantized node runs as tiled integer GEMMs per batch (Q4_0 or Q8_0
// weights against Q8_0 activations, dense f32 dst rows).
func useQgemm(p *params, dst *core.Tensor) bool {
	a := dst.Src[0]
	return !p.ref && (a.Type == core.TypeQ4_0 || a.Type == core.TypeQ8_0) &&
		dst.Nb[0] == 4 && dst.Nb[1]%4 == 0 && dst.Nb[1]/4 >= dst.Ne[0]
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
// four chunks per thread.
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
	dr0 = (nr0 + nchunk0 - 1) / nchunk0
	dr1 = (nr1 + nchunk1 - 1) / nchunk1
	return
}

// computeMulMat: dst[i0, i1, i2, i3] = dot(src0 row (i0, i2/r2, i3/r3), src1 row (i1, i2, i3)).
// src1 is first converted to the weight's vec-dot type in the work buffer (each worker its share of
// rows), then workers claim chunks of dst from a shared atomic counter (ggml's work stealing: a
// worker that finishes early takes the next free chunk).
func computeMulMat(p *params, dst *core.Tensor) {
	mulMatPaths(p, dst)
	if dst.Src[0].Type != core.TypeF32 {
		fixNonFiniteDots(p, dst) // mulmat_nonfinite.go
	}
}

// mulMatPaths computes MUL_MAT by the GEMM, quantized GEMM or vec-dot path.
func mulMatPaths(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	gemmPath := useGemm(p, dst)
	if gemmPath && a.Type != core.TypeBF16 {
		computeMulMatGemm(p, dst, b.Data(), 0, b.Nb[1], b.Nb[2], b.Nb[3])
		return
	}
	vdt := a.Type.VecDotType()
	ne00 := a.Ne[0]
	da, dd := a.Data(), dst.Data()

	// Rows of src1 in vec-dot type: either src1 itself or its converted copy in the work buffer.
	yData := b.Data()
	ynb1, ynb2, ynb3 := b.Nb[1], b.Nb[2], b.Nb[3]
	if b.Type != vdt {
		rs := vdt.RowSize(b.Ne[0])
		ynb1, ynb2, ynb3 = rs, rs*b.Ne[1], rs*b.Ne[1]*b.Ne[2]
		yData = p.work[:rs*b.NRows()]
		// src1 is f32 with dense rows here (mulMatSupports), so rows convert in place of reading.
		bd := b.Data()
		r0, r1 := rowRange(b.NRows(), p.ith, p.nth)
		for ir := r0; ir < r1; ir++ {
			i1, i2, i3 := unravel(ir, b.Ne)
			row := f32s(bd[i1*b.Nb[1]+i2*b.Nb[2]+i3*b.Nb[3]:])[:b.Ne[0]]
			if p.ref {
				fromF32(vdt, row, yData[ir*rs:(ir+1)*rs])
			} else {
				convertActivations(vdt, row, yData[ir*rs:(ir+1)*rs])
			}
		}
	}
	_, _, repacked := repackedOf(a)
	qstd := !repacked && !gemmPath && useQstd(p, dst)
	if repacked || gemmPath || qstd || useQgemm(p, dst) {
		p.barrier() // the converted activations are complete
		convBytes := int64(0)
		if b.Type != vdt {
			convBytes = vdt.RowSize(b.Ne[0]) * b.NRows()
		}
		switch {
		case repacked:
			computeMulMatRepacked(p, dst, yData, convBytes, ynb1, ynb2, ynb3) // repack_compute.go
		case gemmPath: // BF16 weights
			computeMulMatGemm(p, dst, yData, convBytes, ynb1, ynb2, ynb3)
		case qstd:
			computeMulMatQstd(p, dst, yData, convBytes, ynb1, ynb2, ynb3) // ops_mulmat_qstd.go
		default:
			computeMulMatQgemm(p, dst, yData, convBytes, ynb1, ynb2, ynb3)
		}
		return
	}
	if p.ith == 0 {
		p.pool.chunk.Store(int64(p.nth))
	}
	p.barrier()

	dot := fastVecDot(a.Type)
	if p.ref {
		dot = refVecDot(a.Type)
	}
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	nr0, nr1 := dst.Ne[0], dst.Ne[1]*dst.Ne[2]*dst.Ne[3]
	nchunk0, nchunk1, dr0, dr1 := mulMatChunks(nr0, nr1, p.nth)
	var tile kern.KTile
	if !p.ref && dst.Nb[1]%4 == 0 && dst.Nb[1]/4 >= dst.Ne[0] && a.Nb[1] >= a.Type.RowSize(a.Ne[0]) && ynb1 >= vdt.RowSize(ne00) {
		tile = tileDotK(a.Type) // ops_mulmat_kquant.go
	}
	if tile != nil {
		nchunk0, nchunk1, dr0, dr1 = tileChunks(nr0, nr1, p.nth)
	}
	total := nchunk0 * nchunk1
	var tmp [mulMatBlock]float32
	for cur := int64(p.ith); cur < total; {
		c0, c1 := cur%nchunk0, cur/nchunk0
		ir0s, ir0e := dr0*c0, min(dr0*c0+dr0, nr0)
		ir1s, ir1e := dr1*c1, min(dr1*c1+dr1, nr1)
		if tile != nil {
			mulMatTileChunk(tile, dst, yData, ynb1, ynb2, ynb3, ir0s, ir0e, ir1s, ir1e)
			ir1e = ir1s // done
		}
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
		if int64(p.nth) >= total {
			break
		}
		cur = p.pool.chunk.Add(1) - 1
	}
}
