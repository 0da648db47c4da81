//go:build gl && cgo

package gl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/core"
)

// Backend runs graphs on the OpenGL device. It is safe for use by one goroutine at a time (calls
// are serialized).
type Backend struct {
	dev *device
	vd  *glThread

	mu         sync.Mutex
	closed     bool
	dispatches int
	rt         opsRuntime
	enc        *gpuops.Encoder // the shared op encoders, dispatching through rt
}

var _ core.Backend = (*Backend)(nil)

// New creates a backend on the OpenGL device "GL0".
func New() (*Backend, error) {
	d, err := theDevice()
	if err != nil {
		return nil, err
	}
	b := &Backend{dev: d, vd: d.t}
	b.rt.b = b
	b.enc = gpuops.NewEncoder(&b.rt, &d.info.ops, "OpenGL", "tandem: gl: "+d.name)
	return b, nil
}

// errZero is the error of every method of a zero Backend that returns one.
var errZero = errors.New("tandem: gl: zero Backend: create one with gl.New")

// Name is the device's name ("GL0"); "" for a nil or zero Backend.
func (b *Backend) Name() string {
	if b == nil || b.dev == nil {
		return ""
	}
	return b.dev.name
}

// Device is the backend's device (nil for a nil or zero Backend).
func (b *Backend) Device() core.Device {
	if b == nil || b.dev == nil {
		return nil
	}
	return b.dev
}

// DefaultBufferType is the device's memory (nil for a nil or zero Backend).
func (b *Backend) DefaultBufferType() core.BufferType {
	if b == nil || b.dev == nil {
		return nil
	}
	return b.dev.buft
}

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an error.
func (b *Backend) Synchronize() error {
	if b == nil {
		return errors.New("tandem: gl: Synchronize on a nil *Backend")
	}
	if b.dev == nil {
		return errZero
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("tandem: gl: %s: Synchronize: backend is closed", b.dev.name)
	}
	return nil
}

// Close releases the backend; the device and its buffers stay usable. Closing twice is a no-op;
// every other method but Name, Device and DefaultBufferType returns an error afterwards.
func (b *Backend) Close() error {
	if b == nil {
		return errors.New("tandem: gl: Close on a nil *Backend")
	}
	if b.dev == nil {
		return errZero
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	b.enc.Close()
	return nil
}

// Barriers returns the number of memory barriers GraphCompute has issued (for tests and tuning;
// 0 for a nil or zero Backend).
func (b *Backend) Barriers() int {
	if b == nil || b.dev == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enc.Barriers()
}

// Dispatches returns the number of compute dispatches GraphCompute has issued (0 for a nil or
// zero Backend).
func (b *Backend) Dispatches() int {
	if b == nil || b.dev == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dispatches
}

// GraphCompute dispatches every computing node of g (views and leafs cost nothing) and waits for
// the result. A nil g is an error. An index out of range in GET_ROWS or SET_ROWS (checked on the
// device) is reported after the graph has run, as the CPU backend words it.
func (b *Backend) GraphCompute(g *core.Graph) error {
	return b.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext is GraphCompute that stops once ctx is done: no node is dispatched after
// that, work already dispatched is waited for, and the error wraps ctx.Err(). The graph's outputs
// are then undefined. A nil ctx means context.Background().
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if b == nil {
		return errors.New("tandem: gl: GraphCompute on a nil *Backend")
	}
	if b.dev == nil {
		return errZero
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("tandem: gl: %s: backend is closed", b.dev.name)
	}
	if g == nil {
		return fmt.Errorf("tandem: gl: %s: GraphCompute: nil graph", b.dev.name)
	}
	if err := g.Err(); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return err
	}
	if err := b.enc.Start(g.Nodes()); err != nil {
		return core.Errorf("tandem: gl: %s: %w", b.dev.name, err)
	}
	c := &commands{t: b.vd}
	b.rt.cmd = c
	err := b.vd.do(func() error {
		var err error
		for i, n := range g.Nodes() {
			if n.Op == core.OpNone || n.Op.IsView() || n.IsEmpty() {
				continue
			}
			if e := ctx.Err(); e != nil {
				err = core.Errorf("tandem: gl: %s: stopped before node %d %v: %w", b.dev.name, i, n, e)
				break
			}
			if e := b.enc.Encode(i, n); e != nil {
				err = core.Errorf("tandem: gl: %s: node %d %v: %w", b.dev.name, i, n, e)
				break
			}
		}
		return errors.Join(err, c.finish())
	})
	b.dispatches += c.Dispatches()
	if err != nil {
		if errors.Is(err, errClosed) {
			return fmt.Errorf("tandem: gl: %s: GraphCompute: %w", b.dev.name, err)
		}
		return err
	}
	return b.enc.CheckIndices()
}
