package cpu

import (
	"encoding/binary"
	"math"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// FLASH_ATTN_EXT follows ggml_compute_forward_flash_attn_ext_f16 (ggml/src/ggml-cpu/ops.cpp) in
// what it computes: per query row (iq1, head h, iq3), the query is converted to the vec-dot type
// of K (f16 for f16 keys, q8_0 for q8_0 keys, ...), s_j = scale·(q·k_j) (with a logit soft cap c:
// c·tanh(s_j·scale/c)) plus slope_h·mask[j, iq1, h % m2, iq3 % m3]; key rows whose mask term is
// -inf are skipped; softmax over the rest (and the sink logit, which joins the denominator only)
// weights the V rows; a row with nothing left (S = 0) gives zeros. K and V heads are shared by
// n_head/n_head_kv query heads; the result row (h, iq1, iq3) is stored at dst row (i1 = h,
// i2 = iq1, i3 = iq3).
//
// One deliberate difference: ggml accumulates V in f16 when V is f16 (its default precision);
// both kernels here accumulate in f32 whatever the types (ggml's GGML_PREC_F32 behaviour), so
// the precision parameter changes nothing on the CPU.
//
// The reference kernel is ggml's scalar online softmax, one key row at a time; workers split the
// query rows × heads. The fast kernel walks the keys in blocks of faBlock rows: the block's scores
// go to per-worker scratch (never the whole KQ matrix), the running max and sum are updated once
// per block, the exponentials are one SIMD call, and each V row is added with a SIMD axpy (f16
// rows converted to f32 first). Its workers split units of g query heads that share a K/V head
// (faGroup): each key and value row is read once for the g of them, which divides the K/V
// traffic of grouped-query attention by g; consecutive units of a worker are consecutive query
// rows of the same heads, so their K and V stay in cache.

const faBlock = 64

func init() {
	register(core.OpFlashAttnExt, opImpl{compute: computeFlashAttn, tasks: faTasks, work: faWork,
		supports: faSupports})
}

// faRows is the number of (query row, head, batch) rows of a FLASH_ATTN_EXT node.
func faRows(dst *core.Tensor) int64 { return dst.Ne[1] * dst.Ne[2] * dst.Ne[3] }

func faTasks(dst *core.Tensor, nth int) int { return int(max(1, min(int64(nth), faRows(dst)))) }

// faGroup is how many query heads sharing one K/V head the fast kernel runs together, reading
// each key and value row once for all of them: the largest divisor of the GQA ratio that still
// gives each of the nth workers a unit of work (1 without GQA, and for the reference kernel).
func faGroup(dst *core.Tensor, nth int) int64 {
	q, k, v := dst.Src[0], dst.Src[1], dst.Src[2]
	r := q.Ne[2] / k.Ne[2]
	if q.Ne[2]/v.Ne[2] != r {
		return 1
	}
	rows := faRows(dst)
	for g := r; g > 1; g-- {
		if r%g == 0 && rows/g >= int64(nth) {
			return g
		}
	}
	return 1
}

// faScratch is the per-worker scratch in floats for groups of g heads: a query row in f32, g
// converted query rows (4·Dk bytes hold any vec-dot row), g accumulators, a V row in f32, g
// blocks of scores and of mask values, g running maxima, sums and slopes, and the g converted
// query rows back in f32 (for the four-key dots of f16 and f32 keys).
func faScratch(dst *core.Tensor, g int64) int64 {
	dk, dv := dst.Src[1].Ne[0], dst.Src[2].Ne[0]
	return dk + g*(dk+dv+2*faBlock+3) + dv + g*dk
}

func faWork(dst *core.Tensor, nTasks int) int64 {
	n := faScratch(dst, faGroup(dst, nTasks))
	if t, ok := faTiling(dst, nTasks); ok {
		n = max(n, faTiledScratch(dst, t))
	}
	return scratchBytes(n, nTasks)
}

// faBufs are a worker's views of its scratch (see faScratch).
type faBufs struct {
	qf, acc, vrow, sc, mk, M, S, slope []float32
	q32                                []float32 // g rows of Dk
	qconv                              []byte    // g rows of qstride bytes
	qstride                            int64
}

func (j *faJob) bufs(p *params, dst *core.Tensor, g int64) faBufs {
	n := faScratch(dst, g)
	buf := scratch(p, n)
	wb := p.work[int64(p.ith)*scratchBytes(n, 1):]
	dk, dv := j.dk0, j.dv0
	var b faBufs
	b.qf, buf = buf[:dk], buf[dk:]
	b.qstride = 4 * dk
	b.qconv = wb[4*dk : 4*dk+g*b.qstride] // the bytes of the next g·Dk floats
	buf = buf[g*dk:]
	b.acc, buf = buf[:g*dv], buf[g*dv:]
	b.vrow, buf = buf[:dv], buf[dv:]
	b.sc, buf = buf[:g*faBlock], buf[g*faBlock:]
	b.mk, buf = buf[:g*faBlock], buf[g*faBlock:]
	b.M, b.S, b.slope, buf = buf[:g], buf[g:2*g], buf[2*g:3*g], buf[3*g:]
	b.q32 = buf[:g*dk]
	return b
}

// faKVTypes are the key and value types both kernels handle (a dot with the converted query, and a
// conversion to f32).
var faKVTypes = map[core.Type]bool{core.TypeF32: true, core.TypeF16: true, core.TypeBF16: true,
	core.TypeQ4_0: true, core.TypeQ4_1: true, core.TypeQ8_0: true, core.TypeQ5_0: true, core.TypeQ5_1: true,
	core.TypeQ2_K: true, core.TypeQ3_K: true, core.TypeQ4_K: true, core.TypeQ5_K: true, core.TypeQ6_K: true,
	core.TypeIQ4_NL: true, core.TypeIQ4_XS: true, core.TypeMXFP4: true, core.TypeNVFP4: true, core.TypeQ1_0: true,
	core.TypeIQ3_XXS: true, core.TypeIQ3_S: true, core.TypeQ2_0: true, core.TypeIQ2_XXS: true, core.TypeIQ2_XS: true,
	core.TypeIQ2_S: true, core.TypeIQ1_S: true, core.TypeIQ1_M: true}

func faSupports(dst *core.Tensor) bool {
	q, k, v, m, sinks := dst.Src[0], dst.Src[1], dst.Src[2], dst.Src[3], dst.Src[4]
	if q == nil || k == nil || v == nil || dst.Type != core.TypeF32 || dst.Nb[0] != 4 {
		return false
	}
	if q.Type != core.TypeF32 || q.Nb[0] != 4 || !faKVTypes[k.Type] || !faKVTypes[v.Type] ||
		!k.IsContiguousRows() || !v.IsContiguousRows() {
		return false
	}
	if q.Ne[0] != k.Ne[0] || k.Ne[0]%k.Type.VecDotType().BlockSize() != 0 || k.Ne[1] != v.Ne[1] ||
		k.Ne[2] == 0 || v.Ne[2] == 0 || q.Ne[2]%k.Ne[2] != 0 || q.Ne[2]%v.Ne[2] != 0 ||
		q.Ne[3] != k.Ne[3] || q.Ne[3] != v.Ne[3] || dst.Ne != [4]int64{v.Ne[0], q.Ne[2], q.Ne[1], q.Ne[3]} {
		return false
	}
	if m != nil && ((m.Type != core.TypeF16 && m.Type != core.TypeF32) || m.Nb[0] != m.Type.Size() ||
		m.Ne[0] < k.Ne[1] || m.Ne[1] < q.Ne[1] || m.Ne[2] == 0 || m.Ne[3] == 0 ||
		q.Ne[2]%m.Ne[2] != 0 || q.Ne[3]%m.Ne[3] != 0) {
		return false
	}
	if m == nil && core.FlashAttnParamsOf(dst).MaxBias > 0 {
		return false
	}
	return sinks == nil || (sinks.Type == core.TypeF32 && sinks.Ne[0] == q.Ne[2] && sinks.Nb[0] == 4)
}

// faJob is what both kernels need of a node, decoded once per worker.
type faJob struct {
	q, k, v, m, sinks *core.Tensor
	dq, dk, dv, dm    []byte
	sinkv             []float32
	dk0, dv0, nkv     int64 // head sizes and kv rows
	rk2, rv2          int64 // query heads per k head and per v head
	scale, softcap    float32
	maxBias           float32
	vdt               core.Type // K's vec-dot type (the query is converted to it)
	qrow              int64     // bytes of a converted query row
}

func newFAJob(dst *core.Tensor) faJob {
	q, k, v := dst.Src[0], dst.Src[1], dst.Src[2]
	fp := core.FlashAttnParamsOf(dst)
	j := faJob{q: q, k: k, v: v, m: dst.Src[3], sinks: dst.Src[4], dq: q.Data(), dk: k.Data(), dv: v.Data(),
		dk0: k.Ne[0], dv0: v.Ne[0], nkv: k.Ne[1], rk2: q.Ne[2] / k.Ne[2], rv2: q.Ne[2] / v.Ne[2],
		scale: fp.Scale, softcap: fp.LogitSoftcap, maxBias: fp.MaxBias, vdt: k.Type.VecDotType()}
	if j.softcap != 0 {
		j.scale /= j.softcap // s = c·tanh(q·k·scale/c)
	}
	if j.m != nil {
		j.dm = j.m.Data()
	}
	if j.sinks != nil {
		j.sinkv = f32s(j.sinks.Data())
	}
	j.qrow = j.vdt.RowSize(j.dk0)
	return j
}

// maskOff is the byte offset of the mask row for query row iq1 of head h, batch iq3.
func (j *faJob) maskOff(iq1, h, iq3 int64) int64 {
	return iq1*j.m.Nb[1] + (h%j.m.Ne[2])*j.m.Nb[2] + (iq3%j.m.Ne[3])*j.m.Nb[3]
}

// blockMasked reports whether the mask is -Inf at keys c0..c0+nb-1 for each of the g heads from
// h0 of query row iq1, batch iq3 (false without a mask). A head's slope cannot undo an -Inf: it
// is positive.
func (j *faJob) blockMasked(iq1, h0, g, iq3, c0, nb int64) bool {
	if j.m == nil {
		return false
	}
	es := j.m.Type.Size()
	prev := int64(-1)
	for gi := range g {
		mo := j.maskOff(iq1, h0+gi, iq3)
		if mo == prev {
			continue // heads share mask rows unless the mask has a row per head
		}
		prev = mo
		if !allNegInf(j.dm[mo+c0*es:mo+(c0+nb)*es], es) {
			return false
		}
	}
	return true
}

// allNegInf reports whether the little-endian values of es bytes (2: f16, 4: f32) in b are all
// -Inf.
func allNegInf(b []byte, es int64) bool {
	w8, w := uint64(0xFC00FC00FC00FC00), uint64(0xFC00)
	if es == 4 {
		w8, w = 0xFF800000FF800000, 0xFF800000
	}
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != w8 {
			return false
		}
		b = b[8:]
	}
	for ; int64(len(b)) >= es; b = b[es:] {
		v := uint64(binary.LittleEndian.Uint16(b))
		if es == 4 {
			v = uint64(binary.LittleEndian.Uint32(b))
		}
		if v != w {
			return false
		}
	}
	return true
}

// maskAt is mask element ic of the row at byte offset off.
func (j *faJob) maskAt(off, ic int64) float32 {
	if j.m.Type == core.TypeF16 {
		return kern.F16ToF32(u16s(j.dm[off+2*ic:])[0])
	}
	return getF32(j.dm, off+4*ic)
}

func computeFlashAttn(p *params, dst *core.Tensor) {
	j := newFAJob(dst)
	if !p.ref {
		if t, ok := faTiling(dst, p.nth); ok {
			j.computeTiled(p, dst, t) // ops_attn_tiled.go
			return
		}
		j.computeFast(p, dst)
		return
	}
	b := j.bufs(p, dst, 1)
	qconv := b.qconv[:j.qrow]
	dd := dst.Data()
	dot := refVecDot(j.k.Type)
	r0, r1 := rowRange(faRows(dst), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		// q row order as ggml's: query rows fastest, then heads, then batches.
		iq1, h, iq3 := unravel(ir, j.q.Ne)
		slope := core.AlibiSlope(h, j.q.Ne[2], j.maxBias)
		loadRow(j.q, j.dq, iq1, h, iq3, b.qf)
		fromF32(j.vdt, b.qf, qconv)
		M, S := j.rowRef(dot, qconv, b.acc, b.vrow, iq1, h, iq3, slope)
		j.finish(dst, dd, b.acc, M, S, iq1, h, iq3)
	}
}

// finish adds the sink of head h to the softmax (if any), normalizes the accumulated row and
// stores it at dst row (h, iq1, iq3): dst is [Dv, n_head, n_q, ne3].
func (j *faJob) finish(dst *core.Tensor, dd []byte, acc []float32, M, S float32, iq1, h, iq3 int64) {
	if j.sinks != nil {
		s := j.sinkv[h]
		if s > M {
			ms := expf32(M - s)
			S = S*ms + 1
			kern.ScaleF32(ms, acc)
		} else {
			S += expf32(s - M)
		}
	}
	inv := float32(0)
	if S != 0 {
		inv = 1 / S
	}
	kern.ScaleF32(inv, acc)
	storeRow(dst, dd, h, iq1, iq3, acc)
}

// finiteUnattended reports whether every f16 value row among keys lo..hi-1 of the block at c0
// that no head attends (all g weights 0) is finite, so a weighted sum over the range is exact.
func (j *faJob) finiteUnattended(sc []float32, g, vb, c0, lo, hi int64) bool {
	for i := lo; i < hi; i++ {
		used := false
		for gi := range g {
			if sc[gi*faBlock+i] != 0 {
				used = true
				break
			}
		}
		if used {
			continue
		}
		vo := vb + (c0+i)*j.v.Nb[1]
		if !f16Finite(u16s(j.dv[vo : vo+2*j.dv0])) {
			return false
		}
	}
	return true
}

// f16Finite reports whether every half-precision value of h is finite (its exponent field not
// all ones).
func f16Finite(h []uint16) bool {
	for _, x := range h {
		if x&0x7c00 == 0x7c00 {
			return false
		}
	}
	return true
}

func expf32(x float32) float32 { return float32(math.Exp(float64(x))) }

// kOff is the byte offset of key row ic for query head h, batch iq3.
func (j *faJob) kOff(ic, h, iq3 int64) int64 {
	return ic*j.k.Nb[1] + (h/j.rk2)*j.k.Nb[2] + iq3*j.k.Nb[3]
}

// rowRef is ggml's scalar online softmax for one query row: it leaves the unnormalized output in
// acc and returns the running max and sum.
func (j *faJob) rowRef(dot vecDot, qconv []byte, acc, vrow []float32, iq1, h, iq3 int64, slope float32) (M, S float32) {
	M = float32(math.Inf(-1))
	for i := range acc {
		acc[i] = 0
	}
	var moff int64
	if j.m != nil {
		moff = j.maskOff(iq1, h, iq3)
	}
	krs := j.k.Type.RowSize(j.dk0)
	for ic := int64(0); ic < j.nkv; ic++ {
		var mv float32
		if j.m != nil {
			mv = slope * j.maskAt(moff, ic)
			if math.IsInf(float64(mv), -1) {
				continue
			}
		}
		ko := j.kOff(ic, h, iq3)
		s := dot(int(j.dk0), j.dk[ko:ko+krs], qconv) * j.scale
		if j.softcap != 0 {
			s = j.softcap * float32(math.Tanh(float64(s)))
		}
		s += mv
		ms, vs := float32(1), float32(1)
		if s > M {
			ms = expf32(M - s)
			M = s
			for i := range acc {
				acc[i] *= ms
			}
		} else {
			vs = expf32(s - M)
		}
		loadRow(j.v, j.dv, ic, h/j.rv2, iq3, vrow)
		for i, x := range vrow {
			acc[i] += x * vs
		}
		S = S*ms + vs
	}
	return M, S
}

// attendedKey reports whether any of the g heads gives key i of the block a weight (sc holds the
// heads' weights faBlock apart).
func attendedKey(sc []float32, g, i int64) bool {
	for gi := range g {
		if sc[gi*faBlock+i] != 0 {
			return true
		}
	}
	return false
}

// setScores writes keys' scores for one head from their dots d and mask values m (sc may be d):
// a masked key is -Inf whatever its dot. The softcap test is hoisted out of the per-key loop.
func (j *faJob) setScores(sc, m, d []float32) {
	negInf := float32(math.Inf(-1))
	if j.softcap == 0 {
		kern.ScoresF32(sc[:len(m)], d, m, j.scale)
		return
	}
	for t, mv := range m {
		if mv == negInf {
			sc[t] = mv
		} else {
			sc[t] = j.softcap*float32(math.Tanh(float64(d[t]*j.scale))) + mv
		}
	}
}

// scoresGroup writes the scores of the block's first nb/4·4 keys for the g heads of the unit from
// f16 keys at byte offset ko and returns that count: one kern.Dot4F16Heads call for all of them
// (the key rows converted once per three heads; Dot4F16's sums bit for bit), none when every
// head masks all those keys.
func (j *faJob) scoresGroup(b *faBufs, kh []uint16, ko int64, n int, g, nb int64) int64 {
	negInf32 := float32(math.Inf(-1))
	nk := nb / 4 * 4
	if nk == 0 {
		return 0
	}
	attended := false
	for gi := int64(0); gi < g && !attended; gi++ {
		for _, mv := range b.mk[gi*faBlock : gi*faBlock+nk] {
			if mv != negInf32 {
				attended = true
				break
			}
		}
	}
	if !attended {
		for gi := range g {
			copy(b.sc[gi*faBlock:gi*faBlock+nk], b.mk[gi*faBlock:gi*faBlock+nk]) // all -Inf
		}
		return nk
	}
	kern.Dot4F16Heads(kh, int(ko/2), int(j.k.Nb[1]/2), n, int(nk/4), b.q32, n, int(g), b.sc, faBlock)
	for gi := range g {
		o := gi * faBlock
		j.setScores(b.sc[o:o+nk], b.mk[o:o+nk], b.sc[o:o+nk])
	}
	return nk
}

// computeFast is the blocked kernel (see the file comment) over units of g query heads that share
// a K/V head: the units are (query row, head group, batch), query rows fastest; each key row is
// dotted with the g converted queries while it is in cache, and each value row (converted to f32
// once) is added to the g accumulators.
func (j *faJob) computeFast(p *params, dst *core.Tensor) {
	g := faGroup(dst, p.nth)
	b := j.bufs(p, dst, g)
	dd := dst.Data()
	dot := fastVecDot(j.k.Type)
	negInf := float32(math.Inf(-1))
	krs, vrs := j.k.Type.RowSize(j.dk0), j.v.Type.RowSize(j.dv0)
	n, dv := int(j.dk0), j.dv0
	nq, nh := j.q.Ne[1], j.q.Ne[2]
	units := faRows(dst) / g
	u0, u1 := rowRange(units, p.ith, p.nth)
	// f16 and f32 keys: four keys per call against each query in f32 (kern.Dot4F16/F32)
	k16 := j.k.Type == core.TypeF16 && j.k.Nb[1]%2 == 0
	k32 := j.k.Type == core.TypeF32 && j.k.Nb[1]%4 == 0
	var kh []uint16
	var kf []float32
	// f16 values: a weighted sum of a block's rows per head (kern.WeightedSumF16Rows)
	v16 := j.v.Type == core.TypeF16 && j.v.Nb[1]%2 == 0
	var vh []uint16
	if v16 {
		vh = u16s(j.dv)
	}
	switch {
	case k16:
		kh = u16s(j.dk)
	case k32:
		kf = f32s(j.dk)
	}
	for u := u0; u < u1; u++ {
		iq1 := u % nq
		h0 := (u / nq) % (nh / g) * g
		iq3 := u / nq / (nh / g)
		for gi := range g {
			h := h0 + gi
			loadRow(j.q, j.dq, iq1, h, iq3, b.qf)
			convertActivations(j.vdt, b.qf, b.qconv[gi*b.qstride:gi*b.qstride+j.qrow])
			switch {
			case k16:
				kern.F16ToF32Row(u16s(b.qconv[gi*b.qstride:])[:n], b.q32[gi*int64(n):(gi+1)*int64(n)])
			case k32:
				copy(b.q32[gi*int64(n):(gi+1)*int64(n)], b.qf)
			}
			b.slope[gi] = core.AlibiSlope(h, nh, j.maxBias)
			b.M[gi], b.S[gi] = negInf, 0
		}
		clear(b.acc)
		kb := (h0/j.rk2)*j.k.Nb[2] + iq3*j.k.Nb[3]
		vb := (h0/j.rv2)*j.v.Nb[2] + iq3*j.v.Nb[3]
		for c0 := int64(0); c0 < j.nkv; c0 += faBlock {
			nb := min(faBlock, j.nkv-c0)
			if j.blockMasked(iq1, h0, g, iq3, c0, nb) {
				// Every head masks every key of the block: the keys would get weight 0 and their
				// values would be skipped, so the block changes nothing (a generated token's
				// cache view past its position is such blocks).
				continue
			}
			for gi := range g {
				m := b.mk[gi*faBlock : gi*faBlock+nb]
				if j.m == nil {
					clear(m)
					continue
				}
				mo := j.maskOff(iq1, h0+gi, iq3) + c0*j.m.Type.Size()
				if j.m.Type == core.TypeF16 {
					kern.F16ToF32Row(u16s(j.dm[mo:mo+2*nb]), m)
				} else {
					copy(m, f32s(j.dm[mo:mo+4*nb]))
				}
				if b.slope[gi] != 1 {
					kern.ScaleF32(b.slope[gi], m)
				}
			}
			// scores, key-major: each key row is read once for the g queries
			i0 := int64(0)
			if k16 && g > 1 {
				i0 = j.scoresGroup(&b, kh, kb+c0*j.k.Nb[1], n, g, nb)
			}
			if k16 || k32 {
				for ; i0+4 <= nb; i0 += 4 {
					ko := kb + (c0+i0)*j.k.Nb[1]
					for gi := range g {
						o := gi*faBlock + i0
						m := b.mk[o : o+4]
						if m[0] == negInf && m[1] == negInf && m[2] == negInf && m[3] == negInf {
							b.sc[o], b.sc[o+1], b.sc[o+2], b.sc[o+3] = negInf, negInf, negInf, negInf
							continue
						}
						var d4 [4]float32
						q := b.q32[gi*int64(n) : (gi+1)*int64(n)]
						if k16 {
							kern.Dot4F16(kh, int(ko/2), int(j.k.Nb[1]/2), n, q, &d4)
						} else {
							kern.Dot4F32(kf, int(ko/4), int(j.k.Nb[1]/4), n, q, &d4)
						}
						j.setScores(b.sc[o:o+4], m, d4[:])
					}
				}
			}
			for i := i0; i < nb; i++ {
				ko := kb + (c0+i)*j.k.Nb[1]
				krow := j.dk[ko : ko+krs]
				for gi := range g {
					o := gi*faBlock + i
					mv := b.mk[o]
					if mv == negInf {
						b.sc[o] = negInf
						continue
					}
					x := dot(n, krow, b.qconv[gi*b.qstride:]) * j.scale
					if j.softcap != 0 {
						x = j.softcap * float32(math.Tanh(float64(x)))
					}
					b.sc[o] = x + mv
				}
			}
			// per head: running max and sum, weights in place of the scores (0 where masked)
			for gi := range g {
				s := b.sc[gi*faBlock : gi*faBlock+nb]
				bmax := kern.MaxF32(s)
				if bmax == negInf {
					clear(s) // the whole block is masked for this head
					continue
				}
				if bmax > b.M[gi] {
					if b.S[gi] != 0 {
						ms := expf32(b.M[gi] - bmax)
						b.S[gi] *= ms
						kern.ScaleF32(ms, b.acc[gi*dv:(gi+1)*dv])
					}
					b.M[gi] = bmax
				}
				b.S[gi] += kern.ExpSumF32(s, s, b.M[gi])
			}
			// values of f16: one weighted sum per head over the keys from the first to the last
			// any head attends, unless a key between them that no head attends holds an Inf or
			// NaN (its weight 0 would not keep it out)
			if v16 {
				lo, hi := int64(-1), int64(0)
				for i := range nb {
					if attendedKey(b.sc, g, i) {
						lo = i
						break
					}
				}
				for i := nb - 1; i >= lo && lo >= 0; i-- {
					if attendedKey(b.sc, g, i) {
						hi = i + 1
						break
					}
				}
				if lo < 0 {
					continue // nothing attended in this block
				}
				if j.finiteUnattended(b.sc, g, vb, c0, lo, hi) {
					vo := (vb + (c0+lo)*j.v.Nb[1]) / 2
					kern.WeightedSumF16RowsHeads(int(hi-lo), vh[vo:], int(j.v.Nb[1]/2), b.sc[lo:], faBlock, b.acc, int(dv), int(g))
					continue
				}
			}
			// values, key-major: each value row is read (and converted) once for the g heads
			for i := range nb {
				need := false
				for gi := range g {
					if b.sc[gi*faBlock+i] != 0 {
						need = true
						break
					}
				}
				if !need {
					continue
				}
				vo := vb + (c0+i)*j.v.Nb[1]
				row := j.dv[vo : vo+vrs]
				var vr []float32
				switch j.v.Type {
				case core.TypeF32:
					vr = f32s(row)[:dv]
				case core.TypeF16:
					kern.F16ToF32Row(u16s(row)[:dv], b.vrow)
					vr = b.vrow
				default:
					toF32(j.v.Type, row, b.vrow)
					vr = b.vrow
				}
				for gi := range g {
					if w := b.sc[gi*faBlock+i]; w != 0 {
						kern.AxpyF32(w, vr, b.acc[gi*dv:(gi+1)*dv])
					}
				}
			}
		}
		for gi := range g {
			j.finish(dst, dd, b.acc[gi*dv:(gi+1)*dv], b.M[gi], b.S[gi], iq1, h0+gi, iq3)
		}
	}
}
