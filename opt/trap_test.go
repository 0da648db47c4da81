package opt_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// The README's settings (batch 32, 10 % validation) on 300 samples hold out 30: fewer than one
// batch. The validation metrics must still be real numbers — the loss and accuracy of those 30
// samples, as the host computes them from Predict's outputs.
func TestValidationSmallerThanABatch(t *testing.T) {
	be := newCPU(t)
	m := newMLP(t, 16, be, be, 3)
	tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: m.model(), BatchSize: 32, Loss: opt.LossCrossEntropy})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	data, labels := spiral(100, 4)
	ds, err := opt.NewDataset(data, 2, labels, 3)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: 2, ValSplit: 0.1, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	last := res[len(res)-1]
	if math.IsNaN(last.ValLoss.Value) || math.IsNaN(last.ValAcc.Value) {
		t.Fatalf("validation of 30 samples with batch 32: loss %v, accuracy %v; want numbers", last.ValLoss, last.ValAcc)
	}
	// Fit shuffled ds in place and split it: the same split again is the validation part.
	_, val, err := ds.Split(0.1)
	if err != nil {
		t.Fatal(err)
	}
	if val.Len() != 30 {
		t.Fatalf("validation part of %d samples, want 30", val.Len())
	}
	out, err := tr.Predict(context.Background(), val)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 30*3 {
		t.Fatalf("Predict gave %d values for 30 samples of 3 outputs", len(out))
	}
	want, right := hostCrossEntropy(t, tr, val, data, labels, out)
	if d := math.Abs(last.ValLoss.Value - want); d > 1e-5*math.Max(1, want) {
		t.Errorf("validation loss %.7g, host cross-entropy over the 30 samples %.7g", last.ValLoss.Value, want)
	}
	if got := last.ValAcc.Value; got != float64(right)/30 {
		t.Errorf("validation accuracy %v, host count %d/30", got, right)
	}
	loss, acc, err := tr.Evaluate(context.Background(), val)
	if err != nil {
		t.Fatal(err)
	}
	if loss.Value != last.ValLoss.Value || acc.Value != last.ValAcc.Value {
		t.Errorf("Evaluate gives %v / %v, Fit's last epoch %v / %v", loss, acc, last.ValLoss, last.ValAcc)
	}
}

// hostCrossEntropy is the mean cross-entropy (float64) and the count of argmax matches of out (the
// outputs of val's samples) against their labels. val's order is not exported: each sample is
// found by its outputs among those of every sample in the original order (the spiral's points
// are distinct, and so are their outputs).
func hostCrossEntropy(t *testing.T, tr *opt.Trainer, val *opt.Dataset, data, labels, out []float32) (float64, int) {
	t.Helper()
	n := len(data) / 2
	all, err := opt.NewDataset[float32, float32](data, 2, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	outAll, err := tr.Predict(context.Background(), all)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	right := 0
	for s := 0; s < val.Len(); s++ {
		row := out[3*s : 3*s+3]
		idx := -1
		for j := 0; j < n; j++ {
			if outAll[3*j] == row[0] && outAll[3*j+1] == row[1] && outAll[3*j+2] == row[2] {
				idx = j
				break
			}
		}
		if idx < 0 {
			t.Fatalf("validation sample %d matches no sample", s)
		}
		lab := labels[3*idx : 3*idx+3]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, float64(v))
		}
		var z float64
		for _, v := range row {
			z += math.Exp(float64(v) - mx)
		}
		for k := range row {
			sum -= float64(lab[k]) * (float64(row[k]) - mx - math.Log(z))
		}
		if argmax(row) == argmax(lab) {
			right++
		}
	}
	return sum / float64(val.Len()), right
}

func argmax(v []float32) int {
	best := 0
	for i := range v {
		if v[i] > v[best] {
			best = i
		}
	}
	return best
}

// Hyper{Alpha: 0.01} leaves β2 and ε at 0: with ε = 0 a zero gradient is 0/0 and the weight turns
// NaN in one step. New rejects it, naming the field; a Schedule that returns such values fails the
// step, and the weights stay finite.
func TestHyperValidated(t *testing.T) {
	be := newCPU(t)
	model, w := linear(t, be, []float32{0.5, -0.5})
	cfg := opt.Config{Backends: []core.Backend{be}, Model: model, BatchSize: 2, Loss: opt.LossSum}
	for _, c := range []struct {
		h    opt.Hyper
		o    opt.Optimizer
		want string
	}{
		{opt.Hyper{Alpha: 0.01}, opt.AdamW, "Eps = 0"},
		{opt.Hyper{Alpha: 0.01, Beta1: 0.9, Beta2: 1, Eps: 1e-8}, opt.AdamW, "Beta2 = 1"},
		{opt.Hyper{Alpha: 0.01, Beta1: -0.1, Beta2: 0.99, Eps: 1e-8}, opt.AdamW, "Beta1 = -0.1"},
		{opt.Hyper{Alpha: float32(math.NaN())}, opt.SGD, "Alpha = NaN"},
		{opt.Hyper{Alpha: 0.1, WD: -1}, opt.SGD, "WD = -1"},
	} {
		c2 := cfg
		c2.Hyper, c2.Optimizer = c.h, c.o
		tr, err := opt.New(c2)
		if err == nil {
			// Today's behaviour: show what the step does with it.
			ds, _ := opt.NewDataset[float32, float32]([]float32{0, 0, 0, 0}, 2, nil, 0)
			_, _ = tr.Step(ds, 0)
			got, _ := core.GetFloat32s(w)
			tr.Close()
			t.Errorf("%+v accepted; one step made w = %v", c.h, got)
			continue
		}
		if !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "DefaultHyper") {
			t.Errorf("%+v: %v, want an error naming %q and DefaultHyper", c.h, err, c.want)
		}
	}
	// SGD reads only α and wd: β and ε may stay 0.
	c2 := cfg
	c2.Hyper, c2.Optimizer = opt.Hyper{Alpha: 0.01}, opt.SGD
	tr, err := opt.New(c2)
	if err != nil {
		t.Fatalf("SGD with Hyper{Alpha: 0.01}: %v", err)
	}
	tr.Close()

	c2 = cfg
	c2.Schedule = func(step int, h opt.Hyper) opt.Hyper { h.Eps = 0; return h }
	tr, err = opt.New(c2)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ds, _ := opt.NewDataset[float32, float32]([]float32{0, 0, 0, 0}, 2, nil, 0)
	if _, err := tr.Step(ds, 0); err == nil || !strings.Contains(err.Error(), "Eps = 0") || !strings.Contains(err.Error(), "step 1") {
		t.Errorf("a schedule returning ε = 0: %v", err)
	}
	got, _ := core.GetFloat32s(w)
	if got[0] != 0.5 || got[1] != -0.5 || tr.Steps() != 0 {
		t.Errorf("the refused step changed w to %v (steps %d)", got, tr.Steps())
	}
}
