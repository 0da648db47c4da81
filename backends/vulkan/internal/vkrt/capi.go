//go:build cgo && !novulkan

package vkrt

/*
#cgo linux LDFLAGS: -ldl
#include "capi.h"
*/
import "C"

import (
	"errors"
	"unsafe"

	vk "github.com/vulkan-go/vulkan"
)

// This file is the only one that includes capi.h (its functions keep static
// state), so every call into C goes through the wrappers below.
//
// Handle conversions: vulkan-go's handle types are C pointers defined in its own
// package (non-dispatchable handles are pointers to opaque structs on 64-bit
// platforms, as in the Vulkan headers). capi.h takes dispatchable handles as
// void* and non-dispatchable ones as uint64_t. Converting a C pointer to
// unsafe.Pointer (and to an integer) is safe: it never points into Go memory and
// is not dereferenced on the Go side; it only travels back to C unchanged.

func hInstance(h vk.Instance) unsafe.Pointer         { return unsafe.Pointer(h) }
func hPhys(h vk.PhysicalDevice) unsafe.Pointer       { return unsafe.Pointer(h) }
func hDevice(h vk.Device) unsafe.Pointer             { return unsafe.Pointer(h) }
func hQueue(h vk.Queue) unsafe.Pointer               { return unsafe.Pointer(h) }
func hCmd(h vk.CommandBuffer) unsafe.Pointer         { return unsafe.Pointer(h) }
func hBuffer(h vk.Buffer) C.uint64_t                 { return C.uint64_t(uintptr(unsafe.Pointer(h))) }
func hFence(h vk.Fence) C.uint64_t                   { return C.uint64_t(uintptr(unsafe.Pointer(h))) }
func hPipeline(h vk.Pipeline) C.uint64_t             { return C.uint64_t(uintptr(unsafe.Pointer(h))) }
func hPipeLayout(h vk.PipelineLayout) C.uint64_t     { return C.uint64_t(uintptr(unsafe.Pointer(h))) }
func hSetLayout(h vk.DescriptorSetLayout) C.uint64_t { return C.uint64_t(uintptr(unsafe.Pointer(h))) }
func hQueryPool(h vk.QueryPool) C.uint64_t           { return C.uint64_t(uintptr(unsafe.Pointer(h))) }
func hCmdPool(h vk.CommandPool) C.uint64_t           { return C.uint64_t(uintptr(unsafe.Pointer(h))) }

type cDevfns = *C.tdm_devfns

// ---- loader -------------------------------------------------------------------

// cLoad opens the loader at path, or the default names when path is "".
func cLoad(path string) error {
	var buf [512]C.char
	var cpath *C.char
	if path != "" {
		cpath = C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
	}
	if C.tdm_load(cpath, &buf[0], C.size_t(len(buf))) == 0 {
		return errors.New(C.GoString(&buf[0]))
	}
	return nil
}

// cGipa returns the loader's vkGetInstanceProcAddr (a C function pointer).
func cGipa() unsafe.Pointer { return C.tdm_gipa_ptr() }

func cInstanceVersion() uint32 { return uint32(C.tdm_instance_version()) }

// ---- physical device queries -------------------------------------------------

type extInfo struct {
	ok                                 bool
	subgroupSize, subgroupStages       uint32
	subgroupOps                        uint32
	minSubgroupSize, maxSubgroupSize   uint32
	maxComputeWorkgroupSubgroups       uint32
	maxPerSetDescriptors               uint32
	maxMemoryAllocationSize            uint64
	deviceUUID, driverUUID             [16]byte
	driverID                           int32
	driverName, driverInfo             string
	storageBuffer16BitAccess           bool
	uniformAndStorageBuffer16BitAccess bool
	storagePushConstant16              bool
	storageBuffer8BitAccess            bool
	uniformAndStorageBuffer8BitAccess  bool
	shaderFloat16, shaderInt8          bool
}

func cQueryDevice(inst vk.Instance, pd vk.PhysicalDevice, apiVersion uint32) extInfo {
	var c C.tdm_devinfo
	C.tdm_query_device(hInstance(inst), hPhys(pd), C.uint32_t(apiVersion), &c)
	e := extInfo{
		ok:                                 c.ok != 0,
		subgroupSize:                       uint32(c.subgroupSize),
		subgroupStages:                     uint32(c.subgroupStages),
		subgroupOps:                        uint32(c.subgroupOps),
		minSubgroupSize:                    uint32(c.minSubgroupSize),
		maxSubgroupSize:                    uint32(c.maxSubgroupSize),
		maxComputeWorkgroupSubgroups:       uint32(c.maxComputeWorkgroupSubgroups),
		maxPerSetDescriptors:               uint32(c.maxPerSetDescriptors),
		maxMemoryAllocationSize:            uint64(c.maxMemoryAllocationSize),
		driverID:                           int32(c.driverID),
		driverName:                         C.GoString(&c.driverName[0]),
		driverInfo:                         C.GoString(&c.driverInfo[0]),
		storageBuffer16BitAccess:           c.storageBuffer16BitAccess != 0,
		uniformAndStorageBuffer16BitAccess: c.uniformAndStorageBuffer16BitAccess != 0,
		storagePushConstant16:              c.storagePushConstant16 != 0,
		storageBuffer8BitAccess:            c.storageBuffer8BitAccess != 0,
		uniformAndStorageBuffer8BitAccess:  c.uniformAndStorageBuffer8BitAccess != 0,
		shaderFloat16:                      c.shaderFloat16 != 0,
		shaderInt8:                         c.shaderInt8 != 0,
	}
	for i := range 16 {
		e.deviceUUID[i] = byte(c.deviceUUID[i])
		e.driverUUID[i] = byte(c.driverUUID[i])
	}
	return e
}

func b32(b bool) C.uint32_t {
	if b {
		return 1
	}
	return 0
}

// cFeatureChain builds the VkDeviceCreateInfo pNext chain enabling the given
// features. head is nil when there is nothing to chain; call free afterwards.
func cFeatureChain(apiVersion uint32, f Features) (head unsafe.Pointer, free func()) {
	c := C.tdm_new_feature_chain(C.uint32_t(apiVersion), b32(f.StorageBuffer16BitAccess),
		b32(f.UniformAndStorageBuffer16BitAccess), b32(f.StorageBuffer8BitAccess),
		b32(f.UniformAndStorageBuffer8BitAccess), b32(f.ShaderFloat16), b32(f.ShaderInt8))
	if c == nil {
		return nil, func() {}
	}
	return C.tdm_feature_chain_head(c), func() { C.free(unsafe.Pointer(c)) }
}

// ---- validation messages ------------------------------------------------------

// cInstanceChain returns C memory holding the VkInstanceCreateInfo pNext chain
// that routes messages to owner (and enables synchronization validation).
func cInstanceChain(owner uint64, syncval bool) (head unsafe.Pointer, free func()) {
	s := C.int(0)
	if syncval {
		s = 1
	}
	p := C.tdm_instance_chain(C.uint64_t(owner), s)
	return p, func() { C.free(p) }
}

func cDebugCreate(inst vk.Instance, owner uint64) (uint64, error) {
	var m C.uint64_t
	if r := C.tdm_debug_create(hInstance(inst), C.uint64_t(owner), &m); r != 0 {
		return 0, resultError("vkCreateDebugUtilsMessengerEXT", int32(r))
	}
	return uint64(m), nil
}

func cDebugDestroy(inst vk.Instance, m uint64) { C.tdm_debug_destroy(hInstance(inst), C.uint64_t(m)) }

// cTakeMessages drains the messages recorded for owner.
func cTakeMessages(owner uint64) []string {
	var out []string
	for {
		s := C.tdm_msg_take(C.uint64_t(owner))
		if s == nil {
			return out
		}
		out = append(out, C.GoString(s))
		C.free(unsafe.Pointer(s))
	}
}

// ---- C memory for vulkan-go structs ---------------------------------------------

// cU32s copies vals to C memory (vulkan-go stores pointers such as
// VkSpecializationInfo.pData in C memory, where Go pointers must not go).
func cU32s(vals []uint32) (p unsafe.Pointer, free func()) {
	if len(vals) == 0 {
		return nil, func() {}
	}
	p = C.calloc(C.size_t(len(vals)), 4)
	// Safe: p is a fresh C allocation of exactly len(vals) uint32s.
	copy(unsafe.Slice((*uint32)(p), len(vals)), vals)
	return p, func() { C.free(p) }
}

// ---- device functions -----------------------------------------------------------

func cLoadDevfns(inst vk.Instance, dev vk.Device) (cDevfns, error) {
	var missing [128]C.char
	f := C.tdm_load_devfns(hInstance(inst), hDevice(dev), &missing[0], C.size_t(len(missing)))
	if f == nil {
		return nil, errors.New("vulkan: device function not found: " + C.GoString(&missing[0]))
	}
	return f, nil
}

func cFreeDevfns(f cDevfns) { C.free(unsafe.Pointer(f)) }

// cCreateComputePipeline creates a compute pipeline from SPIR-V with the
// given specialization constants (IDs 0..len(spec)-1), copying everything
// into C memory first: no Go pointer reaches C, and nothing is freed by a
// finalizer while the driver reads it.
func cCreateComputePipeline(f cDevfns, dev vk.Device, spirv []byte, entry string, spec []uint32, layout vk.PipelineLayout) (vk.Pipeline, int32) {
	code := C.CBytes(spirv)
	defer C.free(code)
	name := C.CString(entry)
	defer C.free(unsafe.Pointer(name))
	data, free := cU32s(spec)
	defer free()
	var out C.uint64_t
	r := C.tdm_create_compute_pipeline(f, hDevice(dev), (*C.uint32_t)(code), C.size_t(len(spirv)), name,
		(*C.uint32_t)(data), C.uint32_t(len(spec)), hPipeLayout(layout), &out)
	// The handle is a C pointer value (see the handle conversions above).
	return *(*vk.Pipeline)(unsafe.Pointer(&out)), int32(r)
}

func cCreateDescriptorPool(f cDevfns, dev vk.Device, maxSets, descriptors uint32) (uint64, int32) {
	var p C.uint64_t
	r := C.tdm_create_descriptor_pool(f, hDevice(dev), C.uint32_t(maxSets), C.uint32_t(descriptors), &p)
	return uint64(p), int32(r)
}

func cDestroyDescriptorPool(f cDevfns, dev vk.Device, pool uint64) {
	C.tdm_destroy_descriptor_pool(f, hDevice(dev), C.uint64_t(pool))
}

func cResetDescriptorPool(f cDevfns, dev vk.Device, pool uint64) int32 {
	return int32(C.tdm_reset_descriptor_pool(f, hDevice(dev), C.uint64_t(pool)))
}

func cAllocateDescriptorSet(f cDevfns, dev vk.Device, pool uint64, layout vk.DescriptorSetLayout) (uint64, int32) {
	var s C.uint64_t
	r := C.tdm_allocate_descriptor_set(f, hDevice(dev), C.uint64_t(pool), hSetLayout(layout), &s)
	return uint64(s), int32(r)
}

func cBegin(f cDevfns, cmd vk.CommandBuffer, once bool) int32 {
	o := C.int(0)
	if once {
		o = 1
	}
	return int32(C.tdm_begin(f, hCmd(cmd), o))
}

func cEnd(f cDevfns, cmd vk.CommandBuffer) int32 { return int32(C.tdm_end(f, hCmd(cmd))) }

type cBinding = C.tdm_binding

func makeBinding(b vk.Buffer, off, rng uint64) cBinding {
	return cBinding{buffer: hBuffer(b), offset: C.uint64_t(off), _range: C.uint64_t(rng)}
}

func cDispatch(f cDevfns, dev vk.Device, cmd vk.CommandBuffer, set uint64, layout vk.PipelineLayout,
	pipe vk.Pipeline, bindPipeline bool, binds []cBinding, push []byte, gx, gy, gz uint32) {
	var bp *C.tdm_binding
	if len(binds) > 0 {
		bp = &binds[0] // Go memory without Go pointers: allowed by the cgo rules
	}
	var pp unsafe.Pointer
	if len(push) > 0 {
		pp = unsafe.Pointer(&push[0]) // the same; C copies it into the command buffer
	}
	bind := C.int(0)
	if bindPipeline {
		bind = 1
	}
	C.tdm_dispatch(f, hDevice(dev), hCmd(cmd), C.uint64_t(set), hPipeLayout(layout), hPipeline(pipe), bind,
		C.uint32_t(len(binds)), bp, pp, C.uint32_t(len(push)), C.uint32_t(gx), C.uint32_t(gy), C.uint32_t(gz))
}

func cBarrier(f cDevfns, cmd vk.CommandBuffer, toHost bool) {
	k := C.int(0)
	if toHost {
		k = 1
	}
	C.tdm_barrier(f, hCmd(cmd), k)
}

func cCopyBuffer(f cDevfns, cmd vk.CommandBuffer, src, dst vk.Buffer, srcOff, dstOff, size uint64) {
	C.tdm_copy_buffer(f, hCmd(cmd), hBuffer(src), hBuffer(dst), C.uint64_t(srcOff), C.uint64_t(dstOff), C.uint64_t(size))
}

func cFillBuffer(f cDevfns, cmd vk.CommandBuffer, dst vk.Buffer, off, size uint64, data uint32) {
	C.tdm_fill_buffer(f, hCmd(cmd), hBuffer(dst), C.uint64_t(off), C.uint64_t(size), C.uint32_t(data))
}

func cResetQueries(f cDevfns, cmd vk.CommandBuffer, pool vk.QueryPool, first, count uint32) {
	C.tdm_reset_queries(f, hCmd(cmd), hQueryPool(pool), C.uint32_t(first), C.uint32_t(count))
}

func cWriteTimestamp(f cDevfns, cmd vk.CommandBuffer, pool vk.QueryPool, q uint32) {
	C.tdm_write_timestamp(f, hCmd(cmd), hQueryPool(pool), C.uint32_t(q))
}

func cQueryResults(f cDevfns, dev vk.Device, pool vk.QueryPool, first uint32, out []uint64) int32 {
	if len(out) == 0 {
		return 0
	}
	// Go memory without Go pointers, written by the driver during the call only.
	return int32(C.tdm_query_results(f, hDevice(dev), hQueryPool(pool), C.uint32_t(first), C.uint32_t(len(out)),
		(*C.uint64_t)(unsafe.Pointer(&out[0]))))
}

func cSubmit(f cDevfns, q vk.Queue, cmd vk.CommandBuffer, fence vk.Fence) int32 {
	return int32(C.tdm_submit(f, hQueue(q), hCmd(cmd), hFence(fence)))
}

func cWaitFence(f cDevfns, dev vk.Device, fence vk.Fence, timeoutNS uint64) int32 {
	return int32(C.tdm_wait_fence(f, hDevice(dev), hFence(fence), C.uint64_t(timeoutNS)))
}

func cResetFence(f cDevfns, dev vk.Device, fence vk.Fence) int32 {
	return int32(C.tdm_reset_fence(f, hDevice(dev), hFence(fence)))
}

func cFenceStatus(f cDevfns, dev vk.Device, fence vk.Fence) int32 {
	return int32(C.tdm_fence_status(f, hDevice(dev), hFence(fence)))
}

func cResetCommandPool(f cDevfns, dev vk.Device, pool vk.CommandPool) int32 {
	return int32(C.tdm_reset_command_pool(f, hDevice(dev), hCmdPool(pool)))
}

const (
	resultNotReady        = int32(C.TDM_NOT_READY)
	resultTimeout         = int32(C.TDM_TIMEOUT)
	resultOutOfPoolMemory = int32(C.TDM_ERROR_OUT_OF_POOL_MEMORY)
	resultFragmentedPool  = int32(C.TDM_ERROR_FRAGMENTED_POOL)
	maxBindings           = int(C.TDM_MAX_BINDINGS)
)
