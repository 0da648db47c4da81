package cpu_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// A zero Backend (not made by New) panicked on GraphCompute and Close; now every method returns an
// error saying how to make one, or does nothing.
func TestZeroBackend(t *testing.T) {
	zerotest.Methods[cpu.Backend](t, "create one with cpu.New")

	var b cpu.Backend
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	x := ctx.NewTensor1D(core.TypeF32, 2)
	g := core.NewGraph(0)
	g.BuildForwardExpand(ctx.Add(x, x))
	if err := b.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "zero Backend: create one with cpu.New") {
		t.Fatalf("GraphCompute on a zero Backend: %v", err)
	}
	if err := b.SetThreads(2); err == nil || !strings.Contains(err.Error(), "cpu.New") {
		t.Fatalf("SetThreads on a zero Backend: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close on a zero Backend: %v", err)
	}
	if b.Name() != "CPU" || b.Threads() != 0 {
		t.Fatalf("zero Backend: Name %q, Threads %d", b.Name(), b.Threads())
	}
}
