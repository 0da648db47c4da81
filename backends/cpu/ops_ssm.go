package cpu

import (
	"math"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// State-space and linear-attention ops: SSM_CONV, SSM_SCAN, RWKV_WKV6, GATED_LINEAR_ATTN,
// RWKV_WKV7, SOLVE_TRI, GATED_DELTA_NET, as ggml-cpu's ops.cpp computes them (f32 throughout).
// The recurrent ops split heads (and sequences) among workers as ggml does: a worker keeps the
// running state of its heads in the result's state rows and updates them token by token, so no
// barrier is needed. Inner loops over the head dimension go through vec (kern's SIMD helpers, or
// plain loops in order for the reference kernels).

func init() {
	register(core.OpSSMConv, opImpl{compute: computeSSMConv, tasks: ssmConvTasks, supports: ssmConvSupports})
	register(core.OpSSMScan, opImpl{compute: computeSSMScan, tasks: ssmScanTasks, work: ssmScanWork, supports: ssmScanSupports})
	register(core.OpRWKVWKV6, opImpl{compute: computeWKV6, tasks: linAttnTasks, supports: linAttnSupports})
	register(core.OpGatedLinearAttn, opImpl{compute: computeGLA, tasks: linAttnTasks, supports: linAttnSupports})
	register(core.OpRWKVWKV7, opImpl{compute: computeWKV7, tasks: linAttnTasks, supports: linAttnSupports})
	register(core.OpSolveTri, opImpl{compute: computeSolveTri, tasks: solveTriTasks, supports: solveTriSupports})
	register(core.OpGatedDeltaNet, opImpl{compute: computeGDN, tasks: gdnTasks, work: gdnWork, supports: gdnSupports})
}

// vec holds the vector primitives of the recurrent kernels: kern's SIMD helpers, or loops in
// element order for the reference kernels.
type vec struct{ ref bool }

func (v vec) dot(x, y []float32) float32 {
	if !v.ref {
		return kern.DotF32(x, y)
	}
	var s float32
	for i, a := range x {
		s += a * y[i]
	}
	return s
}

// axpy: y += a·x.
func (v vec) axpy(a float32, x, y []float32) {
	if !v.ref {
		kern.AxpyF32(a, x, y)
		return
	}
	y = y[:len(x)]
	for i, b := range x {
		y[i] += a * b
	}
}

// scale: x *= a.
func (v vec) scale(a float32, x []float32) {
	if !v.ref {
		kern.ScaleF32(a, x)
		return
	}
	for i := range x {
		x[i] *= a
	}
}

// mul: dst = a·b elementwise.
func (v vec) mul(dst, a, b []float32) {
	if !v.ref {
		kern.MulF32(dst, a, b)
		return
	}
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

// exp: dst = exp(src) elementwise (kern.ExpF32 within 1 ulp, or math.Exp rounded).
func (v vec) exp(dst, src []float32) {
	if !v.ref {
		kern.ExpF32(dst, src)
		return
	}
	for i, x := range src {
		dst[i] = expf(x)
	}
}

func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

// softplusf is ggml_compute_softplus_f32: x above 20, else logf(1 + expf(x)).
func softplusf(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log(float64(1 + expf(x))))
}

// f32sAt returns the n floats of data at byte offset off.
func f32sAt(data []byte, off, n int64) []float32 { return f32s(data[off:])[:n] }

// ---- SSM_CONV ----

func ssmConvSupports(dst *core.Tensor) bool {
	if !core.StateSpaceNodeValid(dst) {
		return false
	}
	sx, c := dst.Src[0], dst.Src[1]
	return sx != nil && c != nil && sx.Type == core.TypeF32 && c.Type == core.TypeF32 &&
		dst.Type == core.TypeF32 && dst.IsContiguous() && dst.Ne[0] == c.Ne[1] && sx.Ne[1] == c.Ne[1] &&
		dst.Ne[1] == sx.Ne[0]-c.Ne[0]+1 && dst.Ne[2] == sx.Ne[2]
}

// ssmConvTasks: at most one worker per channel.
func ssmConvTasks(dst *core.Tensor, nth int) int { return int(max(1, min(int64(nth), dst.Ne[0]))) }

// computeSSMConv: each worker takes a range of channels; per channel, token and sequence the
// float32 dot of the filter with the input window, taps in order.
func computeSSMConv(p *params, dst *core.Tensor) {
	sx, c := dst.Src[0], dst.Src[1]
	ds, dc, dd := sx.Data(), c.Data(), f32s(dst.Data())
	nc, nr, nt, ns := c.Ne[0], dst.Ne[0], dst.Ne[1], dst.Ne[2]
	r0, r1 := rowRange(nr, p.ith, p.nth)
	for i3 := int64(0); i3 < ns; i3++ {
		for i2 := int64(0); i2 < nt; i2++ {
			out := dd[(i3*nt+i2)*nr:]
			for i1 := r0; i1 < r1; i1++ {
				so, co := i1*sx.Nb[1]+i3*sx.Nb[2]+i2*sx.Nb[0], i1*c.Nb[1]
				var sum float32
				for i0 := int64(0); i0 < nc; i0++ {
					sum += getF32(ds, so+i0*sx.Nb[0]) * getF32(dc, co+i0*c.Nb[0])
				}
				out[i1] = sum
			}
		}
	}
}

// ---- SSM_SCAN ----

func ssmScanSupports(dst *core.Tensor) bool {
	if !core.StateSpaceNodeValid(dst) {
		return false
	}
	for _, s := range dst.Src[:6] {
		if s == nil || s.Type != core.TypeF32 {
			return false
		}
	}
	return dst.Src[6] != nil && dst.Src[6].Type == core.TypeI32 && dst.Type == core.TypeF32 && dst.IsContiguous()
}

// ssmScanTasks: at most one worker per head.
func ssmScanTasks(dst *core.Tensor, nth int) int {
	return int(max(1, min(int64(nth), dst.Src[1].Ne[1])))
}

// ssmScanWork: per worker, Mamba-1's decays exp(Δ·A) of one head (d_state floats).
func ssmScanWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Src[0].Ne[0], nTasks) }

// computeSSMScan: each worker scans its range of heads through every sequence and token. The
// running state of a sequence lives in its slot-0 rows of dst (the first token reads the initial
// state s[ids[seq]]); with K > 1 slots the state after token n_t-1-k is also copied to slot k.
func computeSSMScan(p *params, dst *core.Tensor) {
	s, x, dt, a, b, cm, ids := dst.Src[0], dst.Src[1], dst.Src[2], dst.Src[3], dst.Src[4], dst.Src[5], dst.Src[6]
	v := vec{p.ref}
	nc, nr, nh, ng, nt, ns := s.Ne[0], s.Ne[1], x.Ne[1], b.Ne[1], x.Ne[2], x.Ne[3]
	K := int64(core.SnapshotSlotsOf(dst))
	dS, dX, dDt, dA, dB, dC, dI := f32s(s.Data()), x.Data(), f32s(dt.Data()), f32s(a.Data()), b.Data(), cm.Data(), ids.Data()
	dd := f32s(dst.Data())
	stateSize := nc * nr * nh // floats per sequence state
	sOff := x.NElements()
	h0, h1 := rowRange(nh, p.ith, p.nth)
	hpg := nh / ng // heads per group
	stride := (nc*4 + 63) / 64 * 64
	decay := f32s(p.work[int64(p.ith)*stride:])[:nc]
	mamba2 := a.Ne[0] == 1
	for i3 := int64(0); i3 < ns; i3++ {
		id := int64(i32s(dI[i3*ids.Nb[0]:])[0])
		if id < 0 || id >= s.Ne[3] {
			p.fail(errorfCPU("SSM_SCAN: id %d of sequence %d is outside the %d states of %v", id, i3, s.Ne[3], s))
			return
		}
		s0 := dS[id*stateSize : (id+1)*stateSize]
		st := dd[sOff+i3*stateSize : sOff+(i3+1)*stateSize]
		for i2 := int64(0); i2 < nt; i2++ {
			xr := f32sAt(dX, i2*x.Nb[2]+i3*x.Nb[3], nr*nh)
			dtr := dDt[(i3*nt+i2)*nh:]
			br := f32sAt(dB, i2*b.Nb[2]+i3*b.Nb[3], nc*ng)
			cr := f32sAt(dC, i2*cm.Nb[2]+i3*cm.Nb[3], nc*ng)
			y := dd[(i3*nt+i2)*nh*nr:]
			for h := h0; h < h1; h++ {
				dtsp := softplusf(dtr[h])
				g := h / hpg
				bg, cg := br[g*nc:(g+1)*nc], cr[g*nc:(g+1)*nc]
				if mamba2 {
					dA := expf(dtsp * dA[h])
					for i1 := int64(0); i1 < nr; i1++ {
						ii := i1 + h*nr
						row := st[ii*nc : (ii+1)*nc]
						if i2 == 0 {
							copy(row, s0[ii*nc:(ii+1)*nc])
						}
						// state = state·dA + B·(x·Δ); y = Σ state·C
						v.scale(dA, row)
						v.axpy(xr[ii]*dtsp, bg, row)
						y[ii] = v.dot(row, cg)
					}
					continue
				}
				// Mamba-1: a decay per state element, exp(Δ·A[h]) once per head and token.
				ah := dA[h*nc : (h+1)*nc]
				for i0, a := range ah {
					decay[i0] = dtsp * a
				}
				v.exp(decay, decay)
				for i1 := int64(0); i1 < nr; i1++ {
					ii := i1 + h*nr
					row := st[ii*nc : (ii+1)*nc]
					prev := row
					if i2 == 0 {
						prev = s0[ii*nc : (ii+1)*nc]
					}
					v.mul(row, prev, decay)
					v.axpy(xr[ii]*dtsp, bg, row)
					y[ii] = v.dot(row, cg)
				}
			}
			if slot := nt - 1 - i2; K > 1 && slot > 0 && slot < K {
				snap := dd[sOff+(slot*ns+i3)*stateSize:]
				copy(snap[h0*nr*nc:h1*nr*nc], st[h0*nr*nc:h1*nr*nc])
			}
		}
	}
}

// ---- RWKV_WKV6, GATED_LINEAR_ATTN, RWKV_WKV7 ----

// linAttnStateSrc is the source index of the initial states of a linear-attention node.
func linAttnStateSrc(op core.Op) int {
	switch op {
	case core.OpRWKVWKV6:
		return 5
	case core.OpGatedLinearAttn:
		return 4
	}
	return 6 // RWKV_WKV7
}

func linAttnSupports(dst *core.Tensor) bool {
	if !core.StateSpaceNodeValid(dst) {
		return false
	}
	n := linAttnStateSrc(dst.Op) + 1
	for _, s := range dst.Src[:n] {
		if s == nil || s.Type != core.TypeF32 || !s.IsContiguous() {
			return false
		}
	}
	return dst.Type == core.TypeF32 && dst.IsContiguous()
}

// linAttnTasks: at most one worker per head.
func linAttnTasks(dst *core.Tensor, nth int) int {
	return int(max(1, min(int64(nth), dst.Src[1].Ne[1])))
}

// linAttnGeom is the geometry every linear-attention kernel shares: head size S, heads H,
// tokens T, sequences, tokens per sequence, and the worker's heads [h0, h1).
type linAttnGeom struct{ S, H, T, nSeqs, perSeq, h0, h1 int64 }

func linAttnGeomOf(p *params, dst *core.Tensor) linAttnGeom {
	ref := dst.Src[1] // v in WKV6/GLA, w in WKV7: every per-token operand has the same shape
	g := linAttnGeom{S: ref.Ne[0], H: ref.Ne[1], T: ref.Ne[2], nSeqs: dst.Src[linAttnStateSrc(dst.Op)].Ne[1]}
	g.perSeq = g.T / g.nSeqs
	g.h0, g.h1 = rowRange(g.H, p.ith, p.nth)
	return g
}

// eachHeadToken runs f for every token of every sequence on each of the worker's heads, with
// st the head's S×S running state in dst (initialized from the source states at the first token
// of a sequence) and off the float offset of the head's S elements of the token.
func (g linAttnGeom) eachHeadToken(dd, state0 []float32, f func(st []float32, off int64)) {
	C := g.S * g.H
	for seq := int64(0); seq < g.nSeqs; seq++ {
		for h := g.h0; h < g.h1; h++ {
			so := seq*g.S*C + h*g.S*g.S
			st := dd[g.T*C+so : g.T*C+so+g.S*g.S]
			copy(st, state0[so:so+g.S*g.S])
			for t := seq * g.perSeq; t < (seq+1)*g.perSeq; t++ {
				f(st, t*C+h*g.S)
			}
		}
	}
}

// computeWKV6: out[j] = Σ_i r[i]·(tf[i]·k[i]·v[j] + st[i][j]); st[i][j] = st[i][j]·td[i] + k[i]·v[j].
func computeWKV6(p *params, dst *core.Tensor) {
	g := linAttnGeomOf(p, dst)
	v := vec{p.ref}
	k, vv, r, tf, td := f32s(dst.Src[0].Data()), f32s(dst.Src[1].Data()), f32s(dst.Src[2].Data()), f32s(dst.Src[3].Data()), f32s(dst.Src[4].Data())
	dd := f32s(dst.Data())
	S := g.S
	g.eachHeadToken(dd, f32s(dst.Src[5].Data()), func(st []float32, off int64) {
		h := off % (S * g.H) / S
		out, vr := dd[off:off+S], vv[off:off+S]
		clear(out)
		for i := int64(0); i < S; i++ {
			row := st[i*S : (i+1)*S]
			ki, ri := k[off+i], r[off+i]
			v.axpy(ri, row, out)
			v.axpy(ki*tf[h*S+i]*ri, vr, out)
			v.scale(td[off+i], row)
			v.axpy(ki, vr, row)
		}
	})
}

// computeGLA: st[i][j] = st[i][j]·g[i] + k[i]·v[j]; out[j] = Σ_i st[i][j]·q[i]·scale.
func computeGLA(p *params, dst *core.Tensor) {
	g := linAttnGeomOf(p, dst)
	v := vec{p.ref}
	k, vv, q, gate := f32s(dst.Src[0].Data()), f32s(dst.Src[1].Data()), f32s(dst.Src[2].Data()), f32s(dst.Src[3].Data())
	scale := core.GatedLinearAttnScaleOf(dst)
	dd := f32s(dst.Data())
	S := g.S
	g.eachHeadToken(dd, f32s(dst.Src[4].Data()), func(st []float32, off int64) {
		out, vr := dd[off:off+S], vv[off:off+S]
		clear(out)
		for i := int64(0); i < S; i++ {
			row := st[i*S : (i+1)*S]
			v.scale(gate[off+i], row)
			v.axpy(k[off+i], vr, row)
			v.axpy(q[off+i]*scale, row, out)
		}
	})
}

// computeWKV7: sa = Σ_j a[j]·st[i][j]; st[i][j] = st[i][j]·w[j] + v[i]·k[j] + sa·b[j];
// out[i] = Σ_j st[i][j]·r[j].
func computeWKV7(p *params, dst *core.Tensor) {
	g := linAttnGeomOf(p, dst)
	v := vec{p.ref}
	src := func(i int) []float32 { return f32s(dst.Src[i].Data()) }
	r, w, k, vv, a, b := src(0), src(1), src(2), src(3), src(4), src(5)
	dd := f32s(dst.Data())
	S := g.S
	g.eachHeadToken(dd, src(6), func(st []float32, off int64) {
		rr, wr, kr, ar, br := r[off:off+S], w[off:off+S], k[off:off+S], a[off:off+S], b[off:off+S]
		for i := int64(0); i < S; i++ {
			row := st[i*S : (i+1)*S]
			sa := v.dot(ar, row)
			v.mul(row, row, wr)
			v.axpy(vv[off+i], kr, row)
			v.axpy(sa, br, row)
			dd[off+i] = v.dot(row, rr)
		}
	})
}

// ---- SOLVE_TRI ----

func solveTriSupports(dst *core.Tensor) bool {
	if !core.StateSpaceNodeValid(dst) {
		return false
	}
	a, b := dst.Src[0], dst.Src[1]
	return a != nil && b != nil && a.Type == core.TypeF32 && b.Type == core.TypeF32 && a.IsContiguous() &&
		b.IsContiguous() && dst.Type == core.TypeF32 && dst.IsContiguous() && dst.Ne == b.Ne && a.Ne[0] == a.Ne[1] &&
		a.Ne[1] == b.Ne[1]
}

// solveTriCols is the number of right-hand-side columns one work unit solves together.
const solveTriCols = 64

// solveTriUnits is the number of work units: column blocks of every matrix of the batch.
func solveTriUnits(dst *core.Tensor) int64 {
	return (dst.Ne[0] + solveTriCols - 1) / solveTriCols * dst.Ne[2] * dst.Ne[3]
}

func solveTriTasks(dst *core.Tensor, nth int) int {
	return int(max(1, min(int64(nth), solveTriUnits(dst))))
}

// computeSolveTri: forward substitution, one block of columns at a time: row i of the block is
// first the running sum Σ_{t<i} a[t, i]·x[t] (axpys over the block, in order of t), then
// (b - sum)/a[i, i].
func computeSolveTri(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	v := vec{p.ref}
	da, db, dx := f32s(a.Data()), f32s(b.Data()), f32s(dst.Data())
	k, n := b.Ne[0], b.Ne[1]
	blocks := (k + solveTriCols - 1) / solveTriCols
	u0, u1 := rowRange(solveTriUnits(dst), p.ith, p.nth)
	for u := u0; u < u1; u++ {
		batch, blk := u/blocks, u%blocks
		c0 := blk * solveTriCols
		c1 := min(c0+solveTriCols, k)
		A, B, X := da[batch*n*n:], db[batch*n*k:], dx[batch*n*k:]
		for i := int64(0); i < n; i++ {
			xi := X[i*k+c0 : i*k+c1]
			clear(xi)
			for t := int64(0); t < i; t++ {
				v.axpy(A[i*n+t], X[t*k+c0:t*k+c1], xi)
			}
			diag := A[i*n+i]
			bi := B[i*k+c0 : i*k+c1]
			for c := range xi {
				xi[c] = (bi[c] - xi[c]) / diag
			}
		}
	}
}

// ---- GATED_DELTA_NET ----

func gdnSupports(dst *core.Tensor) bool {
	if !core.StateSpaceNodeValid(dst) {
		return false
	}
	for _, s := range dst.Src[:6] {
		if s == nil || s.Type != core.TypeF32 {
			return false
		}
	}
	return dst.Type == core.TypeF32 && dst.IsContiguous()
}

// gdnTasks: at most one worker per (head, sequence).
func gdnTasks(dst *core.Tensor, nth int) int {
	v := dst.Src[2]
	return int(max(1, min(int64(nth), v.Ne[1]*v.Ne[3])))
}

// gdnWork: per worker the delta row, and with K > 1 a working state.
func gdnWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(gdnWorkFloats(dst), nTasks)
}

func gdnWorkFloats(dst *core.Tensor) int64 {
	S := dst.Src[2].Ne[0]
	if core.SnapshotSlotsOf(dst) > 1 {
		return S + S*S
	}
	return S
}

// computeGDN: each worker takes a range of (head, sequence) pairs. The state is kept transposed
// (row j holds S[·][j]), so every step is a dot or an axpy over a contiguous row.
func computeGDN(p *params, dst *core.Tensor) {
	q, k, vt, gt, bt, st := dst.Src[0], dst.Src[1], dst.Src[2], dst.Src[3], dst.Src[4], dst.Src[5]
	v := vec{p.ref}
	S, H, T, nSeqs := vt.Ne[0], vt.Ne[1], vt.Ne[2], vt.Ne[3]
	K := int64(core.SnapshotSlotsOf(dst))
	kda := gt.Ne[0] == S && S > 1
	dq, dk, dv := q.Data(), k.Data(), vt.Data()
	dg, db, ds, dd := f32s(gt.Data()), f32s(bt.Data()), f32s(st.Data()), f32s(dst.Data())
	attnElems := S * H * T * nSeqs
	snapSize := S * S * H * nSeqs
	stride := (gdnWorkFloats(dst)*4 + 63) / 64 * 64
	w := f32s(p.work[int64(p.ith)*stride:])
	delta := w[:S]
	scale := 1 / float32(math.Sqrt(float64(S)))
	rq3, rk3 := nSeqs/q.Ne[3], nSeqs/k.Ne[3]
	ir0, ir1 := rowRange(H*nSeqs, p.ith, p.nth)
	for ir := ir0; ir < ir1; ir++ {
		h, seq := ir%H, ir/H
		var M []float32
		if K > 1 {
			M = w[S : S+S*S]
		} else {
			M = dd[attnElems+(seq*H+h)*S*S:][:S*S]
		}
		copy(M, ds[(seq*H+h)*S*S:][:S*S])
		for t := int64(0); t < T; t++ {
			qd := f32sAt(dq, (seq/rq3)*q.Nb[3]+t*q.Nb[2]+(h%q.Ne[1])*q.Nb[1], S)
			kd := f32sAt(dk, (seq/rk3)*k.Nb[3]+t*k.Nb[2]+(h%k.Ne[1])*k.Nb[1], S)
			vd := f32sAt(dv, seq*vt.Nb[3]+t*vt.Nb[2]+h*vt.Nb[1], S)
			tok := (seq*T+t)*H + h
			beta := db[tok]
			if kda {
				v.exp(delta, dg[tok*S:(tok+1)*S])
				for j := int64(0); j < S; j++ {
					v.mul(M[j*S:(j+1)*S], M[j*S:(j+1)*S], delta)
				}
			} else {
				v.scale(expf(dg[tok*gt.Ne[0]]), M)
			}
			for j := int64(0); j < S; j++ {
				delta[j] = (vd[j] - v.dot(M[j*S:(j+1)*S], kd)) * beta
			}
			for j := int64(0); j < S; j++ {
				v.axpy(delta[j], kd, M[j*S:(j+1)*S])
			}
			out := dd[(seq*T*H+h)*S+t*S*H:][:S]
			for j := int64(0); j < S; j++ {
				out[j] = v.dot(M[j*S:(j+1)*S], qd) * scale
			}
			if slot := T - 1 - t; K > 1 && slot < K {
				copy(dd[attnElems+slot*snapSize+(seq*H+h)*S*S:][:S*S], M)
			}
		}
	}
}
