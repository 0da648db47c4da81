package llm

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// ubatchGraph is the graph of one micro-batch and its inputs.
type ubatchGraph struct {
	ctx    *core.Context
	g      *core.Graph
	tokens *core.Tensor // I32 [n]
	pos    *core.Tensor // I32 [n]
	kIdx   *core.Tensor // I64 [n]: cache cells of the tokens
	vIdx   *core.Tensor // I64 [n·n_embd_v_gqa] when V is transposed, else kIdx
	mask   *core.Tensor // [n_kv, n]: 0 where a token sees a cell, -inf elsewhere
	outIDs *core.Tensor // I32 [n_out] rows whose logits are wanted (nil: all rows)
	logits *core.Tensor // F32 [n_vocab, n_out] (nil when n_out is 0)
	n, nKV int
	nOut   int
}

// graphSize bounds the nodes of one micro-batch graph of m.
func graphSize(m *Model) int { return 96*m.HParams.NLayer + 512 }

// buildGraph builds the forward graph of n tokens at cache positions pos0.. attending over the
// first nKV cells, with logits for nOut rows (the last nOut when fewer than n; 0: no head).
func (s *Session) buildGraph(n, nKV, nOut int) *ubatchGraph {
	m, h, kv := s.m, &s.m.HParams, s.kv
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	ub := &ubatchGraph{ctx: ctx, n: n, nKV: nKV, nOut: nOut}
	N := int64(n)
	ub.tokens = ctx.NewTensor1D(core.TypeI32, N).SetName("inp_tokens").SetInput()
	ub.pos = ctx.NewTensor1D(core.TypeI32, N).SetName("inp_pos").SetInput()
	ub.kIdx = ctx.NewTensor1D(core.TypeI64, N).SetName("inp_k_idxs").SetInput()
	ub.vIdx = ub.kIdx
	if kv.vTrans {
		ub.vIdx = ctx.NewTensor1D(core.TypeI64, N*int64(h.NEmbdVGQA())).SetName("inp_v_idxs").SetInput()
	}
	maskType := core.TypeF32
	if s.flash {
		maskType = core.TypeF16
	}
	ub.mask = ctx.NewTensor2D(maskType, int64(nKV), N).SetName("inp_kq_mask").SetInput()
	if nOut > 0 && nOut < n {
		ub.outIDs = ctx.NewTensor1D(core.TypeI32, int64(nOut)).SetName("inp_out_ids").SetInput()
	}

	hd, hdv := int64(h.HeadDimK), int64(h.HeadDimV)
	nHead, nHeadKV := int64(h.NHead), int64(h.NHeadKV)
	kqScale := float32(1 / math.Sqrt(float64(hd)))
	rope := core.RopeParams{NDims: h.NRot, Mode: h.RopeMode, NCtxOrig: h.NCtxOrig, FreqBase: h.RopeBase,
		FreqScale: h.RopeScale, AttnFactor: 1, BetaFast: 32, BetaSlow: 1}
	norm := func(x, w *core.Tensor) *core.Tensor { return ctx.Mul(ctx.RMSNorm(x, h.NormEps), w) }
	prec := core.PrecDefault // of the weight products of the layer being built (weightPrec)
	mm := func(w, x, b *core.Tensor) *core.Tensor {
		y := ctx.MulMat(w, x)
		if prec != core.PrecDefault {
			ctx.MulMatSetPrec(y, prec)
		}
		if b != nil {
			y = ctx.Add(y, b)
		}
		return y
	}
	kvRow := func(t *core.Tensor, n int64) int64 { return t.Type.RowSize(n) }
	addBias := func(y, b *core.Tensor) *core.Tensor {
		if b == nil {
			return y
		}
		return ctx.Add(y, b)
	}
	g := core.NewGraph(graphSize(m))

	var stores []*core.Tensor
	inpL := ctx.GetRows(m.tokEmbd, ub.tokens)
	for il := range m.layers {
		l := &m.layers[il]
		prec = m.weightPrec(l.dev)
		inpSA := inpL
		cur := norm(inpL, l.attnNorm)
		// Q, K and V next to each other in the graph (as llama.cpp expands them), before their
		// biases, RoPE and cache stores: the CPU runs a generated token's three products as one
		// node (backends/cpu's sibling mat-vecs).
		qm, km, vm := mm(l.wq, cur, nil), mm(l.wk, cur, nil), mm(l.wv, cur, nil)
		g.BuildForwardExpand(qm)
		g.BuildForwardExpand(km)
		g.BuildForwardExpand(vm)
		q := ctx.Reshape3D(addBias(qm, l.bq), hd, nHead, N)
		k := ctx.Reshape3D(addBias(km, l.bk), hd, nHeadKV, N)
		v := ctx.Reshape3D(addBias(vm, l.bv), hdv, nHeadKV, N)
		if l.qNorm != nil {
			q = norm(q, l.qNorm)
			k = norm(k, l.kNorm)
		}
		q = ctx.RopeExt(q, ub.pos, l.ropeFreqs, rope)
		k = ctx.RopeExt(k, ub.pos, l.ropeFreqs, rope)

		// store K and V at the tokens' cells; the views below read the stored results, so the
		// graph orders the reads after the writes.
		kc, vc := kv.k[il], kv.v[il]
		kStored := ctx.SetRows(kc, ctx.Reshape2D(k, hd*nHeadKV, N), ub.kIdx)
		var vStored *core.Tensor
		if kv.vTrans {
			flat := vc.Ne[0] * vc.Ne[1]
			vStored = ctx.SetRows(ctx.Reshape2D(vc, 1, flat), ctx.Reshape2D(ctx.Cont(v), 1, N*hdv*nHeadKV), ub.vIdx)
		} else {
			vStored = ctx.SetRows(vc, ctx.Reshape2D(v, hdv*nHeadKV, N), ub.kIdx)
		}
		stores = append(stores, kStored, vStored)
		kView := ctx.View3D(kStored, hd, nHeadKV, int64(nKV), kvRow(kc, hd), kvRow(kc, hd*nHeadKV), 0)

		qp := ctx.Permute(q, 0, 2, 1, 3)     // [hd, n, n_head]
		kp := ctx.Permute(kView, 0, 2, 1, 3) // [hd, n_kv, n_head_kv]
		var attn *core.Tensor
		if s.flash {
			vView := ctx.View3D(vStored, hdv, nHeadKV, int64(nKV), kvRow(vc, hdv), kvRow(vc, hdv*nHeadKV), 0)
			vp := ctx.Permute(vView, 0, 2, 1, 3) // [hdv, n_kv, n_head_kv]
			fa := ctx.FlashAttnExt(qp, kp, vp, ub.mask, kqScale, 0, 0)
			ctx.FlashAttnExtSetPrec(fa, core.PrecF32)
			attn = ctx.Reshape2D(fa, hdv*nHead, N)
		} else {
			kq := ctx.MulMat(kp, qp) // [n_kv, n, n_head]
			ctx.MulMatSetPrec(kq, core.PrecF32)
			kq = ctx.SoftMaxExt(kq, ub.mask, kqScale, 0)
			size := int64(kv.size)
			vView := ctx.View3D(vStored, int64(nKV), nHeadKV, hdv, kvRow(vc, size*hdv), kvRow(vc, size), 0)
			vp := ctx.Permute(vView, 0, 2, 1, 3) // [n_kv, hdv, n_head_kv]
			kqv := ctx.MulMat(vp, kq)            // [hdv, n, n_head]
			attn = ctx.ContShape(ctx.Permute(kqv, 0, 2, 1, 3), hdv*nHead, N)
		}
		cur = mm(l.wo, attn, l.bo)
		if il == len(m.layers)-1 && ub.outIDs != nil {
			cur = ctx.GetRows(cur, ub.outIDs)
			inpSA = ctx.GetRows(inpSA, ub.outIDs)
		}
		ffnInp := ctx.Add(cur, inpSA)
		cur = norm(ffnInp, l.ffnNorm)
		if l.gateInp == nil {
			up := mm(l.ffnUp, cur, l.upB)
			gate := mm(l.ffnGate, cur, l.gateB)
			cur = mm(l.ffnDown, ctx.SwigluSplit(gate, up), l.downB)
		} else {
			cur = s.moe(ctx, l, cur)
		}
		inpL = ctx.Add(cur, ffnInp)
	}

	for _, st := range stores {
		g.BuildForwardExpand(st)
	}
	if nOut > 0 {
		cur := norm(inpL, m.outNorm)
		prec = m.weightPrec(m.outputDev)
		ub.logits = mm(m.output, cur, m.outputB).SetName("result_output").SetOutput()
		g.BuildForwardExpand(ub.logits)
	} else {
		g.BuildForwardExpand(inpL)
	}
	ub.g = g
	return ub
}

// weightPrec is the precision of the products with the weights on backend dev: PrecBF16 on the
// CPU (which then multiplies a prompt's F16 weights in bf16 pairs where it can) unless
// Options.F32Products; PrecDefault on every other backend, which keeps its own default (a
// ggml server would read any other value as a request for f32 products).
func (m *Model) weightPrec(dev int) core.Prec {
	if m.f32Prod || dev < 0 || dev >= len(m.backends) {
		return core.PrecDefault
	}
	if d := m.backends[dev].Device(); d != nil && d.Type() == core.DeviceCPU {
		return core.PrecBF16
	}
	return core.PrecDefault
}

// moe is the mixture-of-experts feed-forward block (llama.cpp's build_moe_ffn with softmax gating
// and SiLU): route each token to its top experts by softmax probability, renormalize their
// weights, and sum the weighted experts' outputs.
func (s *Session) moe(ctx *core.Context, l *layer, cur *core.Tensor) *core.Tensor {
	h := &s.m.HParams
	nEmbd, nTok := cur.Ne[0], cur.Ne[1]
	nExp, nUsed := int64(h.NExpert), int64(h.NExpertUsed)
	logits := ctx.MulMat(l.gateInp, cur) // [n_expert, n_tok]
	// the router's products stay f32: rounding them to bf16 could change which experts win
	ctx.MulMatSetPrec(logits, core.PrecF32)
	probs := ctx.SoftMax(logits)                                          // [n_expert, n_tok]
	sorted := ctx.Argsort(probs, core.SortDesc)                           // [n_expert, n_tok]
	selected := ctx.View2D(sorted, nUsed, nTok, sorted.Nb[1], 0)          // top k
	weights := ctx.GetRows(ctx.Reshape3D(probs, 1, nExp, nTok), selected) // [1, n_used, n_tok]
	if h.NormExperts {
		w2 := ctx.Reshape2D(weights, nUsed, nTok)
		sum := ctx.Clamp(ctx.SumRows(w2), 6.103515625e-5, float32(math.Inf(1)))
		weights = ctx.Reshape3D(ctx.Div(w2, sum), 1, nUsed, nTok)
	}
	if h.ExpertScale != 0 && h.ExpertScale != 1 {
		weights = ctx.Scale(weights, h.ExpertScale)
	}
	x := ctx.Reshape3D(cur, nEmbd, 1, nTok)
	up := ctx.MulMatID(l.upExps, x, selected)                                // [n_ff, n_used, n_tok]
	gate := ctx.MulMatID(l.gateExps, x, selected)                            // [n_ff, n_used, n_tok]
	experts := ctx.MulMatID(l.downExps, ctx.SwigluSplit(gate, up), selected) // [n_embd, n_used, n_tok]
	experts = ctx.Mul(experts, weights)
	out := ctx.View2D(experts, nEmbd, nTok, experts.Nb[2], 0)
	for i := int64(1); i < nUsed; i++ {
		out = ctx.Add(out, ctx.View2D(experts, nEmbd, nTok, experts.Nb[2], i*experts.Nb[1]))
	}
	if nUsed == 1 {
		out = ctx.Cont(out)
	}
	return out
}
