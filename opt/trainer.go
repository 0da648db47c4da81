package opt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// Optimizer picks the update rule.
type Optimizer int

const (
	// AdamW: m = β1·m + (1−β1)·g; v = β2·v + (1−β2)·g²; w = w·(1−α·wd) − α·m̂/(√v̂ + ε) with the bias
	// corrections m̂ = m/(1−β1^t), v̂ = v/(1−β2^t) (ggml's OPT_STEP_ADAMW, decoupled weight decay).
	AdamW Optimizer = iota
	// SGD: w = w·(1−α·wd) − α·g (ggml's OPT_STEP_SGD).
	SGD
)

// Hyper are the optimizer's hyper-parameters; SGD uses Alpha and WD only. Every field is used as
// given — an unset field is 0, not a default — and checked: α ≥ 0, wd ≥ 0, and for AdamW
// 0 ≤ β1 < 1, 0 ≤ β2 < 1 and ε > 0 (all finite); New (and Step, for what Config.Schedule returns)
// reject anything else with an error naming the field. Start from DefaultHyper and change what
// you need.
type Hyper struct {
	Alpha, Beta1, Beta2, Eps, WD float32
}

// DefaultHyper are ggml-opt's defaults: α 1e-3, β1 0.9, β2 0.999, ε 1e-8, no weight decay.
func DefaultHyper() Hyper { return Hyper{Alpha: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8} }

// check reports the first hyper-parameter the optimizer cannot use.
func (h Hyper) check(o Optimizer) error {
	bad := func(name string, v float32, want string) error {
		return fmt.Errorf("tandem: opt: hyper-parameter %s = %g, want %s (start from opt.DefaultHyper() and change what you need)", name, v, want)
	}
	finite := func(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }
	switch {
	case !(h.Alpha >= 0) || !finite(h.Alpha):
		return bad("Alpha", h.Alpha, "a finite value ≥ 0")
	case !(h.WD >= 0) || !finite(h.WD):
		return bad("WD", h.WD, "a finite value ≥ 0")
	case o == SGD:
		return nil
	case !(h.Beta1 >= 0 && h.Beta1 < 1):
		return bad("Beta1", h.Beta1, "0 ≤ β1 < 1")
	case !(h.Beta2 >= 0 && h.Beta2 < 1):
		return bad("Beta2", h.Beta2, "0 ≤ β2 < 1")
	case !(h.Eps > 0) || !finite(h.Eps):
		return bad("Eps", h.Eps, "a finite value > 0 (with ε = 0 a zero gradient gives 0/0 = NaN)")
	}
	return nil
}

// LossType is how the model's output becomes the scalar to minimize.
type LossType int

const (
	LossMean         LossType = iota // the mean of the outputs
	LossSum                          // the sum of the outputs
	LossCrossEntropy                 // cross-entropy of softmax(output row) against the label row, averaged over rows
	LossMSE                          // mean squared error against the labels
)

// perSample reports whether the loss is a mean over samples (every loss but LossSum).
func (l LossType) perSample() bool { return l != LossSum }

// labelled reports whether the loss reads labels.
func (l LossType) labelled() bool { return l == LossCrossEntropy || l == LossMSE }

// Model is what Config trains. Build computes the output from the input x [NIn, batch] (of type
// Input) with ops on ctx, reading Params, which the caller has placed in backend buffers
// (alloc.AllocCtxTensors on the backend that should run their consumers, the buffer marked
// core.BufferUsageWeights). The output is f32 with NOut values per row and Rows rows per sample:
// [NOut, batch] for a classifier, [NOut, Rows·batch] (or [NOut, Rows, batch]) for a language
// model's logits, a row per position. Build is called once; training and evaluation run graphs of
// the same tensors.
type Model struct {
	NIn, NOut int
	// Input is the element type of x: core.TypeF32 (the zero value) or core.TypeI32 (token ids,
	// read with ctx.GetRows).
	Input core.Type
	// Rows is the number of output rows per sample (0 means 1).
	Rows   int
	Build  func(ctx *core.Context, x *core.Tensor) *core.Tensor
	Params []*core.Tensor
}

// Config describes a Trainer.
type Config struct {
	Backends  []core.Backend // priority order, CPU last (as scheduler.New)
	Model     Model
	BatchSize int // samples per graph run
	Loss      LossType
	Optimizer Optimizer
	// Hyper are the optimizer's hyper-parameters; the zero Hyper means DefaultHyper(), any other
	// value is used as it is (see Hyper).
	Hyper Hyper
	// Schedule, when set, returns the hyper-parameters of step t (1-based) from the configured ones:
	// learning-rate schedules, warm-up.
	Schedule func(step int, h Hyper) Hyper
	// Accumulate is the number of batches whose gradients add up before one optimizer step
	// (gradient accumulation: a logical batch of Accumulate·BatchSize samples in the memory of one
	// batch); 0 and 1 step after every batch. The per-sample losses are scaled by 1/Accumulate, so
	// the step sees the gradient of the logical batch's mean.
	Accumulate int
}

// Trainer runs training steps, evaluations and predictions of one model over one scheduler. It is
// not safe for concurrent use.
type Trainer struct {
	cfg  Config
	k    int   // batches per optimizer step
	rows int64 // output rows per sample

	s                   *scheduler.Scheduler
	x, y, mask, hp      *core.Tensor // inputs: data, labels (nil unless the loss reads them), row mask, optimizer
	out, loss, right    *core.Tensor // outputs: [NOut, rows·batch], the loss, rows classified right (nil: no accuracy)
	gEval, gGrad, gStep *core.Graph  // forward + loss; + gradients (Accumulate > 1); + optimizer steps
	cur                 *core.Graph  // the graph the scheduler holds
	switches            int          // graph switches (each plans once)
	moments, accs       []*core.Tensor
	bufs                []core.Buffer
	step, micro         int // optimizer steps taken; batches accumulated since the last step
	hpVals, xf, yv, mv  []float32
	xi                  []int32
	ySet                []int // positions of yv set to 1 by the last one-hot fill
	outVals, scalar     []float32
	raw                 []byte
	firstPlans          int64
}

// New builds the model's graphs — forward and loss (evaluation), the backward pass (with
// Accumulate, into per-parameter accumulators) and one optimizer step per parameter (training) —
// places the optimizer's moments and the accumulators next to their parameters, and plans the
// training graph on one scheduler whose compute buffers every graph shares. Bad configurations are
// errors naming the problem.
func New(cfg Config) (*Trainer, error) {
	m := cfg.Model
	switch {
	case len(cfg.Backends) == 0:
		return nil, errors.New("tandem: opt: no backends")
	case m.Build == nil:
		return nil, errors.New("tandem: opt: Model.Build is nil")
	case m.NIn <= 0 || m.NOut <= 0 || m.Rows < 0:
		return nil, fmt.Errorf("tandem: opt: model sizes NIn %d, NOut %d, Rows %d; want NIn, NOut > 0 and Rows ≥ 0", m.NIn, m.NOut, m.Rows)
	case m.Input != core.TypeF32 && m.Input != core.TypeI32:
		return nil, fmt.Errorf("tandem: opt: Model.Input %v, want f32 or i32", m.Input)
	case cfg.BatchSize <= 0:
		return nil, fmt.Errorf("tandem: opt: batch size %d, want > 0", cfg.BatchSize)
	case cfg.Accumulate < 0:
		return nil, fmt.Errorf("tandem: opt: Accumulate %d, want ≥ 0", cfg.Accumulate)
	case len(m.Params) == 0:
		return nil, errors.New("tandem: opt: the model has no parameters")
	case cfg.Optimizer != AdamW && cfg.Optimizer != SGD:
		return nil, fmt.Errorf("tandem: opt: unknown optimizer %d", cfg.Optimizer)
	case cfg.Loss < LossMean || cfg.Loss > LossMSE:
		return nil, fmt.Errorf("tandem: opt: unknown loss %d", cfg.Loss)
	}
	if cfg.Hyper == (Hyper{}) {
		cfg.Hyper = DefaultHyper()
	}
	if err := cfg.Hyper.check(cfg.Optimizer); err != nil {
		return nil, err
	}
	t := &Trainer{cfg: cfg, k: max(cfg.Accumulate, 1), rows: int64(max(m.Rows, 1))}
	if err := t.build(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// build makes the graphs, the optimizer's state and the scheduler.
func (t *Trainer) build() error {
	m, b, rows := t.cfg.Model, int64(t.cfg.BatchSize), t.rows
	nOut := int64(m.NOut)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	t.x = ctx.NewTensor2D(m.Input, int64(m.NIn), b).SetInput().SetName("inputs")
	out := m.Build(ctx, t.x)
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tandem: opt: building the model: %w", err)
	}
	if out == nil || out.Type != core.TypeF32 || out.Ne[0] != nOut || out.NElements() != nOut*rows*b {
		return fmt.Errorf("tandem: opt: the model's output is %v, want f32 [%d, %d] (NOut, Rows·batch)", out, nOut, rows*b)
	}
	if out.Ne[1] != rows*b {
		if !out.IsContiguous() {
			out = ctx.Cont(out)
		}
		out = ctx.Reshape2D(out, nOut, rows*b)
	}
	t.out = out.SetOutput()
	// Rows past the end of a partial batch are masked out: their outputs become 0, their labels
	// are 0, so they add nothing to any loss or to the count of rows classified right.
	t.mask = ctx.NewTensor2D(core.TypeF32, 1, rows*b).SetInput().SetName("row mask")
	masked := ctx.Mul(t.out, t.mask)
	if t.cfg.Loss.labelled() {
		t.y = ctx.NewTensor2D(core.TypeF32, nOut, rows*b).SetInput().SetName("labels")
	}
	loss, err := lossOf(ctx, t.cfg.Loss, masked, t.y)
	if err != nil {
		return err
	}
	if t.k > 1 && t.cfg.Loss.perSample() {
		loss = ctx.Scale(loss, 1/float32(t.k))
	}
	t.loss = loss.SetName("loss").SetOutput()
	if err := ctx.SetLoss(t.loss); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	if t.y != nil && nOut > 1 {
		// Accuracy on the device: a row is right when the argmax of its output is the argmax of
		// its label; Σ mask·(1 − step(|pred − label|)) (a dot product: a 1×1 MUL_MAT) counts the
		// right rows of the batch.
		pred := ctx.Cast(ctx.Argmax(t.out), core.TypeF32)
		want := ctx.Cast(ctx.Argmax(t.y), core.TypeF32)
		right := ctx.ScaleBias(ctx.Step(ctx.Abs(ctx.Sub(pred, want))), -1, 1)
		t.right = ctx.MulMat(right, ctx.Reshape1D(t.mask, rows*b)).SetName("rows right").SetOutput()
	}
	for _, w := range m.Params {
		if w == nil {
			return errors.New("tandem: opt: nil parameter")
		}
		if err := ctx.SetParam(w); err != nil {
			return fmt.Errorf("tandem: opt: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tandem: opt: building the loss: %w", err)
	}
	t.gEval = core.NewGraph(core.DefaultGraphSize)
	t.gEval.BuildForwardExpand(t.loss)
	if t.right != nil {
		t.gEval.BuildForwardExpand(t.right)
	}
	if err := t.gEval.Err(); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}

	state := core.NewContext(core.ContextParams{NoAlloc: true}) // moments and accumulators
	gb, err := core.BuildBackward(ctx, t.gEval, core.BackwardOptions{Accumulate: t.k > 1, AccContext: state})
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	if err := t.placeState(state, gb); err != nil {
		return err
	}
	nhp := core.AdamWNParams
	if t.cfg.Optimizer == SGD {
		nhp = core.SGDNParams
	}
	t.hp = ctx.NewTensor1D(core.TypeF32, int64(nhp)).SetInput().SetName("optimizer hyper-parameters")
	t.hpVals = make([]float32, nhp)
	t.gStep = gb
	if t.k > 1 {
		// The stepping graph is the gradient graph plus the steps; the gradient graph alone runs
		// the batches before the last of each logical batch.
		t.gGrad = gb
		t.gStep = core.NewGraph(max(core.DefaultGraphSize, 2*(gb.NNodes()+len(gb.Leafs())+len(m.Params))))
		for _, n := range gb.Nodes() {
			t.gStep.BuildForwardExpand(n)
		}
	}
	for i, w := range m.Params {
		g := gb.Grad(w)
		if g == nil {
			return fmt.Errorf("tandem: opt: no gradient reaches parameter %v from the loss", w)
		}
		var st *core.Tensor
		if t.cfg.Optimizer == AdamW {
			st = ctx.OptStepAdamW(w, g, t.moments[2*i], t.moments[2*i+1], t.hp)
		} else {
			st = ctx.OptStepSGD(w, g, t.hp)
		}
		t.gStep.BuildForwardExpand(st)
	}
	if err := errors.Join(ctx.Err(), t.gStep.Err()); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}

	// Host staging, sized once: a step allocates nothing.
	if m.Input == core.TypeI32 {
		t.xi = make([]int32, t.x.NElements())
	} else {
		t.xf = make([]float32, t.x.NElements())
	}
	if t.y != nil {
		t.yv = make([]float32, t.y.NElements())
	}
	t.mv = make([]float32, rows*b)
	t.outVals = make([]float32, t.out.NElements())
	t.scalar = make([]float32, 1)

	s, err := scheduler.New(t.cfg.Backends, scheduler.Options{GraphSize: max(core.DefaultGraphSize, 2*t.gStep.NNodes())})
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	t.s = s
	// The training graph is the largest: reserving it sizes the compute buffers that the other
	// graphs reuse.
	if err := s.Reserve(t.gStep); err != nil {
		return fmt.Errorf("tandem: opt: planning: %w", err)
	}
	t.firstPlans = int64(s.Stats().Plans)
	return t.use(t.gStep)
}

// placeState creates the AdamW moments (and finds the gradient accumulators) of every parameter
// and places them next to it: one buffer per backend that holds parameters, marked as weights so
// that the steps run there. Everything placed is zeroed.
func (t *Trainer) placeState(state *core.Context, gb *core.Graph) error {
	groups := make([][]*core.Tensor, len(t.cfg.Backends))
	for i, w := range t.cfg.Model.Params {
		bi, err := t.backendOf(w)
		if err != nil {
			return err
		}
		if t.cfg.Optimizer == AdamW {
			mt := state.NewTensor(core.TypeF32, w.Ne[:]...).SetName(fmt.Sprintf("opt.m.%d", i))
			vt := state.NewTensor(core.TypeF32, w.Ne[:]...).SetName(fmt.Sprintf("opt.v.%d", i))
			t.moments = append(t.moments, mt, vt)
			groups[bi] = append(groups[bi], mt, vt)
		}
		if t.k > 1 {
			acc := gb.GradAcc(w)
			if acc == nil {
				return fmt.Errorf("tandem: opt: no gradient reaches parameter %v from the loss", w)
			}
			acc.SetName(fmt.Sprintf("opt.acc.%d", i))
			t.accs = append(t.accs, acc)
			groups[bi] = append(groups[bi], acc)
		}
	}
	if err := state.Err(); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	for bi, ts := range groups {
		if len(ts) == 0 {
			continue
		}
		bt := t.cfg.Backends[bi].DefaultBufferType()
		align := max(bt.Alignment(), 1)
		var size int64
		for _, x := range ts {
			size += (bt.AllocSize(x) + align - 1) / align * align
		}
		buf, err := bt.Alloc(size)
		if err != nil {
			return fmt.Errorf("tandem: opt: allocating the optimizer's state on %s: %w", t.cfg.Backends[bi].Name(), err)
		}
		buf.SetUsage(core.BufferUsageWeights)
		t.bufs = append(t.bufs, buf)
		ta := alloc.NewTensorAllocator(buf)
		for _, x := range ts {
			if err := ta.Alloc(x); err != nil {
				return fmt.Errorf("tandem: opt: %w", err)
			}
		}
	}
	return t.ResetMoments()
}

// lossOf makes the scalar loss of the (masked) output.
func lossOf(ctx *core.Context, kind LossType, out, labels *core.Tensor) (*core.Tensor, error) {
	n := float32(out.NElements())
	var l *core.Tensor
	switch kind {
	case LossMean:
		l = ctx.Scale(ctx.Sum(out), 1/n)
	case LossSum:
		l = ctx.Sum(out)
	case LossCrossEntropy:
		l = ctx.CrossEntropyLoss(out, labels)
	case LossMSE:
		l = ctx.Scale(ctx.Sum(ctx.Sqr(ctx.Sub(out, labels))), 1/n)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tandem: opt: building the loss: %w", err)
	}
	return l, nil
}

// backendOf is the index of the first backend whose device can use p's buffer.
func (t *Trainer) backendOf(p *core.Tensor) (int, error) {
	if p.Buffer == nil {
		return 0, fmt.Errorf("tandem: opt: parameter %v has no memory: place it with alloc.AllocCtxTensors first", p)
	}
	for i, b := range t.cfg.Backends {
		if b != nil && b.Device().SupportsBufferType(p.Buffer.Type()) {
			return i, nil
		}
	}
	return 0, fmt.Errorf("tandem: opt: no backend can use parameter %v's %s buffer", p, p.Buffer.Type().Name())
}

// use makes g the scheduler's graph, planning and allocating it when it is not already.
func (t *Trainer) use(g *core.Graph) error {
	if t.cur == g {
		return nil
	}
	if err := t.s.AllocGraph(g); err != nil {
		t.cur = nil
		return fmt.Errorf("tandem: opt: planning: %w", err)
	}
	t.cur = g
	t.switches++
	return nil
}

// ResetMoments zeroes the optimizer's moments, the gradient accumulators and the step count.
func (t *Trainer) ResetMoments() error {
	for _, m := range append(t.moments[:len(t.moments):len(t.moments)], t.accs...) {
		if err := core.TensorMemset(m, 0, 0, m.NBytes()); err != nil {
			return fmt.Errorf("tandem: opt: %w", err)
		}
	}
	t.step, t.micro = 0, 0
	return nil
}

// Steps is the number of optimizer steps taken (with Accumulate, one per Accumulate batches).
func (t *Trainer) Steps() int { return t.step }

// Replans counts the plans the scheduler made beyond the one each switch between graphs makes
// (training ⇄ evaluation; with Accumulate, also the gradient-only graph ⇄ the stepping one): 0
// while the graphs keep their shape, as they do.
func (t *Trainer) Replans() int {
	if t.s == nil {
		return 0
	}
	return int(int64(t.s.Stats().Plans)-t.firstPlans) - (t.switches - 1)
}

// Splits is the number of splits of the plan of the graph last run (1 when one backend runs it
// all).
func (t *Trainer) Splits() int {
	if t.s == nil {
		return 0
	}
	return t.s.NSplits()
}

// hyper returns the hyper-parameters of step (1-based) into the tensor's values, or why they are
// unusable.
func (t *Trainer) hyper(step int) error {
	h := t.cfg.Hyper
	if t.cfg.Schedule != nil {
		h = t.cfg.Schedule(step, h)
		if err := h.check(t.cfg.Optimizer); err != nil {
			return fmt.Errorf("%w (Config.Schedule, step %d)", err, step)
		}
	}
	if t.cfg.Optimizer == SGD {
		t.hpVals[core.SGDAlpha], t.hpVals[core.SGDWD] = h.Alpha, h.WD
		return nil
	}
	t.hpVals[core.AdamWAlpha] = h.Alpha
	t.hpVals[core.AdamWBeta1] = h.Beta1
	t.hpVals[core.AdamWBeta2] = h.Beta2
	t.hpVals[core.AdamWEps] = h.Eps
	t.hpVals[core.AdamWWD] = h.WD
	t.hpVals[core.AdamWBeta1H] = float32(1 / (1 - math.Pow(float64(h.Beta1), float64(step))))
	t.hpVals[core.AdamWBeta2H] = float32(1 / (1 - math.Pow(float64(h.Beta2), float64(step))))
	return nil
}

// Step trains on batch i of ds (samples i·BatchSize … (i+1)·BatchSize−1 of its current order; it
// must hold them all) and returns the batch's loss before the update (per sample, except for
// LossSum). With Accumulate n, the gradient is added up and every n-th call takes the optimizer
// step. A nil ds, or one that does not match the model, is an error.
func (t *Trainer) Step(ds *Dataset, i int) (float32, error) {
	loss, _, err := t.trainBatch(ds, i)
	return float32(loss), err
}

// trainBatch is Step, also returning the rows classified right.
func (t *Trainer) trainBatch(ds *Dataset, i int) (float64, int, error) {
	if err := t.check(ds, t.cfg.Loss.labelled()); err != nil {
		return 0, 0, err
	}
	b := t.cfg.BatchSize
	if i < 0 || (i+1)*b > ds.Len() {
		return 0, 0, fmt.Errorf("tandem: opt: Step: batch %d of %d samples is not a whole batch of %d (training takes whole batches)", i, ds.Len(), b)
	}
	last := t.micro == t.k-1
	g := t.gStep
	if !last {
		g = t.gGrad
	}
	if t.micro == 0 {
		for _, a := range t.accs { // a new logical batch
			if err := core.TensorMemset(a, 0, 0, a.NBytes()); err != nil {
				return 0, 0, fmt.Errorf("tandem: opt: %w", err)
			}
		}
	}
	if last {
		if err := t.hyper(t.step + 1); err != nil {
			return 0, 0, err
		}
	}
	if err := t.use(g); err != nil {
		return 0, 0, err
	}
	if err := t.setBatch(ds, i*b, b); err != nil {
		return 0, 0, err
	}
	if last {
		if err := t.setF32(t.hp, t.hpVals); err != nil {
			return 0, 0, fmt.Errorf("tandem: opt: %w", err)
		}
	}
	if err := t.s.GraphCompute(g); err != nil {
		return 0, 0, fmt.Errorf("tandem: opt: step %d: %w", t.step+1, err)
	}
	t.micro = (t.micro + 1) % t.k
	if last {
		t.step++
	}
	return t.results(b)
}

// evalBatch computes the loss and the rows right of the n samples of ds from start (n ≤ BatchSize).
func (t *Trainer) evalBatch(ds *Dataset, start, n int) (float64, int, error) {
	if err := t.use(t.gEval); err != nil {
		return 0, 0, err
	}
	if err := t.setBatch(ds, start, n); err != nil {
		return 0, 0, err
	}
	if err := t.s.GraphCompute(t.gEval); err != nil {
		return 0, 0, fmt.Errorf("tandem: opt: evaluating: %w", err)
	}
	return t.results(n)
}

// results reads the loss of a batch of n samples (per sample, as if the graph held n) and the rows
// classified right (-1 without accuracy).
func (t *Trainer) results(n int) (float64, int, error) {
	if err := t.getF32(t.loss, t.scalar); err != nil {
		return 0, 0, err
	}
	loss := float64(t.scalar[0])
	if t.cfg.Loss.perSample() {
		loss *= float64(t.k) * float64(t.cfg.BatchSize) / float64(n)
	}
	right := -1
	if t.right != nil {
		if err := t.getF32(t.right, t.scalar); err != nil {
			return 0, 0, err
		}
		right = int(math.Round(float64(t.scalar[0])))
	}
	return loss, right, nil
}

// errClosed is the error of a closed Trainer's (and a zero Trainer's) methods.
var errClosed = errors.New("tandem: opt: the trainer is closed, or a zero Trainer: create one with opt.New")

// check says why ds cannot feed the model (labels: whether the caller needs them).
func (t *Trainer) check(ds *Dataset, labels bool) error {
	m := t.cfg.Model
	switch {
	case t.s == nil:
		return errClosed
	case ds == nil:
		return errors.New("tandem: opt: nil dataset")
	case ds.nIn != m.NIn:
		return fmt.Errorf("tandem: opt: dataset samples have %d values, the model takes %d (Model.NIn)", ds.nIn, m.NIn)
	case (m.Input == core.TypeI32) != (ds.i32 != nil):
		return fmt.Errorf("tandem: opt: the dataset holds %s, the model takes %v inputs (Model.Input)", ds.typeName(), m.Input)
	case !labels:
		return nil
	case !ds.hasLabels():
		return fmt.Errorf("tandem: opt: the dataset has no labels; the loss needs them")
	case ds.f32Labels != nil && int64(ds.nLabels) != int64(m.NOut)*t.rows:
		return fmt.Errorf("tandem: opt: dataset samples have %d float32 labels, the model gives %d outputs (NOut·Rows)", ds.nLabels, int64(m.NOut)*t.rows)
	case ds.i32Labels != nil && int64(ds.nLabels) != t.rows:
		return fmt.Errorf("tandem: opt: dataset samples have %d int32 class ids, the model gives %d rows (Rows)", ds.nLabels, t.rows)
	}
	return nil
}

// setBatch writes samples start … start+n−1 of ds's order into the inputs; rows past n are zeroed
// and masked out.
func (t *Trainer) setBatch(ds *Dataset, start, n int) error {
	nIn := ds.nIn
	for k := range t.cfg.BatchSize {
		if t.xi != nil {
			dst := t.xi[k*nIn : (k+1)*nIn]
			if k >= n {
				clear(dst)
				continue
			}
			s := ds.order[start+k]
			copy(dst, ds.i32[s*nIn:(s+1)*nIn])
		} else {
			dst := t.xf[k*nIn : (k+1)*nIn]
			if k >= n {
				clear(dst)
				continue
			}
			s := ds.order[start+k]
			copy(dst, ds.f32[s*nIn:(s+1)*nIn])
		}
	}
	var err error
	if t.xi != nil {
		err = t.setI32(t.x, t.xi)
	} else {
		err = t.setF32(t.x, t.xf)
	}
	if err != nil {
		return fmt.Errorf("tandem: opt: batch data: %w", err)
	}
	live := int64(n) * t.rows
	for r := range t.mv {
		t.mv[r] = 0
		if int64(r) < live {
			t.mv[r] = 1
		}
	}
	if err := t.setF32(t.mask, t.mv); err != nil {
		return fmt.Errorf("tandem: opt: row mask: %w", err)
	}
	if t.y == nil {
		return nil
	}
	if err := t.fillLabels(ds, start, n); err != nil {
		return err
	}
	if err := t.setF32(t.y, t.yv); err != nil {
		return fmt.Errorf("tandem: opt: batch labels: %w", err)
	}
	return nil
}

// fillLabels writes the labels of the batch into yv: float32 labels as they are, class ids as
// one-hot rows (only the ones set last time are cleared). A dataset without labels (Predict) gives
// zeros.
func (t *Trainer) fillLabels(ds *Dataset, start, n int) error {
	nOut := t.cfg.Model.NOut
	if ds.i32Labels == nil {
		t.ySet = t.ySet[:0]
		per := ds.nLabels
		for k := range t.cfg.BatchSize {
			dst := t.yv[k*int(t.rows)*nOut : (k+1)*int(t.rows)*nOut]
			if k >= n || per == 0 {
				clear(dst)
				continue
			}
			s := ds.order[start+k]
			copy(dst, ds.f32Labels[s*per:(s+1)*per])
		}
		return nil
	}
	for _, p := range t.ySet {
		t.yv[p] = 0
	}
	t.ySet = t.ySet[:0]
	rows := int(t.rows)
	for k := range n {
		s := ds.order[start+k]
		for r, id := range ds.i32Labels[s*rows : (s+1)*rows] {
			if id < 0 || int(id) >= nOut {
				return fmt.Errorf("tandem: opt: sample %d, row %d: class id %d outside [0, %d)", s, r, id, nOut)
			}
			p := (k*rows+r)*nOut + int(id)
			t.yv[p] = 1
			t.ySet = append(t.ySet, p)
		}
	}
	return nil
}

// setF32 writes exactly x's element count of float32 values into x through the trainer's byte
// buffer.
func (t *Trainer) setF32(x *core.Tensor, v []float32) error {
	if int64(len(v)) != x.NElements() {
		return fmt.Errorf("%d values for %v's %d elements", len(v), x, x.NElements())
	}
	raw := t.bytes(4 * len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	return core.TensorSet(x, raw, 0)
}

// setI32 is setF32 for int32 values.
func (t *Trainer) setI32(x *core.Tensor, v []int32) error {
	if int64(len(v)) != x.NElements() {
		return fmt.Errorf("%d values for %v's %d elements", len(v), x, x.NElements())
	}
	raw := t.bytes(4 * len(v))
	for i, n := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], uint32(n))
	}
	return core.TensorSet(x, raw, 0)
}

// getF32 reads an F32 tensor's values into dst through the trainer's byte buffer.
func (t *Trainer) getF32(x *core.Tensor, dst []float32) error {
	raw := t.bytes(4 * len(dst))
	if err := core.TensorGet(x, raw, 0); err != nil {
		return fmt.Errorf("tandem: opt: reading %v: %w", x, err)
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return nil
}

// bytes returns the trainer's byte buffer, grown to n bytes (no allocation once it has grown).
func (t *Trainer) bytes(n int) []byte {
	if cap(t.raw) < n {
		t.raw = make([]byte, n)
	}
	return t.raw[:n]
}

// Close releases the scheduler and the optimizer state's buffers. The backends and parameters
// stay the caller's.
func (t *Trainer) Close() error {
	if t == nil {
		return nil
	}
	var err error
	if t.s != nil {
		err = t.s.Close()
		t.s = nil
	}
	for _, b := range t.bufs {
		err = errors.Join(err, b.Free())
	}
	t.bufs = nil
	return err
}
