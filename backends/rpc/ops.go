package rpc

import "github.com/tandem-ml/tandem/core"

// ggml's op ids in protocol 5.1.0 (enum ggml_op, GGML_OP_COUNT = 101): the ones tandem has.
const (
	ggmlOpNone        = 0
	ggmlOpDup         = 1
	ggmlOpAdd         = 2
	ggmlOpAdd1        = 4
	ggmlOpSub         = 6
	ggmlOpMul         = 7
	ggmlOpDiv         = 8
	ggmlOpSqr         = 9
	ggmlOpSqrt        = 10
	ggmlOpLog         = 11
	ggmlOpSin         = 12
	ggmlOpCos         = 13
	ggmlOpSum         = 14
	ggmlOpSumRows     = 15
	ggmlOpMean        = 17
	ggmlOpArgmax      = 18
	ggmlOpRepeat      = 20
	ggmlOpConcat      = 22
	ggmlOpNorm        = 24
	ggmlOpRMSNorm     = 25
	ggmlOpMulMat      = 29
	ggmlOpOutProd     = 31
	ggmlOpScale       = 32
	ggmlOpCpy         = 34
	ggmlOpCont        = 35
	ggmlOpReshape     = 36
	ggmlOpView        = 37
	ggmlOpPermute     = 38
	ggmlOpTranspose   = 39
	ggmlOpGetRows     = 40
	ggmlOpSetRows     = 42
	ggmlOpDiagMaskInf = 44
	ggmlOpSoftMax     = 46
	ggmlOpRope        = 48
	ggmlOpClamp       = 50
	ggmlOpIm2Col      = 52
	ggmlOpPool1D      = 60
	ggmlOpPool2D      = 61
	ggmlOpArgsort     = 69
	ggmlOpLeakyRelu   = 71
	ggmlOpUnary       = 91
	ggmlOpGLU         = 100
	ggmlOpCount       = 101

	ggmlUnaryCount = 22 // enum ggml_unary_op; tandem's UnaryOp values are ggml's numbers
	ggmlGLUCount   = 6  // enum ggml_glu_op; tandem's GLUOp values are ggml's numbers
)

// ggml's id of FLASH_ATTN_EXT, same numbering as above.
const ggmlOpFlashAttnExt = 74

// ggml's id of MUL_MAT_ID, same numbering as above.
const ggmlOpMulMatID = 30

// ggml's ids of the generator, fill and index ops, same numbering as above.
const (
	ggmlOpAddID             = 3
	ggmlOpCumsum            = 16
	ggmlOpCountEqual        = 19
	ggmlOpL2Norm            = 28
	ggmlOpSet               = 33
	ggmlOpDiag              = 43
	ggmlOpPad               = 64
	ggmlOpPadReflect1D      = 65
	ggmlOpRoll              = 66
	ggmlOpArange            = 67
	ggmlOpTimestepEmbedding = 68
	ggmlOpTopK              = 70
	ggmlOpTri               = 72
	ggmlOpFill              = 73
)

// ggml's ids of the state-space and linear-attention ops, same numbering as above.
const (
	ggmlOpSSMConv         = 76
	ggmlOpSSMScan         = 77
	ggmlOpRWKVWKV6        = 82
	ggmlOpGatedLinearAttn = 83
	ggmlOpRWKVWKV7        = 84
	ggmlOpSolveTri        = 85
	ggmlOpGatedDeltaNet   = 86
)

// ggml's ids of DeepSeek's sparse-attention indexer and V4 hyper-connection ops (same numbering).
const (
	ggmlOpLightningIndexer = 87
	ggmlOpDsv4HcComb       = 88
	ggmlOpDsv4HcPre        = 89
	ggmlOpDsv4HcPost       = 90
)

// ggml's ids of the image and vision-transformer ops, same numbering as above. The custom ops
// (MAP_CUSTOM1..3 = 92..94, CUSTOM = 95) are not in the table: their Go function cannot travel,
// as ggml's RPC cannot send its function pointers, so no RPC device supports them.
const (
	ggmlOpGroupNorm = 27
	ggmlOpUpscale   = 63
	ggmlOpWinPart   = 78
	ggmlOpWinUnpart = 79
	ggmlOpGetRelPos = 80
	ggmlOpAddRelPos = 81
)

// ggml's ids of the convolution nodes, same numbering as above.
const (
	ggmlOpConvTranspose1D = 51
	ggmlOpIm2Col3D        = 54
	ggmlOpCol2Im1D        = 55
	ggmlOpConv2D          = 56
	ggmlOpConv3D          = 57
	ggmlOpConv2DDw        = 58
	ggmlOpConvTranspose2D = 59
)

// ggml's ids of the training ops (the *_BACK ops, ACC, DIAG_MASK_ZERO, the losses and the
// optimizer steps), same numbering as above.
const (
	ggmlOpAcc                  = 5
	ggmlOpRepeatBack           = 21
	ggmlOpSiluBack             = 23
	ggmlOpRMSNormBack          = 26
	ggmlOpGetRowsBack          = 41
	ggmlOpDiagMaskZero         = 45
	ggmlOpSoftMaxBack          = 47
	ggmlOpRopeBack             = 49
	ggmlOpIm2ColBack           = 53
	ggmlOpPool2DBack           = 62
	ggmlOpCrossEntropyLoss     = 96
	ggmlOpCrossEntropyLossBack = 97
	ggmlOpOptStepAdamW         = 98
	ggmlOpOptStepSGD           = 99
)

// opInfo describes how one tandem op travels: ggml's id and the meaning of its op_params slots.
type opInfo struct {
	Op     core.Op
	GGML   uint32
	Params string // layout, as in the protocol notes (Appendix D)
}

// opTable maps every tandem op to ggml's numbering. Ops missing here cannot be serialized.
var opTable = []opInfo{
	{core.OpNone, ggmlOpNone, "none"},
	{core.OpDup, ggmlOpDup, "none"},
	{core.OpAdd, ggmlOpAdd, "none"},
	{core.OpAdd1, ggmlOpAdd1, "none"},
	{core.OpSub, ggmlOpSub, "none"},
	{core.OpMul, ggmlOpMul, "none"},
	{core.OpDiv, ggmlOpDiv, "none"},
	{core.OpSqr, ggmlOpSqr, "none"},
	{core.OpSqrt, ggmlOpSqrt, "none"},
	{core.OpLog, ggmlOpLog, "none"},
	{core.OpSin, ggmlOpSin, "none"},
	{core.OpCos, ggmlOpCos, "none"},
	{core.OpSum, ggmlOpSum, "none"},
	{core.OpSumRows, ggmlOpSumRows, "none"},
	{core.OpMean, ggmlOpMean, "none"},
	{core.OpArgmax, ggmlOpArgmax, "none"},
	{core.OpRepeat, ggmlOpRepeat, "none; src0 only (the shape template is not sent)"},
	{core.OpConcat, ggmlOpConcat, "i[0] dim"},
	{core.OpNorm, ggmlOpNorm, "f[0] eps"},
	{core.OpRMSNorm, ggmlOpRMSNorm, "f[0] eps"},
	{core.OpMulMat, ggmlOpMulMat, "i[0] precision, i[1] hint"},
	{core.OpMulMatID, ggmlOpMulMatID, "none; src0 expert weights, src1 activations, src2 expert ids"},
	{core.OpOutProd, ggmlOpOutProd, "none"},
	{core.OpScale, ggmlOpScale, "f[0] scale, f[1] bias"},
	{core.OpCpy, ggmlOpCpy, "none; src1 = destination, or the node itself for a cast"},
	{core.OpCont, ggmlOpCont, "none"},
	{core.OpReshape, ggmlOpReshape, "none"},
	{core.OpView, ggmlOpView, "i[0] offset low, i[1] offset high"},
	{core.OpPermute, ggmlOpPermute, "i[0..3] axes"},
	{core.OpTranspose, ggmlOpTranspose, "none"},
	{core.OpGetRows, ggmlOpGetRows, "none"},
	{core.OpSetRows, ggmlOpSetRows, "none; src0 rows, src1 ids, src2 destination"},
	{core.OpDiagMaskInf, ggmlOpDiagMaskInf, "i[0] n_past"},
	{core.OpSoftMax, ggmlOpSoftMax, "f[0] scale, f[1] max_bias; src a, mask, sinks"},
	{core.OpRope, ggmlOpRope, "i[1] n_dims, i[2] mode, i[4] n_ctx_orig, f[5..10] freq_base, freq_scale, ext_factor, attn_factor, beta_fast, beta_slow, i[11..14] sections, i[15] n_offs"},
	{core.OpClamp, ggmlOpClamp, "f[0] min, f[1] max"},
	{core.OpIm2Col, ggmlOpIm2Col, "i[0..6] s0, s1, p0, p1, d0, d1, is_2D"},
	{core.OpPool1D, ggmlOpPool1D, "i[0] op, i[1] k0, i[2] s0, i[3] p0"},
	{core.OpPool2D, ggmlOpPool2D, "i[0] op, i[1] k0, i[2] k1, i[3] s0, i[4] s1, i[5] p0, i[6] p1"},
	{core.OpArgsort, ggmlOpArgsort, "i[0] order"},
	{core.OpLeakyRelu, ggmlOpLeakyRelu, "f[0] negative slope"},
	{core.OpFlashAttnExt, ggmlOpFlashAttnExt, "f[0] scale, f[1] max_bias, f[2] logit_softcap, i[3] precision; src q, k, v, mask, sinks"},
	{core.OpUnary, ggmlOpUnary, "i[0] unary kind; XIELU: f[1..4] beta+softplus(alpha_n), softplus(alpha_p), beta, eps"},
	{core.OpGLU, ggmlOpGLU, "i[0] glu kind, i[1] swapped; SWIGLU_OAI: f[2] alpha, f[3] limit"},
	{core.OpAddID, ggmlOpAddID, "none; src0 a, src1 b, src2 ids"},
	{core.OpCumsum, ggmlOpCumsum, "none"},
	{core.OpCountEqual, ggmlOpCountEqual, "none"},
	{core.OpL2Norm, ggmlOpL2Norm, "f[0] eps"},
	{core.OpSet, ggmlOpSet, "i[0..3] nb1, nb2, nb3, offset (bytes), i[4] inplace"},
	{core.OpDiag, ggmlOpDiag, "none"},
	{core.OpPad, ggmlOpPad, "i[0..7] lp0, rp0, lp1, rp1, lp2, rp2, lp3, rp3, i[8] circular"},
	{core.OpPadReflect1D, ggmlOpPadReflect1D, "i[0] p0, i[1] p1"},
	{core.OpRoll, ggmlOpRoll, "i[0..3] shifts"},
	{core.OpArange, ggmlOpArange, "f[0] start, f[1] stop, f[2] step; no sources"},
	{core.OpTimestepEmbedding, ggmlOpTimestepEmbedding, "i[0] dim, i[1] max_period"},
	{core.OpTopK, ggmlOpTopK, "none; k is ne0 of the result"},
	{core.OpTri, ggmlOpTri, "i[0] tri type"},
	{core.OpFill, ggmlOpFill, "f[0] value"},
	// State-space and linear-attention ops (ggml_ssm_conv … ggml_gated_delta_net), sources in ggml's order.
	{core.OpSSMConv, ggmlOpSSMConv, "none; src sx, c"},
	{core.OpSSMScan, ggmlOpSSMScan, "i[0] K (snapshot slots); src s, x, dt, A, B, C, ids"},
	{core.OpRWKVWKV6, ggmlOpRWKVWKV6, "none; src k, v, r, tf, td, state"},
	{core.OpGatedLinearAttn, ggmlOpGatedLinearAttn, "f[0] scale; src k, v, q, g, state"},
	{core.OpRWKVWKV7, ggmlOpRWKVWKV7, "none; src r, w, k, v, a, b, state"},
	{core.OpSolveTri, ggmlOpSolveTri, "none (left, lower, non-unit is the only variant); src a, b"},
	{core.OpGatedDeltaNet, ggmlOpGatedDeltaNet, "i[0] K (snapshot slots); src q, k, v, g, beta, state"},
	// DeepSeek V4's hyper-connection ops (ggml_dsv4_hc_comb, _pre, _post), sources in ggml's order.
	{core.OpDsv4HcComb, ggmlOpDsv4HcComb, "f[0] eps, i[1] n_iter; src mixes, scale, base"},
	{core.OpDsv4HcPre, ggmlOpDsv4HcPre, "none; src x, weights"},
	{core.OpDsv4HcPost, ggmlOpDsv4HcPost, "none; src x, residual, post, comb"},
	{core.OpLightningIndexer, ggmlOpLightningIndexer, "none; src q, k, weights, mask (f16)"},
	// Image and vision-transformer ops (ggml_group_norm, ggml_interpolate, SAM's window and relative-position ops).
	{core.OpGroupNorm, ggmlOpGroupNorm, "i[0] n_groups, f[1] eps"},
	{core.OpUpscale, ggmlOpUpscale, "i[0] mode | flags (align corners 0x100, antialias 0x200)"},
	{core.OpWinPart, ggmlOpWinPart, "i[0] npx, i[1] npy, i[2] w"},
	{core.OpWinUnpart, ggmlOpWinUnpart, "i[0] w"},
	{core.OpGetRelPos, ggmlOpGetRelPos, "none; qh = kh = ne2 of the result"},
	{core.OpAddRelPos, ggmlOpAddRelPos, "i[0] inplace; src a, pw, ph"},
	// Convolution nodes (ggml_conv_transpose_1d … ggml_conv_transpose_2d_p0): src kernel, input.
	{core.OpConvTranspose1D, ggmlOpConvTranspose1D, "i[0] s0, i[1] p0, i[2] d0"},
	{core.OpIm2Col3D, ggmlOpIm2Col3D, "i[0..8] s0, s1, s2, p0, p1, p2, d0, d1, d2, i[9] IC"},
	{core.OpCol2Im1D, ggmlOpCol2Im1D, "i[0] s0, i[1] oc, i[2] p0; src columns"},
	{core.OpConv2D, ggmlOpConv2D, "i[0..5] s0, s1, p0, p1, d0, d1"},
	{core.OpConv3D, ggmlOpConv3D, "i[0..8] s0, s1, s2, p0, p1, p2, d0, d1, d2, i[9] c, i[10] n, i[11] oc"},
	{core.OpConv2DDw, ggmlOpConv2DDw, "i[0..5] s0, s1, p0, p1, d0, d1"},
	{core.OpConvTranspose2D, ggmlOpConvTranspose2D, "i[0] stride"},
	// Training ops: tandem's parameters are ggml's words, sources in ggml's order.
	{core.OpAcc, ggmlOpAcc, "i[0..3] nb1, nb2, nb3, offset (bytes), i[4] inplace; src a, b"},
	{core.OpRepeatBack, ggmlOpRepeatBack, "none; src0 only (the shape template is not sent)"},
	{core.OpSiluBack, ggmlOpSiluBack, "none; src grad, x"},
	{core.OpRMSNormBack, ggmlOpRMSNormBack, "f[0] eps; src grad, x"},
	{core.OpGetRowsBack, ggmlOpGetRowsBack, "none; src grad, ids (the shape template is not sent)"},
	{core.OpDiagMaskZero, ggmlOpDiagMaskZero, "i[0] n_past"},
	{core.OpSoftMaxBack, ggmlOpSoftMaxBack, "f[0] scale, f[1] max_bias; src grad, y"},
	{core.OpRopeBack, ggmlOpRopeBack, "as ROPE; src grad, positions, freq factors"},
	{core.OpIm2ColBack, ggmlOpIm2ColBack, "i[0..6] s0, s1, p0, p1, d0, d1, is_2D (as IM2COL); src grad, kernel"},
	{core.OpPool2DBack, ggmlOpPool2DBack, "i[0..6] op, k0, k1, s0, s1, p0, p1 (as POOL_2D); src grad, forward input"},
	{core.OpCrossEntropyLoss, ggmlOpCrossEntropyLoss, "none; src logits, labels"},
	{core.OpCrossEntropyLossBack, ggmlOpCrossEntropyLossBack, "none; src grad, logits, labels"},
	{core.OpOptStepAdamW, ggmlOpOptStepAdamW, "none; src a, grad, m, v, adamw params f32[7]; a view of a"},
	{core.OpOptStepSGD, ggmlOpOptStepSGD, "none; src a, grad, sgd params f32[2]; a view of a"},
}

var (
	toGGML   = map[core.Op]uint32{}
	fromGGML = map[uint32]core.Op{}
)

func init() {
	for _, e := range opTable {
		toGGML[e.Op] = e.GGML
		fromGGML[e.GGML] = e.Op
	}
}

// GGMLOp returns ggml's op id for a tandem op; ok is false when the op cannot travel.
func GGMLOp(op core.Op) (id uint32, ok bool) {
	id, ok = toGGML[op]
	return id, ok
}

// wireParams returns t's op_params as ggml lays them out.
func wireParams(t *core.Tensor) [maxOpParams]int32 {
	p := t.Params
	switch t.Op {
	case core.OpTranspose, core.OpNone, core.OpReshape:
		p = [maxOpParams]int32{} // ggml's transpose and reshape carry no parameters
	}
	return p
}

// wireSources returns t's sources in ggml's order as tensors (self marks the node itself, used by
// a cast's CPY).
func wireSources(t *core.Tensor) [maxSrc]*core.Tensor {
	s := t.Src
	switch t.Op {
	case core.OpRepeat:
		s[1] = nil
	case core.OpSetRows:
		s[0], s[1], s[2] = t.Src[1], t.Src[2], t.Src[0]
	case core.OpCpy:
		if s[1] == nil {
			s[1] = t // cast: ggml lists the node itself as src1
		}
	}
	return s
}

// supportedParams reports whether a tandem op's parameters fit ggml's layout (the kinds exist).
func supportedParams(t *core.Tensor) bool {
	switch t.Op {
	case core.OpUnary:
		return t.Params[0] >= 0 && t.Params[0] < int32(core.UnaryCount) && t.Params[0] < ggmlUnaryCount
	case core.OpGLU:
		return t.Params[0] >= 0 && t.Params[0] < int32(core.GLUCount) && t.Params[0] < ggmlGLUCount
	}
	return true
}
