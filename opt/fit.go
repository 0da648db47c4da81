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
// √(acc·(1−acc)/(n−1)) for the accuracy over n rows. Accuracy compares the argmax of each output
// row with the argmax of its label row, counted on the device; it is NaN when NOut is 1 or the loss
// reads no labels. A metric over no data is NaN.
type EpochResult struct {
	Epoch               int
	TrainLoss, TrainAcc Metric
	ValLoss, ValAcc     Metric
}

// Fit trains for opts.Epochs over ds and returns every epoch's result. ds is shuffled with
// opts.Seed and split: the first part trains, in whole batches (as ggml-opt: the samples past the
// last whole logical batch of Accumulate·BatchSize wait for a later epoch's shuffle); the rest
// (opts.ValSplit) is evaluated after each epoch, every sample of it, the last batch partial. A nil
// ds, a dataset that does not match the model, a training part smaller than one logical batch, or
// a done ctx (checked before each batch; its error is wrapped) are errors. A nil ctx means
// context.Background().
func (t *Trainer) Fit(ctx context.Context, ds *Dataset, opts FitOptions) ([]EpochResult, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := t.check(ds, t.cfg.Loss.labelled()); err != nil {
		return nil, fmt.Errorf("%w (Fit)", err)
	}
	if opts.Epochs <= 0 {
		return nil, fmt.Errorf("tandem: opt: Fit: %d epochs", opts.Epochs)
	}
	ds.Shuffle(opts.Seed)
	train, val, err := ds.Split(opts.ValSplit)
	if err != nil {
		return nil, err
	}
	b, k := t.cfg.BatchSize, t.k
	nb := train.Len() / b / k * k
	if nb == 0 {
		return nil, fmt.Errorf("tandem: opt: Fit: the training part holds %d samples, fewer than one batch of %d×%d (BatchSize×Accumulate)",
			train.Len(), b, k)
	}
	var out []EpochResult
	for e := 1; e <= opts.Epochs; e++ {
		train.Shuffle(opts.Seed + uint64(e))
		r := EpochResult{Epoch: e}
		var st stats
		for i := range nb {
			if err := ctx.Err(); err != nil {
				return out, fmt.Errorf("tandem: opt: stopped: %w", err)
			}
			loss, right, err := t.trainBatch(train, i)
			if err != nil {
				return out, err
			}
			st.add(loss, right, b, t.rows)
		}
		r.TrainLoss, r.TrainAcc = st.metrics()
		if r.ValLoss, r.ValAcc, err = t.Evaluate(ctx, val); err != nil {
			return out, err
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

// Evaluate computes the loss and accuracy of the model over every sample of ds (batches of
// BatchSize, the last one partial) without updating anything: the loss is the mean over samples
// (LossSum: of the per-batch sums), as in EpochResult. An empty ds gives NaN metrics; a nil ds, or
// one that does not match the model, is an error. A done ctx (checked before each batch) is an
// error wrapping ctx's; a nil ctx means context.Background().
func (t *Trainer) Evaluate(ctx context.Context, ds *Dataset) (loss, acc Metric, err error) {
	nan := Metric{math.NaN(), math.NaN()}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := t.check(ds, t.cfg.Loss.labelled()); err != nil {
		return nan, nan, err
	}
	var st stats
	b := t.cfg.BatchSize
	for start := 0; start < ds.Len(); start += b {
		if err := ctx.Err(); err != nil {
			return nan, nan, fmt.Errorf("tandem: opt: stopped: %w", err)
		}
		n := min(b, ds.Len()-start)
		l, right, err := t.evalBatch(ds, start, n)
		if err != nil {
			return nan, nan, err
		}
		st.add(l, right, n, t.rows)
	}
	loss, acc = st.metrics()
	return loss, acc, nil
}

// Predict returns the model's outputs for every sample of ds, in its current order: NOut values per
// row, Rows rows per sample (batches of BatchSize, the last one partial; labels are not read, a
// dataset without them will do). A nil ds, or one that does not match the model, is an error. A
// done ctx (checked before each batch) is an error wrapping ctx's; a nil ctx means
// context.Background().
func (t *Trainer) Predict(ctx context.Context, ds *Dataset) ([]float32, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := t.check(ds, false); err != nil {
		return nil, err
	}
	per := int(t.rows) * t.cfg.Model.NOut
	out := make([]float32, 0, ds.Len()*per)
	b := t.cfg.BatchSize
	noLabels := *ds
	noLabels.nLabels, noLabels.f32Labels, noLabels.i32Labels = 0, nil, nil
	for start := 0; start < ds.Len(); start += b {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("tandem: opt: stopped: %w", err)
		}
		n := min(b, ds.Len()-start)
		if _, _, err := t.evalBatch(&noLabels, start, n); err != nil {
			return nil, err
		}
		if err := t.getF32(t.out, t.outVals); err != nil {
			return nil, err
		}
		out = append(out, t.outVals[:n*per]...)
	}
	return out, nil
}

// stats gathers per-batch losses (weighted by their samples) and the rows classified right.
type stats struct {
	sum, sum2   float64 // Σ n·loss, Σ n·loss²
	samples, nb int
	right, rows int
	noAccuracy  bool
}

func (s *stats) add(loss float64, right, n int, rowsPer int64) {
	s.sum += float64(n) * loss
	s.sum2 += float64(n) * loss * loss
	s.samples += n
	s.nb++
	if right < 0 {
		s.noAccuracy = true
	}
	s.right += right
	s.rows += n * int(rowsPer)
}

// metrics: the sample-weighted mean loss with the standard error of the batch losses (ggml-opt's
// formula when the batches are equal), and the accuracy with its binomial error.
func (s *stats) metrics() (loss, acc Metric) {
	loss, acc = Metric{math.NaN(), math.NaN()}, Metric{math.NaN(), math.NaN()}
	if s.samples == 0 {
		return loss, acc
	}
	mean := s.sum / float64(s.samples)
	loss.Value = mean
	if s.nb > 1 {
		variance := s.sum2/float64(s.samples) - mean*mean
		loss.Unc = math.Sqrt(math.Max(variance, 0) / float64(s.nb-1))
	}
	if !s.noAccuracy && s.rows > 0 {
		a := float64(s.right) / float64(s.rows)
		acc.Value = a
		if s.rows > 1 {
			acc.Unc = math.Sqrt(a * (1 - a) / float64(s.rows-1))
		}
	}
	return loss, acc
}
