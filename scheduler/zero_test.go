package scheduler_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// A zero Scheduler (not made by New) said "graph is nil" or nothing useful; now every method that
// returns an error says to use scheduler.New, whatever its arguments.
func TestZeroScheduler(t *testing.T) {
	zerotest.Methods[scheduler.Scheduler](t, "zero Scheduler: create one with scheduler.New", "Close")

	var s scheduler.Scheduler
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	x := ctx.NewTensor1D(core.TypeF32, 2)
	g := core.NewGraph(0)
	g.BuildForwardExpand(ctx.Add(x, x))
	for name, err := range map[string]error{
		"Reserve":      s.Reserve(g),
		"AllocGraph":   s.AllocGraph(g),
		"GraphCompute": s.GraphCompute(g),
	} {
		if err == nil || !strings.Contains(err.Error(), "create one with scheduler.New") {
			t.Errorf("%s on a zero Scheduler: %v", name, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close on a zero Scheduler: %v", err)
	}
}
