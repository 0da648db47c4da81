package core

import (
	"fmt"
	"math"
)

// BackwardOptions tune BuildBackward.
type BackwardOptions struct {
	// Accumulate gives every parameter a persistent F32 accumulator (GradAcc) and makes its
	// gradient node add this run's gradient into it (ggml's grad_accs), so that running the graph
	// over several micro-batches sums their gradients. The caller zeroes the accumulators at the
	// start of each logical batch. Without it, gradients are recomputed from scratch every run.
	Accumulate bool
	// AccContext is where the accumulators are created (for example a context whose tensors live
	// in a persistent buffer, ggml-opt's ctx_static); nil means the ctx given to BuildBackward.
	AccContext *Context
}

// BuildBackward returns a new graph holding gf's nodes (same order) followed by the nodes that
// compute the gradient of the loss (ctx.SetLoss; several losses add up) with respect to every
// parameter (ctx.SetParam) and every node between them; gf is not changed. New tensors are created
// in ctx. Nodes that do not depend on a parameter, or do not lead to a loss, get no gradient nodes.
// The gradient of a loss is seeded with 1 by a node of the graph, so nothing has to be initialised.
// Parameter gradients are marked as outputs, so allocators keep them to the end of the run.
// A path from a parameter to the loss through an op without a derivative (ARGMAX, ARGSORT, …) is an
// error naming the op. At most one BackwardOptions value is used.
//
// Deviations from ggml, all towards the true gradient: ADD1's scalar operand gets the sum of the
// gradient (ggml: the mean), SUB and DIV reduce broadcast operands, MEAN may be used several times,
// SOFT_MAX's gradient does not depend on max_bias (ALiBi moves only the mask), and TANH, SIGMOID,
// GELU, GELU_QUICK, ELU, HARDSWISH, HARDSIGMOID, LEAKY_RELU, CLAMP, NORM, CONCAT, OUT_PROD, POOL_1D,
// REGLU and GEGLU have gradients (composed from forward and *_BACK ops); SET's gradient is g
// outside the window for a and the window for b, as ggml's. As in ggml, GELU_ERF,
// XIELU, FLOOR, CEIL, ROUND, TRUNC, SWIGLU_OAI, GEGLU_ERF and GEGLU_QUICK have none.
//
// A nil ctx or gf is an error.
func BuildBackward(ctx *Context, gf *Graph, opts ...BackwardOptions) (*Graph, error) {
	if ctx == nil || gf == nil {
		return nil, fmt.Errorf("tandem: BuildBackward: nil context or graph")
	}
	if err := gf.Err(); err != nil {
		return nil, fmt.Errorf("tandem: BuildBackward: forward graph: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tandem: BuildBackward: %w", err)
	}
	var o BackwardOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	b := &backward{ctx: ctx, opts: o, grads: map[*Tensor]*Tensor{}, needs: map[*Tensor]bool{}}
	// Parameters are normally nodes; one flagged after the graph was built is still a leaf of gf.
	var params []*Tensor
	nLoss := 0
	for _, n := range gf.nodes {
		if n.Flags&FlagParam != 0 {
			params = append(params, n)
		}
		if n.Flags&FlagLoss != 0 {
			nLoss++
		}
	}
	for _, l := range gf.leafs {
		if l.Flags&FlagParam != 0 {
			params = append(params, l)
			b.needs[l] = true
		}
	}
	nParams := len(params)
	if nLoss == 0 {
		return nil, fmt.Errorf("tandem: BuildBackward: the graph has no loss (mark a scalar node with ctx.SetLoss)")
	}
	if nParams == 0 {
		return nil, fmt.Errorf("tandem: BuildBackward: the graph has no parameters (mark them with ctx.SetParam)")
	}

	gb := &Graph{size: math.MaxInt32, nodes: append([]*Tensor(nil), gf.nodes...), leafs: append([]*Tensor(nil), gf.leafs...),
		visited: make(map[*Tensor]struct{}, 2*len(gf.visited)), useCounts: make(map[*Tensor]int, 2*len(gf.useCounts))}
	for t := range gf.visited {
		gb.visited[t] = struct{}{}
	}
	for t, n := range gf.useCounts {
		gb.useCounts[t] = n
	}
	b.gb = gb
	nFwd := len(gf.nodes)

	// Which nodes depend on a parameter (ggml's grads_needed).
	for _, n := range gf.nodes {
		need := n.Flags&FlagParam != 0
		for k, s := range n.Src {
			if s != nil && b.needs[s] && !ignoredSrc(n, k) {
				need = true
			}
		}
		if need {
			b.needs[n] = true
		}
	}
	if o.Accumulate {
		gb.gradAccs = map[*Tensor]*Tensor{}
		for _, n := range params {
			actx := ctx
			if o.AccContext != nil {
				actx = o.AccContext
			}
			acc := actx.NewTensor(TypeF32, n.Ne[:]...)
			if err := actx.Err(); err != nil {
				return nil, fmt.Errorf("tandem: BuildBackward: accumulator for %v: %w", n, err)
			}
			acc.SetName("grad acc for " + n.Name)
			if d := acc.Float32s(); d != nil {
				clear(d)
			}
			gb.gradAccs[n] = acc
			gb.accList = append(gb.accList, acc)
		}
	}
	// Seeds: every loss gets 0·loss + 1.
	for _, n := range gf.nodes {
		if n.Flags&FlagLoss != 0 && b.needs[n] {
			seed := ctx.ScaleBias(n, 0, 1)
			seed.SetName("loss seed for " + n.Name)
			b.add(n, seed)
		}
	}
	for i := nFwd - 1; i >= 0; i-- {
		n := gf.nodes[i]
		g := b.grads[n]
		if g == nil || !b.needs[n] {
			continue
		}
		if n.Flags&FlagParam != 0 && o.Accumulate {
			acc := gb.gradAccs[n]
			fin := ctx.Cpy(ctx.Add(acc, g), acc)
			fin.SetName("grad for " + n.Name)
			b.grads[n] = fin
			gb.BuildForwardExpand(fin)
			continue
		}
		if err := b.node(n, g); err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tandem: BuildBackward: gradient of %v: %w", n, err)
		}
		if gb.err != nil {
			return nil, fmt.Errorf("tandem: BuildBackward: %w", gb.err)
		}
	}
	for _, l := range gf.leafs {
		if g := b.grads[l]; g != nil && l.Flags&FlagParam != 0 && o.Accumulate {
			acc := gb.gradAccs[l]
			fin := ctx.Cpy(ctx.Add(acc, g), acc)
			fin.SetName("grad for " + l.Name)
			b.grads[l] = fin
			gb.BuildForwardExpand(fin)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tandem: BuildBackward: %w", err)
	}
	if gb.err != nil {
		return nil, fmt.Errorf("tandem: BuildBackward: %w", gb.err)
	}
	// Parameter gradients are read after the run (or by optimizer steps appended later): keep
	// allocators from reusing their memory.
	for _, p := range params {
		for t := b.grads[p]; t != nil; t = t.ViewSrc {
			t.Flags |= FlagOutput
		}
	}
	gb.size = max(gf.size, len(gb.nodes), len(gb.leafs))
	gb.grads = b.grads
	return gb, nil
}

// Grad returns the gradient of t (F32, t's shape) in a graph made by BuildBackward: for a parameter
// or any node on a path from a parameter to the loss. It is nil where no gradient flows, and for
// graphs not made by BuildBackward. When a graph allocator places the graph, parameter gradients are
// kept to the end of the run (they are outputs); mark other gradients with SetOutput before
// allocating if you read them.
func (g *Graph) Grad(t *Tensor) *Tensor { return g.grads[t] }

// GradAcc returns the gradient accumulator of parameter t (BackwardOptions.Accumulate), or nil.
func (g *Graph) GradAcc(t *Tensor) *Tensor { return g.gradAccs[t] }

// GradAccs lists the gradient accumulators in parameter order (nil without Accumulate).
func (g *Graph) GradAccs() []*Tensor { return g.accList }

// ignoredSrc reports whether source k of n never receives a gradient (indices, positions, the
// destination of a copy, the kernel of im2col, piecewise-constant functions).
func ignoredSrc(n *Tensor, k int) bool {
	switch n.Op {
	case OpIm2Col, OpIm2ColBack:
		return k == 0
	case OpCpy, OpGetRows, OpGetRowsBack, OpRope, OpRopeBack:
		return k == 1
	case OpUnary:
		u := UnaryOp(n.Params[0])
		return u == UnarySgn || u == UnaryStep
	}
	return false
}

type backward struct {
	ctx   *Context
	gb    *Graph
	opts  BackwardOptions
	grads map[*Tensor]*Tensor
	needs map[*Tensor]bool
}

// add merges contribution t into the gradient of s (a sum when s is used several times).
func (b *backward) add(s, t *Tensor) {
	if t == nil {
		return
	}
	if t.Ne != s.Ne && t.Name != "invalid" {
		b.ctx.setErr(fmt.Errorf("tandem: BuildBackward: internal error: gradient %v for %v has the wrong shape", t, s))
		return
	}
	if old := b.grads[s]; old != nil {
		t = b.ctx.Add(old, t)
	}
	if t.Name == "" && s.Name != "" {
		t.SetName("grad for " + s.Name)
	}
	b.grads[s] = t
	b.gb.BuildForwardExpand(t)
}

// want reports whether source k of n needs a gradient.
func (b *backward) want(n *Tensor, k int) bool {
	s := n.Src[k]
	return s != nil && b.needs[s] && !ignoredSrc(n, k)
}

func noGradient(n *Tensor, what string, k int) error {
	return fmt.Errorf("tandem: BuildBackward: no gradient for %s (node %v) with respect to source %d %v, which depends on a parameter, on the way to the loss",
		what, n, k, n.Src[k])
}

// node adds the gradient contributions of node n (whose output gradient is g) to its sources.
func (b *backward) node(n *Tensor, g *Tensor) error {
	c := b.ctx
	a, s1 := n.Src[0], n.Src[1]
	w0, w1 := b.want(n, 0), b.want(n, 1)
	if !w0 && !w1 && !b.want(n, 2) {
		return nil
	}
	switch n.Op {
	case OpDup, OpCont, OpCpy, OpReshape:
		if w0 {
			b.add(a, b.reshapeLike(g, a))
		}
	case OpAdd:
		if w0 {
			b.add(a, g)
		}
		if w1 {
			b.add(s1, b.reduceTo(g, s1))
		}
	case OpSub:
		if w0 {
			b.add(a, g)
		}
		if w1 {
			b.add(s1, c.Scale(b.reduceTo(g, s1), -1))
		}
	case OpMul:
		if w0 {
			b.add(a, c.Mul(g, s1))
		}
		if w1 {
			b.add(s1, b.reduceTo(c.Mul(g, a), s1))
		}
	case OpDiv:
		if w0 {
			b.add(a, c.Div(g, s1))
		}
		if w1 {
			b.add(s1, c.Scale(b.reduceTo(c.Mul(g, c.Div(n, s1)), s1), -1))
		}
	case OpAdd1:
		if w0 {
			b.add(a, g)
		}
		if w1 {
			b.add(s1, b.reshapeLike(c.Sum(g), s1))
		}
	case OpAcc:
		if w0 {
			b.add(a, g)
		}
		if w1 {
			nb1, nb2, nb3, off := AccParamsOf(n)
			gc := b.contiguous(g)
			v := c.View4D(gc, s1.Ne[0], s1.Ne[1], s1.Ne[2], s1.Ne[3], nb1, nb2, nb3, off)
			b.add(s1, c.Cont(v))
		}
	case OpSet:
		// ggml: the window's gradient goes to b, the rest of g to a (g with the window zeroed).
		sp := SetParamsOf(n)
		gc := b.contiguous(g)
		win := c.View4D(gc, s1.Ne[0], s1.Ne[1], s1.Ne[2], s1.Ne[3], sp.Nb1, sp.Nb2, sp.Nb3, sp.Offset)
		if w0 {
			b.add(a, c.Acc(gc, c.Neg(win), sp.Nb1, sp.Nb2, sp.Nb3, sp.Offset))
		}
		if w1 {
			b.add(s1, c.Cont(win))
		}
	case OpScale:
		if w0 {
			b.add(a, c.Scale(g, n.ParamF32(0)))
		}
	case OpSqr:
		if w0 {
			b.add(a, c.Scale(c.Mul(g, a), 2))
		}
	case OpSqrt:
		if w0 {
			b.add(a, c.Scale(c.Div(g, n), 0.5))
		}
	case OpLog:
		if w0 {
			b.add(a, c.Div(g, a))
		}
	case OpSin:
		if w0 {
			b.add(a, c.Mul(g, c.Cos(a)))
		}
	case OpCos:
		if w0 {
			b.add(a, c.Scale(c.Mul(g, c.Sin(a)), -1))
		}
	case OpSum, OpSumRows:
		if w0 {
			b.add(a, c.Repeat(g, a))
		}
	case OpMean:
		if w0 {
			b.add(a, c.Repeat(c.Scale(g, 1/float32(a.Ne[0])), a))
		}
	case OpRepeat:
		if w0 {
			b.add(a, c.RepeatBack(g, a))
		}
	case OpRepeatBack:
		if w0 {
			b.add(a, c.Repeat(g, a))
		}
	case OpConcat:
		dim := int(n.Params[0])
		g = b.contiguous(g)
		if w0 {
			b.add(a, c.Cont(c.View4D(g, a.Ne[0], a.Ne[1], a.Ne[2], a.Ne[3], g.Nb[1], g.Nb[2], g.Nb[3], 0)))
		}
		if w1 {
			b.add(s1, c.Cont(c.View4D(g, s1.Ne[0], s1.Ne[1], s1.Ne[2], s1.Ne[3], g.Nb[1], g.Nb[2], g.Nb[3], a.Ne[dim]*g.Nb[dim])))
		}
	case OpView:
		if w0 {
			if a.Type != TypeF32 || !a.IsContiguous() {
				return fmt.Errorf("tandem: BuildBackward: gradient of VIEW %v: its source %v must be a contiguous f32 tensor", n, a)
			}
			off := int64(uint32(n.Params[0])) | int64(n.Params[1])<<32
			zero := c.ScaleBias(a, 0, 0)
			b.add(a, c.Acc(zero, g, n.Nb[1], n.Nb[2], n.Nb[3], off))
		}
	case OpPermute, OpTranspose:
		if w0 {
			var inv [4]int
			for i := 0; i < 4; i++ {
				inv[n.Params[i]] = i
			}
			b.add(a, c.Permute(g, inv[0], inv[1], inv[2], inv[3]))
		}
	case OpGetRows:
		if w0 {
			b.add(a, c.GetRowsBack(g, s1, a))
		}
	case OpNorm:
		if w0 {
			eps := n.ParamF32(0)
			mg := c.Mean(g)
			mgy := c.Mean(c.Mul(g, n))
			xc := c.Sub(a, c.Mean(a))
			sd := c.Sqrt(c.ScaleBias(c.Mean(c.Sqr(xc)), 1, eps))
			b.add(a, c.Div(c.Sub(c.Sub(g, mg), c.Mul(n, mgy)), sd))
		}
	case OpRMSNorm:
		if w0 {
			b.add(a, c.RMSNormBack(g, a, n.ParamF32(0)))
		}
	case OpSoftMax:
		if w1 {
			return noGradient(n, "the mask of SOFT_MAX", 1)
		}
		if b.want(n, 2) {
			return noGradient(n, "the sinks of SOFT_MAX", 2)
		}
		if w0 {
			sp := SoftMaxParamsOf(n)
			scale, maxBias := sp.Scale, sp.MaxBias
			b.add(a, c.SoftMaxExtBack(g, n, scale, maxBias))
		}
	case OpDiagMaskInf, OpDiagMaskZero:
		if w0 {
			b.add(a, c.DiagMaskZero(g, int(n.Params[0])))
		}
	case OpRope:
		if b.want(n, 2) {
			return noGradient(n, "the frequency factors of ROPE", 2)
		}
		if w0 {
			b.add(a, c.RopeExtBack(g, s1, n.Src[2], RopeParamsOf(n)))
		}
	case OpMulMat:
		if w0 {
			b.add(a, b.groupReduce(c.OutProd(s1, g), a))
		}
		if w1 {
			b.add(s1, c.OutProd(a, c.Transpose(g)))
		}
	case OpOutProd:
		if w0 {
			q := s1
			if q.Nb[0] != q.Type.Size() {
				q = c.Cont(q)
			}
			b.add(a, b.groupReduce(c.MulMat(c.Cont(c.Transpose(g)), q), a))
		}
		if w1 {
			p := a
			if p.Nb[0] != p.Type.Size() || p.IsTransposed() {
				p = c.Cont(p)
			}
			b.add(s1, c.Cont(c.Transpose(c.MulMat(p, b.contiguous(g)))))
		}
	case OpLeakyRelu:
		if w0 {
			s := n.ParamF32(0)
			b.add(a, c.Mul(g, c.ScaleBias(c.Step(a), 1-s, s)))
		}
	case OpClamp:
		if w0 {
			lo, hi := n.ParamF32(0), n.ParamF32(1)
			in := c.Mul(c.Step(c.ScaleBias(a, 1, -lo)), c.Step(c.ScaleBias(a, -1, hi)))
			b.add(a, c.Mul(g, in))
		}
	case OpUnary:
		if w0 {
			d, err := b.unary(n, g)
			if err != nil {
				return err
			}
			b.add(a, d)
		}
	case OpGLU:
		return b.glu(n, g)
	case OpIm2Col:
		if w1 {
			b.add(s1, c.Im2ColBack(g, a, s1.Ne, Im2ColParamsOf(n)))
		}
	case OpPool2D:
		if w0 {
			pp := PoolParamsOf(n)
			b.add(a, c.Pool2DBack(g, a, pp.Op, pp.K0, pp.K1, pp.S0, pp.S1, pp.P0, pp.P1))
		}
	case OpPool1D:
		if w0 {
			// each row is a plane of height 1: the 2-D backward over [L, 1, rows]
			op, k0, s0, p0 := PoolOp(n.Params[0]), int(n.Params[1]), int(n.Params[2]), int(n.Params[3])
			rows := a.Ne[1] * a.Ne[2] * a.Ne[3]
			if a.Type != TypeF32 {
				return fmt.Errorf("tandem: BuildBackward: gradient of POOL_1D %v: its source %v must be f32", n, a)
			}
			x3 := c.Reshape3D(b.contiguous(a), a.Ne[0], 1, rows)
			g3 := c.Reshape3D(b.contiguous(g), n.Ne[0], 1, rows)
			if op == PoolAvg && p0 > 0 {
				// POOL_1D averages over the in-bounds positions of a window (ggml's rule), the
				// 2-D backward spreads g/k0: scale g by k0/count, count/k0 being the 2-D average
				// of ones (a NaN input stays NaN, as its window's output is).
				ones := c.Clamp(x3, 1, 1)
				g3 = c.Div(g3, c.Pool2D(ones, PoolAvg, k0, 1, s0, 1, p0, 0))
			}
			d := c.Pool2DBack(g3, x3, op, k0, 1, s0, 1, p0, 0)
			b.add(a, c.Reshape4D(d, a.Ne[0], a.Ne[1], a.Ne[2], a.Ne[3]))
		}
	case OpCrossEntropyLoss:
		if w1 {
			return noGradient(n, "the labels of CROSS_ENTROPY_LOSS", 1)
		}
		if w0 {
			b.add(a, c.CrossEntropyLossBack(g, a, s1))
		}
	default:
		for k := range n.Src {
			if b.want(n, k) {
				return noGradient(n, n.Op.String(), k)
			}
		}
	}
	return nil
}

// contiguous returns t, or a contiguous copy of it.
func (b *backward) contiguous(t *Tensor) *Tensor {
	if t.IsContiguous() {
		return t
	}
	return b.ctx.Cont(t)
}

// reshapeLike returns g with s's shape (same element count).
func (b *backward) reshapeLike(g, s *Tensor) *Tensor {
	if g.Ne == s.Ne {
		return g
	}
	return b.ctx.Reshape(b.contiguous(g), s.Ne[:]...)
}

// reduceTo sums g over the tiles by which s was broadcast (elementwise ops tile by modulo).
func (b *backward) reduceTo(g, s *Tensor) *Tensor {
	if g.Ne == s.Ne {
		return g
	}
	return b.ctx.RepeatBack(g, s)
}

// groupReduce sums t [.., .., B2, B3] down to s's batch dims [.., .., b2, b3], where batch index i2
// of t belongs to group i2/(B2/b2) (MUL_MAT's and OUT_PROD's broadcast by division).
func (b *backward) groupReduce(t, s *Tensor) *Tensor {
	c := b.ctx
	if t.Ne == s.Ne {
		return t
	}
	t = b.contiguous(t)
	n01 := t.Ne[0] * t.Ne[1]
	g2, g3 := t.Ne[2]/s.Ne[2], t.Ne[3]/s.Ne[3]
	if g2 > 1 {
		r := c.Reshape4D(t, n01, g2, s.Ne[2], t.Ne[3])
		t = c.repeatBackNe(r, [4]int64{n01, 1, s.Ne[2], t.Ne[3]})
	}
	if g3 > 1 {
		r := c.Reshape4D(t, n01*s.Ne[2], g3, s.Ne[3], 1)
		t = c.repeatBackNe(r, [4]int64{n01 * s.Ne[2], 1, s.Ne[3], 1})
	}
	return c.Reshape4D(t, s.Ne[0], s.Ne[1], s.Ne[2], s.Ne[3])
}

// GELU's tanh approximation: constants as in ggml.
const (
	geluCoefA     = 0.044715
	geluSqrt2OvPi = 0.79788456080286535587989211986876
)

// geluDeriv is d gelu(x)/dx for the tanh approximation:
// 0.5(1+t) + 0.5·x·(1−t²)·c·(1+3A·x²), t = tanh(c·x·(1+A·x²)).
func (b *backward) geluDeriv(x *Tensor) *Tensor {
	c := b.ctx
	x2 := c.Sqr(x)
	t := c.Tanh(c.Scale(c.Mul(x, c.ScaleBias(x2, geluCoefA, 1)), geluSqrt2OvPi))
	t1 := c.ScaleBias(t, 0.5, 0.5)
	t2 := c.Mul(c.Mul(x, c.ScaleBias(c.Sqr(t), -1, 1)), c.ScaleBias(x2, 0.5*geluSqrt2OvPi*3*geluCoefA, 0.5*geluSqrt2OvPi))
	return c.Add(t1, t2)
}

// unary returns the gradient contribution of OpUnary node n for its source.
func (b *backward) unary(n, g *Tensor) (*Tensor, error) {
	c := b.ctx
	a := n.Src[0]
	switch u := UnaryOp(n.Params[0]); u {
	case UnaryAbs:
		return c.Mul(g, c.Sgn(a)), nil
	case UnaryNeg:
		return c.Scale(g, -1), nil
	case UnaryRelu:
		return c.Mul(g, c.Step(a)), nil
	case UnaryExp:
		return c.Mul(g, n), nil
	case UnaryExpm1:
		return c.Mul(g, c.Exp(a)), nil
	case UnarySoftplus:
		// ggml's gradient, σ(a), also where the forward pass returns a itself (a > 20).
		return c.Mul(g, c.Sigmoid(a)), nil
	case UnaryTanh:
		return c.Mul(g, c.ScaleBias(c.Sqr(n), -1, 1)), nil
	case UnarySigmoid:
		return c.Mul(g, c.Mul(n, c.ScaleBias(n, -1, 1))), nil
	case UnarySilu:
		return c.SiluBack(g, a), nil
	case UnaryGelu:
		return c.Mul(g, b.geluDeriv(a)), nil
	case UnaryGeluQuick:
		const k = 1.702
		s := c.Sigmoid(c.Scale(a, k))
		return c.Mul(g, c.Add(s, c.Mul(c.Scale(a, k), c.Mul(s, c.ScaleBias(s, -1, 1))))), nil
	case UnaryElu:
		st := c.Step(a)
		return c.Mul(g, c.Add(st, c.Mul(c.ScaleBias(st, -1, 1), c.ScaleBias(n, 1, 1)))), nil
	case UnaryHardswish:
		in := c.Mul(c.Step(c.ScaleBias(a, 1, 3)), c.Step(c.ScaleBias(a, -1, 3)))
		hi := c.Step(c.ScaleBias(a, 1, -3))
		return c.Mul(g, c.Add(c.Mul(in, c.ScaleBias(a, 1.0/3, 0.5)), hi)), nil
	case UnaryHardsigmoid:
		in := c.Mul(c.Step(c.ScaleBias(a, 1, 3)), c.Step(c.ScaleBias(a, -1, 3)))
		return c.Mul(g, c.Scale(in, 1.0/6)), nil
	default:
		return nil, noGradient(n, "UNARY "+u.String(), 0)
	}
}

// glu adds the gradients of a gated linear unit y = act(u)·v.
func (b *backward) glu(n, g *Tensor) error {
	c := b.ctx
	a, s1 := n.Src[0], n.Src[1]
	op := GLUOp(n.Params[0])
	swapped := n.Params[1] != 0
	var u, v *Tensor
	if s1 != nil {
		u, v = a, s1
	} else {
		h := n.Ne[0]
		u = c.View4D(a, h, a.Ne[1], a.Ne[2], a.Ne[3], a.Nb[1], a.Nb[2], a.Nb[3], 0)
		v = c.View4D(a, h, a.Ne[1], a.Ne[2], a.Ne[3], a.Nb[1], a.Nb[2], a.Nb[3], h*a.Nb[0])
	}
	if swapped {
		u, v = v, u
	}
	gv := c.Mul(g, v)
	var du, act *Tensor
	switch op {
	case GLUSwiglu:
		du, act = c.SiluBack(gv, u), c.Silu(u)
	case GLUGeglu:
		du, act = c.Mul(gv, b.geluDeriv(u)), c.Gelu(u)
	case GLUReglu:
		du, act = c.Mul(gv, c.Step(u)), c.Relu(u)
	default:
		return noGradient(n, op.String(), 0)
	}
	dv := c.Mul(g, act)
	if s1 != nil {
		ga, gs := du, dv // gradients of a and s1
		if swapped {
			ga, gs = dv, du
		}
		if b.want(n, 0) {
			b.add(a, ga)
		}
		if b.want(n, 1) {
			b.add(s1, gs)
		}
		return nil
	}
	first, second := du, dv
	if swapped {
		first, second = dv, du
	}
	if b.want(n, 0) {
		ga := c.Concat(first, second, 0)
		if a.Ne[0]%2 != 0 {
			// The last element of an odd row is not read: its gradient is 0.
			if a.Type != TypeF32 || !a.IsContiguous() {
				return fmt.Errorf("tandem: BuildBackward: gradient of %v with an odd row length: its source %v must be a contiguous f32 tensor", n, a)
			}
			ga = c.Acc(c.ScaleBias(a, 0, 0), ga, a.Nb[1], a.Nb[2], a.Nb[3], 0)
		}
		b.add(a, ga)
	}
	return nil
}

// ResetGradAccs zeroes every gradient accumulator (BackwardOptions.Accumulate), as at the start of
// a logical batch; ggml_graph_reset's part for accumulators. The accumulators must have memory.
// Graphs without accumulators have nothing to reset; a nil g is an error.
func (g *Graph) ResetGradAccs() error {
	if g == nil {
		return fmt.Errorf("tandem: ResetGradAccs: nil graph")
	}
	for _, acc := range g.accList {
		if err := TensorMemset(acc, 0, 0, acc.NBytes()); err != nil {
			return fmt.Errorf("tandem: ResetGradAccs: %v: %w", acc, err)
		}
	}
	return nil
}
