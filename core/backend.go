package core

// BufferUsage tells allocators and schedulers what a buffer holds.
type BufferUsage int

// Buffer usages (ggml's values).
const (
	BufferUsageAny BufferUsage = iota
	BufferUsageWeights
	BufferUsageCompute
)

func (u BufferUsage) String() string {
	switch u {
	case BufferUsageWeights:
		return "weights"
	case BufferUsageCompute:
		return "compute"
	}
	return "any"
}

// BufferType allocates buffers of one kind of memory (a device's memory, pinned host memory, ...).
type BufferType interface {
	// Name identifies the buffer type ("CPU", "Vulkan0", "Vulkan0_Host").
	Name() string
	// Alloc returns a buffer of at least size bytes, or an error naming the type, the size asked and
	// what the device reports.
	Alloc(size int64) (Buffer, error)
	// Alignment is the byte alignment of tensor offsets inside buffers of this type (a power of two).
	Alignment() int64
	// MaxSize is the largest single buffer (allocators split larger requests); 0 means no limit.
	MaxSize() int64
	// AllocSize is the number of bytes to reserve for t (≥ t.NBytes()).
	AllocSize(t *Tensor) int64
	// IsHost reports whether the memory is CPU-addressable with the standard layout.
	IsHost() bool
	// Device returns the device the memory belongs to (nil for plain host memory).
	Device() Device
}

// Buffer is a block of memory of one buffer type that tensors live in. core's helpers (TensorSet,
// TensorGet, TensorMemset, TensorCopy, TensorAlloc, ViewInit) check their arguments before calling
// a Buffer: t is never nil there and the byte range lies inside t. A Buffer should also implement
// FreedReporter, so that tensors left pointing into it after Free fail with ErrBufferFreed.
type Buffer interface {
	Type() BufferType
	Size() int64
	Usage() BufferUsage
	SetUsage(u BufferUsage)
	// SetTensor writes data into t's bytes starting at byte offset (relative to t's first byte).
	SetTensor(t *Tensor, data []byte, offset int64) error
	// GetTensor reads len(dst) bytes of t starting at byte offset.
	GetTensor(t *Tensor, dst []byte, offset int64) error
	// MemsetTensor fills size bytes of t from offset with value.
	MemsetTensor(t *Tensor, value byte, offset, size int64) error
	// Clear fills the whole buffer with value.
	Clear(value byte) error
	// Free releases the memory; the buffer must not be used afterwards.
	Free() error
}

// HostBuffer is a buffer whose bytes the CPU can address directly.
type HostBuffer interface {
	Buffer
	Bytes() []byte
}

// TensorCopier is an optional Buffer capability: copy src (anywhere) into dst (in this buffer)
// without going through host memory. ok is false when the buffer cannot do it.
type TensorCopier interface {
	CopyTensor(src, dst *Tensor) (ok bool, err error)
}

// Backend runs graphs on one device (a stream in ggml's words). Close releases everything.
// GraphCompute must return an error for a nil graph (core.ErrNilGraph), never panic.
type Backend interface {
	Name() string
	Device() Device
	DefaultBufferType() BufferType
	// GraphCompute runs every node of g whose memory is reachable by this backend and waits.
	GraphCompute(g *Graph) error
	// Synchronize waits for queued work.
	Synchronize() error
	Close() error
}

// DeviceType classifies devices.
type DeviceType int

// Device types (ggml's order).
const (
	DeviceCPU DeviceType = iota
	DeviceGPU
	DeviceIGPU
	DeviceAccel
)

func (d DeviceType) String() string {
	switch d {
	case DeviceGPU:
		return "GPU"
	case DeviceIGPU:
		return "IGPU"
	case DeviceAccel:
		return "ACCEL"
	}
	return "CPU"
}

// Device is a piece of hardware a backend runs on.
type Device interface {
	Name() string
	Description() string
	Type() DeviceType
	// Memory reports free and total bytes (0 when unknown).
	Memory() (free, total int64)
	// SupportsOp reports whether the device computes t's op with t's types, shapes and layouts.
	SupportsOp(t *Tensor) bool
	// SupportsBufferType reports whether the device's kernels can use memory of type bt.
	SupportsBufferType(bt BufferType) bool
	// OffloadOp reports whether the device wants t's op even though its weights live elsewhere.
	OffloadOp(t *Tensor) bool
	// BufferType is the device's preferred memory.
	BufferType() BufferType
	// NewBackend creates a backend (stream) on the device.
	NewBackend() (Backend, error)
}

// HostBufferTyper is an optional Device capability: pinned host memory for fast transfers.
type HostBufferTyper interface {
	HostBufferType() BufferType
}

// Feature is a named capability of a device (e.g. "AVX2" = "1").
type Feature struct {
	Name  string
	Value string
}

// FeatureLister is an optional Device capability.
type FeatureLister interface {
	Features() []Feature
}
