package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// ROPE (modes NORMAL, NEOX, MROPE, VISION and IMROPE, f32 and f16), after ggml_compute_forward_rope_flt, rotate_pairs,
// ggml_rope_cache_init, rope_yarn and rope_yarn_ramp (ggml/src/ggml-cpu/ops.cpp) and
// ggml_rope_yarn_corr_dims (ggml/src/ggml.c):
//
//   - pair k (0 ≤ k < n_dims/2) of token i2 at position p = pos[i2] gets
//     θ_extrap = p · base^(-2k/n_dims) / freq_factor[k] and θ_interp = freq_scale · θ_extrap;
//   - without YaRN (ext_factor == 0) θ = θ_interp and mscale = attn_factor; with it
//     ramp = (1 - clamp((k - lo) / max(0.001, hi - lo), 0, 1)) · ext_factor,
//     θ = θ_interp·(1 - ramp) + θ_extrap·ramp and mscale = attn_factor·(1 + 0.1·ln(1/freq_scale)),
//     where lo = max(0, floor(d(beta_fast))), hi = min(n_dims - 1, ceil(d(beta_slow))) and
//     d(b) = n_dims · ln(n_ctx_orig / (2π·b)) / (2 ln base);
//   - NORMAL rotates (x[2k], x[2k+1]), NEOX rotates (x[k], x[k + n_dims/2]), by
//     (x0·cos θ - x1·sin θ, x0·sin θ + x1·cos θ)·mscale; elements n_dims..ne0-1 are copied.
//   - the multi modes (ggml_mrope_cache_init) read four positions per token, component c of token
//     i2 at pos[c·ne2 + i2] (t, h, w, e). Pair k lies in sector k mod Σsections. MROPE gives the
//     sector's section its component (t below s0, h below s0+s1, w below s0+s1+s2, else e), IMROPE
//     interleaves them (sector%3 == 1 and < 3·s1 → h, == 2 and < 3·s2 → w, == 0 and < 3·s0 → t,
//     else e); both keep θ's index k and NEOX pairing. VISION restarts each component's index at
//     its section's first sector (ggml's reset chain: t at sector 0, else h at s0, else w at s0+s1,
//     else e at s0+s1+s2) and rotates n_dims = ne0/2 pairs (x[k], x[k + n_dims]), copying nothing.
//   - ggml_rope_set_offset's n_offs shifts the rotated dims to n_offs..n_offs+n_dims-1 (θ indices
//     unchanged); the others are copied. ROPE_BACK keeps the offset (ggml's backward drops it).
//
// ggml builds θ by repeated float32 multiplication; here the per-token cache is built in float64
// (then stored as float32 cos/sin), and the rotation is done in float64, which is at least as
// accurate. ROPE_BACK is the same kernel with sin θ negated: the rotation by −θ, the transpose of
// the forward map mscale·R(θ) (ggml's sin_sign = −1). Rows (i1, i2, i3) are split among all workers (ggml: n_threads); each row is converted
// to an f32 scratch row, rotated, and stored back, so any strides work and dst may alias a.

func init() {
	register(core.OpRope, opImpl{compute: computeRope, work: ropeWork, supports: ropeSupports})
	register(core.OpRopeBack, opImpl{compute: computeRope, work: ropeWork, supports: ropeSupports})
}

func ropeSupports(dst *core.Tensor) bool {
	a, pos, ff := dst.Src[0], dst.Src[1], dst.Src[2]
	rp := core.RopeParamsOf(dst)
	switch {
	case a == nil || pos == nil:
		return false
	case a.Type != core.TypeF32 && a.Type != core.TypeF16:
		return false
	case dst.Type != a.Type || dst.Ne != a.Ne:
		return false
	case pos.Type != core.TypeI32 || pos.Ne[0] < a.Ne[2]:
		return false
	case !ropeParamsOK(a.Ne, pos.Ne[0], rp):
		return false
	case ff != nil && (ff.Type != core.TypeF32 || ff.Ne[0] < ropePairs(rp)):
		return false
	}
	return true
}

// ropeParamsOK checks the mode, n_dims, sections and offset against a's shape ne and the number
// of positions.
func ropeParamsOK(ne [4]int64, nPos int64, rp core.RopeParams) bool {
	multi := core.RopeIsMulti(rp.Mode)
	s := rp.Sections
	switch {
	case rp.Mode != core.RopeNormal && rp.Mode != core.RopeNeox && rp.Mode != core.RopeMrope &&
		rp.Mode != core.RopeVision && rp.Mode != core.RopeImrope:
		return false
	case rp.NDims <= 0 || rp.NDims%2 != 0 || int64(rp.NDims) > ne[0]:
		return false
	case multi && (nPos < 4*ne[2] || s[0] < 0 || s[1] < 0 || s[2] < 0 || s[3] < 0 || s[0]+s[1]+s[2] <= 0):
		return false
	case !multi && nPos < ne[2]:
		return false
	case rp.Mode == core.RopeVision && (int64(rp.NDims) != ne[0]/2 || rp.NOffs != 0):
		return false
	case rp.NOffs < 0 || rp.NOffs%2 != 0 || int64(rp.NOffs)+int64(rp.NDims) > ne[0]:
		return false
	}
	return true
}

// ropePairs is the number of rotated pairs: n_dims/2, n_dims for VISION.
func ropePairs(rp core.RopeParams) int64 {
	if rp.Mode == core.RopeVision {
		return int64(rp.NDims)
	}
	return int64(rp.NDims / 2)
}

// ropeWork: one row plus the cos/sin cache (2 values per pair) per worker.
func ropeWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(dst.Ne[0]+2*ropePairs(core.RopeParamsOf(dst)), nTasks)
}

// ropeCorrDims returns YaRN's [lo, hi] correction range (ggml_rope_yarn_corr_dims).
func ropeCorrDims(nDims, nCtxOrig int, base, betaFast, betaSlow float32) (float64, float64) {
	dim := func(nRot float32) float64 {
		return float64(nDims) * math.Log(float64(nCtxOrig)/(float64(nRot)*2*math.Pi)) / (2 * math.Log(float64(base)))
	}
	lo := math.Max(0, math.Floor(dim(betaFast)))
	hi := math.Min(float64(nDims-1), math.Ceil(dim(betaSlow)))
	return lo, hi
}

// ropeRamp is rope_yarn_ramp for pair k.
func ropeRamp(lo, hi float64, k int) float64 {
	y := (float64(k) - lo) / math.Max(0.001, hi-lo)
	return 1 - math.Min(1, math.Max(0, y))
}

// ropeMemo is a worker's last rotation table and what it was computed from. The ROPE nodes of a
// generated token share its position and, but for the tensors they rotate, their parameters (Q
// and K of every layer), so the table (a cosine and a sine per pair: 0.56 µs for 32 pairs on
// Zen 5, 24 times a MoE token) is computed once per token and worker instead of once per node.
// Tables that read frequency factors are not kept (the factors' tensor could change between
// runs).
type ropeMemo struct {
	ok    bool
	rp    core.RopeParams
	pos   [4]float64
	cache []float32
}

// fill writes the table of pos and rp into cache (lo, hi: rp's YaRN range), from the memo when it
// holds that table.
func (m *ropeMemo) fill(cache []float32, pos [4]float64, rp *core.RopeParams, lo, hi float64) {
	if m.ok && m.rp == *rp && m.pos == pos && len(m.cache) == len(cache) {
		copy(cache, m.cache)
		return
	}
	ropeCache(cache, pos, rp, lo, hi, nil, nil)
	m.ok, m.rp, m.pos = true, *rp, pos
	m.cache = append(m.cache[:0], cache...)
}

// ropeCache fills cache[2k], cache[2k+1] with mscale·cos θ_k and mscale·sin θ_k for the token's
// positions pos (one, or four components t, h, w, e for the multi modes).
func ropeCache(cache []float32, pos [4]float64, rp *core.RopeParams, lo, hi float64, ff *core.Tensor, dff []byte) {
	thetaScale := math.Pow(float64(rp.FreqBase), -2/float64(rp.NDims))
	freqScale := float64(rp.FreqScale)
	ext := float64(rp.ExtFactor)
	mscale := float64(rp.AttnFactor)
	if ext != 0 {
		mscale *= 1 + 0.1*math.Log(1/freqScale)
	}
	multi := core.RopeIsMulti(rp.Mode)
	vision := rp.Mode == core.RopeVision
	s := rp.Sections
	sect := s[0] + s[1] + s[2] + s[3]
	secW, secE := s[0]+s[1], s[0]+s[1]+s[2]
	th := pos // θ of each component, advanced by thetaScale per pair as ggml's cache
	for k := 0; k < int(ropePairs(*rp)); k++ {
		comp := 0
		if multi {
			sector := k % sect
			if vision {
				// ggml's chain: one reset per pair, the first matching section start
				switch sector {
				case 0:
					th[0] = pos[0]
				case s[0]:
					th[1] = pos[1]
				case secW:
					th[2] = pos[2]
				case secE:
					th[3] = pos[3]
				}
			}
			switch {
			case rp.Mode == core.RopeImrope && sector%3 == 1 && sector < 3*s[1]:
				comp = 1
			case rp.Mode == core.RopeImrope && sector%3 == 2 && sector < 3*s[2]:
				comp = 2
			case rp.Mode == core.RopeImrope && sector%3 == 0 && sector < 3*s[0]:
				comp = 0
			case rp.Mode == core.RopeImrope:
				comp = 3
			case sector >= s[0] && sector < secW:
				comp = 1
			case sector >= secW && sector < secE:
				comp = 2
			case sector >= secE:
				comp = 3
			}
		}
		theta := th[comp]
		extrap := theta
		if ff != nil {
			extrap /= float64(getF32(dff, int64(k)*ff.Nb[0]))
		}
		t := freqScale * extrap
		if ext != 0 {
			mix := ropeRamp(lo, hi, k) * ext
			t = t*(1-mix) + extrap*mix
		}
		cache[2*k] = float32(math.Cos(t) * mscale)
		cache[2*k+1] = float32(math.Sin(t) * mscale)
		for c := range th {
			th[c] *= thetaScale
		}
	}
}

func computeRope(p *params, dst *core.Tensor) {
	a, pos, ff := dst.Src[0], dst.Src[1], dst.Src[2]
	da, dd, dp := a.Data(), dst.Data(), pos.Data()
	var dff []byte
	if ff != nil {
		dff = ff.Data()
	}
	rp := core.RopeParamsOf(dst)
	nDims := int64(rp.NDims)
	ne0 := dst.Ne[0]
	np := ropePairs(rp)
	buf := scratch(p, ne0+2*np)
	row, cache := buf[:ne0], buf[ne0:ne0+2*np]
	lo, hi := ropeCorrDims(rp.NDims, rp.NCtxOrig, rp.FreqBase, rp.BetaFast, rp.BetaSlow)
	neox := rp.Mode != core.RopeNormal
	half := nDims / 2 // the second element of a NEOX pair
	if rp.Mode == core.RopeVision {
		half = nDims
	}
	offs := int64(rp.NOffs)
	multi := core.RopeIsMulti(rp.Mode)
	sinSign := 1.0
	if dst.Op == core.OpRopeBack {
		sinSign = -1
	}
	cached := int64(-1)
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		if i2 != cached {
			var ps [4]float64
			for c := range ps {
				if c == 0 || multi {
					ps[c] = float64(i32s(dp[(int64(c)*dst.Ne[2]+i2)*pos.Nb[0]:])[0])
				}
			}
			if ff == nil && p.rope != nil {
				p.rope.fill(cache, ps, &rp, lo, hi)
			} else {
				ropeCache(cache, ps, &rp, lo, hi, ff, dff)
			}
			cached = i2
		}
		loadRow(a, da, i1, i2, i3, row)
		for k := int64(0); k < np; k++ {
			j0, j1 := offs+2*k, offs+2*k+1
			if neox {
				j0, j1 = offs+k, offs+k+half
			}
			c, s := float64(cache[2*k]), sinSign*float64(cache[2*k+1])
			x0, x1 := float64(row[j0]), float64(row[j1])
			row[j0] = float32(x0*c - x1*s)
			row[j1] = float32(x0*s + x1*c)
		}
		storeRow(dst, dd, i1, i2, i3, row)
	}
}
