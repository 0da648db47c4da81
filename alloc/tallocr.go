package alloc

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// TensorAllocator places tensors one after the other in a buffer (ggml's tallocr): each takes its
// buffer type's AllocSize rounded up to the buffer type's alignment. Nothing is ever freed.
type TensorAllocator struct {
	buf    core.Buffer
	align  int64
	offset int64
}

// errZeroTensorAllocator is the error of Alloc on a nil or zero TensorAllocator.
var errZeroTensorAllocator = errors.New("tandem: alloc: TensorAllocator.Alloc: nil allocator or buffer " +
	"(a zero TensorAllocator: create one with alloc.NewTensorAllocator over an allocated buffer)")

// NewTensorAllocator starts at the beginning of buf. A nil buf (or one without a buffer type) gives
// an allocator whose Alloc fails saying so.
func NewTensorAllocator(buf core.Buffer) *TensorAllocator {
	ta := &TensorAllocator{buf: buf, align: 1}
	if buf != nil && buf.Type() != nil {
		ta.align = max(1, buf.Type().Alignment())
	}
	return ta
}

// Offset is the first free byte (0 for a nil allocator).
func (ta *TensorAllocator) Offset() int64 {
	if ta == nil {
		return 0
	}
	return ta.offset
}

// Alloc places t at the next aligned offset; a view instead gets its source's memory (the source
// must have memory). A nil t, a nil allocator or buffer, a freed buffer and sizes that overflow or
// do not fit are errors.
func (ta *TensorAllocator) Alloc(t *core.Tensor) error {
	switch {
	case ta == nil || ta.buf == nil:
		return errZeroTensorAllocator
	case t == nil:
		return fmt.Errorf("tandem: alloc: TensorAllocator.Alloc: nil tensor")
	case ta.buf.Type() == nil:
		return fmt.Errorf("tandem: alloc: TensorAllocator.Alloc: tensor %v: the buffer has no type", t)
	}
	if t.ViewSrc != nil {
		return core.ViewInit(t)
	}
	if f, ok := ta.buf.(core.FreedReporter); ok && f.Freed() {
		return core.Errorf("tandem: alloc: tensor %v: the %s %w", t, ta.buf.Type().Name(), core.ErrBufferFreed)
	}
	if _, err := t.CheckedBytes(); err != nil {
		return core.Errorf("tandem: alloc: tensor %v: %w", t, err)
	}
	raw := ta.buf.Type().AllocSize(t)
	size, ok := core.CheckedAlignUp(raw, ta.align)
	if !ok {
		return core.Errorf("tandem: alloc: tensor %v: size %d aligned to %d: %w", t, raw, ta.align, core.ErrOverflow)
	}
	if end, ok := core.CheckedAdd(ta.offset, size); !ok || end > ta.buf.Size() {
		return fmt.Errorf("tandem: alloc: not enough space in the %s buffer for %v: %d bytes needed, %d available",
			ta.buf.Type().Name(), t, size, ta.buf.Size()-ta.offset)
	}
	if err := core.TensorAlloc(ta.buf, t, ta.offset); err != nil {
		return err
	}
	ta.offset += size
	return nil
}
