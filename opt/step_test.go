package opt_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// linear is out = w·x with w [2, 1] on the CPU and loss Σ out, so ∂loss/∂w = Σ_batch x.
func linear(t *testing.T, be core.Backend, w0 []float32) (opt.Model, *core.Tensor) {
	t.Helper()
	c := core.NewContext(core.ContextParams{NoAlloc: true})
	w := c.NewTensor2D(core.TypeF32, 2, 1).SetName("w")
	buf, err := alloc.AllocCtxTensors(c, be)
	if err != nil {
		t.Fatal(err)
	}
	buf.SetUsage(core.BufferUsageWeights)
	t.Cleanup(func() { buf.Free() })
	if err := core.SetFloat32s(w, w0); err != nil {
		t.Fatal(err)
	}
	return opt.Model{NIn: 2, NOut: 1, Params: []*core.Tensor{w},
		Build: func(ctx *core.Context, x *core.Tensor) *core.Tensor { return ctx.MulMat(w, x) }}, w
}

// AdamW and SGD steps through opt equal the formulas evaluated in float64 (decoupled weight
// decay, bias corrections from the step count), over three steps with a schedule halving α.
func TestStepFormulas(t *testing.T) {
	be := newCPU(t)
	batches := [][]float32{{1, 2, 3, -1}, {0.5, -2, 1, 1}, {-1, 0.25, 2, 2}} // two samples of 2 each
	for _, o := range []opt.Optimizer{opt.AdamW, opt.SGD} {
		w0 := []float32{0.3, -0.7}
		model, w := linear(t, be, w0)
		h := opt.Hyper{Alpha: 0.1, Beta1: 0.8, Beta2: 0.95, Eps: 1e-6, WD: 0.05}
		sched := func(step int, h opt.Hyper) opt.Hyper { h.Alpha /= float32(step); return h }
		tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: model, BatchSize: 2, Loss: opt.LossSum,
			Optimizer: o, Hyper: h, Schedule: sched})
		if err != nil {
			t.Fatal(err)
		}
		want := []float64{float64(w0[0]), float64(w0[1])}
		m, v := []float64{0, 0}, []float64{0, 0}
		for s, b := range batches {
			ds, err := opt.NewDataset[float32, float32](b, 2, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tr.Step(ds, 0); err != nil {
				t.Fatal(err)
			}
			step := float64(s + 1)
			alpha := float64(h.Alpha) / step
			for k := 0; k < 2; k++ {
				g := float64(b[k]) + float64(b[2+k])
				if o == opt.SGD {
					want[k] = want[k]*(1-alpha*float64(h.WD)) - alpha*g
					continue
				}
				b1, b2 := float64(h.Beta1), float64(h.Beta2)
				m[k] = b1*m[k] + (1-b1)*g
				v[k] = b2*v[k] + (1-b2)*g*g
				mh := m[k] / (1 - math.Pow(b1, step))
				vh := v[k] / (1 - math.Pow(b2, step))
				want[k] = want[k]*(1-alpha*float64(h.WD)) - alpha*mh/(math.Sqrt(vh)+float64(h.Eps))
			}
			got, err := core.GetFloat32s(w)
			if err != nil {
				t.Fatal(err)
			}
			for k := range want {
				if math.Abs(float64(got[k])-want[k]) > 1e-5*math.Max(1, math.Abs(want[k])) {
					t.Errorf("optimizer %d step %d: w[%d] = %v, want %v", o, s+1, k, got[k], want[k])
				}
			}
		}
		tr.Close()
	}
}

// Save then Load into a fresh trainer resumes exactly: the next step gives the same parameters as
// an uninterrupted run.
func TestCheckpointResume(t *testing.T) {
	be := newCPU(t)
	data, labels := spiral(20, 2)
	ds, err := opt.NewDataset(data, 2, labels, 3)
	if err != nil {
		t.Fatal(err)
	}
	run := func(m *mlp) *opt.Trainer {
		tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: m.model(), BatchSize: 10, Loss: opt.LossCrossEntropy})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
	a := newMLP(t, 8, be, be, 9)
	ta := run(a)
	for i := 0; i < 3; i++ {
		if _, err := ta.Step(ds, i); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "ckpt.gguf")
	if err := ta.SaveFile(path); err != nil {
		t.Fatal(err)
	}
	if _, err := ta.Step(ds, 3); err != nil {
		t.Fatal(err)
	}

	b := newMLP(t, 8, be, be, 123) // other initial weights: Load must overwrite them
	tb := run(b)
	if err := tb.LoadFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	if tb.Steps() != 3 {
		t.Fatalf("loaded step count %d, want 3", tb.Steps())
	}
	if _, err := tb.Step(ds, 3); err != nil {
		t.Fatal(err)
	}
	for i, p := range []*core.Tensor{a.w1, a.b1, a.w2, a.b2} {
		q := []*core.Tensor{b.w1, b.b1, b.w2, b.b2}[i]
		pv, _ := core.GetFloat32s(p)
		qv, _ := core.GetFloat32s(q)
		for k := range pv {
			if pv[k] != qv[k] {
				t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", p.Name, k, qv[k], pv[k])
			}
		}
	}
	sgd, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: newMLP(t, 8, be, be, 1).model(), BatchSize: 10,
		Loss: opt.LossCrossEntropy, Optimizer: opt.SGD})
	if err != nil {
		t.Fatal(err)
	}
	defer sgd.Close()
	if err := sgd.LoadFile(context.Background(), path); err == nil {
		t.Error("an AdamW checkpoint loaded into an SGD trainer")
	}
}
