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

// trainFamily is one training step of a 2-layer MLP: forward, cross-entropy loss, the backward
// graph and an AdamW step per weight matrix (OPT_STEP_ADAMW), as opt.Trainer runs it. The learning
// rate is 0 so that every repeat computes the same step on the same weights (the moments still
// update): the work and the result do not depend on how many repeats a device made. N is the
// hidden width; the time per run is the time per training step.
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
		c.Build = func(w, x *core.Context) (*core.Tensor, []Input) { return buildTrainStep(w, x, n) }
		w := core.NewContext(core.ContextParams{NoAlloc: true})
		out, _ := c.Build(w, w)
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		c.FLOPs, c.Bytes = graphWork(g)
		return c
	}
	return f
}

func buildTrainStep(w, x *core.Context, hidden int64) (*core.Tensor, []Input) {
	var ins []Input
	weight := func(t *core.Tensor, lo, hi float32) *core.Tensor {
		ins = append(ins, Input{t, Fill{Lo: lo, Hi: hi}})
		return t
	}
	w1 := weight(w.NewTensor2D(core.TypeF32, trainIn, hidden).SetName("w1"), -0.2, 0.2)
	w2 := weight(w.NewTensor2D(core.TypeF32, hidden, trainOut).SetName("w2"), -0.2, 0.2)
	// The AdamW moments live with the weights (opt places them so).
	m1 := weight(w.NewTensor2D(core.TypeF32, trainIn, hidden).SetName("m1"), -0.01, 0.01)
	v1 := weight(w.NewTensor2D(core.TypeF32, trainIn, hidden).SetName("v1"), 0, 0.01)
	m2 := weight(w.NewTensor2D(core.TypeF32, hidden, trainOut).SetName("m2"), -0.01, 0.01)
	v2 := weight(w.NewTensor2D(core.TypeF32, hidden, trainOut).SetName("v2"), 0, 0.01)

	in := x.NewTensor2D(core.TypeF32, trainIn, trainBatch).SetName("batch").SetInput()
	labels := x.NewTensor2D(core.TypeF32, trainOut, trainBatch).SetName("labels").SetInput()
	hp := x.NewTensor1D(core.TypeF32, core.AdamWNParams).SetName("adamw").SetInput()
	ins = append(ins, Input{in, uniform}, Input{labels, Fill{Lo: 0, Hi: 1}},
		Input{hp, Fill{Kind: FillValues, Values: []float32{0, 0.9, 0.999, 1e-8, 0, 10, 1000}}})

	logits := x.MulMat(w2, x.Relu(x.MulMat(w1, in)))
	loss := x.CrossEntropyLoss(logits, labels)
	_ = x.SetParam(w1)
	_ = x.SetParam(w2)
	_ = x.SetLoss(loss)
	gf := core.NewGraph(core.DefaultGraphSize)
	gf.BuildForwardExpand(loss)
	gb, err := core.BuildBackward(x, gf)
	if err != nil {
		return x.Sum(loss), ins // the error is on x: the case is reported, not run
	}
	s1 := x.OptStepAdamW(w1, gb.Grad(w1), m1, v1, hp)
	s2 := x.OptStepAdamW(w2, gb.Grad(w2), m2, v2, hp)
	// One output that needs the loss and both steps: the loss plus the sums of the (unchanged)
	// weights after their steps.
	out := x.Add(loss, x.Add(x.Sum(s1), x.Sum(s2))).SetName("loss+steps")
	return out, ins
}
