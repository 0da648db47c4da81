//go:build cgo && !novulkan

package vkrt

import (
	"fmt"

	vk "github.com/vulkan-go/vulkan"
)

// DeviceType is VkPhysicalDeviceType.
type DeviceType int

// Device types, with Vulkan's values.
const (
	DeviceTypeOther DeviceType = iota
	DeviceTypeIntegratedGPU
	DeviceTypeDiscreteGPU
	DeviceTypeVirtualGPU
	DeviceTypeCPU
)

func (t DeviceType) String() string {
	switch t {
	case DeviceTypeIntegratedGPU:
		return "integrated GPU"
	case DeviceTypeDiscreteGPU:
		return "discrete GPU"
	case DeviceTypeVirtualGPU:
		return "virtual GPU"
	case DeviceTypeCPU:
		return "CPU"
	}
	return "other"
}

// Memory property flags (VkMemoryPropertyFlagBits).
const (
	MemoryDeviceLocal  = uint32(vk.MemoryPropertyDeviceLocalBit)
	MemoryHostVisible  = uint32(vk.MemoryPropertyHostVisibleBit)
	MemoryHostCoherent = uint32(vk.MemoryPropertyHostCoherentBit)
	MemoryHostCached   = uint32(vk.MemoryPropertyHostCachedBit)
)

// MemoryHeap is one VkMemoryHeap.
type MemoryHeap struct {
	Size        uint64
	DeviceLocal bool
}

// MemoryType is one VkMemoryType.
type MemoryType struct {
	Flags     uint32 // Memory* flags
	HeapIndex uint32
}

// Limits are the physical-device limits tandem uses.
type Limits struct {
	MaxStorageBufferRange           uint32 // largest range one storage-buffer binding may cover
	MaxPushConstantsSize            uint32
	MaxMemoryAllocationCount        uint32
	MaxBoundDescriptorSets          uint32
	MaxPerStageStorageBuffers       uint32
	MaxComputeSharedMemorySize      uint32
	MaxComputeWorkGroupCount        [3]uint32
	MaxComputeWorkGroupSize         [3]uint32
	MaxComputeWorkGroupInvocations  uint32
	MinStorageBufferOffsetAlignment uint64
	MinMemoryMapAlignment           uint64
	NonCoherentAtomSize             uint64
	MaxMemoryAllocationSize         uint64 // VkPhysicalDeviceMaintenance3Properties; 0 if unknown
	TimestampPeriod                 float32
	TimestampComputeAndGraphics     bool
}

// Subgroup describes subgroup support (VkPhysicalDeviceSubgroupProperties and,
// on Vulkan 1.3, the subgroup size control range).
type Subgroup struct {
	Size             uint32 // default subgroup size
	MinSize, MaxSize uint32
	Stages           uint32 // VkShaderStageFlags
	Operations       uint32 // VkSubgroupFeatureFlags: basic 1, vote 2, arithmetic 4, ballot 8, shuffle 16, ...
}

// Subgroup operation bits.
const (
	SubgroupBasic      = 1 << 0
	SubgroupVote       = 1 << 1
	SubgroupArithmetic = 1 << 2
	SubgroupBallot     = 1 << 3
	SubgroupShuffle    = 1 << 4
)

// Features lists the optional features tandem's shaders may use; NewDevice
// enables every one the device supports.
type Features struct {
	StorageBuffer16BitAccess           bool // 16-bit loads/stores in storage buffers (f16 tensors, quant blocks)
	UniformAndStorageBuffer16BitAccess bool
	StorageBuffer8BitAccess            bool
	UniformAndStorageBuffer8BitAccess  bool
	ShaderFloat16                      bool // f16 arithmetic
	ShaderInt8                         bool
	ShaderInt16                        bool
	ShaderInt64                        bool
	ShaderFloat64                      bool
}

// DeviceInfo describes a physical device.
type DeviceInfo struct {
	Index         int // position in Instance.Devices
	Name          string
	Type          DeviceType
	VendorID      uint32
	DeviceID      uint32
	APIVersion    uint32 // VK_MAKE_VERSION encoding; see Version
	DriverVersion uint32
	DriverID      int32 // VkDriverId (Vulkan 1.2); 0 if unknown
	DriverName    string
	DriverInfo    string
	DeviceUUID    [16]byte
	DriverUUID    [16]byte

	MemoryHeaps []MemoryHeap
	MemoryTypes []MemoryType
	Limits      Limits
	Subgroup    Subgroup
	Features    Features
	Extensions  []string

	// ComputeQueueFamily is the queue family used for compute (one without
	// graphics if there is one); -1 when the device has none.
	ComputeQueueFamily int
	TimestampValidBits uint32 // of that family; 0: no timestamps
}

// Version returns the device's Vulkan version as "major.minor.patch".
func (d *DeviceInfo) Version() string { return versionString(d.APIVersion) }

// Usable returns nil when tandem can run on the device, else the reason.
func (d *DeviceInfo) Usable() error {
	if d.APIVersion < vk.MakeVersion(1, 2, 0) {
		return fmt.Errorf("%s supports Vulkan %s, tandem needs 1.2: %w", d.Name, d.Version(), ErrUnsupportedDevice)
	}
	if d.ComputeQueueFamily < 0 {
		return fmt.Errorf("%s has no compute queue: %w", d.Name, ErrUnsupportedDevice)
	}
	return nil
}

// DeviceLocalMemory returns the total size of the device-local heaps.
func (d *DeviceInfo) DeviceLocalMemory() uint64 {
	var n uint64
	for _, h := range d.MemoryHeaps {
		if h.DeviceLocal {
			n += h.Size
		}
	}
	return n
}

// HasExtension reports whether the device exposes the named extension.
func (d *DeviceInfo) HasExtension(name string) bool {
	for _, e := range d.Extensions {
		if e == name {
			return true
		}
	}
	return false
}

func (d *DeviceInfo) String() string {
	return fmt.Sprintf("%s (%s, Vulkan %s, %s)", d.Name, d.Type, d.Version(), d.DriverName)
}

func queryDevice(inst vk.Instance, pd vk.PhysicalDevice, index int) *DeviceInfo {
	info := &DeviceInfo{Index: index, ComputeQueueFamily: -1}

	var props vk.PhysicalDeviceProperties
	vk.GetPhysicalDeviceProperties(pd, &props)
	props.Deref()
	props.Limits.Deref()
	lim := &props.Limits
	info.Name = cstr(props.DeviceName[:])
	info.Type = DeviceType(props.DeviceType)
	info.VendorID = props.VendorID
	info.DeviceID = props.DeviceID
	info.APIVersion = props.ApiVersion
	info.DriverVersion = props.DriverVersion
	info.Limits = Limits{
		MaxStorageBufferRange:           lim.MaxStorageBufferRange,
		MaxPushConstantsSize:            lim.MaxPushConstantsSize,
		MaxMemoryAllocationCount:        lim.MaxMemoryAllocationCount,
		MaxBoundDescriptorSets:          lim.MaxBoundDescriptorSets,
		MaxPerStageStorageBuffers:       lim.MaxPerStageDescriptorStorageBuffers,
		MaxComputeSharedMemorySize:      lim.MaxComputeSharedMemorySize,
		MaxComputeWorkGroupCount:        lim.MaxComputeWorkGroupCount,
		MaxComputeWorkGroupSize:         lim.MaxComputeWorkGroupSize,
		MaxComputeWorkGroupInvocations:  lim.MaxComputeWorkGroupInvocations,
		MinStorageBufferOffsetAlignment: uint64(lim.MinStorageBufferOffsetAlignment),
		MinMemoryMapAlignment:           uint64(lim.MinMemoryMapAlignment),
		NonCoherentAtomSize:             uint64(lim.NonCoherentAtomSize),
		TimestampPeriod:                 lim.TimestampPeriod,
		TimestampComputeAndGraphics:     lim.TimestampComputeAndGraphics == vk.True,
	}
	props.Free()

	var feats vk.PhysicalDeviceFeatures
	vk.GetPhysicalDeviceFeatures(pd, &feats)
	feats.Deref()
	info.Features.ShaderInt16 = feats.ShaderInt16 == vk.True
	info.Features.ShaderInt64 = feats.ShaderInt64 == vk.True
	info.Features.ShaderFloat64 = feats.ShaderFloat64 == vk.True
	feats.Free()

	var mem vk.PhysicalDeviceMemoryProperties
	vk.GetPhysicalDeviceMemoryProperties(pd, &mem)
	mem.Deref()
	for i := range mem.MemoryHeapCount {
		h := &mem.MemoryHeaps[i]
		h.Deref()
		info.MemoryHeaps = append(info.MemoryHeaps, MemoryHeap{
			Size:        uint64(h.Size),
			DeviceLocal: h.Flags&vk.MemoryHeapFlags(vk.MemoryHeapDeviceLocalBit) != 0,
		})
	}
	for i := range mem.MemoryTypeCount {
		t := &mem.MemoryTypes[i]
		t.Deref()
		info.MemoryTypes = append(info.MemoryTypes, MemoryType{Flags: uint32(t.PropertyFlags), HeapIndex: t.HeapIndex})
	}
	mem.Free()

	var nq uint32
	vk.GetPhysicalDeviceQueueFamilyProperties(pd, &nq, nil)
	qs := make([]vk.QueueFamilyProperties, nq)
	vk.GetPhysicalDeviceQueueFamilyProperties(pd, &nq, qs)
	best := -1
	var bestBits uint32
	for i := range qs[:nq] {
		qs[i].Deref()
		fl := qs[i].QueueFlags
		if fl&vk.QueueFlags(vk.QueueComputeBit) == 0 || qs[i].QueueCount == 0 {
			continue
		}
		dedicated := fl&vk.QueueFlags(vk.QueueGraphicsBit) == 0
		if best < 0 || (dedicated && qs[best].QueueFlags&vk.QueueFlags(vk.QueueGraphicsBit) != 0) {
			best, bestBits = i, qs[i].TimestampValidBits
		}
	}
	info.ComputeQueueFamily = best
	info.TimestampValidBits = bestBits

	var ne uint32
	if vk.EnumerateDeviceExtensionProperties(pd, "", &ne, nil) == vk.Success && ne > 0 {
		exts := make([]vk.ExtensionProperties, ne)
		if vk.EnumerateDeviceExtensionProperties(pd, "", &ne, exts) == vk.Success {
			for i := range exts[:ne] {
				exts[i].Deref()
				info.Extensions = append(info.Extensions, cstr(exts[i].ExtensionName[:]))
			}
		}
	}

	e := cQueryDevice(inst, pd, info.APIVersion)
	if e.ok {
		info.Subgroup = Subgroup{
			Size:       e.subgroupSize,
			MinSize:    e.minSubgroupSize,
			MaxSize:    e.maxSubgroupSize,
			Stages:     e.subgroupStages,
			Operations: e.subgroupOps,
		}
		info.Limits.MaxMemoryAllocationSize = e.maxMemoryAllocationSize
		info.DeviceUUID = e.deviceUUID
		info.DriverUUID = e.driverUUID
		info.DriverID = e.driverID
		info.DriverName = e.driverName
		info.DriverInfo = e.driverInfo
		info.Features.StorageBuffer16BitAccess = e.storageBuffer16BitAccess
		info.Features.UniformAndStorageBuffer16BitAccess = e.uniformAndStorageBuffer16BitAccess
		info.Features.StorageBuffer8BitAccess = e.storageBuffer8BitAccess
		info.Features.UniformAndStorageBuffer8BitAccess = e.uniformAndStorageBuffer8BitAccess
		info.Features.ShaderFloat16 = e.shaderFloat16
		info.Features.ShaderInt8 = e.shaderInt8
	}
	return info
}
