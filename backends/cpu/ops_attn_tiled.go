package cpu

import (
	"math"
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// The tiled FLASH_ATTN_EXT kernel, for prompts: many query rows against f16 or f32 keys and
// values (the KV cache's types). Where the row kernel (computeFast) dots each key with one
// query at a time — a call of a 64-element dot per (query, key) pair — this one takes a tile of
// up to faTileRows query rows (all the query heads that share a K/V head, times a run of
// consecutive query positions) and walks the keys in blocks of faBlock: the block's scores are
// one small GEMM (kern.SgemmF16A reads the f16 keys in place), the online softmax runs per row
// over the block as in computeFast, and the block's values are a second GEMM into a scratch that
// is added to the rows' accumulators. A key block masked (-inf) for every row of the tile is
// skipped, so a causal prompt does half the blocks.
//
// What is computed is computeFast's: the query is rounded to K's vec-dot type (f16 for f16 keys)
// first, a masked key gets -inf whatever its dot (so a NaN in an unused cache cell stays out),
// and a value row no row of the tile attends to is read as zeros. Only the order of the f32
// additions differs.

// faTileRows is the query rows (heads × positions) of a tile.
const faTileRows = 64

// faTile is the tiling of a node: g query heads per tile (those sharing one K/V head), bq query
// positions, units tiles in all.
type faTile struct {
	g, bq, units int64
}

// faTiling returns the tiling of dst for nth workers, or ok false when the row kernel runs it:
// one query position (generation), or key or value types other than f16 and f32.
func faTiling(dst *core.Tensor, nth int) (t faTile, ok bool) {
	q, k, v := dst.Src[0], dst.Src[1], dst.Src[2]
	if (k.Type != core.TypeF16 && k.Type != core.TypeF32) || (v.Type != core.TypeF16 && v.Type != core.TypeF32) ||
		q.Ne[1] < 4 || k.Nb[1]%k.Type.Size() != 0 {
		return t, false
	}
	t.g = 1
	if r := q.Ne[2] / k.Ne[2]; q.Ne[2]/v.Ne[2] == r {
		t.g = r
	}
	t.bq = max(1, min(q.Ne[1], faTileRows/t.g))
	for {
		t.units = (q.Ne[1] + t.bq - 1) / t.bq * (q.Ne[2] / t.g) * q.Ne[3]
		if t.units >= 2*int64(nth) || t.bq == 1 {
			break
		}
		t.bq = (t.bq + 1) / 2
	}
	return t, true
}

// faTiledScratch is a worker's scratch in floats: the tile's queries, mask terms, scores,
// accumulators and block product, a value block in f32 and transposed, the rows' maxima and
// sums, a query row in f16 (half of its floats used), and the GEMMs' own scratch.
func faTiledScratch(dst *core.Tensor, t faTile) int64 {
	dk, dv := dst.Src[1].Ne[0], dst.Src[2].Ne[0]
	r := t.g * t.bq
	gw := max(kern.SgemmWorkSize(faBlock, int(r), int(dk), 1), kern.SgemmWorkSize(int(dv), int(r), faBlock, 1))
	return r*dk + 2*r*faBlock + 2*r*dv + 2*faBlock*dv + 2*r + dk + int64(gw)
}

// computeTiled runs the tiles of one worker.
func (j *faJob) computeTiled(p *params, dst *core.Tensor, t faTile) {
	dk, dv := j.dk0, j.dv0
	R := t.g * t.bq
	n := faTiledScratch(dst, t)
	buf := scratch(p, n)
	take := func(n int64) []float32 { s := buf[:n:n]; buf = buf[n:]; return s }
	qt, mk, sc := take(R*dk), take(R*faBlock), take(R*faBlock)
	acc, tmp := take(R*dv), take(R*dv)
	vf, vt := take(faBlock*dv), take(faBlock*dv)
	M, S := take(R), take(R)
	q16at := n - int64(len(buf)) // float index of the f16 query row in this worker's scratch
	take(dk)
	gw := buf
	var cnt atomic.Int64
	dd := dst.Data()
	negInf := float32(math.Inf(-1))
	nq, nh := j.q.Ne[1], j.q.Ne[2]
	nqb := (nq + t.bq - 1) / t.bq
	var q16 []uint16
	if j.k.Type == core.TypeF16 {
		wb := p.work[int64(p.ith)*scratchBytes(n, 1):]
		q16 = u16s(wb[4*q16at : 4*q16at+2*dk])[:dk]
	}
	u0, u1 := rowRange(t.units, p.ith, p.nth)
	for u := u0; u < u1; u++ {
		q0 := u % nqb * t.bq
		h0 := (u / nqb) % (nh / t.g) * t.g
		iq3 := u / nqb / (nh / t.g)
		bq := min(t.bq, nq-q0)
		rows := t.g * bq // row r = gi*bq + qi: head h0+gi, position q0+qi
		for r := int64(0); r < rows; r++ {
			gi, qi := r/bq, r%bq
			row := qt[r*dk : (r+1)*dk]
			loadRow(j.q, j.dq, q0+qi, h0+gi, iq3, row)
			if q16 != nil { // the row kernel's rounding of the query to f16
				kern.F32ToF16Row(row, q16)
				kern.F16ToF32Row(q16, row)
			}
			M[r], S[r] = negInf, 0
		}
		clear(acc[:rows*dv])
		kb := (h0/j.rk2)*j.k.Nb[2] + iq3*j.k.Nb[3]
		vb := (h0/j.rv2)*j.v.Nb[2] + iq3*j.v.Nb[3]
		for c0 := int64(0); c0 < j.nkv; c0 += faBlock {
			nb := min(faBlock, j.nkv-c0)
			// mask terms; a block masked for every row is skipped
			live := j.m == nil
			for r := int64(0); r < rows; r++ {
				m := mk[r*faBlock : r*faBlock+nb]
				if j.m == nil {
					clear(m)
					continue
				}
				gi, qi := r/bq, r%bq
				mo := j.maskOff(q0+qi, h0+gi, iq3) + c0*j.m.Type.Size()
				if j.m.Type == core.TypeF16 {
					kern.F16ToF32Row(u16s(j.dm[mo:mo+2*nb]), m)
				} else {
					copy(m, f32s(j.dm[mo:mo+4*nb]))
				}
				if s := core.AlibiSlope(h0+gi, nh, j.maxBias); s != 1 {
					kern.ScaleF32(s, m)
				}
				if !live && kern.MaxF32(m) != negInf {
					live = true
				}
			}
			if !live {
				continue
			}
			// scores: sc[r*faBlock+c] = q_r · k_c
			cnt.Store(0)
			ko := kb + c0*j.k.Nb[1]
			if j.k.Type == core.TypeF16 {
				es := j.k.Nb[1] / 2
				kern.SgemmF16A(0, 1, nil, &cnt, gw, int(nb), int(rows), int(dk),
					u16s(j.dk[ko:ko+(nb-1)*j.k.Nb[1]+2*dk]), int(es), qt, int(dk), sc, faBlock)
			} else {
				es := j.k.Nb[1] / 4
				kern.Sgemm(0, 1, nil, &cnt, gw, int(nb), int(rows), int(dk),
					f32s(j.dk[ko:ko+(nb-1)*j.k.Nb[1]+4*dk]), int(es), qt, int(dk), sc, faBlock)
			}
			// online softmax per row; the weights replace the scores (0 where masked)
			for r := int64(0); r < rows; r++ {
				s, m := sc[r*faBlock:r*faBlock+nb], mk[r*faBlock:r*faBlock+nb]
				for c, x := range s {
					if m[c] == negInf {
						s[c] = negInf
						continue
					}
					x *= j.scale
					if j.softcap != 0 {
						x = j.softcap * float32(math.Tanh(float64(x)))
					}
					s[c] = x + m[c]
				}
				bmax := kern.MaxF32(s)
				if bmax == negInf {
					clear(s)
					continue
				}
				if bmax > M[r] {
					if S[r] != 0 {
						ms := expf32(M[r] - bmax)
						S[r] *= ms
						kern.ScaleF32(ms, acc[r*dv:(r+1)*dv])
					}
					M[r] = bmax
				}
				S[r] += kern.ExpSumF32(s, s, M[r])
			}
			// values: the block in f32, transposed (vt[d*faBlock+c]); unattended rows as zeros
			for c := int64(0); c < nb; c++ {
				vr := vf[c*dv : (c+1)*dv]
				used := false
				for r := int64(0); r < rows; r++ {
					if sc[r*faBlock+c] != 0 {
						used = true
						break
					}
				}
				vo := vb + (c0+c)*j.v.Nb[1]
				switch {
				case !used:
					clear(vr)
				case j.v.Type == core.TypeF16:
					kern.F16ToF32Row(u16s(j.dv[vo:vo+2*dv]), vr)
				default:
					copy(vr, f32s(j.dv[vo:vo+4*dv]))
				}
			}
			for d := int64(0); d < dv; d++ {
				col := vt[d*faBlock : d*faBlock+nb]
				for c := range col {
					col[c] = vf[int64(c)*dv+d]
				}
			}
			cnt.Store(0)
			kern.Sgemm(0, 1, nil, &cnt, gw, int(dv), int(rows), int(nb), vt, faBlock, sc, faBlock, tmp, int(dv))
			kern.AddF32(acc[:rows*dv], acc[:rows*dv], tmp[:rows*dv])
		}
		for r := int64(0); r < rows; r++ {
			gi, qi := r/bq, r%bq
			j.finish(dst, dd, acc[r*dv:(r+1)*dv], M[r], S[r], q0+qi, h0+gi, iq3)
		}
	}
}
