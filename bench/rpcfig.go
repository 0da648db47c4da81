package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
)

// RPCFigures are the transport figures of a remote device: the round-trip cost of computing a
// tiny graph, and upload and download throughput.
type RPCFigures struct {
	TinyGraph   time.Duration // median round trip of GraphCompute + Sync on a 16-element SCALE
	SetMBps     float64       // SET_TENSOR throughput, 10^6 bytes per second
	GetMBps     float64       // GET_TENSOR throughput
	TransferMiB int64         // bytes per transfer measured
}

// MeasureRPC measures device 0 of c.
func MeasureRPC(c *rpc.Client, quick bool) (RPCFigures, error) {
	var f RPCFigures
	be, err := c.Devices()[0].NewBackend()
	if err != nil {
		return f, err
	}
	calls, xfers, mib := 300, 8, int64(8)
	if quick {
		calls, xfers, mib = 50, 3, 4
	}
	f.TransferMiB = mib
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 16)
	out := ctx.Scale(a, 2)
	big := ctx.NewTensor1D(core.TypeF32, mib<<20/4)
	if err := ctx.Err(); err != nil {
		return f, err
	}
	buf, err := alloc.AllocCtxTensors(ctx, be)
	if err != nil {
		return f, err
	}
	defer buf.Free()
	g := core.NewGraph(8)
	g.BuildForwardExpand(out)
	times := make([]time.Duration, 0, calls)
	for i := 0; i < calls+10; i++ {
		t0 := time.Now()
		if err := be.GraphCompute(g); err != nil {
			return f, err
		}
		// GRAPH_COMPUTE has no reply: Sync waits for the server, so the figure is a round trip
		if err := c.Sync(context.Background()); err != nil {
			return f, err
		}
		if i >= 10 {
			times = append(times, time.Since(t0))
		}
	}
	f.TinyGraph = medianDuration(times)
	data := make([]byte, big.NBytes())
	for i := range data {
		data[i] = byte(i * 7)
	}
	t0 := time.Now()
	for i := 0; i < xfers; i++ {
		if err := core.TensorSet(big, data, 0); err != nil {
			return f, err
		}
	}
	if err := be.Synchronize(); err != nil {
		return f, err
	}
	f.SetMBps = float64(xfers) * float64(len(data)) / time.Since(t0).Seconds() / 1e6
	t0 = time.Now()
	for i := 0; i < xfers; i++ {
		if err := core.TensorGet(big, data, 0); err != nil {
			return f, err
		}
	}
	f.GetMBps = float64(xfers) * float64(len(data)) / time.Since(t0).Seconds() / 1e6
	return f, nil
}

func medianDuration(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return s[len(s)/2]
}

// WriteRPCFigures measures and prints the transport figures of the -rpc server.
func WriteRPCFigures(w io.Writer, c *rpc.Client, quick bool) error {
	f, err := MeasureRPC(c, quick)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "rpc %s: tiny graph %.1f µs/call (median), SET %.0f MB/s, GET %.0f MB/s (%d MiB transfers)\n",
		c.Addr(), float64(f.TinyGraph.Nanoseconds())/1e3, f.SetMBps, f.GetMBps, f.TransferMiB)
	return nil
}
