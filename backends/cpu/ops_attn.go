package cpu

import (
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
// The reference kernel is ggml's scalar online softmax, one key row at a time. The fast kernel
// walks the keys in blocks of faBlock rows: the block's scores go to per-worker scratch (never the
// whole KQ matrix), the running max and sum are updated once per block, the exponentials are one
// SIMD call, and each V row is added with a SIMD axpy (f16 rows converted to f32 first). Workers
// split the query rows × heads; consecutive rows of a worker share a head, so its K and V stay in
// cache.

const faBlock = 64

func init() {
	register(core.OpFlashAttnExt, opImpl{compute: computeFlashAttn, tasks: faTasks, work: faWork,
		supports: faSupports})
}

// faRows is the number of (query row, head, batch) rows of a FLASH_ATTN_EXT node.
func faRows(dst *core.Tensor) int64 { return dst.Ne[1] * dst.Ne[2] * dst.Ne[3] }

func faTasks(dst *core.Tensor, nth int) int { return int(max(1, min(int64(nth), faRows(dst)))) }

// faScratch is the per-worker scratch in floats: the query in f32 and converted (4·Dk bytes hold
// any vec-dot row), the accumulator, a V row in f32, and a block of scores and mask values.
func faScratch(dst *core.Tensor) int64 {
	return 2*dst.Src[1].Ne[0] + 2*dst.Src[2].Ne[0] + 2*faBlock
}

func faWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(faScratch(dst), nTasks) }

// faKVTypes are the key and value types both kernels handle (a dot with the converted query, and a
// conversion to f32).
var faKVTypes = map[core.Type]bool{core.TypeF32: true, core.TypeF16: true, core.TypeBF16: true,
	core.TypeQ4_0: true, core.TypeQ4_1: true, core.TypeQ8_0: true, core.TypeQ5_0: true, core.TypeQ5_1: true,
	core.TypeQ2_K: true, core.TypeQ3_K: true, core.TypeQ4_K: true, core.TypeQ5_K: true, core.TypeQ6_K: true,
	core.TypeIQ4_NL: true, core.TypeIQ4_XS: true}

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

// maskAt is mask element ic of the row at byte offset off.
func (j *faJob) maskAt(off, ic int64) float32 {
	if j.m.Type == core.TypeF16 {
		return kern.F16ToF32(u16s(j.dm[off+2*ic:])[0])
	}
	return getF32(j.dm, off+4*ic)
}

func computeFlashAttn(p *params, dst *core.Tensor) {
	j := newFAJob(dst)
	n := faScratch(dst)
	buf := scratch(p, n)
	qf := buf[:j.dk0]
	acc := buf[2*j.dk0 : 2*j.dk0+j.dv0]
	vrow := buf[2*j.dk0+j.dv0 : 2*j.dk0+2*j.dv0]
	blk := buf[2*j.dk0+2*j.dv0:]
	// The converted query lives in the bytes of buf[Dk:2Dk] (4·Dk bytes hold any vec-dot row).
	wb := p.work[int64(p.ith)*scratchBytes(n, 1):]
	qconv := wb[4*j.dk0 : 4*j.dk0+j.qrow]
	dd := dst.Data()
	nHead := j.q.Ne[2]
	slope, slopeHead := float32(1), int64(-1)
	r0, r1 := rowRange(faRows(dst), p.ith, p.nth)
	var dot vecDot
	if p.ref {
		dot = refVecDot(j.k.Type)
	} else {
		dot = fastVecDot(j.k.Type)
	}
	for ir := r0; ir < r1; ir++ {
		// q row order as ggml's: query rows fastest, then heads, then batches.
		iq1, h, iq3 := unravel(ir, j.q.Ne)
		if h != slopeHead {
			slope, slopeHead = core.AlibiSlope(h, nHead, j.maxBias), h
		}
		loadRow(j.q, j.dq, iq1, h, iq3, qf)
		var M, S float32
		if p.ref {
			fromF32(j.vdt, qf, qconv)
			M, S = j.rowRef(dot, qconv, acc, vrow, iq1, h, iq3, slope)
		} else {
			convertActivations(j.vdt, qf, qconv)
			M, S = j.rowFast(dot, qconv, acc, vrow, blk[:faBlock], blk[faBlock:2*faBlock], iq1, h, iq3, slope)
		}
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
		storeRow(dst, dd, h, iq1, iq3, acc) // permuted: dst [Dv, n_head, n_q, ne3]
	}
}

func expf32(x float32) float32 { return float32(math.Exp(float64(x))) }

// kOff and vOff are the byte offsets of key row ic and value row ic for query head h, batch iq3.
func (j *faJob) kOff(ic, h, iq3 int64) int64 {
	return ic*j.k.Nb[1] + (h/j.rk2)*j.k.Nb[2] + iq3*j.k.Nb[3]
}

func (j *faJob) vOff(ic, h, iq3 int64) int64 {
	return ic*j.v.Nb[1] + (h/j.rv2)*j.v.Nb[2] + iq3*j.v.Nb[3]
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

// rowFast is rowRef in blocks of faBlock key rows with SIMD helpers (see the file comment).
func (j *faJob) rowFast(dot vecDot, qconv []byte, acc, vrow, sc, mk []float32, iq1, h, iq3 int64, slope float32) (M, S float32) {
	negInf := float32(math.Inf(-1))
	M = negInf
	clear(acc)
	var moff int64
	if j.m != nil {
		moff = j.maskOff(iq1, h, iq3)
	}
	krs := j.k.Type.RowSize(j.dk0)
	vrs := j.v.Type.RowSize(j.dv0)
	n := int(j.dk0)
	for c0 := int64(0); c0 < j.nkv; c0 += faBlock {
		nb := min(faBlock, j.nkv-c0)
		s, m := sc[:nb], mk[:nb]
		if j.m != nil {
			mo := moff + c0*j.m.Type.Size()
			if j.m.Type == core.TypeF16 {
				kern.F16ToF32Row(u16s(j.dm[mo:mo+2*nb]), m)
			} else {
				copy(m, f32s(j.dm[mo:mo+4*nb]))
			}
			if slope != 1 {
				kern.ScaleF32(slope, m)
			}
		} else {
			clear(m)
		}
		bmax := negInf
		for i := range s {
			if m[i] == negInf {
				s[i] = negInf
				continue
			}
			ko := j.kOff(c0+int64(i), h, iq3)
			x := dot(n, j.dk[ko:ko+krs], qconv) * j.scale
			if j.softcap != 0 {
				x = j.softcap * float32(math.Tanh(float64(x)))
			}
			x += m[i]
			s[i] = x
			if x > bmax {
				bmax = x
			}
		}
		if bmax == negInf {
			continue // the whole block is masked
		}
		if bmax > M {
			if S != 0 {
				ms := expf32(M - bmax)
				S *= ms
				kern.ScaleF32(ms, acc)
			}
			M = bmax
		}
		S += kern.ExpSumF32(s, s, M)
		for i, w := range s {
			if w == 0 {
				continue
			}
			vo := j.vOff(c0+int64(i), h, iq3)
			row := j.dv[vo : vo+vrs]
			switch j.v.Type {
			case core.TypeF32:
				kern.AxpyF32(w, f32s(row)[:j.dv0], acc)
			case core.TypeF16:
				kern.F16ToF32Row(u16s(row)[:j.dv0], vrow)
				kern.AxpyF32(w, vrow, acc)
			default:
				toF32(j.v.Type, row, vrow)
				kern.AxpyF32(w, vrow, acc)
			}
		}
	}
	return M, S
}
