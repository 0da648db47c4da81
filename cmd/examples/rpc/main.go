// Command rpc runs a matrix product on a remote device through ggml's RPC protocol
// (package backends/rpc): it starts a tandem RPC server on a loopback port in the same process
// (or uses -addr, a running tandem-rpc-server or llama.cpp rpc-server), dials it, places the
// weights in the remote device's memory, and lets a scheduler run the product there — the input
// goes over the connection, the result comes back — checking it against the local CPU.
//
//	go run ./cmd/examples/rpc                          # an in-process loopback server
//	go run ./cmd/tandem-rpc-server -addr 127.0.0.1:50052 &
//	go run ./cmd/examples/rpc -addr 127.0.0.1:50052
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"time"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// config is what the flags set.
type config struct {
	Addr string // a running server; "" starts one in-process
	N    int64  // the weights are N×N, the batch N/4 vectors
}

// result is what a run reports (the test checks it).
type result struct {
	Device   string  // the remote device's name
	Splits   int     // of the scheduler's plan
	NMSE     float64 // remote result against the local CPU's
	Elements int
}

func main() {
	var cfg config
	flag.StringVar(&cfg.Addr, "addr", "", "RPC server HOST:PORT (default: start one on loopback)")
	flag.Int64Var(&cfg.N, "n", 256, "matrix size")
	flag.Parse()
	if _, err := run(os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "rpc:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, cfg config) (result, error) {
	var res result
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := cfg.Addr
	if addr == "" {
		// The server side: a CPU backend behind a loopback listener.
		srvBe, err := cpu.New(cpu.Options{})
		if err != nil {
			return res, err
		}
		defer srvBe.Close()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return res, err
		}
		srv := &rpc.Server{Backends: []core.Backend{srvBe}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, l) }()
		defer func() { cancel(); <-done }()
		addr = l.Addr().String()
		fmt.Fprintf(w, "serving the CPU backend on %s\n", addr)
	}

	// The client side: each remote device is a core.Device; its backend goes into a scheduler
	// like any other (remote first, the local CPU last).
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	c, err := rpc.Dial(dctx, addr)
	dcancel()
	if err != nil {
		return res, err
	}
	defer c.Close()
	devs := c.Devices()
	if len(devs) == 0 {
		return res, errors.New("the server offers no device")
	}
	remote, err := devs[0].NewBackend()
	if err != nil {
		return res, err
	}
	defer remote.Close()
	local, err := cpu.New(cpu.Options{})
	if err != nil {
		return res, err
	}
	defer local.Close()
	res.Device = devs[0].Name()

	n := cfg.N
	wv, xv := make([]float32, n*n), make([]float32, n*(n/4))
	r := rand.New(rand.NewPCG(4, 2))
	for i := range wv {
		wv[i] = r.Float32() - 0.5
	}
	for i := range xv {
		xv[i] = r.Float32() - 0.5
	}
	// product runs y = silu(w·x) with the weights in be's memory through a scheduler over backends.
	product := func(be core.Backend, backends []core.Backend) ([]float32, int, error) {
		wctx := core.NewContext(core.ContextParams{NoAlloc: true})
		wt := wctx.NewTensor2D(core.TypeF32, n, n).SetName("w")
		buf, err := alloc.AllocCtxTensors(wctx, be) // on the remote device: uploaded once
		if err != nil {
			return nil, 0, err
		}
		defer buf.Free()
		buf.SetUsage(core.BufferUsageWeights) // the MUL_MAT runs where its weights are
		if err := core.SetFloat32s(wt, wv); err != nil {
			return nil, 0, err
		}
		gctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := gctx.NewTensor2D(core.TypeF32, n, n/4).SetInput().SetName("x")
		y := gctx.Silu(gctx.MulMat(wt, x)).SetOutput()
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(y)
		s, err := scheduler.New(backends, scheduler.Options{})
		if err != nil {
			return nil, 0, err
		}
		defer s.Close()
		if err := s.AllocGraph(g); err != nil {
			return nil, 0, err
		}
		if err := core.SetFloat32s(x, xv); err != nil {
			return nil, 0, err
		}
		if err := s.GraphCompute(g); err != nil {
			return nil, 0, err
		}
		out, err := core.GetFloat32s(y)
		return out, s.NSplits(), err
	}
	got, splits, err := product(remote, []core.Backend{remote, local})
	if err != nil {
		return res, fmt.Errorf("on %s: %w", res.Device, err)
	}
	want, _, err := product(local, []core.Backend{local})
	if err != nil {
		return res, err
	}
	var num, den float64
	for i := range want {
		d := float64(got[i] - want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	res.Splits, res.NMSE, res.Elements = splits, num/den, len(got)
	fmt.Fprintf(w, "%s: silu(w·x), w %d×%d, x %d×%d, %d split(s); NMSE against the local CPU %.2g\n",
		res.Device, n, n, n, n/4, splits, res.NMSE)
	return res, nil
}
