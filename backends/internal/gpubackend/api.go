package gpubackend

import (
	"time"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
)

// Allocation is one device buffer of a GPU API (a *vkrt.Buffer, a GL shader storage buffer). It is
// also the handle the op encoders bind (gpuops.Binding.Buf holds the Allocation itself) and it
// serves as their status buffer (gpuops.StatusBuffer). Offsets and sizes given to it lie inside it
// (the shell checks them); after Destroy every other method returns an error.
type Allocation interface {
	// Size is the buffer's usable size in bytes.
	Size() uint64
	// Write copies data to the buffer from byte off.
	Write(off uint64, data []byte) error
	// Read copies len(dst) bytes from byte off; device writes before it are visible.
	Read(off uint64, dst []byte) error
	// Memset sets n bytes from off to v.
	Memset(off, n uint64, v byte) error
	// Destroy frees the buffer; a second call does nothing.
	Destroy()
}

// Mapped is an Allocation in host memory that the host addresses directly (Vulkan's pinned,
// host-visible memory).
type Mapped interface {
	Allocation
	// Mapped returns the buffer's bytes.
	Mapped() []byte
}

// Memory is a device's memory as a GPU API manages it.
type Memory interface {
	// Alloc allocates a zeroed buffer of size bytes. host asks for memory that the host reads and
	// writes cheaply: a Mapped allocation where the API has one (a host buffer type only exists
	// where it does); an API without host memory returns a device buffer.
	Alloc(size uint64, host bool) (Allocation, error)
	// Copy copies n bytes of src from srcOff to dst at dstOff on the device; both are this
	// device's allocations and the ranges lie inside them.
	Copy(dst Allocation, dstOff uint64, src Allocation, srcOff, n uint64) error
}

// Dispatcher compiles and runs a backend's shaders on its device.
type Dispatcher interface {
	// Pipeline returns the compiled shader variant name of package shaders with specialization
	// constants spec, taking bindings storage buffers and push bytes of push constants (cached by
	// the API). It is called while a graph is recorded (inside Run's record).
	Pipeline(name string, bindings int, push uint32, spec []uint32) (gpuops.Pipeline, error)
	// Run runs one graph: it calls record with a Queue, submits what record issued, and returns
	// once the device has finished it, also when record fails (work already submitted cannot be
	// dropped half-way). It returns record's error joined with the device's. When the device
	// cannot run at all (it was shut down or its context is gone) Run returns that error without
	// calling record.
	Run(record func(q Queue) error) error
}

// Replayer is a Dispatcher that can keep a graph's recorded work and run it again (Vulkan keeps its
// command buffers): the backend replays a graph that runs again unchanged, as llm's generation does
// every token, instead of recording it anew.
type Replayer interface {
	// RunKept is Run, keeping what record issued; the Recording is nil where nothing was issued
	// or the run failed.
	RunKept(record func(q Queue) error) (Recording, error)
}

// Recording is a graph's work kept by Replayer.RunKept.
type Recording interface {
	// Replay runs the work again, as recorded, and returns once the device has finished it. ok
	// is false, with nothing run, where a buffer the work reaches was freed since (record
	// again); a device error is returned as such.
	Replay() (ok bool, err error)
	// Release frees the recording.
	Release()
}

// Queue issues one graph's work (Dispatcher.Run).
type Queue interface {
	// Dispatch binds p, its push constants and its storage buffers (binding i = bindings[i], each
	// Buf an Allocation of this device) and dispatches groups workgroups. A dispatch with a zero
	// group count does nothing. Neither slice is kept after the call.
	Dispatch(p gpuops.Pipeline, groups [3]uint32, push []byte, bindings []gpuops.Binding) error
	// Barrier makes the storage writes of the dispatches issued so far visible to later ones.
	Barrier() error
	// EndNode marks the end of a graph node: a runtime may submit the work issued so far (Vulkan
	// submits a command buffer every hundred dispatches, so the device starts on it).
	EndNode() error
}

// NodeTimer is a Queue that can time the device's work node by node (Vulkan, with timestamp
// queries); the shell uses it while the backend's op profile is on.
type NodeTimer interface {
	// StartTiming is called once, before the graph's first node is issued.
	StartTiming()
	// TimeNode marks the end of the node whose work was issued since the previous mark (or since
	// the graph began) and before EndNode; once the graph has run, before Run returns, done gets
	// the device time between the two marks. An error means the node is not timed (done is not
	// called); the graph runs on.
	TimeNode(done func(time.Duration)) error
}
