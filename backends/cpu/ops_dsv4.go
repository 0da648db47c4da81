package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// DeepSeek V4's hyper-connection ops (core.Dsv4HcComb, Dsv4HcPre, Dsv4HcPost): small per-token
// mixes, every source read at its strides, sums in float32 in ggml's order (ggml-cpu's ops.cpp),
// so results match ggml's CPU bit for bit but for expf in DSV4_HC_COMB's softmax.

func init() {
	register(core.OpDsv4HcComb, opImpl{compute: computeDsv4HcComb, tasks: dsv4Tokens, supports: dsv4Supports})
	register(core.OpDsv4HcPre, opImpl{compute: computeDsv4HcPre, tasks: dsv4Tokens, supports: dsv4Supports})
	register(core.OpDsv4HcPost, opImpl{compute: computeDsv4HcPost, tasks: dsv4Tokens, supports: dsv4Supports})
}

func dsv4Supports(dst *core.Tensor) bool { return core.Dsv4NodeValid(dst) }

// dsv4Tokens splits the tokens (dim 2 of COMB and POST, dim 1 of PRE) among the workers.
func dsv4Tokens(dst *core.Tensor, nth int) int {
	nt := dst.Ne[2]
	if dst.Op == core.OpDsv4HcPre {
		nt = dst.Ne[1]
	}
	return int(max(1, min(int64(nth), nt)))
}

// dsv4At reads the f32 at element (i0, i1, i2) of t.
func dsv4At(t *core.Tensor, d []byte, i0, i1, i2 int64) float32 {
	return getF32(d, i0*t.Nb[0]+i1*t.Nb[1]+i2*t.Nb[2])
}

func computeDsv4HcComb(p *params, dst *core.Tensor) {
	mixes, scale, base := dst.Src[0], dst.Src[1], dst.Src[2]
	dm, ds, db, dd := mixes.Data(), scale.Data(), base.Data(), dst.Data()
	eps, nIter := core.Dsv4HcCombParamsOf(dst)
	const hc, off = core.Dsv4HC, 2 * core.Dsv4HC
	sc := getF32(ds, 2*scale.Nb[0])
	t0, t1 := rowRange(dst.Ne[2], p.ith, p.nth)
	var m [hc * hc]float32 // m[dst + hc·src]
	// normDst scales each dst row (its entries over src) to sum 1, the sum started at eps;
	// normSrc each src column (over dst).
	normDst := func() {
		for d := 0; d < hc; d++ {
			s := eps
			for k := 0; k < hc; k++ {
				s += m[d+hc*k]
			}
			inv := 1 / s
			for k := 0; k < hc; k++ {
				m[d+hc*k] *= inv
			}
		}
	}
	normSrc := func() {
		for k := 0; k < hc; k++ {
			s := eps
			for d := 0; d < hc; d++ {
				s += m[d+hc*k]
			}
			inv := 1 / s
			for d := 0; d < hc; d++ {
				m[d+hc*k] *= inv
			}
		}
	}
	for it := t0; it < t1; it++ {
		for k := 0; k < hc; k++ {
			mx := float32(math.Inf(-1))
			for d := 0; d < hc; d++ {
				i := int64(off + d + hc*k)
				v := dsv4At(mixes, dm, i, it, 0)*sc + getF32(db, i*base.Nb[0])
				m[d+hc*k] = v
				mx = max(mx, v)
			}
			var sum float32
			for d := 0; d < hc; d++ {
				v := float32(math.Exp(float64(m[d+hc*k] - mx)))
				m[d+hc*k] = v
				sum += v
			}
			inv := 1 / sum
			for d := 0; d < hc; d++ {
				m[d+hc*k] = m[d+hc*k]*inv + eps
			}
		}
		normDst()
		for i := 1; i < nIter; i++ {
			normSrc()
			normDst()
		}
		for k := 0; k < hc; k++ {
			for d := 0; d < hc; d++ {
				setF32(dd, int64(d)*dst.Nb[0]+int64(k)*dst.Nb[1]+it*dst.Nb[2], m[d+hc*k])
			}
		}
	}
}

func computeDsv4HcPre(p *params, dst *core.Tensor) {
	x, w := dst.Src[0], dst.Src[1]
	dx, dw, dd := x.Data(), w.Data(), dst.Data()
	n, hc := x.Ne[0], x.Ne[1]
	t0, t1 := rowRange(dst.Ne[1], p.ith, p.nth)
	for it := t0; it < t1; it++ {
		for i := int64(0); i < n; i++ {
			var s float32
			for h := int64(0); h < hc; h++ {
				s += dsv4At(x, dx, i, h, it) * dsv4At(w, dw, h, it, 0)
			}
			setF32(dd, i*dst.Nb[0]+it*dst.Nb[1], s)
		}
	}
}

func computeDsv4HcPost(p *params, dst *core.Tensor) {
	x, res, post, comb := dst.Src[0], dst.Src[1], dst.Src[2], dst.Src[3]
	dx, dr, dp, dc, dd := x.Data(), res.Data(), post.Data(), comb.Data(), dst.Data()
	n, hc := dst.Ne[0], dst.Ne[1]
	t0, t1 := rowRange(dst.Ne[2], p.ith, p.nth)
	for it := t0; it < t1; it++ {
		for d := int64(0); d < hc; d++ {
			pv := dsv4At(post, dp, d, it, 0)
			for i := int64(0); i < n; i++ {
				s := dsv4At(x, dx, i, it, 0) * pv
				for k := int64(0); k < hc; k++ {
					s += dsv4At(res, dr, i, k, it) * dsv4At(comb, dc, d, k, it)
				}
				setF32(dd, i*dst.Nb[0]+d*dst.Nb[1]+it*dst.Nb[2], s)
			}
		}
	}
}
