//go:build gl && cgo

package gl

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// ErrUnavailable is wrapped by the errors New returns when OpenGL cannot be used.
var ErrUnavailable = errors.New("tandem: gl: unavailable")

// The process-wide state: the one device (created on first use) or why there is none.
var state struct {
	mu     sync.Mutex
	inited bool
	dev    *device
	err    error
}

func init() {
	core.Register(core.Registration{Name: "GL", Devices: Devices})
}

// initState opens the context once; state.mu is held.
func initState() {
	if state.inited {
		return
	}
	state.inited = true
	if os.Getenv("TANDEM_GL_DISABLE") == "1" {
		state.err = errors.New("disabled by TANDEM_GL_DISABLE=1")
		return
	}
	t, err := startThread(os.Getenv("TANDEM_GL_DEBUG") == "1")
	if err != nil {
		state.err = fmt.Errorf("%w (needs libEGL with a surfaceless platform and an OpenGL 4.3 driver; Debian: libegl1 libgl1-mesa-dri)", err)
		return
	}
	d := &device{name: "GL0", t: t, info: &t.info}
	d.buft = &bufferType{dev: d, name: d.name}
	state.dev = d
}

// Available reports whether a usable OpenGL device exists, and if not, why.
func Available() (bool, string) {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	if state.err != nil {
		return false, state.err.Error()
	}
	return true, ""
}

// Devices returns the usable OpenGL devices ("GL0"), as registered with core.
func Devices() []core.Device {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	if state.dev == nil {
		return nil
	}
	return []core.Device{state.dev}
}

func theDevice() (*device, error) {
	state.mu.Lock()
	defer state.mu.Unlock()
	initState()
	if state.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, state.err)
	}
	return state.dev, nil
}

// device is the OpenGL context's device.
type device struct {
	name string
	t    *glThread
	info *devInfo
	buft *bufferType
}

var (
	_ core.Device        = (*device)(nil)
	_ core.FeatureLister = (*device)(nil)
)

func (d *device) Name() string { return d.name }

func (d *device) Description() string {
	return fmt.Sprintf("%s (%s, OpenGL %s)", d.info.Renderer, d.info.Vendor, d.info.Version)
}

// Type is core.DeviceAccel for software rasterizers (llvmpipe: usable when asked for, never
// preferred over the CPU backend) and core.DeviceGPU otherwise.
func (d *device) Type() core.DeviceType {
	if d.info.ops.Software {
		return core.DeviceAccel
	}
	return core.DeviceGPU
}

// Memory reports 2 GiB as free and total: OpenGL has no portable memory query.
func (d *device) Memory() (free, total int64) { return 2 << 30, 2 << 30 }

func (d *device) SupportsOp(t *core.Tensor) bool { return gpuops.Supports(&d.info.ops, t) }

// SupportsBufferType accepts only the device's own memory: the scheduler copies other tensors in.
func (d *device) SupportsBufferType(bt core.BufferType) bool { return bt == core.BufferType(d.buft) }

// OffloadOp is false: weights are not worth copying to this device.
func (d *device) OffloadOp(*core.Tensor) bool { return false }

func (d *device) BufferType() core.BufferType { return d.buft }

func (d *device) NewBackend() (core.Backend, error) { return New() }

func (d *device) Features() []core.Feature {
	l := &d.info.ops
	return []core.Feature{
		{Name: "GL_VERSION", Value: d.info.Version},
		{Name: "GLSL", Value: d.info.GLSL},
		{Name: "MAX_STORAGE_BUFFER_RANGE", Value: fmt.Sprint(l.MaxStorageBufferRange)},
		{Name: "MAX_SHARED_MEMORY", Value: fmt.Sprint(l.MaxComputeSharedMemorySize)},
	}
}
