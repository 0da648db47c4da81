package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// NORM and RMS_NORM, after ggml_compute_forward_norm_f32 / ggml_compute_forward_rms_norm_f32
// (ggml/src/ggml-cpu/ops.cpp): per row, sums in float64 (ggml_float), the result rounded to float32
// once. Rows are split among all workers (ggml's n_tasks for both is n_threads). Each row goes
// through a per-worker f32 scratch row, so any source strides work and dst may alias src0 (the
// in-place form: same layout, same memory).

func init() {
	register(core.OpNorm, opImpl{compute: computeNorm, work: normWork, supports: normSupports})
	register(core.OpRMSNorm, opImpl{compute: computeNorm, work: normWork, supports: normSupports})
}

func normSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	return a != nil && a.Type == core.TypeF32 && dst.Type == core.TypeF32 && a.Ne == dst.Ne
}

// normWork: one f32 row per worker.
func normWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

func computeNorm(p *params, dst *core.Tensor) {
	a := dst.Src[0]
	da, dd := a.Data(), dst.Data()
	row := scratch(p, dst.Ne[0])
	eps := float64(core.EpsOf(dst))
	rms := dst.Op == core.OpRMSNorm
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	direct := a.Nb[0] == 4 && dst.Nb[0] == 4
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		if direct && rms {
			// dense rows: read the source row and write dst's, no scratch (also in place)
			x := f32s(da[i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3]:])[:dst.Ne[0]]
			rmsNormRowTo(f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:dst.Ne[0]], x, eps)
			continue
		}
		loadRow(a, da, i1, i2, i3, row)
		if rms {
			rmsNormRow(row, eps)
		} else {
			normRow(row, eps)
		}
		storeRow(dst, dd, i1, i2, i3, row)
	}
}

// normRow replaces x by (x - mean) / sqrt(var + eps), var the population variance.
func normRow(x []float32, eps float64) {
	n := float64(len(x))
	var sum float64
	for _, v := range x {
		sum += float64(v)
	}
	mean := sum / n
	var sum2 float64
	for _, v := range x {
		d := float64(v) - mean
		sum2 += d * d
	}
	scale := 1 / math.Sqrt(sum2/n+eps)
	for i, v := range x {
		x[i] = float32((float64(v) - mean) * scale)
	}
}

// rmsNormRowTo writes x / sqrt(mean(x²) + eps) into y (y may be x).
func rmsNormRowTo(y, x []float32, eps float64) {
	scale := rmsScale(x, eps)
	copy(y, x)
	kern.ScaleF32(scale, y)
}

// rmsNormRow replaces x by x / sqrt(mean(x²) + eps).
func rmsNormRow(x []float32, eps float64) {
	kern.ScaleF32(rmsScale(x, eps), x)
}

// rmsScale is RMS_NORM's factor for row x: the squares summed in float64 (four partial sums),
// the mean, eps, the square root and the reciprocal in float64, the factor rounded to float32
// and applied in float32 as ggml applies it. ggml squares and takes the mean in float32, which
// overflows for |x| past 1.8e19 (its factor becomes 0); float64 keeps such rows finite, as the
// GPU shaders do.
func rmsScale(x []float32, eps float64) float32 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a, b, c, d := float64(x[i]), float64(x[i+1]), float64(x[i+2]), float64(x[i+3])
		s0 += a * a
		s1 += b * b
		s2 += c * c
		s3 += d * d
	}
	for ; i < len(x); i++ {
		a := float64(x[i])
		s0 += a * a
	}
	mean := ((s0 + s1) + (s2 + s3)) / float64(len(x))
	return float32(1 / math.Sqrt(mean+eps))
}
