package scheduler_test

import (
	"os"
	"testing"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/backends/vulkan"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

func newVulkan(t *testing.T) core.Backend {
	t.Helper()
	if ok, why := vulkan.Available(); !ok {
		if os.Getenv("TANDEM_REQUIRE_VULKAN") == "1" {
			t.Fatalf("TANDEM_REQUIRE_VULKAN=1 but Vulkan is unavailable: %s", why)
		}
		t.Skipf("Vulkan unavailable: %s", why)
	}
	vk, err := vulkan.New(0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { vk.Close() })
	return vk
}

// The transformer-like block on Vulkan (lavapipe in CI) and the CPU, with the softmax pinned to the
// CPU: three splits, four copies; the result matches the CPU-only run within ggml's matmul
// threshold; weights stay on the device; a second run re-plans nothing and copies only what changed.
func TestVulkanMixedBlock(t *testing.T) {
	vk := newVulkan(t)
	cb, err := cpu.New(cpu.Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close()
	s, err := scheduler.New([]core.Backend{vk, cb}, scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	ids := []int32{3, 1, 4, 1, 5}
	want := runCPUOnly(t, ids)
	b := buildBlock(t, vk.DefaultBufferType())
	var soft *core.Tensor
	for _, n := range b.g.Nodes() {
		if n.Name == "kq_soft" {
			soft = n
		}
	}
	if err := s.SetTensorBackend(soft, cb); err != nil {
		t.Fatal(err)
	}
	if err := s.AllocGraph(b.g); err != nil {
		t.Fatal(err)
	}
	b.setInputs(t, ids)
	if err := s.GraphCompute(b.g); err != nil {
		t.Fatal(err)
	}
	if s.NSplits() != 3 || s.NCopies() != 4 {
		s.Dump(os.Stderr, true)
		t.Fatalf("splits %d copies %d, want 3 and 4", s.NSplits(), s.NCopies())
	}
	for _, n := range b.g.Nodes() {
		if n.Op == core.OpMulMat && s.TensorBackend(n) != vk {
			t.Errorf("%v runs on %v, want Vulkan (its weights live there)", n, s.TensorBackend(n).Name())
		}
	}
	got, err := core.GetFloat32s(b.out)
	if err != nil {
		t.Fatal(err)
	}
	if e := nmse(got, want); e > 5e-4 {
		t.Fatalf("Vulkan+CPU vs CPU-only: NMSE %g > 5e-4", e)
	}
	st := s.Stats()
	weightBytes := b.weightBuf.Size()
	if st.CopyBytes >= weightBytes/4 {
		t.Fatalf("copied %d bytes in one run: weights (%d bytes) must stay on the device", st.CopyBytes, weightBytes)
	}
	if err := s.GraphCompute(b.g); err != nil {
		t.Fatal(err)
	}
	st2 := s.Stats()
	if st2.Plans != st.Plans || st2.Copies-st.Copies != 2 || st2.CopySkips-st.CopySkips != 2 {
		t.Fatalf("second run: before %+v after %+v", st, st2)
	}
	t.Logf("copy bytes: first run %d, second run %d (weights %d bytes stay on the device)",
		st.CopyBytes, st2.CopyBytes-st.CopyBytes, weightBytes)
	got2, _ := core.GetFloat32s(b.out)
	if e := nmse(got2, got); e != 0 {
		t.Fatalf("second run differs from the first: NMSE %g", e)
	}
}
