//go:build cgo && !novulkan

package vkrt

import (
	"errors"
	"fmt"
	"sync"

	vk "github.com/vulkan-go/vulkan"
)

// DeviceOptions configure NewDevice.
type DeviceOptions struct {
	// ForceStaging makes device buffers behave as if their memory were not
	// host-visible: no mapping, every Write/Read/Memset goes through a staging
	// buffer and a copy command. It exercises the path discrete GPUs need.
	ForceStaging bool

	// StagingSize is the largest staging buffer (transfers are chunked);
	// default 16 MiB.
	StagingSize uint64

	// DescriptorPoolSets is the number of descriptor sets per descriptor pool
	// (pools are added as needed); default 256.
	DescriptorPoolSets uint32

	// MaxTimestamps is the number of timestamp queries per command buffer;
	// default 256.
	MaxTimestamps uint32

	// FenceTimeoutNS bounds every wait for the GPU (0: wait forever). A timed-out
	// wait returns ErrTimeout.
	FenceTimeoutNS uint64
}

// Device is a logical device with one compute queue.
type Device struct {
	inst  *Instance
	info  *DeviceInfo
	opts  DeviceOptions
	dev   vk.Device
	queue vk.Queue
	qfam  uint32
	fns   cDevfns

	// queueMu serializes vkQueueSubmit (queues are externally synchronized).
	queueMu sync.Mutex

	// use counts the operations in progress (use.go): Close waits for them, so it never
	// destroys the device under a creation, a host copy or recorded work.
	use useCount

	mu          sync.Mutex // guards the fields below
	closed      bool
	setLayouts  map[int]vk.DescriptorSetLayout
	pipeLayouts map[[2]uint32]vk.PipelineLayout
	pipelines   map[string]*Pipeline
	stats       PipelineStats
	freeCmds    []*Commands
	allCmds     map[*Commands]struct{}
	buffers     map[*Buffer]struct{}

	stagingMu sync.Mutex // held during a staged transfer
	staging   *Buffer
}

// NewDevice creates a logical device on physical device index with one compute
// queue, enabling the optional features (16-bit/8-bit storage, float16, int8,
// int16, int64) the device supports.
func (in *Instance) NewDevice(index int, opts DeviceOptions) (*Device, error) {
	if index < 0 || index >= len(in.infos) {
		return nil, fmt.Errorf("vulkan: device %d of %d: %w", index, len(in.infos), ErrNoDevice)
	}
	info := in.infos[index]
	if err := info.Usable(); err != nil {
		return nil, err
	}
	if opts.StagingSize == 0 {
		opts.StagingSize = 16 << 20
	}
	if opts.DescriptorPoolSets == 0 {
		opts.DescriptorPoolSets = 256
	}
	if opts.MaxTimestamps == 0 {
		opts.MaxTimestamps = 256
	}
	in.mu.Lock()
	closed := in.closed
	in.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}

	f := info.Features
	feats := []vk.PhysicalDeviceFeatures{{
		ShaderInt16:   b2vk(f.ShaderInt16),
		ShaderInt64:   b2vk(f.ShaderInt64),
		ShaderFloat64: b2vk(f.ShaderFloat64),
	}}
	qci := []vk.DeviceQueueCreateInfo{{
		SType:            vk.StructureTypeDeviceQueueCreateInfo,
		QueueFamilyIndex: uint32(info.ComputeQueueFamily),
		QueueCount:       1,
		PQueuePriorities: []float32{1},
	}}
	dci := &vk.DeviceCreateInfo{
		SType:                vk.StructureTypeDeviceCreateInfo,
		QueueCreateInfoCount: 1,
		PQueueCreateInfos:    qci,
		PEnabledFeatures:     feats,
	}
	var freeChain func()
	dci.PNext, freeChain = cFeatureChain(info.APIVersion, f)
	var dev vk.Device
	r := vk.CreateDevice(in.phys[index], dci, nil, &dev)
	dci.Free()
	freeChain()
	if err := resultError("vkCreateDevice", int32(r)); err != nil {
		return nil, fmt.Errorf("%s: %w", info.Name, err)
	}
	fns, err := cLoadDevfns(in.inst, dev)
	if err != nil {
		vk.DestroyDevice(dev, nil)
		return nil, err
	}
	d := &Device{
		inst:        in,
		info:        info,
		opts:        opts,
		dev:         dev,
		qfam:        uint32(info.ComputeQueueFamily),
		fns:         fns,
		setLayouts:  map[int]vk.DescriptorSetLayout{},
		pipeLayouts: map[[2]uint32]vk.PipelineLayout{},
		pipelines:   map[string]*Pipeline{},
		allCmds:     map[*Commands]struct{}{},
		buffers:     map[*Buffer]struct{}{},
	}
	var q vk.Queue
	vk.GetDeviceQueue(dev, d.qfam, 0, &q)
	d.queue = q

	in.mu.Lock()
	in.devices[d] = struct{}{}
	in.mu.Unlock()
	return d, nil
}

func b2vk(b bool) vk.Bool32 {
	if b {
		return vk.True
	}
	return vk.False
}

// Info describes the physical device.
func (d *Device) Info() *DeviceInfo { return d.info }

// Options returns the options the device was created with (defaults filled in).
func (d *Device) Options() DeviceOptions { return d.opts }

// Instance returns the instance the device belongs to.
func (d *Device) Instance() *Instance { return d.inst }

// WaitIdle waits until the queue has finished all submitted work.
func (d *Device) WaitIdle() error {
	d.queueMu.Lock()
	defer d.queueMu.Unlock()
	return resultError("vkQueueWaitIdle", int32(vk.QueueWaitIdle(d.queue)))
}

// Close waits for the device to go idle and destroys everything created from
// it (buffers still alive included), then the device. It is idempotent.
func (d *Device) Close() error {
	d.beginClose()
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()

	d.queueMu.Lock()
	waitErr := resultError("vkDeviceWaitIdle", int32(vk.DeviceWaitIdle(d.dev)))
	d.queueMu.Unlock()

	d.mu.Lock()
	for c := range d.allCmds {
		c.destroy()
	}
	d.allCmds, d.freeCmds = nil, nil
	for _, p := range d.pipelines {
		vk.DestroyPipeline(d.dev, p.pipe, nil)
	}
	d.pipelines = nil
	for _, l := range d.pipeLayouts {
		vk.DestroyPipelineLayout(d.dev, l, nil)
	}
	d.pipeLayouts = nil
	for _, l := range d.setLayouts {
		vk.DestroyDescriptorSetLayout(d.dev, l, nil)
	}
	d.setLayouts = nil
	bufs := d.buffers
	d.buffers = nil
	d.mu.Unlock()

	for b := range bufs {
		b.release()
	}
	d.staging = nil
	cFreeDevfns(d.fns)
	d.fns = nil
	vk.DestroyDevice(d.dev, nil)

	d.inst.mu.Lock()
	delete(d.inst.devices, d)
	d.inst.mu.Unlock()
	if errors.Is(waitErr, ErrDeviceLost) {
		return waitErr
	}
	return nil
}

func (d *Device) checkOpen() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	return nil
}

// wait waits for fence (honouring FenceTimeoutNS) and resets it.
func (d *Device) wait(fence vk.Fence) error {
	timeout := d.opts.FenceTimeoutNS
	if timeout == 0 {
		timeout = ^uint64(0)
	}
	if err := resultError("vkWaitForFences", cWaitFence(d.fns, d.dev, fence, timeout)); err != nil {
		return err
	}
	return resultError("vkResetFences", cResetFence(d.fns, d.dev, fence))
}
