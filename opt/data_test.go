package opt_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// Two batches of 2 accumulated before each step train like batches of 4: the same weights after
// three logical steps, for AdamW and SGD, and one optimizer step per two batches.
func TestAccumulate(t *testing.T) {
	be := newCPU(t)
	var data, labels []float32
	for i := range 12 {
		x0, x1 := float32(i%4)/2-0.7, float32(i/4)/3-0.4
		data = append(data, x0, x1)
		labels = append(labels, 2*x0-x1+0.3)
	}
	ds, err := opt.NewDataset(data, 2, labels, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []opt.Optimizer{opt.AdamW, opt.SGD} {
		run := func(batch, acc int) []float32 {
			model, w := linear(t, be, []float32{0.1, 0.2})
			h := opt.DefaultHyper()
			h.Alpha = 0.05
			tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: model, BatchSize: batch, Accumulate: acc,
				Loss: opt.LossMSE, Optimizer: o, Hyper: h})
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			for i := range 12 / batch {
				if _, err := tr.Step(ds, i); err != nil {
					t.Fatal(err)
				}
			}
			if want := 12 / batch / max(acc, 1); tr.Steps() != want {
				t.Errorf("optimizer %d, batch %d × %d: %d steps, want %d", o, batch, acc, tr.Steps(), want)
			}
			if n := tr.Replans(); n != 0 {
				t.Errorf("optimizer %d, batch %d × %d: %d re-plans", o, batch, acc, n)
			}
			got, err := core.GetFloat32s(w)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		whole, accumulated := run(4, 1), run(2, 2)
		if whole[0] == 0.1 && whole[1] == 0.2 {
			t.Fatalf("optimizer %d: the weights did not move", o)
		}
		for k := range whole {
			if d := math.Abs(float64(whole[k] - accumulated[k])); d > 1e-6 {
				t.Errorf("optimizer %d: w[%d] = %v with batches of 4, %v with 2 × 2 accumulated", o, k, whole[k], accumulated[k])
			}
		}
	}
}

// A language model's data: int32 token windows and int32 next-token ids, a row of logits per
// position. A one-layer model (embedding rows → output projection) learns the successor function of
// a cyclic sequence; Predict gives a row per position; the accuracy counts positions.
func TestTokenDataset(t *testing.T) {
	be := newCPU(t)
	const vocab, dim, window, n = 8, 16, 4, 64
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	emb := c.NewTensor2D(core.TypeF32, dim, vocab).SetName("tok_embd")
	out := c.NewTensor2D(core.TypeF32, dim, vocab).SetName("output")
	buf, err := alloc.AllocCtxTensors(c, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	buf.SetUsage(core.BufferUsageWeights)
	for i, w := range []*core.Tensor{emb, out} {
		v := make([]float32, w.NElements())
		for k := range v {
			v[k] = float32(math.Sin(float64(k*7+i*3))) * 0.3
		}
		if err := core.SetFloat32s(w, v); err != nil {
			t.Fatal(err)
		}
	}
	model := opt.Model{NIn: window, NOut: vocab, Rows: window, Input: core.TypeI32, Params: []*core.Tensor{emb, out},
		Build: func(ctx *core.Context, x *core.Tensor) *core.Tensor {
			h := ctx.GetRows(emb, ctx.Reshape1D(x, x.NElements())) // [dim, window·batch]
			return ctx.MulMat(out, h)                              // [vocab, window·batch]
		}}
	h := opt.DefaultHyper()
	h.Alpha = 0.05
	tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: model, BatchSize: 8, Loss: opt.LossCrossEntropy, Hyper: h})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	var tokens, next []int32
	for s := range n {
		for p := range window {
			tok := int32((s*3 + p*5) % vocab)
			tokens = append(tokens, tok)
			next = append(next, (tok*3+1)%vocab)
		}
	}
	ds, err := opt.NewDataset(tokens, window, next, window)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Fit(context.Background(), ds, opt.FitOptions{Epochs: 60, ValSplit: 0.2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	first, last := res[0], res[len(res)-1]
	t.Logf("epoch 1: %v / %v; epoch %d: train %v / %v, val %v / %v", first.TrainLoss, first.TrainAcc, last.Epoch,
		last.TrainLoss, last.TrainAcc, last.ValLoss, last.ValAcc)
	if !(last.ValAcc.Value == 1) || !(last.TrainLoss.Value < first.TrainLoss.Value/4) {
		t.Errorf("the successor function was not learned: val accuracy %v, loss %v → %v", last.ValAcc, first.TrainLoss, last.TrainLoss)
	}
	// 5 windows (not a whole batch): 5·window rows of vocab logits; each row's argmax is the
	// successor of its token.
	few, err := opt.NewDataset[int32, int32](tokens[:5*window], window, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	logits, err := tr.Predict(context.Background(), few)
	if err != nil {
		t.Fatal(err)
	}
	if len(logits) != 5*window*vocab {
		t.Fatalf("Predict: %d values, want %d", len(logits), 5*window*vocab)
	}
	for r := range 5 * window {
		if got, want := argmax(logits[r*vocab:(r+1)*vocab]), int(next[r]); got != want {
			t.Errorf("row %d (token %d): predicted %d, want %d", r, tokens[r], got, want)
		}
	}
}

// Predict takes any number of samples — fewer than a batch, a batch and a half — and gives w·x for
// each; Save to a writer and Load from a plain reader carry the trainer's state.
func TestPredictAndStreams(t *testing.T) {
	be := newCPU(t)
	model, w := linear(t, be, []float32{1.5, -2})
	tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: model, BatchSize: 4, Loss: opt.LossMSE})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	for _, n := range []int{1, 3, 4, 6, 9} {
		x := make([]float32, 2*n)
		for i := range x {
			x[i] = float32(i)*0.25 - 1
		}
		ds, err := opt.NewDataset[float32, float32](x, 2, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		y, err := tr.Predict(context.Background(), ds)
		if err != nil {
			t.Fatal(err)
		}
		if len(y) != n {
			t.Fatalf("%d samples: %d outputs", n, len(y))
		}
		for i := range n {
			if want := 1.5*x[2*i] - 2*x[2*i+1]; y[i] != want {
				t.Errorf("%d samples: y[%d] = %v, want %v", n, i, y[i], want)
			}
		}
	}

	train, err := opt.NewDataset([]float32{1, 0, 0, 1, 1, 1, -1, 0}, 2, []float32{1, 2, 3, 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(train, 0); err != nil {
		t.Fatal(err)
	}
	var ckpt bytes.Buffer
	if err := tr.Save(&ckpt); err != nil {
		t.Fatal(err)
	}
	saved, _ := core.GetFloat32s(w)
	if _, err := tr.Step(train, 0); err != nil {
		t.Fatal(err)
	}
	if err := tr.Load(context.Background(), io.MultiReader(bytes.NewReader(ckpt.Bytes()))); err != nil { // not an io.ReaderAt
		t.Fatal(err)
	}
	got, _ := core.GetFloat32s(w)
	if got[0] != saved[0] || got[1] != saved[1] || tr.Steps() != 1 {
		t.Errorf("after Load: w = %v, steps %d; saved w = %v after 1 step", got, tr.Steps(), saved)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := tr.Load(ctx, bytes.NewReader(ckpt.Bytes())); err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v", err)
	}
}
