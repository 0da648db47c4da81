package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// The tiled FLASH_ATTN_EXT kernel, for prompts: many query rows against f16 or f32 keys and
// values (the KV cache's types). Where the row kernel (computeFast) dots each key with one
// query at a time — a call of a 64-element dot per (query, key) pair — this one takes a tile of
// up to faTileRows query rows (all the query heads that share a K/V head, times a run of
// consecutive query positions) and walks the keys in blocks of faTileKeys: the block's scores are
// one small GEMM (kern.SgemmF16A reads the f16 keys in place), the online softmax runs per row
// over the block as in computeFast, and the block's values are a second GEMM into a scratch that
// is added to the rows' accumulators. A key block masked (-inf) for every row of the tile is
// skipped, so a causal prompt does half the blocks.
//
// What is computed is computeFast's: the query is rounded to K's vec-dot type (f16 for f16 keys)
// first, a masked key gets -inf whatever its dot (so a NaN in an unused cache cell stays out),
// and a value row no row of the tile attends to is read as zeros. Only the order of the f32
// additions differs.

// faTileRows is the query rows (heads × positions) of a tile and faTileKeys the keys of a block:
// 96 rows are whole pairs of the GEMM's 6-row activation panels for any head group dividing 96
// (8 heads × 12 positions). On Zen 5 (BenchmarkFlashAttn, 2 workers) 96 × 128 ran a causal
// 512-token prompt of TinyLlama's shapes at 162-167 GFLOPS and 64 queries against 1024 keys at
// 122-131, against 136 and 109 with 64 × 64; 120-240 rows or 256 keys were no faster.
const (
	faTileRows = 96
	faTileKeys = 128
)

// faTile is the tiling of a node: g query heads per tile (those sharing one K/V head), bq query
// positions, units tiles in all.
type faTile struct {
	g, bq, units int64
}

// faTiling returns the tiling of dst for nth workers, or ok false when the row kernel runs it:
// fewer than four query positions (generation: there the row kernel, which reads each key and
// value row once for the heads that share it, ran a token over 1024 or 4096 cached keys of
// TinyLlama's heads at 95-103 GFLOPS against the tiled kernel's 33-36, which packs the keys and
// values it then reads once), or key or value types other than f16 and f32.
func faTiling(dst *core.Tensor, nth int) (t faTile, ok bool) {
	q, k, v := dst.Src[0], dst.Src[1], dst.Src[2]
	if (k.Type != core.TypeF16 && k.Type != core.TypeF32) || (v.Type != core.TypeF16 && v.Type != core.TypeF32) ||
		q.Ne[1] < 4 || k.Ne[1] > faTiledMaxKV || k.Nb[1]%k.Type.Size() != 0 || v.Nb[1]%v.Type.Size() != 0 {
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

// faTiledMaxKV bounds the keys of the tiled kernel: each worker keeps the keys and values of one
// K/V head in f32, packed (a 4096-cell cache of 128-wide heads is 4 MiB).
const faTiledMaxKV = 1 << 14

// faTiledScratch is a worker's scratch in floats: the tile's queries (as rows and packed), mask
// terms, scores and their packed weights, accumulators, the rows' maxima and sums, a query row in
// f16 (half of its floats used), the keys and the transposed values of one K/V head packed block
// by block for kern.GemmPacked, a block's values for the rows that hold non-finite ones, and a
// flag per key block.
func faTiledScratch(dst *core.Tensor, t faTile) int64 {
	dk, dv, nkv := dst.Src[1].Ne[0], dst.Src[2].Ne[0], dst.Src[1].Ne[1]
	r := t.g * t.bq
	nblk := (nkv + faTileKeys - 1) / faTileKeys
	qp := int64(kern.PackedBSize(int(r), int(dk)))
	wp := int64(kern.PackedBSize(int(r), faTileKeys))
	kb, vb := faPackedSlots(dk, dv)
	return r*dk + qp + 2*r*faTileKeys + wp + r*dv + 2*r + dk + faKeyBlocks(dk, nkv)*kb + nblk*vb + vb + nblk
}

// faKeyCacheBytes bounds a worker's packed keys of one K/V head: past it (a long cache of wide
// heads, such as DeepSeek's 576-wide MLA keys) each key block is packed where a tile meets it,
// into one block's room, instead of once for all tiles.
var faKeyCacheBytes int64 = 8 << 20 // a variable for tests

// faKeyBlocks is the key blocks a worker keeps packed: all of nkv keys' blocks, or one where they
// would pass faKeyCacheBytes.
func faKeyBlocks(dk, nkv int64) int64 {
	nblk := (nkv + faTileKeys - 1) / faTileKeys
	if kb, _ := faPackedSlots(dk, 0); 4*nblk*kb > faKeyCacheBytes {
		return 1
	}
	return nblk
}

// faPackedSlots returns the floats of one key block's packed keys (faTileKeys rows over dk) and
// packed transposed values (dv rows over faTileKeys keys).
func faPackedSlots(dk, dv int64) (k, v int64) {
	return int64(kern.PackedASize(faTileKeys, int(dk))), int64(kern.PackedASize(int(dv), faTileKeys))
}

// Key block states of a worker's transposed value cache (one float per block).
const (
	faBlockNew = 0 // not converted yet
	faBlockOK  = 1 // converted; its keys and values are all finite
	faBlockOdd = 2 // converted; some key or value row holds an Inf or NaN
)

// computeTiled runs the tiles of one worker. Its units are consecutive query blocks of a head
// group, so the keys and values of the group's K/V head are converted and packed once per worker
// (kp, vp, block by block as the causal front reaches them), not once per tile (keys past
// faKeyCacheBytes are packed per tile and block); a tile's queries are packed once for all its
// key blocks.
func (j *faJob) computeTiled(p *params, dst *core.Tensor, t faTile) {
	dk, dv := j.dk0, j.dv0
	R := t.g * t.bq
	nblk := (j.nkv + faTileKeys - 1) / faTileKeys
	kslot, vslot := faPackedSlots(dk, dv)
	n := faTiledScratch(dst, t)
	buf := scratch(p, n)
	take := func(n int64) []float32 { s := buf[:n:n]; buf = buf[n:]; return s }
	qt, qp := take(R*dk), take(int64(kern.PackedBSize(int(R), int(dk))))
	mk, sc := take(R*faTileKeys), take(R*faTileKeys)
	wp := take(int64(kern.PackedBSize(int(R), faTileKeys)))
	acc := take(R * dv)
	M, S := take(R), take(R)
	q16at := n - int64(len(buf)) // float index of the f16 query row in this worker's scratch
	take(dk)                     // the f16 query row (half of its floats)
	kBlocks := faKeyBlocks(dk, j.nkv)
	kAll := kBlocks == nblk // every block's keys kept packed for the head
	kp, vp := take(kBlocks*kslot), take(nblk*vslot)
	vt, state := take(vslot), take(nblk)
	dd := dst.Data()
	negInf := float32(math.Inf(-1))
	nq, nh := j.q.Ne[1], j.q.Ne[2]
	nqb := (nq + t.bq - 1) / t.bq
	var q16 []uint16
	if j.k.Type == core.TypeF16 {
		wb := p.work[int64(p.ith)*scratchBytes(n, 1):]
		q16 = u16s(wb[4*q16at : 4*q16at+2*dk])[:dk]
	}
	// the heads of a tile read the same mask rows (no per-head mask, no ALiBi slopes): row r's
	// terms are then those of head 0's row of its position
	shared := j.m == nil || j.m.Ne[2] == 1 && j.maxBias == 0
	maskRow := func(r, bq int64) int64 {
		if shared {
			return r % bq
		}
		return r
	}
	cached := int64(-1) // the (K/V head group, batch) whose keys and values kp and vp hold
	u0, u1 := rowRange(t.units, p.ith, p.nth)
	for u := u0; u < u1; u++ {
		q0 := u % nqb * t.bq
		h0 := (u / nqb) % (nh / t.g) * t.g
		iq3 := u / nqb / (nh / t.g)
		if key := u / nqb; key != cached {
			cached = key
			clear(state)
		}
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
		kern.PackB(qp, qt, int(dk), int(rows), int(dk))
		clear(acc[:rows*dv])
		kb := (h0/j.rk2)*j.k.Nb[2] + iq3*j.k.Nb[3]
		vb := (h0/j.rv2)*j.v.Nb[2] + iq3*j.v.Nb[3]
		for blk := int64(0); blk < nblk; blk++ {
			c0 := blk * faTileKeys
			nb := min(faTileKeys, j.nkv-c0)
			// mask terms; a block masked for every row is skipped. Where the heads share the
			// mask, only head 0's rows are filled (maskRow).
			live := j.m == nil
			for r := int64(0); r < rows; r++ {
				gi, qi := r/bq, r%bq
				if gi > 0 && shared {
					continue
				}
				m := mk[r*faTileKeys : r*faTileKeys+nb]
				if j.m == nil {
					clear(m)
					continue
				}
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
			kslotAt := blk // the block's packed keys: kept for the head, or packed here
			if !kAll {
				kslotAt = 0
			}
			kpb, vpb := kp[kslotAt*kslot:(kslotAt+1)*kslot], vp[blk*vslot:(blk+1)*vslot]
			if state[blk] == faBlockNew {
				state[blk] = j.packValues(vpb, kb, vb, c0, nb)
				if kAll {
					j.packKeys(kpb, kb, c0, nb)
				}
			}
			if !kAll {
				j.packKeys(kpb, kb, c0, nb)
			}
			odd := state[blk] == faBlockOdd
			// scores: sc[r*faTileKeys+c] = q_r · k_c
			kern.GemmPacked(int(nb), int(rows), int(dk), kpb, qp, sc, faTileKeys, false)
			// online softmax per row; the weights replace the scores (0 where masked)
			for r := int64(0); r < rows; r++ {
				mr := maskRow(r, bq)
				s, m := sc[r*faTileKeys:r*faTileKeys+nb], mk[mr*faTileKeys:mr*faTileKeys+nb]
				if odd || j.softcap != 0 {
					// a masked key gets -inf whatever its dot (which may be NaN here)
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
				} else {
					kern.ScaleF32(j.scale, s)
					kern.AddF32(s, s, m)
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
			// values: acc += weights × the block's values, a value row that no row of the tile
			// attends to read as zeros where the block holds non-finite rows
			a := vpb
			if odd {
				copy(vt, vpb)
				for c := int64(0); c < nb; c++ {
					used := false
					for r := int64(0); r < rows; r++ {
						if sc[r*faTileKeys+c] != 0 {
							used = true
							break
						}
					}
					if !used {
						kern.ZeroPackedACol(vt, int(dv), int(nb), int(c))
					}
				}
				a = vt
			}
			kern.PackB(wp, sc, faTileKeys, int(rows), int(nb))
			kern.GemmPacked(int(dv), int(rows), int(nb), a, wp, acc, int(dv), true)
		}
		for r := int64(0); r < rows; r++ {
			gi, qi := r/bq, r%bq
			j.finish(dst, dd, acc[r*dv:(r+1)*dv], M[r], S[r], q0+qi, h0+gi, iq3)
		}
	}
}

// packKeys packs the keys c0..c0+nb of the K/V head at byte offset kb into kp (kern.PackA's
// layout, nb rows over dk).
func (j *faJob) packKeys(kp []float32, kb, c0, nb int64) {
	dk := j.dk0
	ko := kb + c0*j.k.Nb[1]
	if j.k.Type == core.TypeF16 {
		es := j.k.Nb[1] / 2
		kern.PackAF16(kp, u16s(j.dk[ko:ko+(nb-1)*j.k.Nb[1]+2*dk]), int(es), int(nb), int(dk))
	} else {
		es := j.k.Nb[1] / 4
		kern.PackA(kp, f32s(j.dk[ko:ko+(nb-1)*j.k.Nb[1]+4*dk]), int(es), int(nb), int(dk))
	}
}

// packValues packs the values c0..c0+nb of the K/V head at byte offset vb, transposed, into vp
// (kern.PackAT: dv rows over nb keys) and returns the block's state: faBlockOdd if a key (at byte
// offset kb) or value row of the block holds an Inf or NaN.
func (j *faJob) packValues(vp []float32, kb, vb, c0, nb int64) float32 {
	dk, dv := j.dk0, j.dv0
	vo, vs := vb+c0*j.v.Nb[1], j.v.Nb[1]
	if j.v.Type == core.TypeF16 {
		kern.PackATF16(vp, u16s(j.dv[vo:vo+(nb-1)*vs+2*dv]), int(vs/2), int(dv), int(nb))
	} else {
		kern.PackAT(vp, f32s(j.dv[vo:vo+(nb-1)*vs+4*dv]), int(vs/4), int(dv), int(nb))
	}
	odd := kern.AnyNonFinite(vp[:kern.PackedASize(int(dv), int(nb))])
	for c := int64(0); c < nb && !odd; c++ {
		ko := kb + (c0+c)*j.k.Nb[1]
		if j.k.Type == core.TypeF16 {
			odd = !f16Finite(u16s(j.dk[ko : ko+2*dk]))
		} else {
			odd = kern.AnyNonFinite(f32s(j.dk[ko : ko+4*dk]))
		}
	}
	if odd {
		return faBlockOdd
	}
	return faBlockOK
}
