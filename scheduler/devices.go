package scheduler

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// NewFromDevices creates a backend on each device and a scheduler over them, in the order given
// (put GPUs first and the CPU last, as core.Devices lists them). The scheduler owns these
// backends: Close closes them. A nil device, a device that fails to create its backend, or a list
// that does not end with a CPU is an error (every backend created so far is closed again).
func NewFromDevices(devs []core.Device, opts Options) (*Scheduler, error) {
	var bes []core.Backend
	closeAll := func() {
		for _, b := range bes {
			b.Close()
		}
	}
	for i, d := range devs {
		if d == nil {
			closeAll()
			return nil, fmt.Errorf("tandem: scheduler: device %d is nil", i)
		}
		b, err := d.NewBackend()
		if err != nil {
			closeAll()
			return nil, core.Errorf("tandem: scheduler: creating a backend on %s: %w", d.Name(), err)
		}
		bes = append(bes, b)
	}
	s, err := New(bes, opts)
	if err != nil {
		closeAll()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// NewAll is NewFromDevices over every registered device (core.Devices: GPUs, integrated GPUs and
// accelerators such as software Vulkan drivers first, the CPU last). Devices register when their
// backend packages are imported; with no CPU registered it says to import backends/cpu.
//
// Placement policy: a scheduler runs each node where its weights live (weights are tensors in a
// buffer marked core.BufferUsageWeights), where SetTensorBackend pins it, or where its neighbours
// run; everything else runs on the CPU. So a graph whose weights are all in host memory runs on
// the CPU alone even with a GPU in the list: place the weights in a GPU's buffers (for example
// alloc.AllocCtxTensors(ctx, s.Backend(0))) to get a split, or set Options.OpOffload to let a GPU
// take ops on host weights that its device wants (Device.OffloadOp).
func NewAll(opts Options) (*Scheduler, error) {
	devs := core.Devices()
	if len(devs) == 0 || devs[len(devs)-1].Type() != core.DeviceCPU {
		return nil, errors.New("tandem: scheduler: no CPU device registered: import _ \"github.com/tandem-ml/tandem/backends/cpu\"")
	}
	return NewFromDevices(devs, opts)
}
