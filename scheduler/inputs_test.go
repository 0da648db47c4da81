package scheduler_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// inputGraph builds y = Σ ((2x + x) / 2)² (31.5 for x = [1 2 3]); x is flagged input when input.
func inputGraph(n int64, input bool) (x, y *core.Tensor, g *core.Graph) {
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x = ctx.NewTensor1D(core.TypeF32, n).SetName("x")
	if input {
		x.SetInput()
	}
	y = ctx.Sum(ctx.Sqr(ctx.Scale(ctx.Add(ctx.Scale(x, 2), x), 0.5))).SetName("y")
	g = core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	return x, y, g
}

func scalarOf(t *testing.T, y *core.Tensor) float32 {
	t.Helper()
	v, err := core.GetFloat32s(y)
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

// Traps 1 and 2 of issue 21 through the scheduler: an input (flagged or not) written once keeps
// its bytes over any number of runs of its graph; an input whose memory another graph's plan
// reassigned must be written again, and computing before that is an error naming it.
func TestSchedulerInputs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    scheduler.Options
		flagged bool
	}{
		{"flagged", scheduler.Options{}, true},
		{"unflagged", scheduler.Options{}, false},
		{"parallel", scheduler.Options{Parallel: true, Copies: 2}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be, err := cpu.New(cpu.Options{Threads: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer be.Close()
			s, err := scheduler.New([]core.Backend{be}, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			x, y, g := inputGraph(3, tc.flagged)
			if err := s.AllocGraph(g); err != nil {
				t.Fatal(err)
			}
			// Fresh memory holds nothing of x's yet: still an error, not zeros by chance.
			err = s.GraphCompute(g)
			if !errors.Is(err, core.ErrInputNotSet) || !strings.Contains(err.Error(), "input x") {
				t.Fatalf("compute before x is written: %v, want ErrInputNotSet naming x", err)
			}
			if err := core.SetFloat32s(x, []float32{1, 2, 3}); err != nil {
				t.Fatal(err)
			}
			for run := 0; run < 3; run++ {
				if err := s.GraphCompute(g); err != nil {
					t.Fatalf("run %d: %v", run, err)
				}
				if v := scalarOf(t, y); v != 31.5 {
					t.Fatalf("run %d: y = %v, want 31.5", run, v)
				}
			}
			if err := s.AllocGraph(g); err != nil { // the same graph: nothing moves
				t.Fatal(err)
			}
			if err := s.GraphCompute(g); err != nil {
				t.Fatalf("after AllocGraph of the same graph: %v", err)
			}

			// Another graph takes the compute buffer; coming back, x must be written again.
			x2, y2, g2 := inputGraph(64, true)
			if err := s.AllocGraph(g2); err != nil {
				t.Fatal(err)
			}
			v2 := make([]float32, 64)
			for i := range v2 {
				v2[i] = 2
			}
			if err := core.SetFloat32s(x2, v2); err != nil {
				t.Fatal(err)
			}
			if err := s.GraphCompute(g2); err != nil {
				t.Fatal(err)
			}
			if v := scalarOf(t, y2); v != 576 { // 64 · 2.25 · 4
				t.Fatalf("y2 = %v, want 576", v)
			}
			err = s.GraphCompute(g)
			if !errors.Is(err, core.ErrInputNotSet) || !strings.Contains(err.Error(), "input x") {
				t.Fatalf("compute after another graph: %v, want ErrInputNotSet naming x", err)
			}
			if err := core.SetFloat32s(x, []float32{3, 2, 1}); err != nil {
				t.Fatal(err)
			}
			if err := s.GraphCompute(g); err != nil {
				t.Fatal(err)
			}
			if v := scalarOf(t, y); v != 31.5 {
				t.Fatalf("y = %v, want 31.5", v)
			}
		})
	}
}
