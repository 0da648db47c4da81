package scheduler_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// A two-layer MLP whose first layer's weights live on the GPU and second layer's on the CPU. The
// weights decide where their consumers run, so the scheduler cuts the graph in two splits and
// copies the hidden activations from the GPU to the CPU. Without a Vulkan device it says so.
func Example_mixedDevices() {
	if err := mixedMLP(os.Stdout); err != nil {
		fmt.Println(err)
	}
}

// TestExampleMixedDevices runs the example's code and checks its plan and its numbers.
func TestExampleMixedDevices(t *testing.T) {
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip(why)
	}
	var out bytes.Buffer
	if err := mixedMLP(&out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	t.Log("\n" + s)
	for _, want := range []string{"splits: 2", "SPLIT #0: Vulkan0", "SPLIT #1: CPU", "max |y - reference|: 0"} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
}

func mixedMLP(w io.Writer) error {
	const in, hidden, out, batch = 8, 16, 3, 4
	if ok, why := vulkan.Available(); !ok {
		fmt.Fprintln(w, "no Vulkan device:", why)
		return nil
	}
	vk, err := vulkan.New(0)
	if err != nil {
		return err
	}
	defer vk.Close()
	be, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		return err
	}
	defer be.Close()

	// Weights: one context per device, each placed in that device's memory and marked as weights.
	gpuCtx := core.NewContext(core.ContextParams{NoAlloc: true})
	w1 := gpuCtx.NewTensor2D(core.TypeF32, in, hidden)
	cpuCtx := core.NewContext(core.ContextParams{NoAlloc: true})
	w2 := cpuCtx.NewTensor2D(core.TypeF32, hidden, out)
	for _, p := range []struct {
		ctx *core.Context
		be  core.Backend
	}{{gpuCtx, vk}, {cpuCtx, be}} {
		buf, err := alloc.AllocCtxTensors(p.ctx, p.be)
		if err != nil {
			return err
		}
		defer buf.Free()
		buf.SetUsage(core.BufferUsageWeights)
	}
	w1v, w2v := ramp(in*hidden, 0.01), ramp(hidden*out, -0.02)
	if err := core.SetFloat32s(w1, w1v); err != nil {
		return err
	}
	if err := core.SetFloat32s(w2, w2v); err != nil {
		return err
	}

	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	x := ctx.NewTensor2D(core.TypeF32, in, batch).SetInput().SetName("x")
	h := ctx.Relu(ctx.MulMat(w1, x)).SetName("hidden")
	y := ctx.MulMat(w2, h).SetOutput().SetName("y")
	if err := ctx.Err(); err != nil {
		return err
	}
	g := core.NewGraph(core.DefaultGraphSize)
	g.BuildForwardExpand(y)

	s, err := scheduler.New([]core.Backend{vk, be}, scheduler.Options{})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.AllocGraph(g); err != nil {
		return err
	}
	xv := ramp(in*batch, 0.1)
	if err := core.SetFloat32s(x, xv); err != nil {
		return err
	}
	if err := s.GraphCompute(g); err != nil {
		return err
	}
	got, err := core.GetFloat32s(y)
	if err != nil {
		return err
	}

	fmt.Fprintln(w, "splits:", s.NSplits())
	s.Dump(w, false)
	var worst float64
	for b := 0; b < batch; b++ {
		for o := 0; o < out; o++ {
			var acc float64
			for h := 0; h < hidden; h++ {
				var z float64
				for i := 0; i < in; i++ {
					z += float64(w1v[h*in+i]) * float64(xv[b*in+i])
				}
				acc += float64(w2v[o*hidden+h]) * math.Max(z, 0)
			}
			worst = math.Max(worst, math.Abs(acc-float64(got[b*out+o])))
		}
	}
	// Small integers times powers of ten: exact enough that f32 rounding stays below 1e-4.
	fmt.Fprintf(w, "max |y - reference|: %.0f\n", math.Round(worst*1e4))
	return nil
}

// ramp returns n values i·step centred around zero.
func ramp(n int, step float32) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i-n/2) * step
	}
	return v
}
