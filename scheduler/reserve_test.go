package scheduler_test

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// Reserve sizes each backend's compute buffer for the graph; allocating the same graph afterwards
// neither re-plans nor grows them, and the accessors describe the scheduler's backends.
func TestReserveThenAlloc(t *testing.T) {
	dev := newFakeGPU("FakeGPU", core.OpGetRows, core.OpRMSNorm, core.OpMul, core.OpMulMat, core.OpRope,
		core.OpCont, core.OpAdd, core.OpGLU)
	r := newRig(t, dev, scheduler.Options{})
	s := r.s
	if s.NBackends() != 2 || s.Backend(0) != core.Backend(r.gpu) || s.Backend(1) != core.Backend(r.cpu) {
		t.Fatal("backend accessors")
	}
	if s.BufferType(0) != core.BufferType(dev.bt) || s.BufferType(1) != core.HostBufferType() {
		t.Fatal("buffer type accessors")
	}
	b := buildBlock(t, dev.bt)
	if err := s.Reserve(b.g); err != nil {
		t.Fatal(err)
	}
	gpuSize, cpuSize := s.BufferSize(0), s.BufferSize(1)
	if gpuSize <= 0 || cpuSize <= 0 {
		t.Fatalf("reserved sizes %d, %d", gpuSize, cpuSize)
	}
	st := s.Stats()
	if err := s.AllocGraph(b.g); err != nil {
		t.Fatal(err)
	}
	st2 := s.Stats()
	if st2.Plans != st.Plans || st2.Reserves != st.Reserves || s.BufferSize(0) != gpuSize || s.BufferSize(1) != cpuSize {
		t.Fatalf("AllocGraph after Reserve re-planned or grew: %+v → %+v, sizes %d,%d → %d,%d",
			st, st2, gpuSize, cpuSize, s.BufferSize(0), s.BufferSize(1))
	}
	b.setInputs(t, []int32{1, 2, 3, 4, 5})
	if err := s.GraphCompute(b.g); err != nil {
		t.Fatal(err)
	}
}
