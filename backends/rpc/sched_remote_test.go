package rpc_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/rpc"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// splitGraph is x → mulmat(w1) → silu → mulmat(w2) → add x → rms_norm·g, with host weights.
type splitGraph struct {
	g                   *core.Graph
	out                 *core.Tensor
	mm1, act, mm2, norm *core.Tensor
	wbuf                core.Buffer
}

func buildSplit(t *testing.T, host core.Backend) *splitGraph {
	t.Helper()
	const n, m = 32, 8
	wctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := wctx.NewTensor2D(core.TypeF32, n, m).SetName("x")
	w1 := wctx.NewTensor2D(core.TypeF32, n, n).SetName("w1")
	w2 := wctx.NewTensor2D(core.TypeF16, n, n).SetName("w2")
	gain := wctx.NewTensor1D(core.TypeF32, n).SetName("gain")
	wbuf, err := alloc.AllocCtxTensors(wctx, host)
	if err != nil {
		t.Fatal(err)
	}
	fill := func(tt *core.Tensor, k float64) {
		v := make([]float32, tt.NElements())
		for i := range v {
			v[i] = float32(math.Sin(float64(i)*k + k))
		}
		if err := core.SetFloat32s(tt, v); err != nil {
			t.Fatal(err)
		}
	}
	fill(x, 0.37)
	fill(w1, 0.11)
	fill(w2, 0.23)
	fill(gain, 0.5)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	s := &splitGraph{wbuf: wbuf}
	s.mm1 = ctx.MulMat(w1, x).SetName("mm1")
	s.act = ctx.Silu(s.mm1).SetName("act")
	s.mm2 = ctx.MulMat(w2, s.act).SetName("mm2")
	s.norm = ctx.RMSNorm(ctx.Add(s.mm2, x), 1e-5).SetName("norm")
	s.out = ctx.Mul(s.norm, gain).SetName("out").SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	s.g = core.NewGraph(64)
	s.g.BuildForwardExpand(s.out)
	return s
}

// One graph split across two remote tandem servers and the local CPU: the first server runs the
// first matmul and the activation, the second the second matmul, the CPU the rest. Three splits,
// copies across the network both ways, results equal to the CPU-only run.
func TestSchedulerSplitTwoServers(t *testing.T) {
	host, err := cpu.New(cpu.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()

	ref := buildSplit(t, host)
	sRef, err := scheduler.New([]core.Backend{host}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sRef.Close()
	if err := sRef.AllocGraph(ref.g); err != nil {
		t.Fatal(err)
	}
	if err := sRef.GraphCompute(ref.g); err != nil {
		t.Fatal(err)
	}
	want, err := core.GetFloat32s(ref.out)
	if err != nil {
		t.Fatal(err)
	}

	addrA, _ := startServer(t, 1)
	addrB, _ := startServer(t, 1)
	proxyA := newFreezer(t, addrA)
	beA, err := dial(t, proxyA.l.Addr().String()).Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	beB, err := dial(t, addrB).Devices()[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	sg := buildSplit(t, host)
	s, err := scheduler.New([]core.Backend{beA, beB, host}, scheduler.Options{Sequential: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetTensorBackend(sg.mm1, beA)
	s.SetTensorBackend(sg.act, beA)
	s.SetTensorBackend(sg.mm2, beB)
	s.SetTensorBackend(sg.norm, host)
	if err := s.AllocGraph(sg.g); err != nil {
		t.Fatal(err)
	}
	for run := 0; run < 2; run++ {
		if err := s.GraphCompute(sg.g); err != nil {
			t.Fatal(err)
		}
		got, err := core.GetFloat32s(sg.out)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d values, want %d", len(got), len(want))
		}
		var num, den float64
		for i := range got {
			d := float64(got[i] - want[i])
			num += d * d
			den += float64(want[i]) * float64(want[i])
		}
		if den == 0 || num/den > 1e-10 {
			t.Fatalf("run %d: NMSE %g against the CPU-only run", run, num/den)
		}
	}
	if s.NSplits() != 3 {
		t.Errorf("%d splits, want 3", s.NSplits())
	}
	if s.NCopies() < 3 {
		t.Errorf("%d copies, want at least 3 (x and w1 to A, act and w2 to B, mm2 back)", s.NCopies())
	}
	for _, tt := range []*core.Tensor{sg.mm1, sg.mm2} {
		if got := s.TensorBackend(tt); got == host {
			t.Errorf("%v ran on the host", tt)
		}
	}
	t.Logf("splits %d, copies %d", s.NSplits(), s.NCopies())

	// The first server goes away: the run fails with an error naming that backend.
	proxyA.drop()
	err = s.GraphCompute(sg.g)
	if err == nil || !errors.Is(err, rpc.ErrConnectionLost) || !strings.Contains(err.Error(), beA.Name()) {
		t.Fatalf("after losing %s: %v", beA.Name(), err)
	}
	t.Logf("lost server: %v", err)
}
