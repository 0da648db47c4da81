package alloc

import (
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

// NewTensorAllocator starts at the beginning of buf.
func NewTensorAllocator(buf core.Buffer) *TensorAllocator {
	return &TensorAllocator{buf: buf, align: max(1, buf.Type().Alignment())}
}

// Offset is the first free byte.
func (ta *TensorAllocator) Offset() int64 { return ta.offset }

// Alloc places t at the next aligned offset; a view instead gets its source's memory (the source
// must have memory).
func (ta *TensorAllocator) Alloc(t *core.Tensor) error {
	if t.ViewSrc != nil {
		return core.ViewInit(t)
	}
	size := core.AlignUp(ta.buf.Type().AllocSize(t), ta.align)
	if ta.offset+size > ta.buf.Size() {
		return fmt.Errorf("tandem: alloc: not enough space in the %s buffer for %v: %d bytes needed, %d available",
			ta.buf.Type().Name(), t, size, ta.buf.Size()-ta.offset)
	}
	if err := core.TensorAlloc(ta.buf, t, ta.offset); err != nil {
		return err
	}
	ta.offset += size
	return nil
}
