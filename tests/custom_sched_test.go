package tests

import (
	"os"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// TestCustomOpSplitsOffTheGPU: a MAP_CUSTOM1 and a CUSTOM node between GPU ops pinned to the GPU
// device (Vulkan, or GL with -tags gl). The device reports the custom nodes unsupported, so the
// scheduler runs them on the CPU and copies across each boundary; the custom function runs on
// the CPU backend's threads in its tasks and the results are right.
func TestCustomOpSplitsOffTheGPU(t *testing.T) {
	devs := devicesUnderTest()
	if len(devs) == 0 {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but no GPU device is registered: %s", vulkanWhy())
		}
		t.Skipf("no device besides the CPU: %s", vulkanWhy())
	}
	cpuBe, err := cpu.New(cpu.Options{Threads: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer cpuBe.Close()
	dev, err := devs[0].NewBackend()
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	s, err := scheduler.New([]core.Backend{dev, cpuBe}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	const n = 37
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor2D(core.TypeF32, n, 2).SetName("a").SetInput()
	b := ctx.NewTensor2D(core.TypeF32, n, 2).SetName("b").SetInput()
	sq := ctx.Sqr(a).SetName("sq")
	tasks := make([]int, 8)
	custom := ctx.MapCustom1(sq, func(dst, x *core.Tensor, ith, nth int) {
		tasks[ith] = nth // each task writes its own slot
		in, out := x.Float32s(), dst.Float32s()
		for i := ith; i < len(out); i += nth {
			out[i] = in[i] + 1
		}
	}, core.NTasksMax).SetName("plus1")
	sum := ctx.Add(custom, b).SetName("sum")
	neg := ctx.Custom4D(core.TypeF32, n, 2, 1, 1, []*core.Tensor{sum}, func(dst *core.Tensor, ith, nth int) {
		in, out := dst.Src[0].Float32s(), dst.Float32s()
		for i := ith; i < len(out); i += nth {
			out[i] = -in[i]
		}
	}, 2).SetName("neg")
	out := ctx.Scale(neg, 2).SetName("out").SetOutput()
	if err := ctx.Err(); err != nil {
		t.Fatal(err)
	}
	if dev.Device().SupportsOp(custom) || dev.Device().SupportsOp(neg) {
		t.Fatalf("%s claims the custom ops", dev.Name())
	}
	g := core.NewGraph(32)
	g.BuildForwardExpand(out)
	// The GPU ops are pinned to the device (inputs live on the CPU, so the scheduler would
	// otherwise run the whole graph there); the custom nodes are left to the scheduler.
	for _, x := range []*core.Tensor{sq, sum, out} {
		if err := s.SetTensorBackend(x, dev); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AllocGraph(g); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t  *core.Tensor
		on core.Backend
	}{{sq, dev}, {custom, cpuBe}, {sum, dev}, {neg, cpuBe}, {out, dev}} {
		if got := s.TensorBackend(c.t); got != c.on {
			name := "<nil>"
			if got != nil {
				name = got.Name()
			}
			t.Errorf("%s placed on %s, want %s", c.t.Name, name, c.on.Name())
		}
	}
	av, bv := make([]float32, 2*n), make([]float32, 2*n)
	for i := range av {
		av[i], bv[i] = float32(i%7)-3, float32(i)/4
	}
	if err := core.SetFloat32s(a, av); err != nil {
		t.Fatal(err)
	}
	if err := core.SetFloat32s(b, bv); err != nil {
		t.Fatal(err)
	}
	if err := s.GraphCompute(g); err != nil {
		t.Fatal(err)
	}
	got, err := core.GetFloat32s(out)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if want := -2 * (av[i]*av[i] + 1 + bv[i]); v != want {
			t.Fatalf("out[%d] = %v, want %v", i, v, want)
		}
	}
	if tasks[0] != 3 || tasks[1] != 3 || tasks[2] != 3 {
		t.Errorf("MAP_CUSTOM1 with NTasksMax ran tasks %v, want 3 of 3 (the CPU's threads)", tasks[:3])
	}
	if s.NSplits() < 5 || s.NCopies() < 4 {
		t.Errorf("%d splits and %d copies, want GPU, CPU, GPU, CPU, GPU splits with a copy at each boundary", s.NSplits(), s.NCopies())
	}
	t.Logf("%s + CPU: %d splits, %d copies", dev.Name(), s.NSplits(), s.NCopies())

	// Pinning a custom node to the GPU device is refused when the scheduler plans.
	s2, err := scheduler.New([]core.Backend{dev, cpuBe}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if err := s2.SetTensorBackend(custom, dev); err != nil {
		t.Fatal(err)
	}
	if err := s2.AllocGraph(g); err == nil || !strings.Contains(err.Error(), "MAP_CUSTOM1") {
		t.Errorf("MAP_CUSTOM1 pinned to %s: AllocGraph error %v, want one naming the node's op", dev.Name(), err)
	}
}
