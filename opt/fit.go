package opt

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
)

// FitOptions configure Fit.
type FitOptions struct {
	Epochs   int
	ValSplit float64 // fraction of the dataset held out for validation, [0, 1)
	Seed     uint64  // shuffles the dataset before the split and every epoch
	Progress io.Writer
	Logger   *slog.Logger
}

// Metric is a mean with its standard error.
type Metric struct {
	Value, Unc float64
}

func (m Metric) String() string { return fmt.Sprintf("%.5g ± %.2g", m.Value, m.Unc) }

// EpochResult is one epoch's loss and accuracy on the training and validation parts, with their
// uncertainties as ggml-opt reports them: the standard error of the per-batch losses, and
// √(acc·(1−acc)/(n−1)) for the accuracy over n samples. Accuracy compares the argmax of each
// sample's outputs with the argmax of its label (NaN when NOut is 1).
type EpochResult struct {
	Epoch               int
	TrainLoss, TrainAcc Metric
	ValLoss, ValAcc     Metric
}

// Fit trains for opts.Epochs over ds (its validation part evaluated after each epoch) and
// returns every epoch's result. A nil ds, a dataset whose samples or labels do not match the model, a batch
// size the training part cannot fill, or a done ctx (after the current batch) are errors; ctx's
// error is wrapped. A nil ctx means context.Background().
func (t *Trainer) Fit(ctx context.Context, ds *Dataset, opts FitOptions) ([]EpochResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	m := t.cfg.Model
	switch {
	case ds == nil:
		return nil, fmt.Errorf("tandem: opt: Fit: nil dataset")
	case ds.nFeatures != m.NIn || ds.nLabel != m.NOut:
		return nil, fmt.Errorf("tandem: opt: Fit: dataset samples have %d features and %d labels, the model takes %d and gives %d",
			ds.nFeatures, ds.nLabel, m.NIn, m.NOut)
	case opts.Epochs <= 0:
		return nil, fmt.Errorf("tandem: opt: Fit: %d epochs", opts.Epochs)
	}
	ds.Shuffle(opts.Seed)
	train, val, err := ds.Split(opts.ValSplit)
	if err != nil {
		return nil, err
	}
	b := t.cfg.BatchSize
	if train.Batches(b) == 0 {
		return nil, fmt.Errorf("tandem: opt: Fit: %w (batch size %d, %d training samples)", errBatch, b, train.Len())
	}
	data := make([]float32, b*m.NIn)
	labels := make([]float32, b*m.NOut)
	var out []EpochResult
	for e := 1; e <= opts.Epochs; e++ {
		train.Shuffle(opts.Seed + uint64(e))
		r := EpochResult{Epoch: e}
		var err error
		if r.TrainLoss, r.TrainAcc, err = t.run(ctx, train, true, data, labels); err != nil {
			return out, err
		}
		if val.Batches(b) > 0 {
			if r.ValLoss, r.ValAcc, err = t.run(ctx, val, false, data, labels); err != nil {
				return out, err
			}
		} else {
			r.ValLoss, r.ValAcc = Metric{math.NaN(), math.NaN()}, Metric{math.NaN(), math.NaN()}
		}
		out = append(out, r)
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, "epoch %d: train loss %v acc %v; val loss %v acc %v\n", e, r.TrainLoss, r.TrainAcc, r.ValLoss, r.ValAcc)
		}
		if opts.Logger != nil {
			opts.Logger.Info("tandem opt epoch", "epoch", e, "train_loss", r.TrainLoss.Value, "train_loss_unc", r.TrainLoss.Unc,
				"train_acc", r.TrainAcc.Value, "val_loss", r.ValLoss.Value, "val_acc", r.ValAcc.Value)
		}
	}
	return out, nil
}

// run passes over every whole batch of d (training steps or evaluations).
func (t *Trainer) run(ctx context.Context, d *Dataset, train bool, data, labels []float32) (loss, acc Metric, err error) {
	b, nOut := t.cfg.BatchSize, t.cfg.Model.NOut
	var sum, sum2 float64
	correct, n := 0, 0
	nb := d.Batches(b)
	for i := 0; i < nb; i++ {
		if err := ctx.Err(); err != nil {
			return loss, acc, fmt.Errorf("tandem: opt: stopped: %w", err)
		}
		if err := d.Batch(i, b, data, labels); err != nil {
			return loss, acc, err
		}
		var l float32
		if train {
			l, err = t.Step(data, labels)
		} else {
			l, err = t.Eval(data, labels)
		}
		if err != nil {
			return loss, acc, err
		}
		sum += float64(l)
		sum2 += float64(l) * float64(l)
		outs := t.Outputs(train)
		for k := 0; k < b; k++ {
			if argmax(outs[k*nOut:(k+1)*nOut]) == argmax(labels[k*nOut:(k+1)*nOut]) {
				correct++
			}
			n++
		}
	}
	mean := sum / float64(nb)
	loss = Metric{Value: mean, Unc: math.NaN()}
	if nb > 1 {
		variance := (sum2/float64(nb) - mean*mean) * float64(nb) / float64(nb-1)
		loss.Unc = math.Sqrt(math.Max(variance, 0) / float64(nb))
	}
	acc = Metric{Value: math.NaN(), Unc: math.NaN()}
	if nOut > 1 {
		a := float64(correct) / float64(n)
		acc.Value = a
		if n > 1 {
			acc.Unc = math.Sqrt(a * (1 - a) / float64(n-1))
		}
	}
	return loss, acc, nil
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
