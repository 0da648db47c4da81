//go:build cgo && !novulkan

package vkrt

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	vk "github.com/vulkan-go/vulkan"
)

// MaxPushConstants is the largest push-constant block tandem uses (the
// minimum every Vulkan device supports).
const MaxPushConstants = 128

// MaxBindings is the largest number of storage buffers a pipeline may bind.
const MaxBindings = 16

// Compile-time check that capi.h agrees.
var _ = [1]struct{}{}[MaxBindings-maxBindings]

// PipelineDesc describes a compute pipeline: a SPIR-V module whose entry point
// reads and writes Bindings storage buffers (set 0, bindings 0..Bindings-1),
// takes PushSize bytes of push constants and has its specialization constants
// 0..len(Spec)-1 set to Spec (32-bit each).
type PipelineDesc struct {
	Name     string // with Spec, the cache key: one pipeline per (Name, Spec)
	SPIRV    []byte
	Entry    string // default "main"
	Bindings int
	PushSize uint32 // multiple of 4, at most MaxPushConstants
	Spec     []uint32
}

// Pipeline is a compiled compute pipeline, owned by its device's cache.
type Pipeline struct {
	d         *Device
	name      string
	spec      []uint32
	bindings  int
	pushSize  uint32
	setLayout vk.DescriptorSetLayout
	layout    vk.PipelineLayout
	pipe      vk.Pipeline
}

// Name returns the pipeline's name.
func (p *Pipeline) Name() string { return p.name }

// Bindings returns the number of storage buffers the pipeline binds.
func (p *Pipeline) Bindings() int { return p.bindings }

// PushSize returns the size of the pipeline's push constants in bytes.
func (p *Pipeline) PushSize() uint32 { return p.pushSize }

// Spec returns the pipeline's specialization constants.
func (p *Pipeline) Spec() []uint32 { return append([]uint32(nil), p.spec...) }

// PipelineStats counts pipeline-cache lookups.
type PipelineStats struct {
	Hits     int // lookups served from the cache
	Compiled int // pipelines created
}

// PipelineStats returns the device's pipeline-cache counters.
func (d *Device) PipelineStats() PipelineStats {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stats
}

func pipelineKey(name string, spec []uint32) string {
	var sb strings.Builder
	sb.WriteString(name)
	for _, v := range spec {
		sb.WriteByte('/')
		sb.WriteString(strconv.FormatUint(uint64(v), 10))
	}
	return sb.String()
}

// Pipeline returns the cached pipeline for (desc.Name, desc.Spec), creating it
// on first use. A cached pipeline whose Bindings or PushSize differ from desc's
// is an error (the same name was used for two shaders).
func (d *Device) Pipeline(desc PipelineDesc) (*Pipeline, error) {
	key := pipelineKey(desc.Name, desc.Spec)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, ErrClosed
	}
	if p, ok := d.pipelines[key]; ok {
		if p.bindings != desc.Bindings || p.pushSize != desc.PushSize {
			return nil, fmt.Errorf("vulkan: pipeline %s cached with %d bindings/%d push bytes, requested %d/%d: %w",
				key, p.bindings, p.pushSize, desc.Bindings, desc.PushSize, ErrInvalid)
		}
		d.stats.Hits++
		return p, nil
	}
	p, err := d.createPipeline(desc)
	if err != nil {
		return nil, fmt.Errorf("vulkan: pipeline %s: %w", key, err)
	}
	d.pipelines[key] = p
	d.stats.Compiled++
	return p, nil
}

// createPipeline compiles desc; d.mu is held.
func (d *Device) createPipeline(desc PipelineDesc) (*Pipeline, error) {
	if desc.Name == "" {
		return nil, fmt.Errorf("empty name: %w", ErrInvalid)
	}
	if desc.Bindings < 0 || desc.Bindings > MaxBindings {
		return nil, fmt.Errorf("%d bindings (max %d): %w", desc.Bindings, MaxBindings, ErrInvalid)
	}
	maxPush := min(uint32(MaxPushConstants), d.info.Limits.MaxPushConstantsSize)
	if desc.PushSize%4 != 0 || desc.PushSize > maxPush {
		return nil, fmt.Errorf("push constants of %d bytes (multiple of 4, max %d): %w", desc.PushSize, maxPush, ErrInvalid)
	}
	spv := desc.SPIRV
	if len(spv) < 20 || len(spv)%4 != 0 || binary.LittleEndian.Uint32(spv) != 0x07230203 {
		return nil, fmt.Errorf("not a little-endian SPIR-V module (%d bytes): %w", len(spv), ErrInvalid)
	}
	entry := desc.Entry
	if entry == "" {
		entry = "main"
	}
	setLayout, err := d.setLayout(desc.Bindings)
	if err != nil {
		return nil, err
	}
	layout, err := d.pipelineLayout(desc.Bindings, desc.PushSize, setLayout)
	if err != nil {
		return nil, err
	}

	pipe, r := cCreateComputePipeline(d.fns, d.dev, spv, entry, desc.Spec, layout)
	if err := resultError("vkCreateComputePipelines", r); err != nil {
		return nil, err
	}
	return &Pipeline{
		d:         d,
		name:      desc.Name,
		spec:      append([]uint32(nil), desc.Spec...),
		bindings:  desc.Bindings,
		pushSize:  desc.PushSize,
		setLayout: setLayout,
		layout:    layout,
		pipe:      pipe,
	}, nil
}

// setLayout returns the cached descriptor-set layout with n storage buffers;
// d.mu is held.
func (d *Device) setLayout(n int) (vk.DescriptorSetLayout, error) {
	if l, ok := d.setLayouts[n]; ok {
		return l, nil
	}
	binds := make([]vk.DescriptorSetLayoutBinding, n)
	for i := range binds {
		binds[i] = vk.DescriptorSetLayoutBinding{
			Binding:         uint32(i),
			DescriptorType:  vk.DescriptorTypeStorageBuffer,
			DescriptorCount: 1,
			StageFlags:      vk.ShaderStageFlags(vk.ShaderStageComputeBit),
		}
	}
	ci := &vk.DescriptorSetLayoutCreateInfo{
		SType:        vk.StructureTypeDescriptorSetLayoutCreateInfo,
		BindingCount: uint32(n),
		PBindings:    binds,
	}
	var l vk.DescriptorSetLayout
	r := vk.CreateDescriptorSetLayout(d.dev, ci, nil, &l)
	ci.Free()
	if err := resultError("vkCreateDescriptorSetLayout", int32(r)); err != nil {
		return l, err
	}
	d.setLayouts[n] = l
	return l, nil
}

// pipelineLayout returns the cached pipeline layout for (n bindings, push
// bytes); d.mu is held.
func (d *Device) pipelineLayout(n int, push uint32, set vk.DescriptorSetLayout) (vk.PipelineLayout, error) {
	key := [2]uint32{uint32(n), push}
	if l, ok := d.pipeLayouts[key]; ok {
		return l, nil
	}
	ci := &vk.PipelineLayoutCreateInfo{
		SType:          vk.StructureTypePipelineLayoutCreateInfo,
		SetLayoutCount: 1,
		PSetLayouts:    []vk.DescriptorSetLayout{set},
	}
	if push > 0 {
		ci.PushConstantRangeCount = 1
		ci.PPushConstantRanges = []vk.PushConstantRange{{
			StageFlags: vk.ShaderStageFlags(vk.ShaderStageComputeBit),
			Size:       push,
		}}
	}
	var l vk.PipelineLayout
	r := vk.CreatePipelineLayout(d.dev, ci, nil, &l)
	ci.Free()
	if err := resultError("vkCreatePipelineLayout", int32(r)); err != nil {
		return l, err
	}
	d.pipeLayouts[key] = l
	return l, nil
}
