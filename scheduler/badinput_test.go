package scheduler_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// panicBackend is a fake GPU whose GraphCompute panics.
type panicBackend struct{ *fakeBackend }

func (b *panicBackend) GraphCompute(*core.Graph) error { panic("device exploded") }

// smallGraph builds r = a*b + a over [8, 4] F32 tensors in a NoAlloc context.
func smallGraph(t *testing.T) (*core.Graph, *core.Tensor, *core.Tensor, *core.Tensor) {
	t.Helper()
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, 8, 4).SetInput()
	b := ctx.NewTensor2D(core.TypeF32, 8, 4).SetInput()
	r := ctx.Add(ctx.Mul(a, b), a).SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(r)
	return g, a, b, r
}

// TestBadInput calls every exported entry point of the scheduler with hostile arguments: each call
// must return an error naming the problem (or the documented zero value), never panic. Classes are
// those of issue 10 (3: nil and range, 4: panics below the scheduler, 7: misuse of the lifecycle).
func TestBadInput(t *testing.T) {
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	other, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	dev := newFakeGPU("FAKE", core.OpMul)
	gb, err := dev.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer gb.Close()
	s, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, a, _, _ := smallGraph(t)
	var nilCPU *cpu.Backend
	var nilSched *scheduler.Scheduler

	newWith := func(bes []core.Backend, o scheduler.Options) func() error {
		return func() error {
			s, err := scheduler.New(bes, o)
			if err == nil {
				s.Close()
			}
			return err
		}
	}
	many := make([]core.Backend, scheduler.MaxBackends+1)
	for i := range many {
		many[i] = cb
	}
	badCtx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := badCtx.NewTensor2D(core.TypeF32, 8, 4)
	y := badCtx.NewTensor2D(core.TypeF32, 5, 3)
	badGraph := core.NewGraph(core.DefaultGraphSize)
	badGraph.BuildForwardExpand(badCtx.Add(x, y))
	bigCtx := core.NewContext(core.ContextParams{NoAlloc: true})
	big := bigCtx.NewTensor1D(core.TypeF32, 4)
	for range 20 {
		big = bigCtx.Scale(big, 2)
	}
	bigGraph := core.NewGraph(core.DefaultGraphSize)
	bigGraph.BuildForwardExpand(big)

	cases := []struct {
		class int
		name  string
		call  func() error
		want  string // substring of the error ("" with ok: the call must succeed)
	}{
		{3, "New(nil)", newWith(nil, scheduler.Options{}), "no backends"},
		{3, "New([nil])", newWith([]core.Backend{nil}, scheduler.Options{}), "backend 0 is nil"},
		{3, "New([typed nil *cpu.Backend])", newWith([]core.Backend{nilCPU}, scheduler.Options{}), "backend 0 is nil"},
		{3, "New([cpu, typed nil *cpu.Backend])", newWith([]core.Backend{cb, nilCPU}, scheduler.Options{}), "backend 1 is nil"},
		{3, "New([fake, typed nil])", newWith([]core.Backend{gb, nilCPU}, scheduler.Options{}), "backend 1 is nil"},
		{3, "New([cpu, cpu])", newWith([]core.Backend{cb, cb}, scheduler.Options{}), "listed twice"},
		{3, "New(17 backends)", newWith(many, scheduler.Options{}), "at most 16"},
		{3, "New(CPU not last)", newWith([]core.Backend{cb, gb}, scheduler.Options{}), "last backend must be the CPU"},
		{3, "New(buffer types count)", newWith([]core.Backend{gb, cb}, scheduler.Options{BufferTypes: []core.BufferType{nil}}), "1 buffer types for 2 backends"},
		{3, "New(foreign buffer type)", newWith([]core.Backend{cb}, scheduler.Options{BufferTypes: []core.BufferType{dev.bt}}), "cannot use buffer type"},
		{3, "New(BufferTypes: [typed nil]) uses the default", newWith([]core.Backend{cb}, scheduler.Options{BufferTypes: []core.BufferType{(*fakeBufType)(nil)}}), ""},
		{3, "New(GraphSize: -5) uses the default", newWith([]core.Backend{cb}, scheduler.Options{GraphSize: -5}), ""},
		{3, "New(Copies 9)", newWith([]core.Backend{cb}, scheduler.Options{Parallel: true, Copies: 9}), "9 pipeline copies"},
		{3, "New(Copies -1)", newWith([]core.Backend{cb}, scheduler.Options{Parallel: true, Copies: -1}), "-1 pipeline copies"},
		{3, "Reserve(nil)", func() error { return s.Reserve(nil) }, "graph is nil (Reserve)"},
		{3, "AllocGraph(nil)", func() error { return s.AllocGraph(nil) }, "graph is nil (AllocGraph)"},
		{3, "GraphCompute(nil)", func() error { return s.GraphCompute(nil) }, "graph is nil (GraphCompute)"},
		{3, "GraphComputeAsync(nil)", func() error { return s.GraphComputeAsync(nil) }, "graph is nil (GraphComputeAsync)"},
		{3, "SetTensorBackend(nil, cpu)", func() error { return s.SetTensorBackend(nil, cb) }, "tensor is nil"},
		{3, "SetTensorBackend(t, nil)", func() error { return s.SetTensorBackend(a, nil) }, "backend is nil"},
		{3, "SetTensorBackend(t, typed nil)", func() error { return s.SetTensorBackend(a, nilCPU) }, "backend is nil"},
		{3, "SetTensorBackend(t, foreign backend)", func() error { return s.SetTensorBackend(a, other) }, "is not one of this scheduler's"},
		{3, "nil scheduler GraphCompute", func() error { return nilSched.GraphCompute(g) }, "scheduler is nil"},
		{3, "nil scheduler AllocGraph", func() error { return nilSched.AllocGraph(g) }, "scheduler is nil"},
		{3, "nil scheduler Reserve", func() error { return nilSched.Reserve(g) }, "scheduler is nil"},
		{3, "nil scheduler SetTensorBackend", func() error { return nilSched.SetTensorBackend(a, cb) }, "scheduler is nil"},
		{3, "nil scheduler Synchronize", func() error { return nilSched.Synchronize() }, "scheduler is nil"},
		{3, "graph with a construction error", func() error { return s.GraphCompute(badGraph) }, "ADD"},
		{3, "graph larger than GraphSize", func() error {
			small, err := scheduler.New([]core.Backend{cb}, scheduler.Options{GraphSize: 8})
			if err != nil {
				return err
			}
			defer small.Close()
			return small.Reserve(bigGraph)
		}, "Options.GraphSize"},
		{3, "pin to a backend that cannot run the node", func() error {
			s2, err := scheduler.New([]core.Backend{gb, cb}, scheduler.Options{})
			if err != nil {
				return err
			}
			defer s2.Close()
			g2, _, _, r2 := smallGraph(t)
			if err := s2.SetTensorBackend(r2, gb); err != nil {
				return err
			}
			return s2.AllocGraph(g2)
		}, "ADD"},
		{4, "backend panics in GraphCompute", func() error {
			pb := &panicBackend{gb.(*fakeBackend)}
			s2, err := scheduler.New([]core.Backend{pb, cb}, scheduler.Options{})
			if err != nil {
				return err
			}
			defer s2.Close()
			g2, a2, b2, r2 := smallGraph(t)
			if err := s2.SetTensorBackend(r2.Src[0], pb); err != nil {
				return err
			}
			if err := s2.AllocGraph(g2); err != nil {
				return err
			}
			if s2.NSplits() < 2 {
				return fmt.Errorf("MUL not on the panicking backend: %d splits", s2.NSplits())
			}
			fillPattern(t, a2, 1)
			fillPattern(t, b2, 2)
			return s2.GraphCompute(g2)
		}, "panicked: device exploded"},
		{4, "eval callback panics", func() error {
			s2, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
			if err != nil {
				return err
			}
			defer s2.Close()
			g2, a2, b2, _ := smallGraph(t)
			if err := s2.AllocGraph(g2); err != nil {
				return err
			}
			fillPattern(t, a2, 1)
			fillPattern(t, b2, 2)
			s2.SetEvalCallback(func(*core.Tensor, bool) bool { panic("callback exploded") })
			return s2.GraphCompute(g2)
		}, "panicked: callback exploded"},
		{7, "Close twice, Reset, Synchronize with nothing in flight", func() error {
			s2, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
			if err != nil {
				return err
			}
			if err := s2.Close(); err != nil {
				return err
			}
			s2.Reset()
			if err := s2.Synchronize(); err != nil {
				return err
			}
			return s2.Close()
		}, ""},
		{7, "two async runs then Synchronize (pipelined)", func() error {
			s2, err := scheduler.New([]core.Backend{cb}, scheduler.Options{Parallel: true, Copies: 2})
			if err != nil {
				return err
			}
			defer s2.Close()
			g2, a2, b2, _ := smallGraph(t)
			if err := s2.AllocGraph(g2); err != nil {
				return err
			}
			fillPattern(t, a2, 1)
			fillPattern(t, b2, 2)
			for range 3 {
				if err := s2.GraphComputeAsync(g2); err != nil {
					return err
				}
			}
			return s2.Synchronize()
		}, ""},
		{7, "GraphComputeAsync after Close", func() error {
			s2, err := scheduler.New([]core.Backend{cb}, scheduler.Options{})
			if err != nil {
				return err
			}
			g2, a2, b2, r2 := smallGraph(t)
			s2.Close()
			if err := s2.AllocGraph(g2); err != nil {
				return err
			}
			fillPattern(t, a2, 1)
			fillPattern(t, b2, 2)
			if err := s2.GraphCompute(g2); err != nil {
				return err
			}
			if _, err := core.GetFloat32s(r2); err != nil {
				return err
			}
			return nil
		}, ""},
	}
	counts := map[int]int{}
	for _, c := range cases {
		var err error
		func() {
			defer func() {
				if v := recover(); v != nil {
					t.Errorf("class %d %s: panicked: %v", c.class, c.name, v)
				}
			}()
			err = c.call()
		}()
		counts[c.class]++
		switch {
		case c.want == "" && err != nil:
			t.Errorf("class %d %s: unexpected error %v", c.class, c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("class %d %s: accepted, want an error saying %q", c.class, c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("class %d %s: error %q does not say %q", c.class, c.name, err, c.want)
		}
	}
	t.Logf("bad-input cases per class: %v", counts)

	// Accessors with out-of-range arguments return their documented zero values.
	if b := s.Backend(5); b != nil {
		t.Errorf("Backend(5) = %v, want nil", b)
	}
	if b := s.Backend(-1); b != nil {
		t.Errorf("Backend(-1) = %v, want nil", b)
	}
	if s.Backend(0) != core.Backend(cb) {
		t.Errorf("Backend(0) is not the CPU backend")
	}
	if bt := s.BufferType(1); bt != nil {
		t.Errorf("BufferType(1) = %v, want nil", bt)
	}
	if n := s.BufferSize(7); n != 0 {
		t.Errorf("BufferSize(7) = %d, want 0", n)
	}
	if b := s.TensorBackend(nil); b != nil {
		t.Errorf("TensorBackend(nil) = %v, want nil", b)
	}
	if nilSched.NBackends() != 0 || nilSched.Backend(0) != nil || nilSched.NSplits() != 0 || nilSched.NCopies() != 0 || nilSched.Close() != nil {
		t.Errorf("nil scheduler accessors are not zero")
	}
	nilSched.Reset()
	nilSched.SetEvalCallback(nil)
	nilSched.Dump(nil, true)
	s.Dump(nil, true)
}
