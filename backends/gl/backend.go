//go:build gl && cgo

package gl

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/tandem-ml/tandem/core"
)

// Backend runs graphs on the OpenGL device. It is safe for use by one goroutine at a time (calls
// are serialized).
type Backend struct {
	dev *device
	vd  *glThread

	mu     sync.Mutex
	closed bool
	push   pushConsts
	// Byte ranges written and read since the last barrier: a node that touches one of them gets
	// a glMemoryBarrier first; independent nodes run without.
	written, read []span
	barriers      int
	dispatches    int
	// Index checks of GET_ROWS/SET_ROWS nodes (status.go): one status word per node.
	status *glBuffer
	checks []indexCheck
	node   int // position of the node being encoded
}

// span is a byte range of a GL buffer.
type span struct {
	buf      *glBuffer
	from, to uint64
}

func (s span) overlaps(o span) bool { return s.buf == o.buf && s.from < o.to && o.from < s.to }

var _ core.Backend = (*Backend)(nil)

// Info returns the device description the encoders use.
func (t *glThread) Info() *devInfo { return &t.info }

// New creates a backend on the OpenGL device "GL0".
func New() (*Backend, error) {
	d, err := theDevice()
	if err != nil {
		return nil, err
	}
	return &Backend{dev: d, vd: d.t}, nil
}

// Name is the device's name ("GL0").
func (b *Backend) Name() string { return b.dev.name }

func (b *Backend) Device() core.Device { return b.dev }

func (b *Backend) DefaultBufferType() core.BufferType { return b.dev.buft }

// Synchronize returns at once (GraphCompute waits for its work); on a closed backend it is an error.
func (b *Backend) Synchronize() error {
	if b == nil {
		return errors.New("tandem: gl: Synchronize on a nil *Backend")
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
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.status != nil {
		b.status.destroy()
		b.status = nil
	}
	return nil
}

// Barriers returns the number of memory barriers GraphCompute has issued (for tests and tuning).
func (b *Backend) Barriers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.barriers
}

// Dispatches returns the number of compute dispatches GraphCompute has issued.
func (b *Backend) Dispatches() int {
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
	if err := b.resetChecks(checksNeeded(g.Nodes())); err != nil {
		return core.Errorf("tandem: gl: %s: %w", b.dev.name, err)
	}
	b.written, b.read = b.written[:0], b.read[:0]
	c := &commands{t: b.vd}
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
			b.node = i
			if e := b.encode(c, n); e != nil {
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
	return b.checkIndices()
}

// tensorSpan returns the byte range of t in its GL buffer.
func (b *Backend) tensorSpan(t *core.Tensor) (span, *buffer, error) {
	gb, ok := t.Buffer.(*buffer)
	if !ok {
		return span{}, nil, fmt.Errorf("tensor %v is not in OpenGL memory (buffer %v)", t, bufName(t.Buffer))
	}
	if gb.bt.dev != b.dev {
		return span{}, nil, fmt.Errorf("tensor %v is in memory of %s, not %s", t, gb.bt.dev.name, b.dev.name)
	}
	n := t.NBytes()
	if t.Offset < 0 || n < 0 || t.Offset > gb.Size() || n > gb.Size()-t.Offset {
		return span{}, nil, fmt.Errorf("tensor %v bytes at offset %d, %d long, lie outside its %d-byte buffer", t, t.Offset, n, gb.Size())
	}
	return span{buf: gb.gb, from: uint64(t.Offset), to: uint64(t.Offset + n)}, gb, nil
}

// operand is a tensor bound for a dispatch: the binding (at an aligned-down offset) and the
// tensor's first element relative to it, in units of unit bytes.
type operand struct {
	t    *core.Tensor
	bind binding
	sp   span
	offs uint32
}

// bindTensor binds t for a shader that addresses it in units of unit bytes.
func (b *Backend) bindTensor(t *core.Tensor, unit int64) (operand, error) {
	sp, gb, err := b.tensorSpan(t)
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
		return operand{}, fmt.Errorf("tensor %v spans %d bytes, more than GL_MAX_SHADER_STORAGE_BLOCK_SIZE (%d)", t, size, b.vd.Info().Limits.MaxStorageBufferRange)
	}
	return operand{t: t, bind: bindRange(gb.gb, base, size), sp: sp, offs: uint32(mis / uint64(unit))}, nil
}

// use is one source operand of a node: the tensor and the unit (bytes) its shader addresses it in.
type use struct {
	t    *core.Tensor
	unit int64
}

// bindNode binds a node's sources and its destination (in dstUnit units) and issues the barrier
// the node needs. It returns the operands in order: the sources, then the destination.
func (b *Backend) bindNode(c *commands, dst *core.Tensor, dstUnit int64, srcs ...use) ([]operand, error) {
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

// sync issues a barrier when dst or srcs conflict with unsynchronized accesses, then notes the
// node's accesses. Destinations are tracked by their bound words (16-bit stores rewrite whole
// words), so neighbouring tensors that share a word are ordered too.
func (b *Backend) sync(c *commands, dst operand, srcs ...operand) error {
	dsp := dst.sp
	dsp.from, dsp.to = dsp.from&^3, (dsp.to+3)&^3
	need := false
	for _, w := range b.written {
		if w.overlaps(dsp) {
			need = true
		}
		for _, s := range srcs {
			if w.overlaps(s.sp) {
				need = true
			}
		}
	}
	for _, r := range b.read {
		if r.overlaps(dsp) {
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
	b.written = append(b.written, dsp)
	for _, s := range srcs {
		b.read = append(b.read, s.sp)
	}
	return nil
}

// pipeline returns the device's program for a shader of package shaders (GL thread only).
func (b *Backend) pipeline(name string, bindings int, push uint32, spec ...uint32) (*program, error) {
	return b.vd.program(name, bindings, push, spec)
}
