package cpu

import (
	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"math"

	"github.com/tandem-ml/tandem/core"
)

// Elementwise ops with one tensor input (ADD1 also reads a scalar): ADD1, SCALE, SQR, SQRT, LOG,
// SIN, COS, CLAMP, LEAKY_RELU and UNARY; and the gated linear units (GLU).
//
// ggml runs most of these on one thread (its n_tasks is 1); rows are independent, so
// here every worker takes a share of the rows. dst may alias src0 (CanInplace): each row is read
// completely before the same row is written, and workers own disjoint rows.
//
// F16 and BF16 rows are converted to f32, computed, and rounded back, as ggml's *_f16 vector
// functions do. Transcendental functions are evaluated in float64 and rounded once to float32
// (ggml calls the C library's float functions, which agree to an ulp or so).

func init() {
	ew := opImpl{compute: computeElementwise, tasks: rowsTasks, work: elementwiseWork, supports: elementwiseSupports}
	for _, op := range []core.Op{core.OpAdd1, core.OpScale, core.OpSqr, core.OpSqrt, core.OpLog, core.OpSin,
		core.OpCos, core.OpClamp, core.OpLeakyRelu, core.OpUnary} {
		register(op, ew)
	}
	register(core.OpGLU, opImpl{compute: computeGLU, tasks: rowsTasks, work: gluWork, supports: gluSupports})
}

func eltIsFloat(t core.Type) bool {
	return t == core.TypeF32 || t == core.TypeF16 || t == core.TypeBF16
}

func elementwiseSupports(dst *core.Tensor) bool {
	a := dst.Src[0]
	if a == nil || !eltIsFloat(a.Type) || !eltIsFloat(dst.Type) || a.Ne != dst.Ne {
		return false
	}
	switch dst.Op {
	case core.OpAdd1:
		b := dst.Src[1]
		return b != nil && eltIsFloat(b.Type) && b.NElements() == 1
	case core.OpUnary:
		u := core.UnaryOpOf(dst)
		return u >= 0 && u < core.UnaryCount
	}
	return true
}

// elementwiseWork: one f32 row per worker for rows that need conversion or gathering.
func elementwiseWork(dst *core.Tensor, nTasks int) int64 { return scratchBytes(dst.Ne[0], nTasks) }

// eltFunc is an elementwise node's function, decoded once per node.
type eltFunc struct {
	op    core.Op
	u     core.UnaryOp
	fast  bool    // SIMD kernels allowed (not the reference mode)
	a, b  float32 // SCALE: scale, bias; CLAMP: min, max; LEAKY_RELU: slope; ADD1: the addend
	xielu core.XieluParams
}

func decodeElt(dst *core.Tensor) eltFunc {
	f := eltFunc{op: dst.Op}
	switch dst.Op {
	case core.OpAdd1:
		var v [1]float32
		b := dst.Src[1]
		loadRow(b, b.Data(), 0, 0, 0, v[:])
		f.a = v[0]
	case core.OpScale, core.OpClamp, core.OpLeakyRelu:
		ep := core.ElementwiseParamsOf(dst)
		f.a, f.b = ep.A, ep.B
	case core.OpUnary:
		f.u = core.UnaryOpOf(dst)
		if f.u == core.UnaryXielu {
			f.xielu = core.XieluParamsOf(dst)
		}
	}
	return f
}

// computeElementwise computes dst = f(src0) row by row.
func computeElementwise(p *params, dst *core.Tensor) {
	src := dst.Src[0]
	f := decodeElt(dst)
	f.fast = !p.ref
	ds, dd := src.Data(), dst.Data()
	ne0 := dst.Ne[0]
	buf := scratch(p, ne0)
	srcDirect := src.Type == core.TypeF32 && src.Nb[0] == 4
	dstDirect := dst.Type == core.TypeF32 && dst.Nb[0] == 4
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		x := buf
		if srcDirect {
			x = f32s(ds[i1*src.Nb[1]+i2*src.Nb[2]+i3*src.Nb[3]:])[:ne0]
		} else {
			loadRow(src, ds, i1, i2, i3, buf)
		}
		if dstDirect {
			f.apply(f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:ne0], x)
			continue
		}
		f.apply(buf, x)
		storeRow(dst, dd, i1, i2, i3, buf)
	}
}

// apply sets y[i] = f(x[i]); y and x have equal length and may be the same slice.
func (f *eltFunc) apply(y, x []float32) {
	y = y[:len(x)]
	if f.fast && f.applyFast(y, x) {
		return
	}
	switch f.op {
	case core.OpAdd1:
		for i, v := range x {
			y[i] = v + f.a
		}
	case core.OpScale:
		// ggml_compute_forward_scale_f32: ggml_vec_scale_f32 (x*s) without a bias, ggml_vec_mad1_f32
		// (x*s + b) with one. The float32 conversion keeps the product rounded (no FMA).
		s, b := f.a, f.b
		if b == 0 {
			for i, v := range x {
				y[i] = v * s
			}
		} else {
			for i, v := range x {
				y[i] = float32(v*s) + b
			}
		}
	case core.OpSqr:
		for i, v := range x {
			y[i] = v * v
		}
	case core.OpSqrt:
		for i, v := range x {
			y[i] = float32(math.Sqrt(float64(v)))
		}
	case core.OpLog:
		for i, v := range x {
			y[i] = float32(math.Log(float64(v)))
		}
	case core.OpSin:
		for i, v := range x {
			y[i] = float32(math.Sin(float64(v)))
		}
	case core.OpCos:
		for i, v := range x {
			y[i] = float32(math.Cos(float64(v)))
		}
	case core.OpClamp:
		// ggml_compute_forward_clamp_f32: MAX(MIN(x, max), min) with C's comparison macros, so a
		// NaN becomes max.
		lo, hi := f.a, f.b
		for i, v := range x {
			if !(v < hi) {
				v = hi
			}
			if !(v > lo) {
				v = lo
			}
			y[i] = v
		}
	case core.OpLeakyRelu:
		// ggml_vec_leaky_relu_f32: max(x, 0) + slope*min(x, 0).
		ns := f.a
		for i, v := range x {
			var pos, neg float32
			if v > 0 {
				pos = v
			}
			if v < 0 {
				neg = v
			}
			y[i] = pos + float32(ns*neg)
		}
	case core.OpUnary:
		if f.u == core.UnaryXielu {
			xieluApply(f.xielu, y, x)
			return
		}
		unaryApply(f.u, y, x)
	}
}

// Constants of ggml's activations (ggml-cpu/vec.h).
const (
	actGeluCoefA     = 0.044715
	actGeluQuickCoef = -1.702
	actSqrt2OverPi   = 0.79788456080286535587989211986876
	actSqrt1Over2    = 0.70710678118654752440084436210485
)

// actGelu is the tanh approximation 0.5x(1+tanh(√(2/π)(x+0.044715x³))). ggml's CPU backend reads it
// from a table indexed by the f16 rounding of x (GGML_GELU_FP16) for |x| < 10; tandem evaluates the
// formula itself, in float64, and rounds once to float32, so it is the exact formula's value (the
// table's answers differ from it by up to an f16 rounding).
func actGelu(v float32) float32 {
	x := float64(v)
	return float32(0.5 * x * (1 + math.Tanh(actSqrt2OverPi*x*(1+actGeluCoefA*x*x))))
}

// actGeluQuick is x·σ(1.702x) (ggml_gelu_quick_f32), evaluated in float64.
func actGeluQuick(v float32) float32 {
	x := float64(v)
	return float32(x / (1 + math.Exp(actGeluQuickCoef*x)))
}

// actGeluErf is the exact gelu 0.5x(1+erf(x/√2)) (ggml_vec_gelu_erf_f32), evaluated in float64
// as 0.5x·erfc(-x/√2), which is the same function without the cancellation of 1+erf for negative x.
func actGeluErf(v float32) float32 {
	x := float64(v)
	return float32(0.5 * x * math.Erfc(-x*actSqrt1Over2))
}

// actSilu is x·σ(x) = x/(1+e^-x) (ggml_silu_f32), evaluated in float64.
func actSilu(v float32) float32 {
	x := float64(v)
	return float32(x / (1 + math.Exp(-x)))
}

// actHardsigmoid is min(1, max(0, (x+3)/6)) with fminf/fmaxf's NaN rule (a NaN argument loses), so
// a NaN input gives 0, as in ggml_vec_hardsigmoid_f32.
func actHardsigmoid(v float32) float32 {
	t := (v + 3) / 6
	if !(t > 0) {
		t = 0
	}
	if t > 1 {
		t = 1
	}
	return t
}

// unaryApply sets y[i] = u(x[i]) with the formulas of ggml-cpu/vec.h.
func unaryApply(u core.UnaryOp, y, x []float32) {
	y = y[:len(x)]
	switch u {
	case core.UnaryAbs:
		for i, v := range x {
			y[i] = math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
		}
	case core.UnarySgn:
		for i, v := range x {
			switch {
			case v > 0:
				y[i] = 1
			case v < 0:
				y[i] = -1
			default:
				y[i] = 0
			}
		}
	case core.UnaryNeg:
		for i, v := range x {
			y[i] = -v
		}
	case core.UnaryStep:
		for i, v := range x {
			if v > 0 {
				y[i] = 1
			} else {
				y[i] = 0
			}
		}
	case core.UnaryTanh:
		for i, v := range x {
			y[i] = float32(math.Tanh(float64(v)))
		}
	case core.UnaryElu:
		for i, v := range x {
			if v > 0 {
				y[i] = v
			} else {
				y[i] = float32(math.Expm1(float64(v)))
			}
		}
	case core.UnaryRelu:
		for i, v := range x {
			if v > 0 {
				y[i] = v
			} else {
				y[i] = 0
			}
		}
	case core.UnarySigmoid:
		for i, v := range x {
			y[i] = float32(1 / (1 + math.Exp(-float64(v))))
		}
	case core.UnaryGelu:
		for i, v := range x {
			y[i] = actGelu(v)
		}
	case core.UnaryGeluQuick:
		for i, v := range x {
			y[i] = actGeluQuick(v)
		}
	case core.UnarySilu:
		for i, v := range x {
			y[i] = actSilu(v)
		}
	case core.UnaryHardswish:
		for i, v := range x {
			y[i] = v * actHardsigmoid(v)
		}
	case core.UnaryHardsigmoid:
		for i, v := range x {
			y[i] = actHardsigmoid(v)
		}
	case core.UnaryExp:
		for i, v := range x {
			y[i] = float32(math.Exp(float64(v)))
		}
	case core.UnaryExpm1:
		// ggml: expf(x) - 1, which cancels near 0; e^x-1 itself here.
		for i, v := range x {
			y[i] = float32(math.Expm1(float64(v)))
		}
	case core.UnarySoftplus:
		for i, v := range x {
			y[i] = actSoftplus(v)
		}
	case core.UnaryGeluErf:
		for i, v := range x {
			y[i] = actGeluErf(v)
		}
	case core.UnaryFloor:
		for i, v := range x {
			y[i] = float32(math.Floor(float64(v)))
		}
	case core.UnaryCeil:
		for i, v := range x {
			y[i] = float32(math.Ceil(float64(v)))
		}
	case core.UnaryRound:
		// C's roundf: halves away from zero (math.Round's rule).
		for i, v := range x {
			y[i] = float32(math.Round(float64(v)))
		}
	case core.UnaryTrunc:
		for i, v := range x {
			y[i] = float32(math.Trunc(float64(v)))
		}
	}
}

// actSoftplus is ln(1+eˣ), x itself above 20 (ggml's op_softplus), evaluated in float64 with
// log1p so that large negative x keep their tiny positive results.
func actSoftplus(v float32) float32 {
	if v > 20 {
		return v
	}
	return float32(math.Log1p(math.Exp(float64(v))))
}

// xieluApply sets y[i] = xielu(x[i]) with the node's stored coefficients (ggml's op_xielu):
// αp·x² + β·x for x > 0, else (expm1(min(x, eps)) - x)·αn + β·x, evaluated in float64. A NaN x
// gives NaN (fminf would pick eps, but the -x term keeps the NaN).
func xieluApply(p core.XieluParams, y, x []float32) {
	an, ap, beta, eps := float64(p.AlphaN), float64(p.AlphaP), float64(p.Beta), float64(p.Eps)
	for i, v := range x {
		xv := float64(v)
		if xv > 0 {
			y[i] = float32(ap*xv*xv + beta*xv)
			continue
		}
		m := xv
		if !(m < eps) {
			m = eps
		}
		y[i] = float32((math.Expm1(m)-xv)*an + beta*xv)
	}
}

// GLU

func gluSupports(dst *core.Tensor) bool {
	a, b := dst.Src[0], dst.Src[1]
	g := core.GLUParamsOf(dst).Op
	if a == nil || !eltIsFloat(a.Type) || !eltIsFloat(dst.Type) || g < 0 || g >= core.GLUCount {
		return false
	}
	if b == nil {
		return a.Ne[0]/2 == dst.Ne[0] && a.Ne[1] == dst.Ne[1] && a.Ne[2] == dst.Ne[2] && a.Ne[3] == dst.Ne[3]
	}
	return eltIsFloat(b.Type) && a.Ne == dst.Ne && b.Ne == dst.Ne
}

// gluWork: a whole row of src0 (two halves and, for an odd length, the unread last element), or a
// row of a and one of b, in f32 per worker.
func gluWork(dst *core.Tensor, nTasks int) int64 {
	return scratchBytes(max(2*dst.Ne[0], dst.Src[0].Ne[0]), nTasks)
}

// computeGLU: dst = act(x)·g per row (ggml_compute_forward_{reglu,geglu,swiglu,...}). Without
// Src[1], x is the first half of each row of src0 and g the second, each ne0/2 long (swapped: the
// other way round); with Src[1], x comes from src0 and g from src1 (swapped: from src1 and src0 —
// core's contract; ggml never builds a swapped split GLU).
func computeGLU(p *params, dst *core.Tensor) {
	a, b := dst.Src[0], dst.Src[1]
	gp := core.GLUParamsOf(dst)
	swapped := gp.Swapped
	nc := dst.Ne[0]
	buf := scratch(p, max(2*nc, a.Ne[0]))
	da, dd := a.Data(), dst.Data()
	var db []byte
	if b != nil {
		db = b.Data()
	}
	aDirect := a.Type == core.TypeF32 && a.Nb[0] == 4
	bDirect := b != nil && b.Type == core.TypeF32 && b.Nb[0] == 4
	dstDirect := dst.Type == core.TypeF32 && dst.Nb[0] == 4
	r0, r1 := rowRange(dst.NRows(), p.ith, p.nth)
	for ir := r0; ir < r1; ir++ {
		i1, i2, i3 := unravel(ir, dst.Ne)
		var x, gate []float32
		if b == nil {
			row := buf[:2*nc]
			if aDirect {
				row = f32s(da[i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3]:])[:2*nc]
			} else {
				loadRow(a, da, i1, i2, i3, buf[:a.Ne[0]])
			}
			x, gate = row[:nc], row[nc:2*nc]
		} else {
			x, gate = buf[:nc], buf[nc:2*nc]
			if aDirect {
				x = f32s(da[i1*a.Nb[1]+i2*a.Nb[2]+i3*a.Nb[3]:])[:nc]
			} else {
				loadRow(a, da, i1, i2, i3, x)
			}
			if bDirect {
				gate = f32s(db[i1*b.Nb[1]+i2*b.Nb[2]+i3*b.Nb[3]:])[:nc]
			} else {
				loadRow(b, db, i1, i2, i3, gate)
			}
		}
		if swapped {
			x, gate = gate, x
		}
		// y[i] depends only on x[i] and gate[i], so y may share memory with either at equal indices.
		y := buf[:nc]
		if dstDirect {
			y = f32s(dd[i1*dst.Nb[1]+i2*dst.Nb[2]+i3*dst.Nb[3]:])[:nc]
		}
		gluRow(p.ref, gp, y, x, gate)
		if !dstDirect {
			storeRow(dst, dd, i1, i2, i3, y)
		}
	}
}

// gluRow computes y = the GLU gp of x and gate, element by element (y may share memory with x
// or gate at equal indices); ref takes the reference kernels.
func gluRow(ref bool, gp core.GLUParams, y, x, gate []float32) {
	switch {
	// Two passes (silu into y, then times the gate) need y not to be the gate itself.
	case !ref && gp.Op == core.GLUSwiglu && len(y) > 0 && &y[0] != &gate[0]:
		kern.SiluF32(y, x[:len(y)])
		kern.MulF32(y, y, gate[:len(y)])
	case gp.Op == core.GLUSwigluOAI:
		swigluOAIApply(gp.Alpha, gp.Limit, y, x, gate)
	default:
		gluApply(gp.Op, y, x, gate)
	}
}

// gluApply sets y[i] = act(x[i])·g[i] (ggml_vec_{reglu,geglu,swiglu,geglu_erf,geglu_quick}_f32)
// for every variant but SWIGLU_OAI.
func gluApply(op core.GLUOp, y, x, g []float32) {
	n := len(y)
	x, g = x[:n], g[:n]
	switch op {
	case core.GLUReglu:
		// ggml_vec_reglu_f32: x > 0 ? x*g : 0 (so an infinite gate times a negative x gives 0).
		for i := range y {
			if v := x[i]; v > 0 {
				y[i] = v * g[i]
			} else {
				y[i] = 0
			}
		}
	case core.GLUGeglu:
		for i := range y {
			y[i] = actGelu(x[i]) * g[i]
		}
	case core.GLUSwiglu:
		for i := range y {
			y[i] = actSilu(x[i]) * g[i]
		}
	case core.GLUGegluErf:
		for i := range y {
			y[i] = actGeluErf(x[i]) * g[i]
		}
	case core.GLUGegluQuick:
		for i := range y {
			y[i] = actGeluQuick(x[i]) * g[i]
		}
	}
}

// swigluOAIApply sets y[i] = x'·σ(alpha·x')·(g'+1) with x' = min(x[i], limit) and g' = g[i]
// clamped to [-limit, limit] (ggml_compute_forward_swiglu_oai_f32), evaluated in float64. As with
// std::min and std::clamp there, a NaN x or g stays NaN.
func swigluOAIApply(alpha, limit float32, y, x, g []float32) {
	n := len(y)
	x, g = x[:n], g[:n]
	a, l := float64(alpha), float64(limit)
	for i := range y {
		xv, gv := float64(x[i]), float64(g[i])
		if xv > l {
			xv = l
		}
		if gv < -l {
			gv = -l
		} else if gv > l {
			gv = l
		}
		y[i] = float32(xv / (1 + math.Exp(-a*xv)) * (gv + 1))
	}
}

// applyFast runs the SIMD kernel for the functions that have one (scale without bias, silu, gelu,
// exp) and reports whether it did.
func (f *eltFunc) applyFast(y, x []float32) bool {
	switch {
	case f.op == core.OpScale && f.b == 0:
		copy(y, x)
		kern.ScaleF32(f.a, y)
	case f.op == core.OpUnary && f.u == core.UnarySilu:
		kern.SiluF32(y, x)
	case f.op == core.OpUnary && f.u == core.UnaryGelu:
		kern.GeluF32(y, x)
	case f.op == core.OpUnary && f.u == core.UnaryExp:
		kern.ExpF32(y, x)
	default:
		return false
	}
	return true
}
