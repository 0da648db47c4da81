package opt_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

func spiralFit(t *testing.T, be1, be2, cpuBe core.Backend, epochs int) ([]opt.EpochResult, *opt.Trainer) {
	t.Helper()
	m := newMLP(t, 32, be1, be2, 3)
	backends := []core.Backend{cpuBe}
	if be1 != cpuBe {
		backends = []core.Backend{be1, cpuBe}
	}
	h := opt.DefaultHyper()
	h.Alpha = 0.02
	tr, err := opt.New(opt.Config{Backends: backends, Model: m.model(), BatchSize: 30, Loss: opt.LossCrossEntropy, Hyper: h})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	data, labels := spiral(100, 1)
	ds, err := opt.NewDataset(data, 2, labels, 3)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: epochs, ValSplit: 0.1, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	return res, tr
}

// A 2-layer MLP learns the 3-class spiral to ≥ 95 % training accuracy on the CPU, planning each of
// its two graphs once.
func TestSpiralCPU(t *testing.T) {
	be := newCPU(t)
	res, tr := spiralFit(t, be, be, be, 150)
	last := res[len(res)-1]
	t.Logf("epoch %d: train loss %v acc %v, val loss %v acc %v", last.Epoch, last.TrainLoss, last.TrainAcc, last.ValLoss, last.ValAcc)
	if last.TrainAcc.Value < 0.95 {
		t.Errorf("train accuracy %.3f < 0.95", last.TrainAcc.Value)
	}
	if res[0].TrainLoss.Value <= last.TrainLoss.Value {
		t.Errorf("loss did not fall: %v → %v", res[0].TrainLoss, last.TrainLoss)
	}
	if n := tr.Replans(); n != 0 {
		t.Errorf("%d re-plans after the first step, want 0", n)
	}
	if tr.Steps() != 150*9 {
		t.Errorf("%d steps, want %d", tr.Steps(), 150*9)
	}
}

// The same training on Vulkan alone and split (first layer on Vulkan, second on the CPU) gives the
// CPU's loss curve within ggml's limits.
func TestSpiralDevicesMatchCPU(t *testing.T) {
	vk := newVulkan(t)
	cpuBe := newCPU(t)
	const epochs = 3
	ref, _ := spiralFit(t, cpuBe, cpuBe, cpuBe, epochs)
	for _, c := range []struct {
		name     string
		be1, be2 core.Backend
	}{{"vulkan", vk, vk}, {"vulkan+cpu", vk, cpuBe}} {
		got, tr := spiralFit(t, c.be1, c.be2, cpuBe, epochs)
		for e := range ref {
			a, b := got[e].TrainLoss.Value, ref[e].TrainLoss.Value
			d := math.Abs(a-b) / math.Max(math.Abs(b), 1e-6)
			t.Logf("%s epoch %d: train loss %.7g, CPU %.7g (relative difference %.2g)", c.name, e+1, a, b, d)
			if !(d <= 1e-4) {
				t.Errorf("%s epoch %d: train loss %v, CPU %v (relative difference %.2g > 1e-4)", c.name, e+1, a, b, d)
			}
		}
		if n := tr.Replans(); n != 0 {
			t.Errorf("%s: %d re-plans", c.name, n)
		}
		if c.be2 != c.be1 && tr.Splits() < 2 {
			t.Errorf("%s: %d splits, want the graph split across the devices", c.name, tr.Splits())
		}
		t.Logf("%s: %d splits", c.name, tr.Splits())
	}
}

// Bad input gets errors naming the problem.
func TestBadInput(t *testing.T) {
	be := newCPU(t)
	m := newMLP(t, 4, be, be, 1)
	cfg := opt.Config{Backends: []core.Backend{be}, Model: m.model(), BatchSize: 8, Loss: opt.LossCrossEntropy}
	cases := []struct {
		name string
		err  func() error
		want string
	}{
		{"data and labels of different counts", func() error { _, err := opt.NewDataset(make([]float32, 20), 2, make([]float32, 9), 3); return err }, "10 samples but 3 labels"},
		{"labels without a count", func() error { _, err := opt.NewDataset(make([]float32, 20), 2, make([]int32, 9), 0); return err }, "0 labels per sample"},
		{"token ids for a float model", func() error {
			tr, err := opt.New(cfg)
			if err != nil {
				return err
			}
			defer tr.Close()
			ds, _ := opt.NewDataset(make([]int32, 16), 2, make([]float32, 24), 3)
			_, err = tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: 1})
			return err
		}, "the dataset holds int32 token ids, the model takes f32 inputs"},
		{"class id out of range", func() error {
			tr, err := opt.New(cfg)
			if err != nil {
				return err
			}
			defer tr.Close()
			ds, _ := opt.NewDataset(make([]float32, 16), 2, []int32{0, 1, 2, 3, 0, 1, 2, 0}, 1)
			_, err = tr.Step(ds, 0)
			return err
		}, "class id 3 outside [0, 3)"},
		{"negative Accumulate", func() error { c := cfg; c.Accumulate = -1; _, err := opt.New(c); return err }, "Accumulate -1"},
		{"ragged data", func() error { _, err := opt.NewDataset(make([]float32, 21), 2, make([]float32, 30), 3); return err }, "not a whole number"},
		{"no backends", func() error { c := cfg; c.Backends = nil; _, err := opt.New(c); return err }, "no backends"},
		{"zero batch", func() error { c := cfg; c.BatchSize = 0; _, err := opt.New(c); return err }, "batch size 0"},
		{"output not [NOut, batch]", func() error {
			c := cfg
			c.Model.Build = func(ctx *core.Context, x *core.Tensor) *core.Tensor { return ctx.Sum(x) }
			_, err := opt.New(c)
			return err
		}, "want f32 [3, 8]"},
		{"unplaced parameter", func() error {
			c := cfg
			c.Model.Params = append([]*core.Tensor{}, c.Model.Params...)
			c.Model.Params[0] = core.NewContext(core.ContextParams{NoAlloc: true}).NewTensor2D(core.TypeF32, 2, 4)
			_, err := opt.New(c)
			return err
		}, "has no memory"},
		{"dataset shape vs model", func() error {
			tr, err := opt.New(cfg)
			if err != nil {
				return err
			}
			defer tr.Close()
			ds, _ := opt.NewDataset(make([]float32, 40), 4, make([]float32, 30), 3)
			_, err = tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: 1})
			return err
		}, "dataset samples have 4 values, the model takes 2"},
		{"batch larger than the dataset", func() error {
			tr, err := opt.New(cfg)
			if err != nil {
				return err
			}
			defer tr.Close()
			ds, _ := opt.NewDataset(make([]float32, 8), 2, make([]float32, 12), 3)
			_, err = tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: 1})
			return err
		}, "fewer than one batch of 8×1"},
		{"cancelled", func() error {
			tr, err := opt.New(cfg)
			if err != nil {
				return err
			}
			defer tr.Close()
			data, labels := spiral(20, 1)
			ds, _ := opt.NewDataset(data, 2, labels, 3)
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = tr.Fit(ctx, ds, opt.FitOptions{Epochs: 1})
			if !errors.Is(err, context.Canceled) {
				return errors.New("not context.Canceled: " + err.Error())
			}
			return err
		}, "stopped"},
	}
	for _, c := range cases {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}
