package rpc_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/tests/zerotest"
)

// Zero Clients, Devices, Backends, BufferTypes and Buffers (not obtained through rpc.Dial) panicked
// on Close, GraphCompute, Name and the data methods; now none panics and every error names
// rpc.Dial, where they all come from. A zero Server is configured by its fields: Serve says what
// is missing.
func TestZeroValues(t *testing.T) {
	zerotest.Methods[rpc.Client](t, "create one with rpc.Dial")
	zerotest.Methods[rpc.Device](t, "rpc.Dial")
	zerotest.Methods[rpc.Backend](t, "rpc.Dial")
	zerotest.Methods[rpc.BufferType](t, "rpc.Dial")
	zerotest.Methods[rpc.Buffer](t, "rpc.Dial")
	zerotest.Methods[rpc.Server](t, "", "Serve")

	var c rpc.Client
	if err := c.Close(); err == nil || !strings.Contains(err.Error(), "rpc.Dial") {
		t.Fatalf("Close on a zero Client: %v", err)
	}
	if err := c.Err(); err == nil {
		t.Fatal("Err on a zero Client: nil, as if it were connected")
	}
	var be rpc.Backend
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 12})
	x := ctx.NewTensor1D(core.TypeF32, 2)
	g := core.NewGraph(0)
	g.BuildForwardExpand(ctx.Add(x, x))
	if err := be.GraphCompute(g); err == nil || !strings.Contains(err.Error(), "zero Backend") {
		t.Fatalf("GraphCompute on a zero Backend: %v", err)
	}
	var buf rpc.Buffer
	if err := buf.SetTensor(x, make([]byte, 8), 0); err == nil || !strings.Contains(err.Error(), "zero Buffer") {
		t.Fatalf("SetTensor on a zero Buffer: %v", err)
	}
}
