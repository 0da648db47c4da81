package core

import (
	"fmt"
	"math"
)

func (c *Context) binary(op Op, a, b *Tensor) *Tensor {
	if err := c.check(op.String(), a, b); err != nil {
		return c.fail(op.String(), err)
	}
	if p := c.requireTypes(op.String(), isFloatType, "f32, f16 or bf16", a, b); p != nil {
		return p
	}
	if !CanRepeat(b, a) {
		return c.errorf("%v: %v cannot be broadcast to %v (each dimension of a must be a multiple of b's)", op, b, a)
	}
	return c.newOp(op, a.Type, a.Ne, a, b)
}

// Add returns a + b, b broadcast into a's shape by tiling.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Add(a, b *Tensor) *Tensor { return c.binary(OpAdd, a, b) }

// Sub returns a - b, b broadcast into a's shape.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Sub(a, b *Tensor) *Tensor { return c.binary(OpSub, a, b) }

// Mul returns a * b elementwise, b broadcast into a's shape.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Mul(a, b *Tensor) *Tensor { return c.binary(OpMul, a, b) }

// Div returns a / b elementwise, b broadcast into a's shape.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Div(a, b *Tensor) *Tensor { return c.binary(OpDiv, a, b) }

// Add1 adds the single element of b to every element of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Add1(a, b *Tensor) *Tensor {
	if err := c.check("ADD1", a, b); err != nil {
		return c.fail("ADD1", err)
	}
	if p := c.requireTypes("ADD1", isFloatType, "f32, f16 or bf16", a, b); p != nil {
		return p
	}
	if b.NElements() != 1 {
		return c.errorf("ADD1: %v must have exactly one element", b)
	}
	return c.newOp(OpAdd1, a.Type, a.Ne, a, b)
}

func (c *Context) simple(op Op, a *Tensor) *Tensor {
	if err := c.check(op.String(), a); err != nil {
		return c.fail(op.String(), err)
	}
	if p := c.requireTypes(op.String(), isFloatType, "f32, f16 or bf16", a); p != nil {
		return p
	}
	return c.newOp(op, a.Type, a.Ne, a)
}

// Sqr returns a².
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Sqr(a *Tensor) *Tensor { return c.simple(OpSqr, a) }

// Sqrt returns √a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Sqrt(a *Tensor) *Tensor { return c.simple(OpSqrt, a) }

// Log returns ln a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Log(a *Tensor) *Tensor { return c.simple(OpLog, a) }

// Sin returns sin a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Sin(a *Tensor) *Tensor { return c.simple(OpSin, a) }

// Cos returns cos a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Cos(a *Tensor) *Tensor { return c.simple(OpCos, a) }

// Scale returns a * s.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Scale(a *Tensor, s float32) *Tensor { return c.ScaleBias(a, s, 0) }

// ScaleBias returns a * s + bias.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) ScaleBias(a *Tensor, s, bias float32) *Tensor {
	t := c.simple(OpScale, a)
	if t.err == nil && t.Op == OpScale {
		if a.Type != TypeF32 {
			return c.errorf("SCALE: %v has type %v, want f32", a, a.Type)
		}
		t.SetParamF32(0, s)
		t.SetParamF32(1, bias)
	}
	return t
}

// Clamp limits every element of a to [lo, hi].
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Clamp(a *Tensor, lo, hi float32) *Tensor {
	t := c.simple(OpClamp, a)
	if t.err == nil && t.Op == OpClamp {
		if lo > hi {
			return c.errorf("CLAMP: min %g > max %g", lo, hi)
		}
		t.SetParamF32(0, lo)
		t.SetParamF32(1, hi)
	}
	return t
}

// LeakyRelu returns a where a > 0, else slope·a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) LeakyRelu(a *Tensor, slope float32) *Tensor {
	t := c.simple(OpLeakyRelu, a)
	if t.err == nil && t.Op == OpLeakyRelu {
		t.SetParamF32(0, slope)
	}
	return t
}

// Unary applies the unary function u elementwise. UnaryXielu takes parameters and is built with
// Xielu; asking Unary for it records an error.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Unary(a *Tensor, u UnaryOp) *Tensor {
	if err := c.check("UNARY", a); err != nil {
		return c.fail("UNARY", err)
	}
	if u < 0 || u >= UnaryCount {
		return c.errorf("UNARY: unknown function %d", int32(u))
	}
	if u == UnaryXielu {
		return c.errorf("UNARY: %v takes parameters: build it with Xielu", u)
	}
	return c.unary(a, u)
}

// unary builds a UNARY node of function u (known to be in range).
func (c *Context) unary(a *Tensor, u UnaryOp) *Tensor {
	t := c.simple(OpUnary, a)
	if t.err == nil && t.Op == OpUnary {
		t.Params[0] = int32(u)
	}
	return t
}

// Abs returns |a| elementwise (UnaryAbs; a nil a records an error).
func (c *Context) Abs(a *Tensor) *Tensor { return c.Unary(a, UnaryAbs) }

// Sgn returns the sign of a (-1, 0 or 1) elementwise (UnarySgn; a nil a records an error).
func (c *Context) Sgn(a *Tensor) *Tensor { return c.Unary(a, UnarySgn) }

// Neg returns -a elementwise (UnaryNeg; a nil a records an error).
func (c *Context) Neg(a *Tensor) *Tensor { return c.Unary(a, UnaryNeg) }

// Step returns 1 where a > 0, else 0 elementwise (UnaryStep; a nil a records an error).
func (c *Context) Step(a *Tensor) *Tensor { return c.Unary(a, UnaryStep) }

// Tanh returns tanh a elementwise (UnaryTanh; a nil a records an error).
func (c *Context) Tanh(a *Tensor) *Tensor { return c.Unary(a, UnaryTanh) }

// Elu returns a where a > 0, else eᵃ-1 elementwise (UnaryElu; a nil a records an error).
func (c *Context) Elu(a *Tensor) *Tensor { return c.Unary(a, UnaryElu) }

// Relu returns max(a, 0) elementwise (UnaryRelu; a nil a records an error).
func (c *Context) Relu(a *Tensor) *Tensor { return c.Unary(a, UnaryRelu) }

// Sigmoid returns 1/(1+e⁻ᵃ) elementwise (UnarySigmoid; a nil a records an error).
func (c *Context) Sigmoid(a *Tensor) *Tensor { return c.Unary(a, UnarySigmoid) }

// Gelu returns gelu(a) (tanh approximation) elementwise (UnaryGelu; a nil a records an error).
func (c *Context) Gelu(a *Tensor) *Tensor { return c.Unary(a, UnaryGelu) }

// GeluQuick returns a·sigmoid(1.702a) elementwise (UnaryGeluQuick; a nil a records an error).
func (c *Context) GeluQuick(a *Tensor) *Tensor { return c.Unary(a, UnaryGeluQuick) }

// Silu returns a·sigmoid(a) elementwise (UnarySilu; a nil a records an error).
func (c *Context) Silu(a *Tensor) *Tensor { return c.Unary(a, UnarySilu) }

// Hardswish returns a·min(max(a+3, 0), 6)/6 elementwise (UnaryHardswish; a nil a records an error).
func (c *Context) Hardswish(a *Tensor) *Tensor { return c.Unary(a, UnaryHardswish) }

// Hardsigmoid returns min(max(a+3, 0), 6)/6 elementwise (UnaryHardsigmoid; a nil a records an error).
func (c *Context) Hardsigmoid(a *Tensor) *Tensor { return c.Unary(a, UnaryHardsigmoid) }

// Exp returns eᵃ elementwise (UnaryExp; a nil a records an error).
func (c *Context) Exp(a *Tensor) *Tensor { return c.Unary(a, UnaryExp) }

// Expm1 returns eᵃ-1 elementwise (UnaryExpm1; a nil a records an error). ggml evaluates it as
// expf(a)-1; tandem's kernels give e^a-1 without that subtraction's cancellation near 0.
func (c *Context) Expm1(a *Tensor) *Tensor { return c.Unary(a, UnaryExpm1) }

// Softplus returns ln(1+eᵃ) elementwise, and a itself where a > 20 (UnarySoftplus; a nil a
// records an error).
func (c *Context) Softplus(a *Tensor) *Tensor { return c.Unary(a, UnarySoftplus) }

// GeluErf returns the exact gelu 0.5a(1+erf(a/√2)) elementwise (UnaryGeluErf; a nil a records an
// error).
func (c *Context) GeluErf(a *Tensor) *Tensor { return c.Unary(a, UnaryGeluErf) }

// Floor returns ⌊a⌋ elementwise (UnaryFloor; a nil a records an error).
func (c *Context) Floor(a *Tensor) *Tensor { return c.Unary(a, UnaryFloor) }

// Ceil returns ⌈a⌉ elementwise (UnaryCeil; a nil a records an error).
func (c *Context) Ceil(a *Tensor) *Tensor { return c.Unary(a, UnaryCeil) }

// Round returns a rounded to the nearest integer, halves away from zero (C's roundf: 2.5 → 3,
// -2.5 → -3), elementwise (UnaryRound; a nil a records an error).
func (c *Context) Round(a *Tensor) *Tensor { return c.Unary(a, UnaryRound) }

// Trunc returns a rounded towards zero elementwise (UnaryTrunc; a nil a records an error).
func (c *Context) Trunc(a *Tensor) *Tensor { return c.Unary(a, UnaryTrunc) }

// Xielu returns the xIELU activation elementwise (UnaryXielu, ggml_xielu):
//
//	αp·a² + β·a                        where a > 0
//	(expm1(min(a, eps)) - a)·αn + β·a  elsewhere
//
// with αp = softplus(alphaP) and αn = beta + softplus(alphaN), computed here once and stored in
// the node as ggml stores them (XieluParamsOf reads them back). The parameters must be finite,
// and so must αn.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Xielu(a *Tensor, alphaN, alphaP, beta, eps float32) *Tensor {
	if err := c.check("XIELU", a); err != nil {
		return c.fail("XIELU", err)
	}
	for _, v := range []struct {
		name string
		v    float32
	}{{"alpha_n", alphaN}, {"alpha_p", alphaP}, {"beta", beta}, {"eps", eps}} {
		if math.IsNaN(float64(v.v)) || math.IsInf(float64(v.v), 0) {
			return c.errorf("XIELU: %s is %v, want a finite number", v.name, v.v)
		}
	}
	if p := c.requireTypes("XIELU", isFloatType, "f32, f16 or bf16", a); p != nil {
		return p
	}
	an, ap := beta+softplus32(alphaN), softplus32(alphaP)
	if math.IsInf(float64(an), 0) {
		return c.errorf("XIELU: beta + softplus(alpha_n) = %v + %v overflows float32", beta, softplus32(alphaN))
	}
	t := c.unary(a, UnaryXielu)
	if t.err == nil && t.Op == OpUnary {
		t.SetParamF32(1, an)
		t.SetParamF32(2, ap)
		t.SetParamF32(3, beta)
		t.SetParamF32(4, eps)
	}
	return t
}

// softplus32 is ln(1+eˣ), x itself above 20 (ggml_compute_softplus_f32), evaluated in float64.
func softplus32(x float32) float32 {
	if x > 20 {
		return x
	}
	return float32(math.Log1p(math.Exp(float64(x))))
}

// GLU applies a gated linear unit to two operands: act(a)·b (swapped: act(b)·a). a and b must
// have the same shape and type. A nil a or b is an error recorded on the context (it does not
// fall back to the single-operand form): use GLUSingle (or Swiglu, Geglu, Reglu) to split one
// tensor's rows in half. GLUSwigluOAI takes parameters and is built with SwigluOAISplit; asking
// GLU for it records an error.
func (c *Context) GLU(a, b *Tensor, g GLUOp, swapped bool) *Tensor {
	name := gluName(g)
	if err := c.check(name, a, b); err != nil {
		return c.fail(name, fmt.Errorf("%w (GLU takes two operands; use GLUSingle to split one tensor)", err))
	}
	if g == GLUSwigluOAI {
		return c.errorf("%s takes alpha and limit: build it with SwigluOAISplit", name)
	}
	return c.glu(name, a, b, g, swapped)
}

// GLUSingle applies a gated linear unit to the two halves of each row of a: act(first)·second
// (act(second)·first when swapped). As in ggml, each half is ne0/2 long (integer division): the
// result's rows are ne0/2 long, the second half starts at element ne0/2, and the last element of
// an odd-length row is not read. GLUSwigluOAI takes parameters and is built with SwigluOAI; asking
// GLUSingle for it records an error. A nil a records an error.
func (c *Context) GLUSingle(a *Tensor, g GLUOp, swapped bool) *Tensor {
	name := gluName(g)
	if err := c.check(name, a); err != nil {
		return c.fail(name, err)
	}
	if g == GLUSwigluOAI {
		return c.errorf("%s takes alpha and limit: build it with SwigluOAI", name)
	}
	return c.glu(name, a, nil, g, swapped)
}

func gluName(g GLUOp) string {
	if g >= 0 && g < GLUCount {
		return g.String()
	}
	return "GLU"
}

// glu builds a GLU node; b nil selects the single-operand form.
func (c *Context) glu(name string, a, b *Tensor, g GLUOp, swapped bool) *Tensor {
	if g < 0 || g >= GLUCount {
		return c.errorf("GLU: unknown variant %d", int32(g))
	}
	if p := c.requireTypes(name, isFloatType, "f32, f16 or bf16", a); p != nil {
		return p
	}
	if !a.IsContiguousRows() {
		return c.errorf("%s: rows of %v are not contiguous", name, a)
	}
	ne := a.Ne
	var t *Tensor
	if b == nil {
		ne[0] /= 2 // ggml_glu_impl: an odd row's last element belongs to neither half
		t = c.newOp(OpGLU, a.Type, ne, a)
	} else {
		if !SameShape(a, b) || a.Type != b.Type {
			return c.errorf("%s: %v and %v must have the same shape and type", name, a, b)
		}
		if !b.IsContiguousRows() {
			return c.errorf("%s: rows of %v are not contiguous", name, b)
		}
		t = c.newOp(OpGLU, a.Type, ne, a, b)
	}
	if t.Op == OpGLU {
		t.Params[0] = int32(g)
		if swapped {
			t.Params[1] = 1
		}
	}
	return t
}

// Swiglu returns silu(first half)·second half of each row of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Swiglu(a *Tensor) *Tensor { return c.GLUSingle(a, GLUSwiglu, false) }

// Geglu returns gelu(first half)·second half of each row of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Geglu(a *Tensor) *Tensor { return c.GLUSingle(a, GLUGeglu, false) }

// Reglu returns relu(first half)·second half of each row of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) Reglu(a *Tensor) *Tensor { return c.GLUSingle(a, GLUReglu, false) }

// SwigluSplit returns silu(a)·b; a nil a or b is an error (see GLU).
func (c *Context) SwigluSplit(a, b *Tensor) *Tensor { return c.GLU(a, b, GLUSwiglu, false) }

// GegluSplit returns gelu(a)·b; a nil a or b is an error (see GLU).
func (c *Context) GegluSplit(a, b *Tensor) *Tensor { return c.GLU(a, b, GLUGeglu, false) }

// RegluSplit returns relu(a)·b; a nil a or b is an error (see GLU).
func (c *Context) RegluSplit(a, b *Tensor) *Tensor { return c.GLU(a, b, GLUReglu, false) }

// GegluErf returns gelu_erf(first half)·second half of each row of a (the exact gelu, see GeluErf).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) GegluErf(a *Tensor) *Tensor { return c.GLUSingle(a, GLUGegluErf, false) }

// GegluQuick returns gelu_quick(first half)·second half of each row of a (see GeluQuick).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) GegluQuick(a *Tensor) *Tensor { return c.GLUSingle(a, GLUGegluQuick, false) }

// GegluErfSplit returns gelu_erf(a)·b; a nil a or b is an error (see GLU).
func (c *Context) GegluErfSplit(a, b *Tensor) *Tensor { return c.GLU(a, b, GLUGegluErf, false) }

// GegluQuickSplit returns gelu_quick(a)·b; a nil a or b is an error (see GLU).
func (c *Context) GegluQuickSplit(a, b *Tensor) *Tensor { return c.GLU(a, b, GLUGegluQuick, false) }

// SwigluOAI is gpt-oss's clamped SwiGLU (GLUSwigluOAI) on the two halves of each row of a, split
// as GLUSingle does: with x the first half and g the second (the other way round when swapped),
//
//	min(x, limit)·σ(alpha·min(x, limit))·(clamp(g, -limit, limit) + 1)
//
// alpha must be finite and limit ≥ 0 (+Inf: no clamping). ggml runs it on f32 only; tandem's
// kernels also take f16 and bf16. A nil operand (or a nil context) records an error on the context
// and returns a placeholder.
func (c *Context) SwigluOAI(a *Tensor, alpha, limit float32, swapped bool) *Tensor {
	name := GLUSwigluOAI.String()
	if err := c.check(name, a); err != nil {
		return c.fail(name, err)
	}
	return c.swigluOAI(a, nil, alpha, limit, swapped)
}

// SwigluOAISplit is SwigluOAI with x from a and g from b (swapped: from b and a), a and b of the
// same shape and type (ggml_swiglu_oai). A nil a or b records an error on the context (it does
// not fall back to the single-operand form) and returns a placeholder.
func (c *Context) SwigluOAISplit(a, b *Tensor, alpha, limit float32, swapped bool) *Tensor {
	name := GLUSwigluOAI.String()
	if err := c.check(name, a, b); err != nil {
		return c.fail(name, fmt.Errorf("%w (SwigluOAISplit takes two operands; use SwigluOAI to split one tensor)", err))
	}
	return c.swigluOAI(a, b, alpha, limit, swapped)
}

func (c *Context) swigluOAI(a, b *Tensor, alpha, limit float32, swapped bool) *Tensor {
	name := GLUSwigluOAI.String()
	if math.IsNaN(float64(alpha)) || math.IsInf(float64(alpha), 0) {
		return c.errorf("%s: alpha is %v, want a finite number", name, alpha)
	}
	if !(limit >= 0) {
		return c.errorf("%s: limit is %v, want a number ≥ 0", name, limit)
	}
	t := c.glu(name, a, b, GLUSwigluOAI, swapped)
	if t.err == nil && t.Op == OpGLU {
		t.SetParamF32(2, alpha)
		t.SetParamF32(3, limit)
	}
	return t
}
