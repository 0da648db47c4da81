package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
)

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
	// GraphCompute runs every node of g whose memory is reachable by this backend and waits. A
	// graph that reads an input awaiting a write is an error (CheckInputsSet, ErrInputNotSet).
	GraphCompute(g *Graph) error
	// Synchronize waits for queued work.
	Synchronize() error
	Close() error
}

// ContextComputer is an optional Backend capability: GraphComputeContext is GraphCompute that
// stops once ctx is done — no node starts after that, work already handed to the device is waited
// for, and the error wraps ctx.Err() (the graph's outputs are then undefined). A nil ctx means
// context.Background(). The CPU, Vulkan, OpenGL and RPC backends have it; call it through the
// package function GraphComputeContext, which works for every Backend.
type ContextComputer interface {
	GraphComputeContext(ctx context.Context, g *Graph) error
}

// ReusedComputer is an optional Backend capability: GraphComputeReused is GraphComputeContext for
// a graph that is the one the backend computed last, unchanged since but for tensor data (no node
// or leaf of it, nor any field of theirs, was changed, and their buffers are live): the backend
// may skip comparing the graph with what it planned for it. The CPU backend has it; the
// scheduler calls it on the runs of its own GraphComputeReused.
type ReusedComputer interface {
	GraphComputeReused(ctx context.Context, g *Graph) error
}

// LoggerSetter is an optional Backend capability: SetLogger makes the backend report what it
// runs with (device, kernels, limits) on l at Debug level; nil reports nothing. The CPU, Vulkan
// and OpenGL backends have it.
type LoggerSetter interface {
	SetLogger(l *slog.Logger)
}

// GraphComputeContext runs g on be, stopping once ctx is done: it calls be's GraphComputeContext
// where be is a ContextComputer, and otherwise checks ctx and, if it is not done, calls
// GraphCompute (which then runs to the end), as ggml's function tables fill in a default. A nil
// ctx means context.Background(); a nil be or g is an error.
func GraphComputeContext(ctx context.Context, be Backend, g *Graph) error {
	if be == nil {
		return errors.New("tandem: GraphComputeContext: nil backend")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if cc, ok := be.(ContextComputer); ok {
		return cc.GraphComputeContext(ctx, g)
	}
	if g == nil {
		return Errorf("tandem: GraphComputeContext on %s: %w", be.Name(), ErrNilGraph)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tandem: GraphComputeContext on %s: graph not computed: %w", be.Name(), err)
	}
	return be.GraphCompute(g)
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

// ExtraBufferTyper is an optional Device capability (ggml's extra buffer types): buffer types with
// a memory layout of their own that the device's kernels read faster than the standard layout, such
// as the CPU's repacked weights ("CPU_REPACK"). They are meant for weights: alloc.AllocCtxTensors
// (and gguf's Load through it) puts a weight in the first of them whose WeightAcceptor accepts it
// (ExtraBufferTypesFor finds them). Their buffers keep the standard layout at their interface:
// TensorSet and TensorGet transfer the standard bytes, so a tensor reads the same wherever it lives.
type ExtraBufferTyper interface {
	ExtraBufferTypes() []BufferType
}

// WeightAcceptor is an optional capability of an extra buffer type: AcceptsWeight reports whether
// the weight w (not yet allocated) should live in this buffer type, given the nodes that read it.
// uses is nil when they are not known (a context that holds only weights); then the buffer type
// decides from w's type and shape alone.
type WeightAcceptor interface {
	AcceptsWeight(w *Tensor, uses []*Tensor) bool
}

// TensorInitializer is an optional Buffer capability (ggml's init_tensor): TensorAlloc calls
// InitializeTensor once it has given t (not a view) memory in the buffer, so that a buffer whose
// layout depends on the tensor can prepare that memory and remember the tensor. An error undoes
// the placement.
type TensorInitializer interface {
	InitializeTensor(t *Tensor) error
}

var extraBufferTypes struct {
	mu sync.Mutex
	of map[BufferType][]BufferType
}

// RegisterExtraBufferTypes records the extra buffer types that weights placed in bt may go to
// instead (see ExtraBufferTyper). A backend whose device owns memory without a Device of its own
// calls it from init: the CPU backend registers CPU_REPACK for HostBufferType(). Like Register it
// panics on a programming error in a backend package: a nil bt or extra, or a second registration
// for bt.
func RegisterExtraBufferTypes(bt BufferType, extras ...BufferType) {
	if bt == nil || slices.Contains(extras, nil) {
		panic("tandem: RegisterExtraBufferTypes: nil buffer type")
	}
	extraBufferTypes.mu.Lock()
	defer extraBufferTypes.mu.Unlock()
	if _, ok := extraBufferTypes.of[bt]; ok {
		panic("tandem: RegisterExtraBufferTypes called twice for buffer type " + bt.Name())
	}
	if extraBufferTypes.of == nil {
		extraBufferTypes.of = map[BufferType][]BufferType{}
	}
	extraBufferTypes.of[bt] = slices.Clone(extras)
}

// ExtraBufferTypesFor returns the extra buffer types for weights placed in bt: those registered for
// bt with RegisterExtraBufferTypes, or else those of bt's Device (ExtraBufferTyper) when bt is that
// device's own buffer type. It returns nil when there are none and for a nil bt.
func ExtraBufferTypesFor(bt BufferType) []BufferType {
	if bt == nil {
		return nil
	}
	extraBufferTypes.mu.Lock()
	extras, ok := extraBufferTypes.of[bt]
	extraBufferTypes.mu.Unlock()
	if ok {
		return slices.Clone(extras)
	}
	dev := bt.Device()
	if dev == nil || dev.BufferType() != bt {
		return nil
	}
	if x, ok := dev.(ExtraBufferTyper); ok {
		return x.ExtraBufferTypes()
	}
	return nil
}

// PickExtraBufferType returns the first of extras whose WeightAcceptor accepts w read by uses (see
// WeightAcceptor), or nil.
func PickExtraBufferType(extras []BufferType, w *Tensor, uses []*Tensor) BufferType {
	for _, bt := range extras {
		if a, ok := bt.(WeightAcceptor); ok && a.AcceptsWeight(w, uses) {
			return bt
		}
	}
	return nil
}
