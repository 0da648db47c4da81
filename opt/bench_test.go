package opt_test

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/opt"
)

// BenchmarkStepMLP: training steps per second of the spiral MLP (2→64→3, batch 32, AdamW) on the
// CPU, with the heap allocations of a step.
func BenchmarkStepMLP(b *testing.B) {
	be := newCPU(b)
	m := newMLP(b, 64, be, be, 3)
	tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: m.model(), BatchSize: 32, Loss: opt.LossCrossEntropy})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	data, labels := spiral(32, 1)
	ds, err := opt.NewDataset(data[:64], 2, labels[:96], 3)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.Step(ds, 0); err != nil { // the first step grows buffers
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := tr.Step(ds, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// A training step allocates nothing on the heap once the first step has run (the graph is
// planned once; the scheduler runs its single split on the caller's goroutine).
func TestStepAllocatesNothing(t *testing.T) {
	be := newCPU(t)
	m := newMLP(t, 16, be, be, 3)
	tr, err := opt.New(opt.Config{Backends: []core.Backend{be}, Model: m.model(), BatchSize: 8, Loss: opt.LossCrossEntropy})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	data, labels := spiral(8, 1)
	ds, err := opt.NewDataset(data[:16], 2, labels[:24], 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Step(ds, 0); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := tr.Step(ds, 0); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f heap allocations per training step, want 0", allocs)
	}
}
