package opt

import (
	"context"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
)

// One scheduler runs training and evaluation: its compute buffers, sized by the training graph,
// do not grow when the evaluation graph (and, with Accumulate, the gradient-only graph) runs, and
// switching plans once per switch.
func TestOneScheduler(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	w1 := c.NewTensor2D(core.TypeF32, 4, 32).SetName("w1")
	w2 := c.NewTensor2D(core.TypeF32, 32, 3).SetName("w2")
	buf, err := alloc.AllocCtxTensors(c, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	buf.SetUsage(core.BufferUsageWeights)
	for _, w := range []*core.Tensor{w1, w2} {
		v := make([]float32, w.NElements())
		for i := range v {
			v[i] = float32(i%7)*0.05 - 0.15
		}
		if err := core.SetFloat32s(w, v); err != nil {
			t.Fatal(err)
		}
	}
	model := Model{NIn: 4, NOut: 3, Params: []*core.Tensor{w1, w2}, Build: func(ctx *core.Context, x *core.Tensor) *core.Tensor {
		return ctx.MulMat(w2, ctx.Relu(ctx.MulMat(w1, x)))
	}}
	var data, labels []float32
	for i := range 40 {
		data = append(data, float32(i%5), float32(i%3), 1, float32(i%2))
		l := []float32{0, 0, 0}
		l[i%3] = 1
		labels = append(labels, l...)
	}
	for _, acc := range []int{1, 2} {
		tr, err := New(Config{Backends: []core.Backend{be}, Model: model, BatchSize: 8, Accumulate: acc, Loss: LossCrossEntropy})
		if err != nil {
			t.Fatal(err)
		}
		size := tr.s.BufferSize(0)
		if size <= 0 {
			t.Fatalf("compute buffer of %d bytes", size)
		}
		ds, err := NewDataset(data, 4, labels, 3)
		if err != nil {
			t.Fatal(err)
		}
		res, err := tr.Fit(context.Background(), ds, FitOptions{Epochs: 3, ValSplit: 0.3})
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.s.BufferSize(0); got != size {
			t.Errorf("Accumulate %d: compute buffer %d bytes after training and evaluation, %d after New", acc, got, size)
		}
		if n := tr.Replans(); n != 0 {
			t.Errorf("Accumulate %d: %d re-plans", acc, n)
		}
		// 28 training samples: 3 batches of 8 (Accumulate 2: one logical batch of 16, the third batch waits) per epoch.
		if want := 3 * (3 / acc); tr.Steps() != want {
			t.Errorf("Accumulate %d: %d steps, want %d", acc, tr.Steps(), want)
		}
		if math.IsNaN(res[2].ValLoss.Value) || math.IsNaN(res[2].ValAcc.Value) {
			t.Errorf("Accumulate %d: validation %v / %v", acc, res[2].ValLoss, res[2].ValAcc)
		}
		tr.Close()
	}
}
