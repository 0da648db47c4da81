package gpuops

import "github.com/tandem-ml/tandem/core"

// Runtime is what a backend provides to the encoders. Its methods are called from Encoder's
// methods only, on the goroutine (or, for OpenGL, the thread) that encodes the graph.
type Runtime interface {
	// Locate returns the device buffer that holds t's bytes (an opaque handle the runtime gets
	// back in Bindings, compared by identity to find overlapping accesses) and the buffer's size
	// in bytes, or an error saying why t is not in this device's memory.
	Locate(t *core.Tensor) (buf any, size int64, err error)
	// Pipeline returns the compiled shader variant name of package shaders with its
	// specialization constants 0..len(spec)-1 set to spec, taking bindings storage buffers and
	// push bytes of push constants.
	Pipeline(name string, bindings int, push uint32, spec []uint32) (Pipeline, error)
	// Dispatch records p over groups workgroups with push constants push and storage binding i
	// bound to bindings[i]. Neither slice is kept after the call.
	Dispatch(p Pipeline, groups [3]uint32, push []byte, bindings []Binding) error
	// Barrier makes the storage writes of the dispatches recorded so far visible to later ones.
	Barrier() error
	// NewStatusBuffer allocates a host-readable buffer of at least size bytes for the index
	// checks' status words.
	NewStatusBuffer(size uint64) (StatusBuffer, error)
	// NewScratchBuffer allocates a device buffer of at least size bytes that shaders write and
	// read between the dispatches of one node (its contents do not outlive a graph).
	NewScratchBuffer(size uint64) (ScratchBuffer, error)
}

// Pipeline is a runtime's compiled shader variant (a Vulkan pipeline, a GL program), opaque to
// the encoders.
type Pipeline any

// Binding is a byte range of a runtime buffer bound to one storage binding of a dispatch.
type Binding struct {
	Buf       any // a buffer from Runtime.Locate, a StatusBuffer or a ScratchBuffer
	Off, Size uint64
}

// StatusBuffer is the small buffer that holds the status words of the index checks.
type StatusBuffer interface {
	Size() uint64
	Memset(off, size uint64, v byte) error
	Read(off uint64, dst []byte) error
	Destroy()
}

// ScratchBuffer is the device buffer of the encoders' intermediate results (scratch.go).
type ScratchBuffer interface {
	Size() uint64
	Destroy()
}
