//go:build cgo && !novulkan

package vulkan

import (
	"context"
	"log/slog"

	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
	"github.com/tandem-ml/tandem/core"
)

// api names the package in the shared backend's errors and log records.
var api = &gpubackend.API{Pkg: "vulkan", Title: "Vulkan"}

// Backend runs graphs on one Vulkan device. It is safe for use by one goroutine at a time (calls
// are serialized).
type Backend struct {
	dev *device
	sh  *gpubackend.Backend // the shared backend, dispatching through a vkDispatcher
}

var _ core.Backend = (*Backend)(nil)

// New creates a backend on Vulkan device i (an index into Devices()).
func New(i int) (*Backend, error) {
	d, err := deviceAt(i)
	if err != nil {
		return nil, err
	}
	vd, err := d.open()
	if err != nil {
		return nil, err
	}
	return &Backend{dev: d, sh: gpubackend.NewBackend(d.Device, &vkDispatcher{vd: vd})}, nil
}

// shell returns the shared backend, or for a nil or zero b a stand-in whose errors say so.
func (b *Backend) shell() *gpubackend.Backend {
	if b == nil {
		return api.Backend(nil, true)
	}
	return api.Backend(b.sh, false)
}

// Name is the device's name ("Vulkan0"); "" for a nil or zero Backend.
func (b *Backend) Name() string { return b.shell().Name() }

// Device is the backend's device (nil for a nil or zero Backend).
func (b *Backend) Device() core.Device { return b.shell().Device() }

// DefaultBufferType is the device's memory (nil for a nil or zero Backend).
func (b *Backend) DefaultBufferType() core.BufferType { return b.shell().DefaultBufferType() }

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an
// error.
func (b *Backend) Synchronize() error { return b.shell().Synchronize() }

// Close releases the backend; the device and its buffers stay usable. Closing twice is a no-op;
// every other method but Name, Device and DefaultBufferType returns an error afterwards.
func (b *Backend) Close() error { return b.shell().Close() }

// Barriers returns the number of barriers GraphCompute has recorded (for tests and tuning; 0 for
// a nil or zero Backend).
func (b *Backend) Barriers() int { return b.shell().Barriers() }

// Dispatches returns the number of compute dispatches GraphCompute has recorded (for tests and
// tuning; 0 for a nil or zero Backend).
func (b *Backend) Dispatches() int { return b.shell().Dispatches() }

// SetFusion turns node fusion on (the default) or off. Fused nodes (RMS_NORM and MUL, the
// residual ADD before them, ROPE and the SET_ROWS storing its row in a KV cache) give the same
// results bit for bit as unfused ones, in fewer dispatches. Nothing for a nil or zero Backend.
func (b *Backend) SetFusion(on bool) { b.shell().SetFusion(on) }

// Replays returns the number of graphs GraphCompute ran again from their recorded command buffers
// instead of recording them anew: a graph that runs again with the same nodes, parameters and
// memory (each generated token's graph) is replayed. 0 for a nil or zero Backend.
func (b *Backend) Replays() int { return b.shell().Replays() }

// GraphCompute records every computing node of g (views and leafs cost nothing), submits it in
// batches and waits for the result. A nil g is an error. An index out of range in GET_ROWS or
// SET_ROWS (checked on the device) is reported after the graph has run, as the CPU backend words
// it.
func (b *Backend) GraphCompute(g *core.Graph) error { return b.shell().GraphCompute(g) }

// GraphComputeContext is GraphCompute that stops once ctx is done: no node is recorded or
// submitted after that, work already submitted to the device is waited for (a device cannot drop
// it half-way), and the error wraps ctx.Err(). The graph's outputs are then undefined. A nil ctx
// means context.Background().
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	return b.shell().GraphComputeContext(ctx, g)
}

// SetLogger makes the backend report on l at Debug level (nil: report nothing). It reports at once
// what the environment decided: the device and its physical device, the device list
// (TANDEM_VK_VISIBLE_DEVICES and the devices skipped), TANDEM_VK_FORCE_STAGING, whether the
// validation layer is on (TANDEM_VK_VALIDATE), and one record per validation message so far
// (ValidationMessages). It does nothing on a nil or zero backend.
func (b *Backend) SetLogger(l *slog.Logger) { b.shell().SetLogger(l) }

// SetOpProfile turns the per-op profile on (clearing what it held) or off. While it is on, every
// node is followed by a timestamp query, so OpProfile holds the device's own time per kind of
// node (the time between the end of one node and the end of the next; the host's recording and
// submitting are not in it). Nothing is recorded on a device without timestamps.
func (b *Backend) SetOpProfile(on bool) { b.shell().SetOpProfile(on) }

// OpProfile returns the device time per kind of node since SetOpProfile(true), the most costly
// first; nil while the profile is off.
func (b *Backend) OpProfile() []core.OpTime { return b.shell().OpProfile() }

var _ core.OpProfiler = (*Backend)(nil)
