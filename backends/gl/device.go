//go:build gl && cgo

package gl

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
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
	state.dev = newDevice(t)
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

// device is the OpenGL context's device. The embedded shared device gives its name, ops and
// memory ("GL0"); the GL thread allocates and runs everything.
type device struct {
	*gpubackend.Device
	name string
	t    *glThread
	info *devInfo
}

// maxBufferSize caps device buffers so that allocators split large requests.
const maxBufferSize = 1 << 30

// newDevice returns the device of the context t owns.
func newDevice(t *glThread) *device {
	d := &device{name: "GL0", t: t, info: &t.info}
	d.Device = gpubackend.NewDevice(gpubackend.DeviceConfig{
		API:      api,
		Name:     d.name,
		Physical: d.info.Renderer,
		Core:     d,
		Ops:      &d.info.ops,
		Memory:   t,
		// GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, so tensors can be bound where they start.
		Alignment: int64(max(d.info.ops.MinStorageBufferOffsetAlignment, 4)),
		MaxSize:   maxBufferSize,
		LogAttrs:  d.logAttrs,
	})
	return d
}

var (
	_ core.Device        = (*device)(nil)
	_ core.FeatureLister = (*device)(nil)
)

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

func (d *device) NewBackend() (core.Backend, error) { return New(0) }

func (d *device) Features() []core.Feature {
	l := &d.info.ops
	return []core.Feature{
		{Name: "GL_VERSION", Value: d.info.Version},
		{Name: "GLSL", Value: d.info.GLSL},
		{Name: "MAX_STORAGE_BUFFER_RANGE", Value: fmt.Sprint(l.MaxStorageBufferRange)},
		{Name: "MAX_SHARED_MEMORY", Value: fmt.Sprint(l.MaxComputeSharedMemorySize)},
	}
}

// logAttrs is what SetLogger reports after the device's name: its renderer, vendor and
// OpenGL/GLSL versions, whether it counts as a software device, and whether a debug context is on
// (TANDEM_GL_DEBUG).
func (d *device) logAttrs() []slog.Attr {
	info := d.info
	return []slog.Attr{
		slog.String("renderer", info.Renderer),
		slog.String("vendor", info.Vendor),
		slog.String("version", info.Version),
		slog.String("glsl", info.GLSL),
		slog.Bool("software", info.ops.Software),
		slog.Bool("debug", os.Getenv("TANDEM_GL_DEBUG") == "1"),
	}
}
