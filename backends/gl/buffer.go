//go:build gl && cgo

package gl

import (
	"fmt"
	"sync/atomic"

	"github.com/tandem-ml/tandem/core"
)

// maxBufferSize caps device buffers so that allocators split large requests.
const maxBufferSize = 1 << 30

// bufferType is the device's memory ("GL0").
type bufferType struct {
	dev  *device
	name string
}

var _ core.BufferType = (*bufferType)(nil)

func (bt *bufferType) Name() string { return bt.name }

// Alignment is GL_SHADER_STORAGE_BUFFER_OFFSET_ALIGNMENT, so tensors can be bound where they start.
func (bt *bufferType) Alignment() int64 {
	return int64(max(bt.dev.info.ops.MinStorageBufferOffsetAlignment, 4))
}

// MaxSize is 1 GiB.
func (bt *bufferType) MaxSize() int64 { return maxBufferSize }

// AllocSize is t's byte size (0 for a nil t).
func (bt *bufferType) AllocSize(t *core.Tensor) int64 {
	if t == nil {
		return 0
	}
	return t.NBytes()
}

func (bt *bufferType) IsHost() bool { return false }

func (bt *bufferType) Device() core.Device { return bt.dev }

// Alloc allocates a zeroed buffer of size bytes.
func (bt *bufferType) Alloc(size int64) (core.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("tandem: gl: %s buffer: negative size %d", bt.name, size)
	}
	if size > bt.MaxSize() {
		return nil, fmt.Errorf("tandem: gl: %s buffer of %d bytes exceeds the maximum of %d", bt.name, size, bt.MaxSize())
	}
	gb, err := bt.dev.t.newBuffer(uint64(size))
	if err != nil {
		return nil, fmt.Errorf("tandem: gl: %s buffer of %d bytes: %w", bt.name, size, err)
	}
	return &buffer{bt: bt, gb: gb}, nil
}

// buffer is a core.Buffer in a GL shader storage buffer.
type buffer struct {
	bt    *bufferType
	gb    *glBuffer
	usage atomic.Int32
}

var (
	_ core.Buffer       = (*buffer)(nil)
	_ core.TensorCopier = (*buffer)(nil)
)

func (b *buffer) Type() core.BufferType       { return b.bt }
func (b *buffer) Size() int64                 { return int64(b.gb.size) }
func (b *buffer) Usage() core.BufferUsage     { return core.BufferUsage(b.usage.Load()) }
func (b *buffer) SetUsage(u core.BufferUsage) { b.usage.Store(int32(u)) }

// span checks that t is a tensor of this buffer and that [t.Offset+offset, +n) lies in the
// buffer (without overflowing), and returns its start.
func (b *buffer) span(op string, t *core.Tensor, offset, n int64) (uint64, error) {
	if t == nil {
		return 0, fmt.Errorf("tandem: gl: %s: nil tensor", op)
	}
	if gb, ok := t.Buffer.(*buffer); !ok || gb != b {
		return 0, fmt.Errorf("tandem: gl: %s: tensor %v is not in this %s buffer (its buffer: %v)", op, t, b.bt.name, bufName(t.Buffer))
	}
	size := b.Size()
	if t.Offset < 0 || offset < 0 || n < 0 || t.Offset > size || offset > size-t.Offset || n > size-t.Offset-offset {
		return 0, fmt.Errorf("tandem: gl: %s: tensor %v bytes at offset %d+%d, %d long, lie outside its %d-byte %s buffer",
			op, t, t.Offset, offset, n, size, b.bt.name)
	}
	return uint64(t.Offset + offset), nil
}

func bufName(b core.Buffer) string {
	if b == nil {
		return "none"
	}
	return b.Type().Name()
}

// SetTensor writes data to t's bytes from offset. A nil t, a tensor of another buffer, a range
// outside the buffer and a freed buffer are errors.
func (b *buffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	off, err := b.span("SetTensor", t, offset, int64(len(data)))
	if err != nil {
		return err
	}
	if err := b.gb.write(off, data); err != nil {
		return fmt.Errorf("tandem: gl: SetTensor %v: %w", t, err)
	}
	return nil
}

// GetTensor reads len(dst) bytes of t from offset; errors as SetTensor's.
func (b *buffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	off, err := b.span("GetTensor", t, offset, int64(len(dst)))
	if err != nil {
		return err
	}
	if err := b.gb.Read(off, dst); err != nil {
		return fmt.Errorf("tandem: gl: GetTensor %v: %w", t, err)
	}
	return nil
}

// MemsetTensor sets size bytes of t from offset to value; errors as SetTensor's.
func (b *buffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	off, err := b.span("MemsetTensor", t, offset, size)
	if err != nil {
		return err
	}
	if err := b.gb.Memset(off, uint64(size), value); err != nil {
		return fmt.Errorf("tandem: gl: MemsetTensor %v: %w", t, err)
	}
	return nil
}

// Clear sets every byte to value.
func (b *buffer) Clear(value byte) error {
	if err := b.gb.Memset(0, b.gb.size, value); err != nil {
		return fmt.Errorf("tandem: gl: clearing a %s buffer: %w", b.bt.name, err)
	}
	return nil
}

// Free releases the buffer; later uses are errors.
func (b *buffer) Free() error {
	b.gb.Destroy()
	return nil
}

// CopyTensor copies src into dst (in b) on the device when src is in a buffer of this device,
// or from host memory otherwise. A nil src or dst is an error.
func (b *buffer) CopyTensor(src, dst *core.Tensor) (bool, error) {
	if src == nil || dst == nil {
		return true, fmt.Errorf("tandem: gl: CopyTensor: nil tensor (src %v, dst %v)", src, dst)
	}
	if !core.SameLayout(src, dst) || src.Buffer == nil {
		return false, nil
	}
	n := src.NBytes()
	if sb, ok := src.Buffer.(*buffer); ok && sb.bt.dev == b.bt.dev {
		so, err := sb.span("CopyTensor", src, 0, n)
		if err != nil {
			return true, err
		}
		do, err := b.span("CopyTensor", dst, 0, n)
		if err != nil {
			return true, err
		}
		if err := b.gb.copyFrom(do, sb.gb, so, uint64(n)); err != nil {
			return true, fmt.Errorf("tandem: gl: copying %v to %v: %w", src, dst, err)
		}
		return true, nil
	}
	if data := src.Data(); data != nil {
		return true, b.SetTensor(dst, data, 0)
	}
	return false, nil
}
