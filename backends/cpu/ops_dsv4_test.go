package cpu_test

import (
	"math"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// Hand-computed values for DeepSeek V4's hyper-connection ops.

func TestDsv4HcPreValues(t *testing.T) {
	ctx := newTrainCtx()
	// x [2, hc=2, 2 tokens], weights [2, 2]: out[i, t] = Σ_h x[i, h, t]·w[h, t].
	x := f32T(ctx, []float32{1, 2, 3, 4, 5, 6, 7, 8}, 2, 2, 2)
	w := f32T(ctx, []float32{0.5, 2, -1, 1}, 2, 2)
	r := ctx.Dsv4HcPre(x, w)
	computeNode(t, r, 2)
	expectClose(t, "hc_pre", r.Float32s(), []float64{1*0.5 + 3*2, 2*0.5 + 4*2, -5 + 7, -6 + 8}, 0)
}

func TestDsv4HcPostValues(t *testing.T) {
	ctx := newTrainCtx()
	// n_embd 2, hc 2, 1 token: out[i, d] = x[i]·post[d] + Σ_s res[i, s]·comb[d, s].
	x := f32T(ctx, []float32{1, 2}, 2, 1)
	res := f32T(ctx, []float32{3, 4, 5, 6}, 2, 2, 1)
	post := f32T(ctx, []float32{2, -1}, 2, 1)
	comb := f32T(ctx, []float32{1, 0.5, 2, 0.25}, 2, 2, 1) // comb[d + 2·s]
	r := ctx.Dsv4HcPost(x, res, post, comb)
	computeNode(t, r, 1)
	expectClose(t, "hc_post", r.Float32s(), []float64{
		1*2 + 3*1 + 5*2, 2*2 + 4*1 + 6*2, // d = 0
		1*-1 + 3*0.5 + 5*0.25, 2*-1 + 4*0.5 + 6*0.25, // d = 1
	}, 0)
}

// TestDsv4HcCombValues checks DSV4_HC_COMB against the formula in float64: a softmax over dst per
// src column plus eps, then normalizations, for n_iter 1 and 3 over two tokens.
func TestDsv4HcCombValues(t *testing.T) {
	const hc, eps = core.Dsv4HC, 1e-3
	for _, nIter := range []int{1, 3} {
		ctx := newTrainCtx()
		mix := make([]float32, 2*(2+hc)*hc)
		for i := range mix {
			mix[i] = float32(math.Sin(float64(i))) * 2
		}
		base := make([]float32, (2+hc)*hc)
		for i := range base {
			base[i] = float32(i%5)*0.1 - 0.2
		}
		sc := []float32{9, 9, 0.75}
		r := ctx.Dsv4HcComb(f32T(ctx, mix, (2+hc)*hc, 2), f32T(ctx, sc, 3), f32T(ctx, base, (2+hc)*hc), eps, nIter)
		computeNode(t, r, 2)
		var want []float64
		for tok := 0; tok < 2; tok++ {
			var m [hc * hc]float64
			for s := 0; s < hc; s++ {
				mx, sum := math.Inf(-1), 0.0
				for d := 0; d < hc; d++ {
					i := 2*hc + d + hc*s
					m[d+hc*s] = float64(mix[tok*(2+hc)*hc+i])*float64(sc[2]) + float64(base[i])
					mx = math.Max(mx, m[d+hc*s])
				}
				for d := 0; d < hc; d++ {
					m[d+hc*s] = math.Exp(m[d+hc*s] - mx)
					sum += m[d+hc*s]
				}
				for d := 0; d < hc; d++ {
					m[d+hc*s] = m[d+hc*s]/sum + eps
				}
			}
			norm := func(overSrc bool) {
				for a := 0; a < hc; a++ {
					sum := eps
					for b := 0; b < hc; b++ {
						if overSrc {
							sum += m[a+hc*b]
						} else {
							sum += m[b+hc*a]
						}
					}
					for b := 0; b < hc; b++ {
						if overSrc {
							m[a+hc*b] /= sum
						} else {
							m[b+hc*a] /= sum
						}
					}
				}
			}
			norm(true)
			for i := 1; i < nIter; i++ {
				norm(false)
				norm(true)
			}
			want = append(want, m[:]...)
		}
		expectClose(t, "hc_comb", r.Float32s(), want, 1e-6)
	}
}
