package core

// Typed decoders of op parameters: backends read an op's parameters only through these (and
// RopeParamsOf, Im2ColParamsOf), never by word index, so the layout lives in one place beside
// the constructor that writes it. Each returns the zero value for a tensor of another op.

// PoolParams are POOL_1D's and POOL_2D's parameters; a 1-D pool has K1 = S1 = 1 and P1 = 0.
type PoolParams struct {
	Op             PoolOp
	K0, K1, S0, S1 int // kernel size and stride per dimension
	P0, P1         int // padding per dimension
}

// PoolParamsOf decodes the parameters of a POOL_1D, POOL_2D or POOL_2D_BACK node. A nil t gives the zero value.
func PoolParamsOf(t *Tensor) PoolParams {
	switch {
	case t == nil:
		return PoolParams{}
	case t.Op == OpPool1D:
		return PoolParams{Op: PoolOp(t.Params[0]), K0: int(t.Params[1]), K1: 1, S0: int(t.Params[2]), S1: 1, P0: int(t.Params[3])}
	case t.Op == OpPool2D || t.Op == OpPool2DBack:
		return PoolParams{Op: PoolOp(t.Params[0]), K0: int(t.Params[1]), K1: int(t.Params[2]), S0: int(t.Params[3]),
			S1: int(t.Params[4]), P0: int(t.Params[5]), P1: int(t.Params[6])}
	}
	return PoolParams{}
}

// SoftMaxParams are SOFT_MAX's parameters: the scale of the input and the ALiBi maximum bias
// (0: no ALiBi).
type SoftMaxParams struct{ Scale, MaxBias float32 }

// SoftMaxParamsOf decodes the parameters of a SOFT_MAX or SOFT_MAX_BACK node. A nil t gives the
// zero value.
func SoftMaxParamsOf(t *Tensor) SoftMaxParams {
	if t == nil || (t.Op != OpSoftMax && t.Op != OpSoftMaxBack) {
		return SoftMaxParams{}
	}
	return SoftMaxParams{Scale: t.ParamF32(0), MaxBias: t.ParamF32(1)}
}

// GLUParams are GLU's parameters: the gate function and whether the halves are swapped (the
// gate in the first half of a single operand), and for SWIGLU_OAI its alpha and limit (zero for
// the other variants).
type GLUParams struct {
	Op           GLUOp
	Swapped      bool
	Alpha, Limit float32
}

// GLUParamsOf decodes the parameters of a GLU node. A nil t gives the zero value.
func GLUParamsOf(t *Tensor) GLUParams {
	if t == nil || t.Op != OpGLU {
		return GLUParams{}
	}
	p := GLUParams{Op: GLUOp(t.Params[0]), Swapped: t.Params[1] != 0}
	if p.Op == GLUSwigluOAI {
		p.Alpha, p.Limit = t.ParamF32(2), t.ParamF32(3)
	}
	return p
}

// XieluParams are the coefficients a UNARY XIELU node computes with, as ggml stores them (words
// 1-4 after the function): AlphaN = beta + softplus(alpha_n) and AlphaP = softplus(alpha_p) of the
// arguments given to Context.Xielu, and Beta and Eps as given.
type XieluParams struct{ AlphaN, AlphaP, Beta, Eps float32 }

// XieluParamsOf decodes the parameters of a UNARY XIELU node. A nil t, or another op or unary
// function, gives the zero value.
func XieluParamsOf(t *Tensor) XieluParams {
	if UnaryOpOf(t) != UnaryXielu {
		return XieluParams{}
	}
	return XieluParams{AlphaN: t.ParamF32(1), AlphaP: t.ParamF32(2), Beta: t.ParamF32(3), Eps: t.ParamF32(4)}
}

// UnaryOpOf returns the function of a UNARY node (UnaryCount for another op, which no backend
// implements). A nil t counts as another op.
func UnaryOpOf(t *Tensor) UnaryOp {
	if t == nil || t.Op != OpUnary {
		return UnaryCount
	}
	return UnaryOp(t.Params[0])
}

// SortOrderOf returns the order of an ARGSORT node. A nil t gives the zero value.
func SortOrderOf(t *Tensor) SortOrder {
	if t == nil || t.Op != OpArgsort {
		return SortAsc
	}
	return SortOrder(t.Params[0])
}

// ConcatDimOf returns the dimension a CONCAT node joins along (-1 for another op). A nil t counts as another op.
func ConcatDimOf(t *Tensor) int {
	if t == nil || t.Op != OpConcat {
		return -1
	}
	return int(t.Params[0])
}

// NPastOf returns the n_past of DIAG_MASK_INF and DIAG_MASK_ZERO: row i keeps columns 0..n_past+i. A nil t gives the zero value.
func NPastOf(t *Tensor) int64 {
	if t == nil || (t.Op != OpDiagMaskInf && t.Op != OpDiagMaskZero) {
		return 0
	}
	return int64(t.Params[0])
}

// EpsOf returns the epsilon of a NORM, RMS_NORM or L2_NORM node. A nil t gives the zero value.
func EpsOf(t *Tensor) float32 {
	if t == nil || (t.Op != OpNorm && t.Op != OpRMSNorm && t.Op != OpL2Norm) {
		return 0
	}
	return t.ParamF32(0)
}

// ElementwiseParams are the float parameters of SCALE (A = scale, B = bias), CLAMP (A = min,
// B = max) and LEAKY_RELU (A = negative slope).
type ElementwiseParams struct{ A, B float32 }

// ElementwiseParamsOf decodes the parameters of a SCALE, CLAMP or LEAKY_RELU node. A nil t gives the zero value.
func ElementwiseParamsOf(t *Tensor) ElementwiseParams {
	if t == nil {
		return ElementwiseParams{}
	}
	switch t.Op {
	case OpScale, OpClamp:
		return ElementwiseParams{A: t.ParamF32(0), B: t.ParamF32(1)}
	case OpLeakyRelu:
		return ElementwiseParams{A: t.ParamF32(0)}
	}
	return ElementwiseParams{}
}

// FlashAttnParams are FLASH_ATTN_EXT's parameters: the scale of q·k, the ALiBi maximum bias
// (0: no ALiBi), the logit soft cap (0: none) and the requested precision.
type FlashAttnParams struct {
	Scale, MaxBias, LogitSoftcap float32
	Prec                         Prec
}

// FlashAttnParamsOf decodes the parameters of a FLASH_ATTN_EXT node. A nil t gives the zero value.
func FlashAttnParamsOf(t *Tensor) FlashAttnParams {
	if t == nil || t.Op != OpFlashAttnExt {
		return FlashAttnParams{}
	}
	return FlashAttnParams{Scale: t.ParamF32(0), MaxBias: t.ParamF32(1), LogitSoftcap: t.ParamF32(2), Prec: Prec(t.Params[3])}
}
