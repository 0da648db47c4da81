//go:build cgo && !novulkan

package vulkan

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

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
	push   vkrt.Push
	// Byte ranges written and read since the last barrier (ggml's
	// unsynced_nodes_written/read): a node that touches one of them gets a
	// barrier first; independent nodes run without.
	written, read []span
	barriers      int
	// Index checks of GET_ROWS/SET_ROWS nodes (status.go): one status word per node.
	status *vkrt.Buffer
	checks []indexCheck
	node   int // position of the node being encoded

	log *slog.Logger // SetLogger; nil reports nothing
}

// span is a byte range of a Vulkan buffer.
type span struct {
	buf      *vkrt.Buffer
	from, to uint64
}

func (s span) overlaps(o span) bool { return s.buf == o.buf && s.from < o.to && o.from < s.to }

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
	return &Backend{dev: d, vd: vd}, nil
}

// Name is the device's name ("Vulkan0").
func (b *Backend) Name() string { return b.dev.name }

func (b *Backend) Device() core.Device { return b.dev }

func (b *Backend) DefaultBufferType() core.BufferType { return b.dev.buft }

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an
// error.
func (b *Backend) Synchronize() error {
	if b == nil {
		return errors.New("tandem: vulkan: Synchronize on a nil *Backend")
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
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.status != nil {
		b.status.Destroy()
		b.status = nil
	}
	return nil
}

// Barriers returns the number of barriers GraphCompute has recorded (for tests
// and tuning).
func (b *Backend) Barriers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.barriers
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
	// Shutdown waits for this graph instead of destroying the device under it.
	done, err := b.vd.Use()
	if err != nil {
		return core.Errorf("tandem: vulkan: %s: GraphCompute: %w", b.dev.name, err)
	}
	defer done()
	if err := b.resetChecks(checksNeeded(g.Nodes())); err != nil {
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
			err = b.checkIndices()
		}
		return err
	}
	b.written, b.read = b.written[:0], b.read[:0] // each command buffer starts with a barrier
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
		b.node = i
		if err := b.encode(cur, n); err != nil {
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

// tensorSpan returns the byte range of t in its Vulkan buffer.
func (b *Backend) tensorSpan(t *core.Tensor) (span, *buffer, error) {
	vb, ok := vkBuffer(t.Buffer)
	if !ok {
		return span{}, nil, fmt.Errorf("tensor %v is not in Vulkan memory (buffer %v)", t, bufName(t.Buffer))
	}
	if vb.bt.dev != b.dev {
		return span{}, nil, fmt.Errorf("tensor %v is in memory of %s, not %s", t, vb.bt.dev.name, b.dev.name)
	}
	n := t.NBytes()
	if t.Offset < 0 || n < 0 || t.Offset > vb.Size() || n > vb.Size()-t.Offset {
		return span{}, nil, fmt.Errorf("tensor %v bytes at offset %d, %d long, lie outside its %d-byte buffer", t, t.Offset, n, vb.Size())
	}
	return span{buf: vb.vb, from: uint64(t.Offset), to: uint64(t.Offset + n)}, vb, nil
}

func bufName(b core.Buffer) string {
	if b == nil {
		return "none"
	}
	return b.Type().Name()
}

// operand is a tensor bound for a dispatch: the binding (at an aligned-down
// offset) and the tensor's first element relative to it, in units of unit bytes.
type operand struct {
	t    *core.Tensor
	bind vkrt.Binding
	sp   span
	offs uint32
}

// bindTensor binds t for a shader that addresses it in units of unit bytes.
func (b *Backend) bindTensor(t *core.Tensor, unit int64) (operand, error) {
	sp, vb, err := b.tensorSpan(t)
	if err != nil {
		return operand{}, err
	}
	align := b.vd.Info().Limits.MinStorageBufferOffsetAlignment
	base := sp.from / align * align
	mis := sp.from - base
	if mis%uint64(unit) != 0 {
		return operand{}, fmt.Errorf("tensor %v starts at byte %d, not a multiple of %d", t, sp.from, unit)
	}
	size := sp.to - base
	if size > uint64(b.vd.Info().Limits.MaxStorageBufferRange) {
		return operand{}, fmt.Errorf("tensor %v spans %d bytes, more than maxStorageBufferRange (%d)", t, size, b.vd.Info().Limits.MaxStorageBufferRange)
	}
	return operand{t: t, bind: vkrt.BindRange(vb.vb, base, size), sp: sp, offs: uint32(mis / uint64(unit))}, nil
}

// use is one source operand of a node: the tensor and the unit (bytes) its shader addresses it in.
type use struct {
	t    *core.Tensor
	unit int64
}

// bindNode binds a node's sources and its destination (in dstUnit units) and records the barrier
// the node needs. It returns the operands in order: the sources, then the destination.
func (b *Backend) bindNode(c *vkrt.Commands, dst *core.Tensor, dstUnit int64, srcs ...use) ([]operand, error) {
	ops := make([]operand, 0, len(srcs)+1)
	for _, s := range srcs {
		o, err := b.bindTensor(s.t, s.unit)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	od, err := b.bindTensor(dst, dstUnit)
	if err != nil {
		return nil, err
	}
	if err := b.sync(c, od, ops...); err != nil {
		return nil, err
	}
	return append(ops, od), nil
}

// sync records a barrier when dst or srcs conflict with unsynchronized
// accesses, then notes the node's accesses.
func (b *Backend) sync(c *vkrt.Commands, dst operand, srcs ...operand) error {
	need := false
	for _, w := range b.written {
		if w.overlaps(dst.sp) {
			need = true
		}
		for _, s := range srcs {
			if w.overlaps(s.sp) {
				need = true
			}
		}
	}
	for _, r := range b.read {
		if r.overlaps(dst.sp) {
			need = true
		}
	}
	if need {
		if err := c.Barrier(); err != nil {
			return err
		}
		b.barriers++
		b.written, b.read = b.written[:0], b.read[:0]
	}
	b.written = append(b.written, dst.sp)
	for _, s := range srcs {
		b.read = append(b.read, s.sp)
	}
	return nil
}

// pipeline returns the device's pipeline for a shader of package shaders.
func (b *Backend) pipeline(name string, bindings int, push uint32, spec ...uint32) (*vkrt.Pipeline, error) {
	return pipelineFor(b.vd, name, bindings, push, spec...)
}
