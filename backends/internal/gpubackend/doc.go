// Package gpubackend is the shell that tandem's GPU backends (packages vulkan and gl) share: the
// core.Device, core.BufferType, core.Buffer and core.Backend bookkeeping, bounds checks and errors,
// the graph walk that dispatches each node through the op encoders of package gpuops, SetLogger,
// and the behaviour of nil and zero Backends.
//
// A GPU API plugs in below it through three small interfaces:
//
//   - Memory allocates device buffers (Allocation: write, read, memset, destroy) and copies
//     between them on the device;
//   - Dispatcher compiles shader variants and runs one graph: it hands the shell a Queue, on which
//     the encoders bind a pipeline with its buffers and push constants and dispatch it, record
//     barriers, and end each node (where a runtime may submit), then it waits for the device;
//   - DeviceConfig describes the device (its names, limits in gpuops terms, what SetLogger reports).
//
// A package's exported Backend wraps a *Backend (see API.Backend for nil and zero values); its
// unexported device embeds a *Device and adds what its API alone knows (description, type,
// memory, features).
package gpubackend
