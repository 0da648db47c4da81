//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
)

// device is one usable Vulkan physical device; its logical device is created
// on first use and shared by every backend and buffer on it. The embedded shared
// device gives its name, ops and device memory ("Vulkan0").
type device struct {
	*gpubackend.Device
	index    int
	name     string
	inst     *vkrt.Instance // the instance the device was listed by (fixed at creation)
	info     *vkrt.DeviceInfo
	gpu      *gpuops.Device // info in the terms of the op encoders
	hostBuft *gpubackend.BufferType

	mu     sync.Mutex
	vd     *vkrt.Device
	err    error
	closed bool
}

var (
	_ core.Device          = (*device)(nil)
	_ core.HostBufferTyper = (*device)(nil)
	_ core.FeatureLister   = (*device)(nil)
)

// maxBufferSize caps device buffers (ggml's suballocation block size) so that
// allocators split large requests.
const maxBufferSize = 1 << 30

func newDevice(inst *vkrt.Instance, i int, info *vkrt.DeviceInfo) *device {
	d := &device{index: i, name: fmt.Sprintf("Vulkan%d", i), inst: inst, info: info, gpu: opsDevice(info)}
	// Buffers are bound where tensors start: align them to minStorageBufferOffsetAlignment (host
	// memory to at least 32, as core's host buffers); cap them at 1 GiB or
	// maxMemoryAllocationSize if smaller.
	align := max(int64(info.Limits.MinStorageBufferOffsetAlignment), 4)
	maxSize := int64(maxBufferSize)
	if m := int64(info.Limits.MaxMemoryAllocationSize); m > 0 && m < maxSize {
		maxSize = m
	}
	d.Device = gpubackend.NewDevice(gpubackend.DeviceConfig{
		API:       api,
		Name:      d.name,
		Physical:  info.Name,
		Core:      d,
		Ops:       d.gpu,
		Memory:    vkMemory{d},
		Alignment: align,
		MaxSize:   maxSize,
		LogAttrs:  d.logAttrs,
		Messages:  ValidationMessages,
	})
	d.hostBuft = d.NewBufferType(d.name+"_Host", true, max(align, 32), maxSize)
	return d
}

// opsDevice describes a Vulkan device to the op encoders.
func opsDevice(info *vkrt.DeviceInfo) *gpuops.Device {
	const computeStage = 0x20 // VK_SHADER_STAGE_COMPUTE_BIT
	l := info.Limits
	return &gpuops.Device{
		Software:                        info.Type == vkrt.DeviceTypeCPU,
		SubgroupSize:                    info.Subgroup.Size,
		SubgroupArithmetic:              info.Subgroup.Operations&vkrt.SubgroupArithmetic != 0 && info.Subgroup.Stages&computeStage != 0,
		Storage16Bit:                    info.Features.StorageBuffer16BitAccess,
		MaxComputeWorkGroupCount:        l.MaxComputeWorkGroupCount,
		MaxComputeWorkGroupSize:         l.MaxComputeWorkGroupSize,
		MaxComputeWorkGroupInvocations:  l.MaxComputeWorkGroupInvocations,
		MaxComputeSharedMemorySize:      l.MaxComputeSharedMemorySize,
		MaxStorageBufferRange:           l.MaxStorageBufferRange,
		MinStorageBufferOffsetAlignment: l.MinStorageBufferOffsetAlignment,
	}
}

// open returns the logical device, creating it on first use.
//
// Lock order: state.mu before d.mu (Shutdown holds state.mu while it closes each device). open
// takes only d.mu, never state.mu: the instance it needs is fixed when the device is listed.
func (d *device) open() (*vkrt.Device, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("tandem: vulkan: %s was shut down: %w", d.name, vkrt.ErrClosed)
	}
	if d.vd == nil && d.err == nil {
		opts := vkrt.DeviceOptions{ForceStaging: os.Getenv("TANDEM_VK_FORCE_STAGING") == "1"}
		d.vd, d.err = d.inst.NewDevice(d.info.Index, opts)
		if d.err != nil {
			d.err = fmt.Errorf("tandem: vulkan: opening %s (%s): %w", d.name, d.info.Name, d.err)
		}
	}
	return d.vd, d.err
}

func (d *device) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	if d.vd == nil {
		return nil
	}
	err := d.vd.Close()
	d.vd = nil
	return err
}

func (d *device) Description() string { return d.info.String() }

// Type maps Vulkan device types: discrete and virtual GPUs are core.DeviceGPU,
// integrated GPUs core.DeviceIGPU, and software (CPU) or other devices
// core.DeviceAccel: usable when asked for, never preferred over the CPU backend.
func (d *device) Type() core.DeviceType {
	switch d.info.Type {
	case vkrt.DeviceTypeDiscreteGPU, vkrt.DeviceTypeVirtualGPU:
		return core.DeviceGPU
	case vkrt.DeviceTypeIntegratedGPU:
		return core.DeviceIGPU
	}
	return core.DeviceAccel
}

// Memory reports the device-local heaps' size as both free and total (no
// memory-budget query yet).
func (d *device) Memory() (free, total int64) {
	n := int64(d.info.DeviceLocalMemory())
	return n, n
}

// HostBufferType is pinned (host-visible, coherent) memory of the device:
// host memory for the CPU backend that the GPU can copy from directly.
func (d *device) HostBufferType() core.BufferType { return d.hostBuft }

// NewBackend creates a backend on this device; after Shutdown (which retires the device) it is
// an error: get the device again from Devices or the registry.
func (d *device) NewBackend() (core.Backend, error) {
	d.mu.Lock()
	closed := d.closed
	d.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("tandem: vulkan: %s was shut down: %w", d.name, vkrt.ErrClosed)
	}
	return New(d.index)
}

func (d *device) Features() []core.Feature {
	i := d.info
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	return []core.Feature{
		{Name: "VULKAN_VERSION", Value: i.Version()},
		{Name: "DRIVER", Value: i.DriverName},
		{Name: "SUBGROUP_SIZE", Value: fmt.Sprint(i.Subgroup.Size)},
		{Name: "FP16", Value: b(i.Features.ShaderFloat16)},
		{Name: "STORAGE_16BIT", Value: b(i.Features.StorageBuffer16BitAccess)},
		{Name: "INT8", Value: b(i.Features.ShaderInt8)},
		{Name: "MAX_STORAGE_BUFFER_RANGE", Value: fmt.Sprint(i.Limits.MaxStorageBufferRange)},
	}
}

// logAttrs is what SetLogger reports after the device's name: its physical device, the device
// list (TANDEM_VK_VISIBLE_DEVICES and the devices skipped), TANDEM_VK_FORCE_STAGING and whether the
// validation layer is on (TANDEM_VK_VALIDATE).
func (d *device) logAttrs() []slog.Attr {
	state.mu.Lock()
	devices := state.why
	state.mu.Unlock()
	return []slog.Attr{
		slog.String("physical", d.info.Name),
		slog.String("devices", devices),
		slog.String("TANDEM_VK_VISIBLE_DEVICES", os.Getenv("TANDEM_VK_VISIBLE_DEVICES")),
		slog.Bool("force_staging", os.Getenv("TANDEM_VK_FORCE_STAGING") == "1"),
		slog.Bool("validation", vkrt.ValidateFromEnv()),
	}
}
