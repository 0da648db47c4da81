//go:build cgo && !novulkan

package vulkan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/tandem-ml/tandem/backends/internal/gpuops"
	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
)

// maxNodesPerSubmit bounds the dispatches recorded into one command buffer
// before it is submitted (the GPU starts on it while the rest is recorded).
const maxNodesPerSubmit = 100

// Backend runs graphs on one Vulkan device. It is safe for use by one
// goroutine at a time (calls are serialized).
type Backend struct {
	dev *device
	vd  *vkrt.Device

	mu     sync.Mutex
	closed bool
	rt     opsRuntime
	enc    *gpuops.Encoder // the shared op encoders, recording through rt

	log *slog.Logger // SetLogger; nil reports nothing
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
	b := &Backend{dev: d, vd: vd}
	b.rt.b = b
	b.enc = gpuops.NewEncoder(&b.rt, d.gpu, "Vulkan", "tandem: vulkan: "+d.name)
	return b, nil
}

// errZero is the error of every method of a zero Backend that returns one.
var errZero = errors.New("tandem: vulkan: zero Backend: create one with vulkan.New")

// Name is the device's name ("Vulkan0"); "" for a nil or zero Backend.
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

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an
// error.
func (b *Backend) Synchronize() error {
	if b == nil {
		return errors.New("tandem: vulkan: Synchronize on a nil *Backend")
	}
	if b.dev == nil {
		return errZero
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("tandem: vulkan: %s: Synchronize: backend is closed", b.dev.name)
	}
	return nil
}

// Close releases the backend; the device and its buffers stay usable. Closing twice is a no-op;
// every other method but Name, Device and DefaultBufferType returns an error afterwards.
func (b *Backend) Close() error {
	if b == nil {
		return errors.New("tandem: vulkan: Close on a nil *Backend")
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

// Barriers returns the number of barriers GraphCompute has recorded (for tests
// and tuning; 0 for a nil or zero Backend).
func (b *Backend) Barriers() int {
	if b == nil || b.dev == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enc.Barriers()
}

// GraphCompute records every computing node of g (views and leafs cost
// nothing), submits it in batches and waits for the result. A nil g is an
// error. An index out of range in GET_ROWS or SET_ROWS (checked on the device)
// is reported after the graph has run, as the CPU backend words it.
func (b *Backend) GraphCompute(g *core.Graph) error {
	return b.GraphComputeContext(context.Background(), g)
}

// GraphComputeContext is GraphCompute that stops once ctx is done: no node is
// recorded or submitted after that, work already submitted to the device is
// waited for (a device cannot drop it half-way), and the error wraps ctx.Err().
// The graph's outputs are then undefined. A nil ctx means context.Background().
func (b *Backend) GraphComputeContext(ctx context.Context, g *core.Graph) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if b == nil {
		return errors.New("tandem: vulkan: GraphCompute on a nil *Backend")
	}
	if b.dev == nil {
		return errZero
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return fmt.Errorf("tandem: vulkan: %s: backend is closed", b.dev.name)
	}
	if g == nil {
		return fmt.Errorf("tandem: vulkan: %s: GraphCompute: nil graph", b.dev.name)
	}
	if err := g.Err(); err != nil {
		return err
	}
	if err := core.CheckInputsSet(g); err != nil {
		return err
	}
	// Shutdown waits for this graph instead of destroying the device under it.
	done, err := b.vd.Use()
	if err != nil {
		return core.Errorf("tandem: vulkan: %s: GraphCompute: %w", b.dev.name, err)
	}
	defer done()
	if err := b.enc.Start(g.Nodes()); err != nil {
		return core.Errorf("tandem: vulkan: %s: %w", b.dev.name, err)
	}
	var submitted []*vkrt.Commands
	var cur *vkrt.Commands
	finish := func(err error) error {
		if cur != nil {
			if err == nil {
				err = cur.Submit()
				if err == nil {
					submitted = append(submitted, cur)
				} else {
					cur.Release()
				}
			} else {
				cur.Release()
			}
		}
		for _, c := range submitted {
			err = errors.Join(err, c.Wait())
			c.Release()
		}
		if err == nil {
			err = b.enc.CheckIndices()
		}
		return err
	}
	for i, n := range g.Nodes() {
		if n.Op == core.OpNone || n.Op.IsView() || n.IsEmpty() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return finish(core.Errorf("tandem: vulkan: %s: stopped before node %d %v: %w", b.dev.name, i, n, err))
		}
		if cur == nil {
			c, err := b.vd.Begin()
			if err != nil {
				return finish(core.Errorf("tandem: vulkan: %s: %w", b.dev.name, err))
			}
			cur = c
		}
		b.rt.cmd = cur
		if err := b.enc.Encode(i, n); err != nil {
			return finish(core.Errorf("tandem: vulkan: %s: node %d %v: %w", b.dev.name, i, n, err))
		}
		if cur.Dispatches() >= maxNodesPerSubmit {
			if err := cur.Submit(); err != nil {
				return finish(err)
			}
			submitted = append(submitted, cur)
			cur = nil
		}
	}
	return finish(nil)
}

func bufName(b core.Buffer) string {
	if b == nil {
		return "none"
	}
	return b.Type().Name()
}
