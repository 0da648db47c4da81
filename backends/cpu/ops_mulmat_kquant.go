package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/quant"
)

// refVecDotK returns the reference dot product (ggml's generic kernel) for the Q5, K-quant, IQ4,
// FP4 (MXFP4, NVFP4), Q1_0, Q2_0, ternary (TQ1_0, TQ2_0), IQ3 (IQ3_XXS, IQ3_S), IQ2 (IQ2_XXS,
// IQ2_XS, IQ2_S) and IQ1 (IQ1_S, IQ1_M) weight types, nil for other types.
func refVecDotK(t core.Type) vecDot {
	switch t {
	case core.TypeQ5_0:
		return quant.DotQ5_0Q8_0
	case core.TypeQ5_1:
		return quant.DotQ5_1Q8_1
	case core.TypeQ2_K:
		return quant.DotQ2_KQ8_K
	case core.TypeQ3_K:
		return quant.DotQ3_KQ8_K
	case core.TypeQ4_K:
		return quant.DotQ4_KQ8_K
	case core.TypeQ5_K:
		return quant.DotQ5_KQ8_K
	case core.TypeQ6_K:
		return quant.DotQ6_KQ8_K
	case core.TypeIQ4_NL:
		return quant.DotIQ4_NLQ8_0
	case core.TypeIQ4_XS:
		return quant.DotIQ4_XSQ8_K
	case core.TypeMXFP4:
		return quant.DotMXFP4Q8_0
	case core.TypeNVFP4:
		return quant.DotNVFP4Q8_0
	case core.TypeQ1_0:
		return quant.DotQ1_0Q8_0
	case core.TypeTQ1_0:
		return quant.DotTQ1_0Q8_K
	case core.TypeTQ2_0:
		return quant.DotTQ2_0Q8_K
	case core.TypeIQ3_XXS:
		return quant.DotIQ3_XXSQ8_K
	case core.TypeIQ3_S:
		return quant.DotIQ3_SQ8_K
	case core.TypeQ2_0:
		return quant.DotQ2_0Q8_0
	case core.TypeIQ2_XXS:
		return quant.DotIQ2_XXSQ8_K
	case core.TypeIQ2_XS:
		return quant.DotIQ2_XSQ8_K
	case core.TypeIQ2_S:
		return quant.DotIQ2_SQ8_K
	case core.TypeIQ1_S:
		return quant.DotIQ1_SQ8_K
	case core.TypeIQ1_M:
		return quant.DotIQ1_MQ8_K
	}
	return nil
}

// fastVecDotK returns the fastest dot product for the Q5, K-quant and IQ4 weight types: the
// kern kernels (AVX2 with pure-Go twins) for Q4_K, Q5_K, Q6_K, IQ4_XS and IQ4_NL, the reference
// for the others; nil for other types.
func fastVecDotK(t core.Type) vecDot {
	switch t {
	case core.TypeQ4_K:
		return kern.DotQ4_KQ8_K
	case core.TypeQ5_K:
		return kern.DotQ5_KQ8_K
	case core.TypeQ6_K:
		return kern.DotQ6_KQ8_K
	case core.TypeIQ4_XS:
		return kern.DotIQ4_XSQ8_K
	case core.TypeIQ4_NL:
		return kern.DotIQ4_NLQ8_0
	}
	return refVecDotK(t)
}

// tileDotK returns the tiled dot (many weight rows against many activation rows per call) for
// the K-quant and IQ4 types that have one, nil for other types.
func tileDotK(t core.Type) kern.KTile {
	switch t {
	case core.TypeQ4_K:
		return kern.TileQ4_KQ8_K
	case core.TypeQ5_K:
		return kern.TileQ5_KQ8_K
	case core.TypeQ6_K:
		return kern.TileQ6_KQ8_K
	case core.TypeIQ4_XS:
		return kern.TileIQ4_XSQ8_K
	case core.TypeIQ4_NL:
		return kern.TileIQ4_NLQ8_0
	}
	return nil
}

// mulMatTileChunk computes the chunk of dst rows [ir0s, ir0e) × flattened columns [ir1s, ir1e)
// with the tiled dot: one call per run of columns that share a batch (i12, i13).
func mulMatTileChunk(tile kern.KTile, dst *core.Tensor, yData []byte, ynb1, ynb2, ynb3 int64, ir0s, ir0e, ir1s, ir1e int64) {
	a, b := dst.Src[0], dst.Src[1]
	da, dd := a.Data(), dst.Data()
	r2, r3 := b.Ne[2]/a.Ne[2], b.Ne[3]/a.Ne[3]
	ldc := int(dst.Nb[1] / 4)
	for ir1 := ir1s; ir1 < ir1e; {
		i11, i12, i13 := unravel(ir1, dst.Ne)
		run := min(ir1e-ir1, dst.Ne[1]-i11) // columns left in this batch
		xoff := ir0s*a.Nb[1] + (i12/r2)*a.Nb[2] + (i13/r3)*a.Nb[3]
		yoff := i11*ynb1 + i12*ynb2 + i13*ynb3
		doff := i11*dst.Nb[1] + i12*dst.Nb[2] + i13*dst.Nb[3] + ir0s*4
		tile(int(a.Ne[0]), da[xoff:], int(a.Nb[1]), int(ir0e-ir0s), yData[yoff:], int(ynb1), int(run), f32s(dd[doff:]), ldc)
		ir1 += run
	}
}

// tileColumns is the activation rows per chunk of the tiled path: a constant, so that how the
// columns are grouped into tile calls (which decides the float summation order, see
// kern.KTile's driver) does not depend on the thread count.
const tileColumns = 16

// tileVecBytes is the weight bytes per chunk of a mat-vec (one activation row) on the tiled
// path, at least: a worker that claims a chunk starts a new memory stream, and with chunks of 64
// rows (54 KiB of a q6_K output layer of k 1024) the streams' starts cost 15-20% of the rate
// (q6_K, 32000x1024, two workers: 64 rows a chunk 41-45 GB/s, 256 rows 48-57).
const tileVecBytes = 256 << 10

// tileChunks cuts dst for the tiled path: tileColumns columns per chunk, and weight rows in
// blocks of at most 64 (a mat-vec's of at least tileVecBytes of rows of rowBytes) with at
// least four chunks per thread where the rows allow it.
func tileChunks(nr0, nr1, rowBytes int64, nth int) (nchunk0, nchunk1, dr0, dr1 int64) {
	dr1 = tileColumns
	nchunk1 = (nr1 + dr1 - 1) / dr1
	dr0 = 64
	if nr1 == 1 && rowBytes > 0 {
		dr0 = max(dr0, (tileVecBytes+rowBytes-1)/rowBytes)
	}
	for dr0 > 8 && (nr0+dr0-1)/dr0*nchunk1 < 4*int64(nth) {
		dr0 /= 2
	}
	nchunk0 = (nr0 + dr0 - 1) / dr0
	return
}
