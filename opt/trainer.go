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

// Hyper are the optimizer's hyper-parameters; SGD uses Alpha and WD only.
type Hyper struct {
	Alpha, Beta1, Beta2, Eps, WD float32
}

// DefaultHyper are ggml-opt's defaults: α 1e-3, β1 0.9, β2 0.999, ε 1e-8, no weight decay.
func DefaultHyper() Hyper { return Hyper{Alpha: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8} }

// LossType is how the model's output becomes the scalar to minimize.
type LossType int

const (
	LossMean         LossType = iota // the mean of the outputs
	LossSum                          // the sum of the outputs
	LossCrossEntropy                 // cross-entropy of softmax(outputs) against the labels, per sample
	LossMSE                          // mean squared error against the labels
)

// Model is what Config trains: Build computes the output [NOut, batch] from the input
// [NIn, batch] with ops on ctx, reading Params, which the caller has placed in backend buffers
// (alloc.AllocCtxTensors on the backend that should run their consumers, the buffer marked
// core.BufferUsageWeights). Build is called twice: for the training graph and the evaluation one.
type Model struct {
	NIn, NOut int
	Build     func(ctx *core.Context, x *core.Tensor) *core.Tensor
	Params    []*core.Tensor
}

// Config describes a Trainer.
type Config struct {
	Backends  []core.Backend // priority order, CPU last (as scheduler.New)
	Model     Model
	BatchSize int
	Loss      LossType
	Optimizer Optimizer
	Hyper     Hyper
	// Schedule, when set, returns the hyper-parameters of step t (1-based) from the configured ones:
	// learning-rate schedules, warm-up.
	Schedule func(step int, h Hyper) Hyper
}

// pass is one graph of the model (training or evaluation) with its scheduler.
type pass struct {
	ctx        *core.Context
	g          *core.Graph
	x, y       *core.Tensor
	out, loss  *core.Tensor
	s          *scheduler.Scheduler
	lossVal    []float32
	outVal     []float32
	raw        []byte
	firstPlans int
}

// Trainer runs training steps and evaluations of one model. It is not safe for concurrent use.
type Trainer struct {
	cfg     Config
	train   pass
	eval    pass
	hp      *core.Tensor
	hpVals  []float32
	moments []*core.Tensor
	bufs    []core.Buffer
	step    int
}

// New builds the training graph (forward, loss, backward, one optimizer step per parameter) and
// the evaluation graph, places the optimizer's moments next to their parameters and plans both
// graphs once. Bad configurations are errors naming the problem.
func New(cfg Config) (*Trainer, error) {
	m := cfg.Model
	switch {
	case len(cfg.Backends) == 0:
		return nil, errors.New("tandem: opt: no backends")
	case m.Build == nil:
		return nil, errors.New("tandem: opt: Model.Build is nil")
	case m.NIn <= 0 || m.NOut <= 0:
		return nil, fmt.Errorf("tandem: opt: model sizes NIn %d, NOut %d, want > 0", m.NIn, m.NOut)
	case cfg.BatchSize <= 0:
		return nil, fmt.Errorf("tandem: opt: batch size %d, want > 0", cfg.BatchSize)
	case len(m.Params) == 0:
		return nil, errors.New("tandem: opt: the model has no parameters")
	case cfg.Optimizer != AdamW && cfg.Optimizer != SGD:
		return nil, fmt.Errorf("tandem: opt: unknown optimizer %d", cfg.Optimizer)
	}
	if cfg.Hyper == (Hyper{}) {
		cfg.Hyper = DefaultHyper()
	}
	t := &Trainer{cfg: cfg}
	if err := t.buildTrain(); err != nil {
		t.Close()
		return nil, err
	}
	if err := t.buildEval(); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// buildPass builds the forward graph and the loss of one pass.
func (t *Trainer) buildPass(p *pass, name string) error {
	m, b := t.cfg.Model, int64(t.cfg.BatchSize)
	p.ctx = core.NewContext(core.ContextParams{NoAlloc: true})
	p.x = p.ctx.NewTensor2D(core.TypeF32, int64(m.NIn), b).SetInput().SetName(name + " inputs")
	p.y = p.ctx.NewTensor2D(core.TypeF32, int64(m.NOut), b).SetInput().SetName(name + " labels")
	out := m.Build(p.ctx, p.x)
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("tandem: opt: building the model: %w", err)
	}
	if out == nil || out.Ne != [4]int64{int64(m.NOut), b, 1, 1} || out.Type != core.TypeF32 {
		return fmt.Errorf("tandem: opt: the model's output is %v, want f32 [%d, %d]", out, m.NOut, b)
	}
	p.out = out.SetOutput()
	loss, err := lossOf(p.ctx, t.cfg.Loss, out, p.y)
	if err != nil {
		return err
	}
	p.loss = loss.SetName(name + " loss")
	if err := p.ctx.SetLoss(p.loss); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	p.lossVal = make([]float32, 1)
	p.outVal = make([]float32, out.NElements())
	return nil
}

// lossOf makes the scalar loss.
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
		d := ctx.Sub(out, labels)
		l = ctx.Scale(ctx.Sum(ctx.Sqr(d)), 1/n)
	default:
		return nil, fmt.Errorf("tandem: opt: unknown loss %d", kind)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("tandem: opt: building the loss: %w", err)
	}
	return l, nil
}

// backendOf is the index of the first backend whose device can use t's buffer.
func (t *Trainer) backendOf(p *core.Tensor) (int, error) {
	if p == nil {
		return 0, errors.New("tandem: opt: nil parameter")
	}
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

func (t *Trainer) buildTrain() error {
	p := &t.train
	if err := t.buildPass(p, "train"); err != nil {
		return err
	}
	for _, w := range t.cfg.Model.Params {
		if err := p.ctx.SetParam(w); err != nil {
			return fmt.Errorf("tandem: opt: %w", err)
		}
	}
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(p.loss)
	gb, err := core.BuildBackward(p.ctx, gf)
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	nhp := core.AdamWNParams
	if t.cfg.Optimizer == SGD {
		nhp = core.SGDNParams
	}
	t.hp = p.ctx.NewTensor1D(core.TypeF32, int64(nhp)).SetInput().SetName("optimizer hyper-parameters")
	t.hpVals = make([]float32, nhp)

	// Moments next to their parameter: one context per backend, allocated once, kept.
	momCtx := make([]*core.Context, len(t.cfg.Backends))
	type mv struct{ m, v *core.Tensor }
	moms := make([]mv, len(t.cfg.Model.Params))
	if t.cfg.Optimizer == AdamW {
		for i, w := range t.cfg.Model.Params {
			bi, err := t.backendOf(w)
			if err != nil {
				return err
			}
			if momCtx[bi] == nil {
				momCtx[bi] = core.NewContext(core.ContextParams{NoAlloc: true})
			}
			c := momCtx[bi]
			moms[i].m = c.NewTensor(core.TypeF32, w.Ne[:]...).SetName(fmt.Sprintf("opt.m.%d", i))
			moms[i].v = c.NewTensor(core.TypeF32, w.Ne[:]...).SetName(fmt.Sprintf("opt.v.%d", i))
			t.moments = append(t.moments, moms[i].m, moms[i].v)
		}
		for bi, c := range momCtx {
			if c == nil {
				continue
			}
			buf, err := alloc.AllocCtxTensors(c, t.cfg.Backends[bi])
			if err != nil {
				return fmt.Errorf("tandem: opt: allocating the optimizer's moments: %w", err)
			}
			buf.SetUsage(core.BufferUsageWeights)
			t.bufs = append(t.bufs, buf)
		}
		if err := t.ResetMoments(); err != nil {
			return err
		}
	}
	for i, w := range t.cfg.Model.Params {
		g := gb.Grad(w)
		if g == nil {
			return fmt.Errorf("tandem: opt: no gradient reaches parameter %v from the loss", w)
		}
		var st *core.Tensor
		if t.cfg.Optimizer == AdamW {
			st = p.ctx.OptStepAdamW(w, g, moms[i].m, moms[i].v, t.hp)
		} else {
			st = p.ctx.OptStepSGD(w, g, t.hp)
		}
		gb.BuildForwardExpand(st)
	}
	if err := p.ctx.Err(); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	p.g = gb
	return t.plan(p)
}

func (t *Trainer) buildEval() error {
	p := &t.eval
	if err := t.buildPass(p, "eval"); err != nil {
		return err
	}
	p.g = core.NewGraph(core.DefaultGraphSize)
	p.g.BuildForwardExpand(p.loss)
	return t.plan(p)
}

// plan makes the pass's scheduler and plans its graph (once).
func (t *Trainer) plan(p *pass) error {
	if err := p.g.Err(); err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	s, err := scheduler.New(t.cfg.Backends, scheduler.Options{GraphSize: max(core.DefaultGraphSize, 2*p.g.NNodes())})
	if err != nil {
		return fmt.Errorf("tandem: opt: %w", err)
	}
	p.s = s
	if err := s.AllocGraph(p.g); err != nil {
		return fmt.Errorf("tandem: opt: planning: %w", err)
	}
	p.firstPlans = s.Stats().Plans
	return nil
}

// ResetMoments zeroes the optimizer's moments and its step count.
func (t *Trainer) ResetMoments() error {
	for _, m := range t.moments {
		if err := core.TensorMemset(m, 0, 0, m.NBytes()); err != nil {
			return fmt.Errorf("tandem: opt: %w", err)
		}
	}
	t.step = 0
	return nil
}

// Steps is the number of optimizer steps taken.
func (t *Trainer) Steps() int { return t.step }

// Replans counts the plans the training and evaluation schedulers made after the first one each:
// 0 while the graphs keep their shape, as they do.
func (t *Trainer) Replans() int {
	n := 0
	for _, p := range []*pass{&t.train, &t.eval} {
		if p.s != nil {
			n += p.s.Stats().Plans - p.firstPlans
		}
	}
	return n
}

// hyperValues fills the hyper-parameter tensor's values for step t (1-based).
func (t *Trainer) hyperValues(step int) {
	h := t.cfg.Hyper
	if t.cfg.Schedule != nil {
		h = t.cfg.Schedule(step, h)
	}
	if t.cfg.Optimizer == SGD {
		t.hpVals[core.SGDAlpha], t.hpVals[core.SGDWD] = h.Alpha, h.WD
		return
	}
	t.hpVals[core.AdamWAlpha] = h.Alpha
	t.hpVals[core.AdamWBeta1] = h.Beta1
	t.hpVals[core.AdamWBeta2] = h.Beta2
	t.hpVals[core.AdamWEps] = h.Eps
	t.hpVals[core.AdamWWD] = h.WD
	t.hpVals[core.AdamWBeta1H] = float32(1 / (1 - math.Pow(float64(h.Beta1), float64(step))))
	t.hpVals[core.AdamWBeta2H] = float32(1 / (1 - math.Pow(float64(h.Beta2), float64(step))))
}

// Step trains on one batch (data: BatchSize samples of NIn values, labels: of NOut; labels are
// ignored, and may be nil, for LossMean and LossSum) and returns the batch's loss before the update. The model's outputs for the batch are in Outputs.
func (t *Trainer) Step(data, labels []float32) (float32, error) {
	if err := t.setBatch(&t.train, data, labels); err != nil {
		return 0, err
	}
	t.hyperValues(t.step + 1)
	if err := t.train.setF32(t.hp, t.hpVals); err != nil {
		return 0, fmt.Errorf("tandem: opt: %w", err)
	}
	if err := t.train.s.GraphCompute(t.train.g); err != nil {
		return 0, fmt.Errorf("tandem: opt: step %d: %w", t.step+1, err)
	}
	t.step++
	return t.read(&t.train)
}

// Eval computes the loss (and Outputs) of one batch without updating anything.
func (t *Trainer) Eval(data, labels []float32) (float32, error) {
	if err := t.setBatch(&t.eval, data, labels); err != nil {
		return 0, err
	}
	if err := t.eval.s.GraphCompute(t.eval.g); err != nil {
		return 0, fmt.Errorf("tandem: opt: eval: %w", err)
	}
	return t.read(&t.eval)
}

func (t *Trainer) setBatch(p *pass, data, labels []float32) error {
	if p.s == nil {
		return errors.New("tandem: opt: the trainer is closed")
	}
	if err := p.setF32(p.x, data); err != nil {
		return fmt.Errorf("tandem: opt: batch data: %w", err)
	}
	if t.cfg.Loss != LossCrossEntropy && t.cfg.Loss != LossMSE {
		return nil // the loss does not read labels
	}
	if err := p.setF32(p.y, labels); err != nil {
		return fmt.Errorf("tandem: opt: batch labels: %w", err)
	}
	return nil
}

func (t *Trainer) read(p *pass) (float32, error) {
	if err := p.getInto(p.loss, p.lossVal); err != nil {
		return 0, err
	}
	if err := p.getInto(p.out, p.outVal); err != nil {
		return 0, err
	}
	return p.lossVal[0], nil
}

// setF32 writes exactly x's element count of float32 values into x through the pass's byte buffer.
func (p *pass) setF32(x *core.Tensor, v []float32) error {
	if int64(len(v)) != x.NElements() {
		return fmt.Errorf("%d values for %v's %d elements", len(v), x, x.NElements())
	}
	n := 4 * len(v)
	if cap(p.raw) < n {
		p.raw = make([]byte, n)
	}
	raw := p.raw[:n]
	for i, f := range v {
		binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(f))
	}
	return core.TensorSet(x, raw, 0)
}

// getInto reads an F32 tensor's values into dst through the pass's byte buffer (no allocation
// once the buffer has grown).
func (p *pass) getInto(x *core.Tensor, dst []float32) error {
	n := 4 * len(dst)
	if cap(p.raw) < n {
		p.raw = make([]byte, n)
	}
	raw := p.raw[:n]
	if err := core.TensorGet(x, raw, 0); err != nil {
		return fmt.Errorf("tandem: opt: reading %v: %w", x, err)
	}
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return nil
}

// Outputs are the model's outputs of the last Step (train) or Eval, NOut values per sample.
func (t *Trainer) Outputs(train bool) []float32 {
	if train {
		return t.train.outVal
	}
	return t.eval.outVal
}

// Close releases the schedulers and the moments' buffers. The backends and parameters stay.
func (t *Trainer) Close() error {
	if t == nil {
		return nil
	}
	var err error
	for _, p := range []*pass{&t.train, &t.eval} {
		if p.s != nil {
			err = errors.Join(err, p.s.Close())
			p.s = nil
		}
	}
	for _, b := range t.bufs {
		err = errors.Join(err, b.Free())
	}
	t.bufs = nil
	return err
}

// Splits is the number of splits of the training graph's plan (1 when one backend runs it all).
func (t *Trainer) Splits() int {
	if t.train.s == nil {
		return 0
	}
	return t.train.s.NSplits()
}
