//go:build gl && cgo

package gl

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tandem-ml/tandem/backends/internal/gpubackend"
	"github.com/tandem-ml/tandem/core"
)

// api names the package in the shared backend's errors and log records.
var api = &gpubackend.API{Pkg: "gl", Title: "OpenGL"}

// Backend runs graphs on the OpenGL device. It is safe for use by one goroutine at a time (calls
// are serialized).
type Backend struct {
	dev *device
	sh  *gpubackend.Backend // the shared backend, dispatching on the device's GL thread
}

var _ core.Backend = (*Backend)(nil)

// New creates a backend on OpenGL device i (an index into Devices(), as vulkan.New takes): the
// one OpenGL context is device 0, "GL0"; any other i is an error wrapping ErrUnavailable.
func New(i int) (*Backend, error) {
	d, err := theDevice()
	if err != nil {
		return nil, err
	}
	if i != 0 {
		return nil, fmt.Errorf("%w: no OpenGL device %d (one usable: %s is device 0)", ErrUnavailable, i, d.name)
	}
	return &Backend{dev: d, sh: gpubackend.NewBackend(d.Device, d.t)}, nil
}

// shell returns the shared backend, or for a nil or zero b a stand-in whose errors say so.
func (b *Backend) shell() *gpubackend.Backend {
	if b == nil {
		return api.Backend(nil, true)
	}
	return api.Backend(b.sh, false)
}

// Name is the device's name ("GL0"); "" for a nil or zero Backend.
func (b *Backend) Name() string { return b.shell().Name() }

// Device is the backend's device (nil for a nil or zero Backend).
func (b *Backend) Device() core.Device { return b.shell().Device() }

// DefaultBufferType is the device's memory (nil for a nil or zero Backend).
func (b *Backend) DefaultBufferType() core.BufferType { return b.shell().DefaultBufferType() }

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an error.
func (b *Backend) Synchronize() error { return b.shell().Synchronize() }

// Close releases the backend; the device and its buffers stay usable. Closing twice is a no-op;
// every other method but Name, Device and DefaultBufferType returns an error afterwards.
func (b *Backend) Close() error { return b.shell().Close() }

// Barriers returns the number of memory barriers GraphCompute has issued (for tests and tuning;
// 0 for a nil or zero Backend).
func (b *Backend) Barriers() int { return b.shell().Barriers() }

// Dispatches returns the number of compute dispatches GraphCompute has issued (0 for a nil or
// zero Backend).
func (b *Backend) Dispatches() int { return b.shell().Dispatches() }

// SetFusion turns node fusion on (the default) or off. Fused nodes give the same results bit for
// bit as unfused ones, in fewer dispatches. Nothing for a nil or zero Backend.
func (b *Backend) SetFusion(on bool) { b.shell().SetFusion(on) }

// GraphCompute dispatches every computing node of g (views and leafs cost nothing) and waits for
// the result. A nil g is an error. An index out of range in GET_ROWS or SET_ROWS (checked on the
// device) is reported after the graph has run, as the CPU backend words it.
func (b *Backend) GraphCompute(g *core.Graph) error { return b.shell().GraphCompute(g) }

// GraphComputeContext is GraphCompute that stops once ctx is done: no node is dispatched after
// that, work already dispatched is waited for, and the error wraps ctx.Err(). The graph's outputs
// are then undefined. A nil ctx means context.Background().
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	return b.shell().GraphComputeContext(ctx, g)
}

// SetLogger makes the backend report on l at Debug level (nil: report nothing). It reports at once
// what the environment decided: the device, its renderer, vendor and OpenGL/GLSL versions, whether
// it counts as a software device, and whether a debug context is on (TANDEM_GL_DEBUG). It does
// nothing on a nil or zero backend.
func (b *Backend) SetLogger(l *slog.Logger) { b.shell().SetLogger(l) }
