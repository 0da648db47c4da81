package opt_test

import (
	"context"
	"fmt"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// Fitting y = 2·x₀ − x₁ with a linear model and a mean-squared-error loss: the weights approach
// (2, −1).
func ExampleTrainer_Fit() {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer be.Close()

	// The parameter: a 2→1 weight row in the CPU's memory, marked as weights.
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := wctx.NewTensor2D(core.TypeF32, 2, 1).SetName("w")
	buf, err := alloc.AllocCtxTensors(wctx, be)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer buf.Free()
	buf.SetUsage(core.BufferUsageWeights)
	_ = core.SetFloat32s(w, []float32{0, 0})

	var data, labels []float32
	for i := 0; i < 64; i++ {
		x0, x1 := float32(i%8)/4-1, float32(i/8)/4-1
		data = append(data, x0, x1)
		labels = append(labels, 2*x0-x1)
	}
	ds, _ := opt.NewDataset(data, 2, labels, 1)

	h := opt.DefaultHyper()
	h.Alpha = 0.05
	tr, err := opt.New(opt.Config{
		Backends:  []core.Backend{be},
		Model:     opt.Model{NIn: 2, NOut: 1, Params: []*core.Tensor{w}, Build: func(c *core.Context, x *core.Tensor) *core.Tensor { return c.MulMat(w, x) }},
		BatchSize: 16,
		Loss:      opt.LossMSE,
		Hyper:     h,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tr.Close()
	res, err := tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: 200, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	got, _ := core.GetFloat32s(w)
	fmt.Printf("w = (%.2f, %.2f), final loss < 1e-4: %v, re-plans: %d\n", got[0], got[1], res[len(res)-1].TrainLoss.Value < 1e-4, tr.Replans())
	// Output: w = (2.00, -1.00), final loss < 1e-4: true, re-plans: 0
}
