package tests

import (
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/gl"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// TestSchedulerVulkanGLCPU splits one graph across Vulkan, OpenGL and the CPU, with nodes pinned
// so that tensors cross between every pair of backends, and compares with the CPU alone.
func TestSchedulerVulkanGLCPU(t *testing.T) {
	if ok, why := gl.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_GL") == "1" {
			t.Fatalf("TANDEM_REQUIRE_GL=1 but OpenGL is unavailable: %s", why)
		}
		t.Skip("no OpenGL device: " + why)
	}
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skip("no Vulkan device: " + why)
	}
	vk, err := vulkan.New(0)
	if err != nil {
		t.Fatal(err)
	}
	defer vk.Close()
	glb, err := gl.New(0)
	if err != nil {
		t.Fatal(err)
	}
	defer glb.Close()
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()

	const k, m, n = 64, 48, 6
	r := rand.New(rand.NewPCG(11, 12))
	vals := func(c int) []float32 {
		v := make([]float32, c)
		for i := range v {
			v[i] = 2*r.Float32() - 1
		}
		return v
	}
	xv, w1v, w2v := vals(k*n), vals(k*m), vals(m*m)

	// run builds the graph, pins nodes with pin (nil: no pins) and computes it with backends.
	run := func(backends []core.Backend, pin func(s *scheduler.Scheduler, nodes map[string]*core.Tensor)) ([]float32, *scheduler.Scheduler) {
		t.Helper()
		s, err := scheduler.New(backends, scheduler.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ctx := core.NewContext(core.ContextParams{NoAlloc: true})
		x := ctx.NewTensor2D(core.TypeF32, k, n).SetInput()
		w1 := ctx.NewTensor2D(core.TypeF32, k, m).SetInput()
		w2 := ctx.NewTensor2D(core.TypeF32, m, m).SetInput()
		h := ctx.MulMat(w1, x)            // Vulkan
		a := ctx.Silu(h)                  // GL: from Vulkan
		nrm := ctx.RMSNorm(a, 1e-5)       // CPU: from GL
		sum := ctx.Add(nrm, h)            // GL: from CPU and Vulkan
		h2 := ctx.MulMat(w2, sum)         // Vulkan: from GL
		sc := ctx.Scale(h2, 0.25)         // CPU: from Vulkan
		sm := ctx.SoftMax(sc)             // Vulkan: from CPU
		out := ctx.Mul(sm, a).SetOutput() // GL: from Vulkan and GL
		if err := ctx.Err(); err != nil {
			t.Fatal(err)
		}
		g := core.NewGraph(core.DefaultGraphSize)
		g.BuildForwardExpand(out)
		if pin != nil {
			pin(s, map[string]*core.Tensor{"h": h, "a": a, "nrm": nrm, "sum": sum, "h2": h2, "sc": sc, "sm": sm, "out": out})
		}
		if err := s.AllocGraph(g); err != nil {
			t.Fatal(err)
		}
		for _, in := range []struct {
			t *core.Tensor
			v []float32
		}{{x, xv}, {w1, w1v}, {w2, w2v}} {
			if err := core.SetFloat32s(in.t, in.v); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.GraphCompute(g); err != nil {
			t.Fatal(err)
		}
		got, err := core.GetFloat32s(out)
		if err != nil {
			t.Fatal(err)
		}
		if pin != nil {
			want := map[string]core.Backend{"h": vk, "a": glb, "nrm": cb, "sum": glb, "h2": vk, "sc": cb, "sm": vk, "out": glb}
			for _, tn := range []struct {
				name string
				t    *core.Tensor
			}{{"h", h}, {"a", a}, {"nrm", nrm}, {"sum", sum}, {"h2", h2}, {"sc", sc}, {"sm", sm}, {"out", out}} {
				if got := s.TensorBackend(tn.t); got != want[tn.name] {
					t.Errorf("%s ran on %v, want %s", tn.name, got, want[tn.name].Name())
				}
			}
		}
		return got, s
	}
	ref, _ := run([]core.Backend{cb}, nil)
	got, s := run([]core.Backend{vk, glb, cb}, func(s *scheduler.Scheduler, nodes map[string]*core.Tensor) {
		for name, be := range map[string]core.Backend{"h": vk, "a": glb, "nrm": cb, "sum": glb, "h2": vk, "sc": cb, "sm": vk, "out": glb} {
			if err := s.SetTensorBackend(nodes[name], be); err != nil {
				t.Fatal(err)
			}
		}
	})
	if s.NSplits() < 7 || s.NCopies() < 7 {
		t.Errorf("%d splits and %d copies, want at least 7 of each (every pin a split of its own)", s.NSplits(), s.NCopies())
	}
	if e := NMSE(got, ref); !(e < 5e-4) {
		t.Errorf("NMSE %g against the CPU alone (limit 5e-4)", e)
	}
}
