package scheduler_test

import (
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/scheduler"
)

// NewAll makes a backend per registered device, CPU last, and Close closes them; NewFromDevices
// rejects nil devices and lists that do not end with the CPU.
func TestNewAll(t *testing.T) {
	s, err := scheduler.NewAll(scheduler.Options{})
	if err != nil {
		t.Fatal(err)
	}
	devs := core.Devices()
	if s.NBackends() != len(devs) {
		t.Fatalf("%d backends for %d devices", s.NBackends(), len(devs))
	}
	last := s.Backend(s.NBackends() - 1)
	if last.Device().Type() != core.DeviceCPU {
		t.Fatalf("last backend %s is not the CPU", last.Name())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// The backends are closed: computing on the CPU one now fails.
	g := core.NewGraph(8)
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	g.BuildForwardExpand(ctx.Neg(ctx.NewTensor1D(core.TypeF32, 4)))
	if err := last.GraphCompute(g); err == nil {
		t.Error("the scheduler's CPU backend still computes after Close")
	}

	if _, err := scheduler.NewFromDevices([]core.Device{nil}, scheduler.Options{}); err == nil || !strings.Contains(err.Error(), "nil") {
		t.Errorf("nil device: %v", err)
	}
	var gpus []core.Device
	for _, d := range devs {
		if d.Type() != core.DeviceCPU {
			gpus = append(gpus, d)
		}
	}
	if len(gpus) > 0 {
		if _, err := scheduler.NewFromDevices(gpus, scheduler.Options{}); err == nil || !strings.Contains(err.Error(), "CPU") {
			t.Errorf("no CPU last: %v", err)
		}
	}
}
