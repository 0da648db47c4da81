package cpu_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func TestNNNormHand(t *testing.T) {
	const eps = 1e-5
	got := nnRun(t, "rms_norm [3,4]", 1e-14, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor1D(core.TypeF32, 2)
		nnSet(t, a, []float32{3, 4})
		s := 1 / math.Sqrt(12.5+float64(float32(eps)))
		return ctx.RMSNorm(a, eps), []float64{3 * s, 4 * s}
	})
	nnClose(t, "rms_norm [3,4]", got, []float64{3 / math.Sqrt(12.5+eps), 4 / math.Sqrt(12.5+eps)}, 1e-6)

	got = nnRun(t, "norm [1,2,3,4]", 1e-14, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor1D(core.TypeF32, 4)
		nnSet(t, a, []float32{1, 2, 3, 4})
		s := 1 / math.Sqrt(1.25+float64(float32(eps)))
		return ctx.Norm(a, eps), []float64{-1.5 * s, -0.5 * s, 0.5 * s, 1.5 * s}
	})
	nnClose(t, "norm [1,2,3,4]", got, []float64{-1.3416347, -0.4472116, 0.4472116, 1.3416347}, 1e-6)

	// eps dominates a constant row: norm gives 0, rms_norm x/sqrt(x²+eps)
	got = nnRun(t, "norm constant", 0, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
		a := ctx.NewTensor1D(core.TypeF32, 3)
		nnSet(t, a, []float32{2, 2, 2})
		return ctx.Norm(a, 0.5), []float64{0, 0, 0}
	})
	nnClose(t, "norm constant", got, []float64{0, 0, 0}, 0)
}

// nnNormRef computes NORM (rms false) or RMS_NORM of every row of x (shape ne) in float64.
func nnNormRef(x []float64, ne [4]int64, eps float32, rms bool) []float64 {
	out := make([]float64, len(x))
	n := ne[0]
	for r := int64(0); r < int64(len(x))/n; r++ {
		row := x[r*n : (r+1)*n]
		mean := 0.0
		if !rms {
			for _, v := range row {
				mean += v
			}
			mean /= float64(n)
		}
		var ss float64
		for _, v := range row {
			ss += (v - mean) * (v - mean)
		}
		s := 1 / math.Sqrt(ss/float64(n)+float64(eps))
		for i, v := range row {
			out[r*n+int64(i)] = (v - mean) * s
		}
	}
	return out
}

func TestNNNormRandom(t *testing.T) {
	shapes := [][4]int64{{5, 7, 3, 2}, {33, 4, 3, 1}, {130, 3, 1, 2}, {1, 6, 1, 1}}
	for _, rms := range []bool{false, true} {
		op := "norm"
		if rms {
			op = "rms_norm"
		}
		for _, ne := range shapes {
			for _, layout := range nnLayouts {
				for _, inplace := range []bool{false, true} {
					for _, eps := range []float32{1e-5, 0.25} {
						name := fmt.Sprintf("%s %v %s inplace=%v eps=%g", op, ne, layout, inplace, eps)
						nnRun(t, name, 1e-7, func(t *testing.T, ctx *core.Context) (*core.Tensor, []float64) {
							rng := rand.New(rand.NewSource(int64(ne[0]*7 + ne[1])))
							a := nnSource(ctx, core.TypeF32, ne, layout)
							x := nnFill(t, a, rng, -3, 5) // nonzero mean, so NORM's centering matters
							var r *core.Tensor
							if rms {
								r = ctx.RMSNorm(a, eps)
							} else {
								r = ctx.Norm(a, eps)
							}
							if inplace {
								nnInPlace(r, a)
							}
							return r, nnNormRef(x, ne, eps, rms)
						})
					}
				}
			}
		}
	}
}
