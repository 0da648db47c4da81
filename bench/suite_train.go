package main

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// trainBatch and the MLP's sizes: trainIn features → N hidden (ReLU) → trainOut classes.
const (
	trainBatch = 64
	trainIn    = 64
	trainOut   = 16
)

// The training families time one training step as opt.Trainer runs it: forward, loss, the
// backward graph and an AdamW step (OPT_STEP_ADAMW) per weight. The learning rate is 0 so that
// every repeat computes the same step on the same weights (the moments still update): the work
// and the result do not depend on how many repeats a device made. The time per run is the time
// per training step.

// trainFamily: a 2-layer MLP (cross-entropy loss); N is the hidden width.
func trainFamily() *Family {
	f := &Family{
		ID:     "train/mlp",
		Title:  "TRAIN MLP step (AdamW)",
		XLabel: fmt.Sprintf("hidden units (%d→N→%d, batch %d)", trainIn, trainOut, trainBatch),
		Metric: MetricFLOPs,
		Ladder: []int64{64, 256, 1024, 4096},
		Quick:  []int64{64, 256},
		Limit:  1e-6,
		Sched:  true,
		Like:   "mul_mat/mat/f32",
	}
	f.make = func(n int64) *Case {
		c := &Case{Family: f, N: n, Shape: fmt.Sprintf("%d→%d→%d, batch %d", trainIn, n, trainOut, trainBatch)}
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			var ins []Input
			weight := func(t *core.Tensor) *core.Tensor {
				ins = append(ins, Input{t, Fill{Lo: -0.2, Hi: 0.2}})
				return t
			}
			w1 := weight(w.NewTensor2D(core.TypeF32, trainIn, n).SetName("w1"))
			w2 := weight(w.NewTensor2D(core.TypeF32, n, trainOut).SetName("w2"))
			in := x.NewTensor2D(core.TypeF32, trainIn, trainBatch).SetName("batch").SetInput()
			labels := x.NewTensor2D(core.TypeF32, trainOut, trainBatch).SetName("labels").SetInput()
			ins = append(ins, Input{in, uniform}, Input{labels, Fill{Lo: 0, Hi: 1}})
			loss := x.CrossEntropyLoss(x.MulMat(w2, x.Relu(x.MulMat(w1, in))), labels)
			return trainStep(w, x, loss, []*core.Tensor{w1, w2}, ins)
		}
		return withWork(c)
	}
	return f
}

// trainBlockFamily: the bench's transformer block with f32 weights and a mean-squared loss on its
// output; N is n_embd.
func trainBlockFamily() *Family {
	f := &Family{
		ID:     "train/layer",
		Title:  "TRAIN BLOCK step (AdamW)",
		XLabel: fmt.Sprintf("n_embd (%d tokens)", blockTokens),
		Metric: MetricFLOPs,
		Ladder: []int64{128, 256, 512},
		Quick:  []int64{128},
		Limit:  1e-5,
		Sched:  true,
		Like:   "mul_mat/mat/f32",
	}
	f.make = func(n int64) *Case {
		nEmbd := roundUp(n, 64)
		nFF := roundUp(nEmbd*8/3, 64)
		c := &Case{Family: f, N: nEmbd, Shape: fmt.Sprintf("n_embd %d, ff %d, %d tok", nEmbd, nFF, blockTokens)}
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) {
			out, ins, weights := buildBlock(w, x, nEmbd, nFF, blockTokens, core.TypeF32, core.TypeF32)
			loss := x.Scale(x.Sum(x.Sqr(out)), 1/float32(out.NElements()))
			return trainStep(w, x, loss, weights, ins)
		}
		return withWork(c)
	}
	return f
}

// withWork fills a case's work counts from its graph (the runner's own code).
func withWork(c *Case) *Case {
	w := core.NewContext(core.ContextParams{NoAlloc: true})
	out, _ := c.Build(w, w)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	c.FLOPs, c.Bytes = graphWork(g)
	return c
}

// trainStep adds the backward graph of loss and an AdamW step per weight (moments in w, with the
// weights), and returns one output that needs the loss and every step.
func trainStep(w, x *core.Context, loss *core.Tensor, weights []*core.Tensor, ins []Input) (*core.Tensor, []Input) {
	for _, p := range weights {
		_ = x.SetParam(p)
	}
	_ = x.SetLoss(loss)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	gb, err := core.BuildBackward(x, gf)
	if err != nil {
		return x.Sum(loss), ins // the error is on x: the case reports it
	}
	hp := x.NewTensor1D(core.TypeF32, core.AdamWNParams).SetName("adamw").SetInput()
	ins = append(ins, Input{hp, Fill{Kind: FillValues, Values: []float32{0, 0.9, 0.999, 1e-8, 0, 10, 1000}}})
	out := loss
	for i, p := range weights {
		m := w.NewTensor(core.TypeF32, p.Ne[:]...).SetName(fmt.Sprintf("m%d", i))
		v := w.NewTensor(core.TypeF32, p.Ne[:]...).SetName(fmt.Sprintf("v%d", i))
		ins = append(ins, Input{m, Fill{Lo: -0.01, Hi: 0.01}}, Input{v, Fill{Lo: 0, Hi: 0.01}})
		out = x.Add(out, x.Sum(x.OptStepAdamW(p, gb.Grad(p), m, v, hp)))
	}
	return out.SetName("loss+steps"), ins
}
