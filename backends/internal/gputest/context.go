package gputest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tandem-ml/tandem/core"
)

// GraphComputeContext checks that be is a core.ContextComputer and the contract of its
// GraphComputeContext, called through core.GraphComputeContext: a cancelled or expired context
// stops the graph before its next node with an error wrapping the context's, the backend stays
// usable, and a live context computes the right values.
func GraphComputeContext(t *testing.T, be core.Backend) {
	t.Helper()
	if _, ok := be.(core.ContextComputer); !ok {
		t.Fatalf("%T is not a core.ContextComputer", be)
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 64)
	out := ctx.Scale(ctx.Add(a, a), 0.5)
	AllocCtx(t, ctx, be.DefaultBufferType())
	vals := make([]float32, 64)
	for i := range vals {
		vals[i] = float32(i)
	}
	if err := core.SetFloat32s(a, vals); err != nil {
		t.Fatal(err)
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(out)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	err := core.GraphComputeContext(cancelled, be, g)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "stopped before node") {
		t.Fatalf("cancelled context: %v", err)
	}
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	if err := core.GraphComputeContext(expired, be, g); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("expired deadline: %v", err)
	}
	if err := core.GraphComputeContext(context.Background(), be, g); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != vals[i] {
			t.Fatalf("element %d: %v, want %v", i, v, vals[i])
		}
	}
}
