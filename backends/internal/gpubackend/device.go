package gpubackend

import (
	"log/slog"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// API names a GPU API in errors and log records.
type API struct {
	// Pkg is the package's name: errors start with "tandem: <Pkg>: ", log records are
	// "tandem <Pkg> backend", and a zero Backend says to create one with <Pkg>.New.
	Pkg string
	// Title is the API's name in prose: "not in Vulkan memory", "not supported by the Vulkan
	// backend".
	Title string
}

// prefix starts the API's error messages.
func (a *API) prefix() string { return core.Prefix + a.Pkg + ": " }

// DeviceConfig describes a device to NewDevice.
type DeviceConfig struct {
	API *API
	// Name is the device's name in tandem ("Vulkan0", "GL0"); its buffer type has the same name.
	Name string
	// Physical is the device as its API names it ("llvmpipe (LLVM 19.1.7, 256 bits)"), in errors.
	Physical string
	// Core is the package's device, which embeds the *Device NewDevice returns: what
	// Backend.Device and BufferType.Device return.
	Core core.Device
	// Ops describes the device to the op encoders (kernel choices and limits).
	Ops *gpuops.Device
	// Memory allocates and copies the device's buffers.
	Memory Memory
	// Alignment and MaxSize are the device buffer type's (core.BufferType's).
	Alignment, MaxSize int64
	// LogAttrs returns what SetLogger reports after the device's name: what the environment
	// decided (nil: nothing more).
	LogAttrs func() []slog.Attr
	// Messages returns the validation messages so far, one Debug record each ("tandem <Pkg>
	// validation"; nil: none).
	Messages func() []string
}

// Device is what a GPU device's core.Device implementation shares with the others: its name, the
// ops it runs and its buffer types. A package's device embeds it and adds Description, Type,
// Memory, NewBackend and its features.
type Device struct {
	cfg  DeviceConfig
	buft *BufferType
}

// NewDevice returns the shared part of the device cfg describes, with its buffer type.
func NewDevice(cfg DeviceConfig) *Device {
	d := &Device{cfg: cfg}
	d.buft = d.NewBufferType(cfg.Name, false, cfg.Alignment, cfg.MaxSize)
	return d
}

// NewBufferType returns a further buffer type of the device (Vulkan's pinned host memory: host
// true, allocated as Mapped memory).
func (d *Device) NewBufferType(name string, host bool, alignment, maxSize int64) *BufferType {
	return &BufferType{dev: d, name: name, host: host, align: alignment, maxSize: maxSize}
}

// Name is the device's name ("Vulkan0").
func (d *Device) Name() string { return d.cfg.Name }

// Ops describes the device to the op encoders.
func (d *Device) Ops() *gpuops.Device { return d.cfg.Ops }

// SupportsOp reports whether the encoders run t on the device.
func (d *Device) SupportsOp(t *core.Tensor) bool { return gpuops.Supports(d.cfg.Ops, t) }

// SupportsBufferType accepts only the device's own memory, as ggml does: the scheduler copies
// other tensors in.
func (d *Device) SupportsBufferType(bt core.BufferType) bool { return bt == core.BufferType(d.buft) }

// OffloadOp is false: the current kernels are not fast enough to be worth copying weights for.
func (d *Device) OffloadOp(*core.Tensor) bool { return false }

// BufferType is the device's memory.
func (d *Device) BufferType() core.BufferType { return d.buft }
