package alloc

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// AllocCtxTensors allocates every tensor of a NoAlloc context that has no memory yet in the
// backend's default buffer type. See AllocCtxTensorsFromBufferType.
func AllocCtxTensors(ctx *core.Context, backend core.Backend) (core.Buffer, error) {
	if backend == nil {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: nil backend")
	}
	return AllocCtxTensorsFromBufferType(ctx, backend.DefaultBufferType())
}

// AllocCtxTensorsFromBufferType gives every tensor of the NoAlloc context ctx that has no memory a
// place in new buffers of type bt, in creation order, and initialises views. Tensors are packed in
// runs no larger than bt's maximum size (a tensor larger than that gets a buffer of its own); one run
// gives one buffer, several give a MultiBuffer that behaves as one. It returns a nil buffer and a
// nil error when nothing needed memory. On failure the buffers made so far are freed and the tensors
// they held are left without memory.
func AllocCtxTensorsFromBufferType(ctx *core.Context, bt core.BufferType) (core.Buffer, error) {
	if ctx == nil || bt == nil {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: nil context or buffer type")
	}
	if !ctx.NoAlloc() {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: the context allocates its own memory (NoAlloc is false)")
	}
	align := max(1, bt.Alignment())
	maxSize := bt.MaxSize()
	ts := ctx.Tensors()

	type run struct {
		first, last int
		size        int64
	}
	var runs []run
	first, cur := 0, int64(0)
	for i, t := range ts {
		var size int64
		if t.Buffer == nil && t.ViewSrc == nil {
			size = core.AlignUp(bt.AllocSize(t), align)
		}
		if cur > 0 && maxSize > 0 && cur+size > maxSize {
			runs = append(runs, run{first, i, cur})
			first, cur = i, size
		} else {
			cur += size
		}
	}
	if cur > 0 {
		runs = append(runs, run{first, len(ts), cur})
	}

	var bufs []core.Buffer
	fail := func(err error) (core.Buffer, error) {
		for _, b := range bufs {
			for _, t := range ts {
				if t.Buffer == b {
					t.Buffer, t.Offset = nil, 0
				}
			}
			_ = b.Free()
		}
		return nil, err
	}
	for _, r := range runs {
		b, err := allocBuffer(bt, r.size)
		if err != nil {
			return fail(err)
		}
		bufs = append(bufs, b)
		ta := NewTensorAllocator(b)
		for _, t := range ts[r.first:r.last] {
			if err := initCtxTensor(ta, t); err != nil {
				return fail(fmt.Errorf("tandem: alloc: AllocCtxTensors: %w", err))
			}
		}
	}
	// views of tensors that already had memory, outside every run
	for _, t := range ts {
		if t.ViewSrc != nil && t.Buffer == nil && t.ViewSrc.Buffer != nil {
			if err := core.ViewInit(t); err != nil {
				return fail(fmt.Errorf("tandem: alloc: AllocCtxTensors: %w", err))
			}
		}
	}
	switch len(bufs) {
	case 0:
		return nil, nil
	case 1:
		return bufs[0], nil
	}
	return NewMultiBuffer(bufs...), nil
}

func initCtxTensor(ta *TensorAllocator, t *core.Tensor) error {
	if t.Buffer != nil {
		return nil
	}
	if t.ViewSrc == nil {
		return ta.Alloc(t)
	}
	if t.ViewSrc.Buffer != nil {
		return core.ViewInit(t)
	}
	return nil
}

// MultiBuffer joins several buffers of one type into one handle (ggml's multi-buffer): its size is
// the sum, and setting the usage, clearing and freeing apply to every part. Tensors live in the
// parts; tensor transfers through the MultiBuffer go to the part that holds the tensor.
type MultiBuffer struct {
	bufs  []core.Buffer
	size  int64
	usage core.BufferUsage
}

var _ core.Buffer = (*MultiBuffer)(nil)

// NewMultiBuffer wraps bufs (at least one, all of the same type).
func NewMultiBuffer(bufs ...core.Buffer) *MultiBuffer {
	m := &MultiBuffer{bufs: append([]core.Buffer(nil), bufs...)}
	for _, b := range bufs {
		m.size += b.Size()
	}
	if len(bufs) > 0 {
		m.usage = bufs[0].Usage()
	}
	return m
}

// Buffers returns the parts.
func (m *MultiBuffer) Buffers() []core.Buffer { return append([]core.Buffer(nil), m.bufs...) }

// Type is the parts' buffer type (nil for an empty MultiBuffer).
func (m *MultiBuffer) Type() core.BufferType {
	if len(m.bufs) == 0 {
		return nil
	}
	return m.bufs[0].Type()
}

// Size is the sum of the parts' sizes.
func (m *MultiBuffer) Size() int64 { return m.size }

// Usage is the usage last set.
func (m *MultiBuffer) Usage() core.BufferUsage { return m.usage }

// SetUsage sets the usage of every part.
func (m *MultiBuffer) SetUsage(u core.BufferUsage) {
	m.usage = u
	for _, b := range m.bufs {
		b.SetUsage(u)
	}
}

// Contains reports whether b is one of the parts (or the MultiBuffer itself).
func (m *MultiBuffer) Contains(b core.Buffer) bool {
	if b == core.Buffer(m) {
		return true
	}
	for _, p := range m.bufs {
		if p == b {
			return true
		}
	}
	return false
}

func (m *MultiBuffer) part(t *core.Tensor, op string) (core.Buffer, error) {
	for _, p := range m.bufs {
		if t.Buffer == p {
			return p, nil
		}
	}
	return nil, fmt.Errorf("tandem: alloc: multi-buffer %s: tensor %v is not in any of its %d buffers", op, t, len(m.bufs))
}

// SetTensor writes into t, which must live in one of the parts.
func (m *MultiBuffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	p, err := m.part(t, "SetTensor")
	if err != nil {
		return err
	}
	return p.SetTensor(t, data, offset)
}

// GetTensor reads from t, which must live in one of the parts.
func (m *MultiBuffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	p, err := m.part(t, "GetTensor")
	if err != nil {
		return err
	}
	return p.GetTensor(t, dst, offset)
}

// MemsetTensor fills bytes of t, which must live in one of the parts.
func (m *MultiBuffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	p, err := m.part(t, "MemsetTensor")
	if err != nil {
		return err
	}
	return p.MemsetTensor(t, value, offset, size)
}

// Clear fills every part with value.
func (m *MultiBuffer) Clear(value byte) error {
	for _, b := range m.bufs {
		if err := b.Clear(value); err != nil {
			return err
		}
	}
	return nil
}

// Free frees every part (the first error is returned, all parts are tried).
func (m *MultiBuffer) Free() error {
	var first error
	for _, b := range m.bufs {
		if err := b.Free(); err != nil && first == nil {
			first = err
		}
	}
	m.bufs = nil
	m.size = 0
	return first
}
