// Package vulkan is tandem's Vulkan compute backend: core.Device, core.BufferType,
// core.Buffer and core.Backend on top of the low-level runtime in internal/vkrt
// and the SPIR-V of package shaders. What it shares with package gl (the core
// interfaces' bookkeeping, checks and errors, the graph walk through the op
// encoders) lives in backends/internal/gpubackend; this package supplies Vulkan
// memory, pipelines and command buffers to it.
//
//	ok, why := vulkan.Available()      // false (with the reason) without loader, driver or cgo
//	be, err := vulkan.New(0)           // backend on device "Vulkan0"
//	defer be.Close()
//
// Devices are the usable Vulkan physical devices (Vulkan 1.2, a compute queue),
// discrete GPUs first, then integrated, virtual, other and CPU (software, e.g.
// lavapipe) devices; TANDEM_VK_VISIBLE_DEVICES=i,j,... (physical indices as
// vulkaninfo lists them) selects and orders them instead. They are registered
// with core as "Vulkan0", "Vulkan1", ... Software devices report core.DeviceAccel
// so that core.InitBest prefers the CPU backend over them.
//
// Environment: TANDEM_VK_VALIDATE=1 enables the Khronos validation layer
// (messages: ValidationMessages); TANDEM_VK_FORCE_STAGING=1 never maps device
// memory (every transfer goes through a staging buffer); TANDEM_VK_LOADER
// overrides the loader library. TANDEM_GPU_KERNELS=gpu makes a software device
// (lavapipe) encode with the kernels for GPUs where they differ (MUL_MAT's mat-vec
// kernel and tiles, FLASH_ATTN_EXT's load batches), so tests there run what a GPU
// runs; =cpu gives any device the software devices' kernels; unset or "auto" picks
// by the device. Read as each graph is encoded; another value fails MUL_MAT with an
// error naming it.
//
// A graph's dispatches go into command buffers submitted as they fill, so the device
// starts while the rest is recorded. A graph that runs again with the same nodes,
// parameters and memory (each generated token's) is not recorded again: the backend
// keeps the last graph's command buffers and resubmits them (Backend.Replays counts
// it). Device-local memory that the host maps uncached (a discrete GPU's resizable
// BAR) is read through a staging copy. Some nodes are recorded together as one
// dispatch (RMS_NORM with the MUL by its weights and the residual ADD before it;
// one token's ROPE with the SET_ROWS storing it in a KV cache), with the unfused
// results bit for bit; Backend.SetFusion(false) turns that off.
//
// Errors and numerics follow the CPU backend: an index out of range in GET_ROWS or
// SET_ROWS is checked on the device and reported after the graph with the CPU's
// words; NORM/RMS_NORM scale rows so huge values do not overflow; non-finite
// MUL_MAT results are those of float arithmetic on the dequantized weights. Nil
// tensors and graphs, closed backends, freed buffers and out-of-range offsets are
// errors. Shutdown may run concurrently with anything: it waits for the operations
// in progress, and later calls on old backends and buffers return errors.
//
// Without cgo, or with the build tag novulkan, the package compiles to a stub
// whose Available reports why and whose New returns an error.
package vulkan
