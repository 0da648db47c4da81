package core

// Op is the operation that produces a tensor. OpNone marks leafs (data supplied by the user).
type Op int32

// Operations, in ggml's vocabulary.
const (
	OpNone Op = iota
	OpDup
	OpAdd
	OpAdd1
	OpSub
	OpMul
	OpDiv
	OpSqr
	OpSqrt
	OpLog
	OpSin
	OpCos
	OpSum
	OpSumRows
	OpMean
	OpArgmax
	OpRepeat
	OpConcat
	OpNorm
	OpRMSNorm
	OpMulMat
	OpOutProd
	OpScale
	OpCpy
	OpCont
	OpReshape
	OpView
	OpPermute
	OpTranspose
	OpGetRows
	OpSetRows
	OpDiagMaskInf
	OpSoftMax
	OpRope
	OpClamp
	OpIm2Col
	OpPool1D
	OpPool2D
	OpArgsort
	OpLeakyRelu
	OpUnary
	OpGLU
	OpAcc
	OpDiagMaskZero
	OpSiluBack
	OpRMSNormBack
	OpSoftMaxBack
	OpRopeBack
	OpGetRowsBack
	OpRepeatBack
	OpIm2ColBack
	OpPool2DBack
	OpCrossEntropyLoss
	OpCrossEntropyLossBack
	OpOptStepAdamW
	OpOptStepSGD
	OpFlashAttnExt
	OpMulMatID
	OpAddID
	OpL2Norm
	OpCountEqual
	OpSet
	OpTopK
	OpArange
	OpFill
	OpTri
	OpDiag
	OpCumsum
	OpRoll
	OpPad
	OpPadReflect1D
	OpTimestepEmbedding
	OpSSMConv
	OpSSMScan
	OpRWKVWKV6
	OpGatedLinearAttn
	OpRWKVWKV7
	OpSolveTri
	OpGatedDeltaNet
	OpGroupNorm
	OpUpscale
	OpWinPart
	OpWinUnpart
	OpGetRelPos
	OpAddRelPos
	OpMapCustom1
	OpMapCustom2
	OpMapCustom3
	OpCustom
	OpConvTranspose1D
	OpIm2Col3D
	OpCol2Im1D
	OpConv2D
	OpConv3D
	OpConv2DDw
	OpConvTranspose2D
	OpDsv4HcComb
	OpDsv4HcPre
	OpDsv4HcPost
	OpLightningIndexer
	OpCount
)

var opNames = [OpCount]string{
	OpNone: "NONE", OpDup: "DUP", OpAdd: "ADD", OpAdd1: "ADD1", OpSub: "SUB", OpMul: "MUL", OpDiv: "DIV",
	OpSqr: "SQR", OpSqrt: "SQRT", OpLog: "LOG", OpSin: "SIN", OpCos: "COS", OpSum: "SUM",
	OpSumRows: "SUM_ROWS", OpMean: "MEAN", OpArgmax: "ARGMAX", OpRepeat: "REPEAT", OpConcat: "CONCAT",
	OpNorm: "NORM", OpRMSNorm: "RMS_NORM", OpMulMat: "MUL_MAT", OpOutProd: "OUT_PROD", OpScale: "SCALE",
	OpCpy: "CPY", OpCont: "CONT", OpReshape: "RESHAPE", OpView: "VIEW", OpPermute: "PERMUTE",
	OpTranspose: "TRANSPOSE", OpGetRows: "GET_ROWS", OpSetRows: "SET_ROWS", OpDiagMaskInf: "DIAG_MASK_INF",
	OpSoftMax: "SOFT_MAX", OpRope: "ROPE", OpClamp: "CLAMP", OpIm2Col: "IM2COL", OpPool1D: "POOL_1D",
	OpPool2D: "POOL_2D", OpArgsort: "ARGSORT", OpLeakyRelu: "LEAKY_RELU", OpUnary: "UNARY", OpGLU: "GLU",
	OpAcc: "ACC", OpDiagMaskZero: "DIAG_MASK_ZERO", OpSiluBack: "SILU_BACK", OpRMSNormBack: "RMS_NORM_BACK",
	OpSoftMaxBack: "SOFT_MAX_BACK", OpRopeBack: "ROPE_BACK", OpGetRowsBack: "GET_ROWS_BACK",
	OpRepeatBack: "REPEAT_BACK", OpIm2ColBack: "IM2COL_BACK", OpPool2DBack: "POOL_2D_BACK",
	OpCrossEntropyLoss: "CROSS_ENTROPY_LOSS", OpCrossEntropyLossBack: "CROSS_ENTROPY_LOSS_BACK",
	OpOptStepAdamW: "OPT_STEP_ADAMW", OpOptStepSGD: "OPT_STEP_SGD", OpFlashAttnExt: "FLASH_ATTN_EXT", OpMulMatID: "MUL_MAT_ID",
	OpAddID: "ADD_ID", OpL2Norm: "L2_NORM", OpCountEqual: "COUNT_EQUAL", OpSet: "SET", OpTopK: "TOP_K",
	OpArange: "ARANGE", OpFill: "FILL", OpTri: "TRI", OpDiag: "DIAG", OpCumsum: "CUMSUM", OpRoll: "ROLL",
	OpPad: "PAD", OpPadReflect1D: "PAD_REFLECT_1D", OpTimestepEmbedding: "TIMESTEP_EMBEDDING",
	OpSSMConv: "SSM_CONV", OpSSMScan: "SSM_SCAN", OpRWKVWKV6: "RWKV_WKV6", OpGatedLinearAttn: "GATED_LINEAR_ATTN",
	OpRWKVWKV7: "RWKV_WKV7", OpSolveTri: "SOLVE_TRI", OpGatedDeltaNet: "GATED_DELTA_NET",
	OpGroupNorm: "GROUP_NORM", OpUpscale: "UPSCALE", OpWinPart: "WIN_PART", OpWinUnpart: "WIN_UNPART",
	OpGetRelPos: "GET_REL_POS", OpAddRelPos: "ADD_REL_POS", OpMapCustom1: "MAP_CUSTOM1", OpMapCustom2: "MAP_CUSTOM2",
	OpMapCustom3: "MAP_CUSTOM3", OpCustom: "CUSTOM",
	OpConvTranspose1D: "CONV_TRANSPOSE_1D", OpIm2Col3D: "IM2COL_3D", OpCol2Im1D: "COL2IM_1D", OpConv2D: "CONV_2D",
	OpConv3D: "CONV_3D", OpConv2DDw: "CONV_2D_DW", OpConvTranspose2D: "CONV_TRANSPOSE_2D",
	OpDsv4HcComb: "DSV4_HC_COMB", OpDsv4HcPre: "DSV4_HC_PRE", OpDsv4HcPost: "DSV4_HC_POST",
	OpLightningIndexer: "LIGHTNING_INDEXER",
}

// String returns ggml's name of the op ("MUL_MAT", ...).
func (o Op) String() string {
	if o >= 0 && o < OpCount {
		return opNames[o]
	}
	return "OP?"
}

// IsView reports whether the op only reinterprets its source's memory (no computation).
func (o Op) IsView() bool {
	return o == OpReshape || o == OpView || o == OpPermute || o == OpTranspose
}

// CanInplace reports whether the op's kernels tolerate dst sharing memory with a source of the same
// layout, so that an allocator may reuse a parent's memory for the result (ggml_op_can_inplace).
func (o Op) CanInplace() bool {
	switch o {
	case OpScale, OpDiagMaskInf, OpAdd, OpAdd1, OpSub, OpMul, OpDiv, OpSqr, OpSqrt, OpLog,
		OpUnary, OpRope, OpRMSNorm, OpSoftMax:
		return true
	}
	return false
}

// UnaryOp selects the function of an OpUnary node (stored in its first parameter).
type UnaryOp int32

// Unary functions, ggml's order (the values are ggml's enum ggml_unary_op).
const (
	UnaryAbs UnaryOp = iota
	UnarySgn
	UnaryNeg
	UnaryStep
	UnaryTanh
	UnaryElu
	UnaryRelu
	UnarySigmoid
	UnaryGelu
	UnaryGeluQuick
	UnarySilu
	UnaryHardswish
	UnaryHardsigmoid
	UnaryExp
	UnaryExpm1
	UnarySoftplus
	UnaryGeluErf
	UnaryXielu // takes parameters: build it with Context.Xielu
	UnaryFloor
	UnaryCeil
	UnaryRound
	UnaryTrunc
	UnaryCount
)

var unaryNames = [UnaryCount]string{"ABS", "SGN", "NEG", "STEP", "TANH", "ELU", "RELU", "SIGMOID",
	"GELU", "GELU_QUICK", "SILU", "HARDSWISH", "HARDSIGMOID", "EXP", "EXPM1", "SOFTPLUS", "GELU_ERF",
	"XIELU", "FLOOR", "CEIL", "ROUND", "TRUNC"}

func (u UnaryOp) String() string {
	if u >= 0 && u < UnaryCount {
		return unaryNames[u]
	}
	return "UNARY?"
}

// GLUOp selects the activation of an OpGLU node (first parameter); the second parameter is 1 when
// the halves are swapped.
type GLUOp int32

// Gated linear unit variants, ggml's order.
const (
	GLUReglu GLUOp = iota
	GLUGeglu
	GLUSwiglu
	GLUSwigluOAI // takes parameters: build it with Context.SwigluOAI or SwigluOAISplit
	GLUGegluErf
	GLUGegluQuick
	GLUCount
)

var gluNames = [GLUCount]string{"REGLU", "GEGLU", "SWIGLU", "SWIGLU_OAI", "GEGLU_ERF", "GEGLU_QUICK"}

func (g GLUOp) String() string {
	if g >= 0 && g < GLUCount {
		return gluNames[g]
	}
	return "GLU?"
}

// PoolOp selects max or average pooling.
type PoolOp int32

// Pooling kinds (ggml's values).
const (
	PoolMax PoolOp = 0
	PoolAvg PoolOp = 1
)

// SortOrder selects the order of ARGSORT.
type SortOrder int32

// Sort orders (ggml's values).
const (
	SortAsc  SortOrder = 0
	SortDesc SortOrder = 1
)

// Rope modes (ggml's values). MROPE, VISION and IMROPE are ggml_rope_multi's: positions carry four
// components per token and RopeParams.Sections say which pairs each component drives.
const (
	RopeNormal = 0
	RopeNeox   = 2
	RopeMrope  = 8  // multi-section, NEOX pairing (Qwen2-VL)
	RopeVision = 24 // per-section θ indices, pairs (k, k + n_dims), n_dims = ne0/2
	RopeImrope = 40 // interleaved sections (Qwen3-VL), NEOX pairing
)

// RopeIsMulti reports whether mode is one of ggml_rope_multi's modes (bit 8 set).
func RopeIsMulti(mode int) bool { return mode&RopeMrope != 0 }
