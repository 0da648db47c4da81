package tests

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/gl"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
)

// Every backend declares the optional capabilities of core's interfaces with their exact
// signatures (in every build: the Vulkan and OpenGL stubs too), so core.GraphComputeContext and a
// type assertion to core.LoggerSetter reach them; a method that drifts from the interface fails
// to build here instead of being skipped silently.
var (
	_ core.ContextComputer = (*cpu.Backend)(nil)
	_ core.ContextComputer = (*vulkan.Backend)(nil)
	_ core.ContextComputer = (*gl.Backend)(nil)
	_ core.ContextComputer = (*rpc.Backend)(nil)
	_ core.LoggerSetter    = (*cpu.Backend)(nil)
	_ core.LoggerSetter    = (*vulkan.Backend)(nil)
	_ core.LoggerSetter    = (*gl.Backend)(nil)
)

// core.GraphComputeContext on the CPU backend: a cancelled context stops the graph (through the
// CPU's own GraphComputeContext, which names it), a live one computes it; the CPU backend takes a
// logger through core.LoggerSetter.
func TestCoreGraphComputeContextCPU(t *testing.T) {
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	var log strings.Builder
	ls, ok := core.Backend(be).(core.LoggerSetter)
	if !ok {
		t.Fatal("the CPU backend is not a core.LoggerSetter")
	}
	ls.SetLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if !strings.Contains(log.String(), "tandem cpu backend") {
		t.Errorf("SetLogger reported %q", log.String())
	}
	ls.SetLogger(nil)

	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor1D(core.TypeF32, 4)
	copy(a.Float32s(), []float32{1, 2, 3, 4})
	out := ctx.Scale(ctx.Add(a, a), 0.25)
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := core.GraphComputeContext(cancelled, be, g); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cpu") {
		t.Fatalf("cancelled: %v", err)
	}
	if err := core.GraphComputeContext(context.Background(), be, g); err != nil {
		t.Fatal(err)
	}
	if got, err := core.GetFloat32s(out); err != nil || !slices.Equal(got, []float32{0.5, 1, 1.5, 2}) {
		t.Fatalf("out = %v, %v; want [0.5 1 1.5 2]", got, err)
	}
}
