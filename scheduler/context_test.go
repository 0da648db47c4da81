package scheduler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// twoSplitGraph: weights on the fake GPU feed a MUL there, the CPU finishes with a SUM_ROWS
// the fake GPU lacks.
func twoSplitGraph(t *testing.T) (gpu core.Backend, be *cpu.Backend, g *core.Graph, x *core.Tensor) {
	t.Helper()
	dev := newFakeGPU("FakeGPU0", core.OpMul)
	gb, err := dev.NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	be, err = cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gb.Close(); be.Close() })
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	w := wctx.NewTensor2D(core.TypeF32, 8, 4).SetName("w")
	wbuf, err := alloc.AllocCtxTensors(wctx, gb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wbuf.Free() })
	wbuf.SetUsage(core.BufferUsageWeights)
	fillPattern(t, w, 3)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x = ctx.NewTensor2D(core.TypeF32, 8, 4).SetInput().SetName("x")
	y := ctx.SumRows(ctx.Mul(w, x)).SetOutput().SetName("y")
	g = core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)
	return gb, be, g, x
}

// A done context stops the run with an error that wraps it and names the split; the scheduler
// then computes normally with a live context.
func TestGraphComputeContext(t *testing.T) {
	gb, be, g, x := twoSplitGraph(t)
	s, err := scheduler.New([]core.Backend{gb, be}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	fillPattern(t, x, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = s.GraphComputeContext(ctx, g)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped before the split") {
		t.Fatalf("cancelled: %v", err)
	}
	if err := s.GraphComputeContext(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if s.NSplits() != 2 {
		t.Fatalf("%d splits, want 2", s.NSplits())
	}
}

// Options.Logger gets one Debug record per split (with the same deps as Dump) and, at
// LevelTrace, one record per node with a non-empty reason; Dump's verbose lines carry the reasons.
func TestLoggerAndReasons(t *testing.T) {
	gb, be, g, x := twoSplitGraph(t)
	var logs bytes.Buffer
	lg := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: scheduler.LevelTrace}))
	s, err := scheduler.New([]core.Backend{gb, be}, scheduler.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	fillPattern(t, x, 5)
	if err := s.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	splits, nodes := 0, 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch rec["msg"] {
		case "tandem scheduler split":
			splits++
			if rec["split"] == float64(1) {
				deps, _ := rec["deps"].([]any)
				if len(deps) != 1 || deps[0] != float64(0) {
					t.Errorf("split 1 deps %v, want [0]", rec["deps"])
				}
			}
		case "tandem scheduler node":
			nodes++
			if r, _ := rec["reason"].(string); r == "" {
				t.Errorf("node record without a reason: %s", line)
			}
		}
	}
	if splits != 2 || nodes < 2 {
		t.Errorf("%d split records and %d node records, want 2 and at least 2:\n%s", splits, nodes, logs.String())
	}
	var dump strings.Builder
	s.Dump(&dump, true)
	if !strings.Contains(dump.String(), "(pass 1: its weights live here)") || !strings.Contains(dump.String(), "deps [0]") {
		t.Errorf("Dump lacks reasons or deps:\n%s", dump.String())
	}
}
