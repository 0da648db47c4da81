package core

// AdamW parameter tensor layout (OPT_STEP_ADAMW src4, F32[7]) as in ggml.
const (
	AdamWAlpha   = 0 // learning rate α
	AdamWBeta1   = 1 // β1
	AdamWBeta2   = 2 // β2
	AdamWEps     = 3 // ε
	AdamWWD      = 4 // decoupled weight decay
	AdamWBeta1H  = 5 // 1/(1 − β1^t), the bias correction of step t (t from 1)
	AdamWBeta2H  = 6 // 1/(1 − β2^t)
	AdamWNParams = 7 // elements of the AdamW parameter tensor
)

// SGD parameter tensor layout (OPT_STEP_SGD src2, F32[2]).
const (
	SGDAlpha   = 0 // learning rate α
	SGDWD      = 1 // decoupled weight decay
	SGDNParams = 2 // elements of the SGD parameter tensor
)

// SetParam marks t as a trainable parameter for BuildBackward and the optimizers. t must be a float
// tensor without an op (a leaf); otherwise (a nil t included) the error is returned and recorded on
// the context.
func (c *Context) SetParam(t *Tensor) error {
	var err error
	switch {
	case t == nil:
		err = errorfNoCtx("SetParam: nil tensor")
	case !isFloatType(t.Type):
		err = errorfNoCtx("SetParam: %v has type %v; parameters must be f32, f16 or bf16", t, t.Type)
	case t.Op != OpNone:
		err = errorfNoCtx("SetParam: %v is the result of op %v; parameters must be leaf tensors", t, t.Op)
	}
	if err != nil {
		c.setErr(err)
		return err
	}
	t.Flags |= FlagParam
	return nil
}

// SetLoss marks t as a loss to minimise: BuildBackward seeds its gradient with 1 (several losses
// add up). It also marks t as an output, so that its value survives the run. t must be a scalar (one element in every dimension) F32 tensor; otherwise the error is
// returned and recorded on the context; a nil t is such an error.
func (c *Context) SetLoss(t *Tensor) error {
	var err error
	switch {
	case t == nil:
		err = errorfNoCtx("SetLoss: nil tensor")
	case t.Type != TypeF32:
		err = errorfNoCtx("SetLoss: %v has type %v; a loss must be an f32 scalar", t, t.Type)
	case t.Ne != [4]int64{1, 1, 1, 1}:
		err = errorfNoCtx("SetLoss: %v is not a scalar (shape [%d,%d,%d,%d]); reduce it first, e.g. with Sum or Mean",
			t, t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3])
	}
	if err != nil {
		c.setErr(err)
		return err
	}
	// A loss is read after the run: keep allocators from reusing its memory (the gradient seed
	// computed from it could otherwise be placed over it).
	t.Flags |= FlagLoss | FlagOutput
	return nil
}

// CrossEntropyLoss is −(1/rows)·Σ_rows Σ_i labels_i·log softmax(logits)_i, an F32 scalar. logits and
// labels are F32 of one shape with contiguous rows (softmax runs along dimension 0).
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) CrossEntropyLoss(logits, labels *Tensor) *Tensor {
	if !c.sameF32("CROSS_ENTROPY_LOSS", logits, labels) {
		return c.placeholder()
	}
	if !logits.IsContiguousRows() || !labels.IsContiguousRows() {
		return c.errorf("CROSS_ENTROPY_LOSS: rows of %v and %v must be contiguous", logits, labels)
	}
	return c.newOp(OpCrossEntropyLoss, TypeF32, [4]int64{1, 1, 1, 1}, logits, labels)
}

// CrossEntropyLossBack is the gradient of CROSS_ENTROPY_LOSS with respect to the logits:
// (softmax(logits) − labels)·g/rows. src0 = g (F32 scalar), src1 = logits, src2 = labels.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) CrossEntropyLossBack(g, logits, labels *Tensor) *Tensor {
	if err := c.check("CROSS_ENTROPY_LOSS_BACK", g, logits, labels); err != nil {
		return c.fail("CROSS_ENTROPY_LOSS_BACK", err)
	}
	if g.Type != TypeF32 || g.NElements() != 1 {
		return c.errorf("CROSS_ENTROPY_LOSS_BACK: gradient %v must be an f32 scalar", g)
	}
	if !c.sameF32("CROSS_ENTROPY_LOSS_BACK", logits, labels) {
		return c.placeholder()
	}
	if !logits.IsContiguousRows() || !labels.IsContiguousRows() {
		return c.errorf("CROSS_ENTROPY_LOSS_BACK: rows of %v and %v must be contiguous", logits, labels)
	}
	return c.newOp(OpCrossEntropyLossBack, TypeF32, logits.Ne, g, logits, labels)
}

// optStepCheck validates the tensors of an optimizer step.
func (c *Context) optStepCheck(op string, a *Tensor, params *Tensor, nParams int64, same ...*Tensor) bool {
	if err := c.check(op, append([]*Tensor{a, params}, same...)...); err != nil {
		c.setErr(asOpError(op, err))
		return false
	}
	if !c.sameF32(op, append([]*Tensor{a}, same...)...) {
		return false
	}
	if !a.IsContiguousRows() {
		c.setErr(errorfNoCtx("%s: rows of %v must be contiguous", op, a))
		return false
	}
	if params.Type != TypeF32 || params.NElements() != nParams || !params.IsContiguous() {
		c.setErr(errorfNoCtx("%s: parameters %v must be a contiguous f32 tensor of %d elements", op, params, nParams))
		return false
	}
	return true
}

// OptStepAdamW updates parameter a in place with one AdamW step; the result is a view of a. (ggml
// also requires a to be flagged as a parameter; tandem does not, so the step can be used alone.)
// Sources: a, grad, m, v (F32, a's shape; m and v are the moments, updated in place) and params, an
// F32[7] tensor [α, β1, β2, ε, wd, β1h, β2h] (see AdamWAlpha…): the bias corrections live in the
// tensor so one graph serves every step. Per element:
//
//	m = β1·m + (1−β1)·g;  v = β2·v + (1−β2)·g²
//	a = a·(1 − α·wd) − α·(m·β1h) / (sqrt(v·β2h) + ε)
//
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) OptStepAdamW(a, grad, m, v, params *Tensor) *Tensor {
	if !c.optStepCheck("OPT_STEP_ADAMW", a, params, AdamWNParams, grad, m, v) {
		return c.placeholder()
	}
	t := c.viewOpStrided(OpOptStepAdamW, a, a.Type, a.Ne, &a.Nb, 0)
	if t.Op == OpOptStepAdamW {
		t.Src[1], t.Src[2], t.Src[3], t.Src[4] = grad, m, v, params
		t.Name = "adamw step of " + a.Name
	}
	return t
}

// OptStepSGD updates parameter a in place with one SGD step: a = a·(1 − α·wd) − α·grad. Sources: a,
// grad (F32, a's shape) and params, an F32[2] tensor [α, wd]. The result is a view of a.
// A nil operand (or a nil context) records an error on the context and returns a placeholder.
func (c *Context) OptStepSGD(a, grad, params *Tensor) *Tensor {
	if !c.optStepCheck("OPT_STEP_SGD", a, params, SGDNParams, grad) {
		return c.placeholder()
	}
	t := c.viewOpStrided(OpOptStepSGD, a, a.Type, a.Ne, &a.Nb, 0)
	if t.Op == OpOptStepSGD {
		t.Src[1], t.Src[2] = grad, params
		t.Name = "sgd step of " + a.Name
	}
	return t
}
