package gpubackend

import (
	"sync/atomic"

	"github.com/tandem-ml/tandem/core"
)

// BufferType is a device's memory ("Vulkan0") or its pinned host memory ("Vulkan0_Host"): a
// core.BufferType over the device's Memory.
type BufferType struct {
	dev     *Device
	name    string
	host    bool
	align   int64
	maxSize int64
}

var _ core.BufferType = (*BufferType)(nil)

// Name is the buffer type's name.
func (bt *BufferType) Name() string { return bt.name }

// Alignment is the device's storage-buffer offset alignment (for host memory at least 32, as
// core's host buffers), so tensors can be bound where they start.
func (bt *BufferType) Alignment() int64 { return bt.align }

// MaxSize is the largest buffer the type allocates (allocators split larger requests).
func (bt *BufferType) MaxSize() int64 { return bt.maxSize }

// AllocSize is t's byte size (0 for a nil t).
func (bt *BufferType) AllocSize(t *core.Tensor) int64 {
	if t == nil {
		return 0
	}
	return t.NBytes()
}

// IsHost reports whether the buffers are host memory (their Bytes are addressable).
func (bt *BufferType) IsHost() bool { return bt.host }

// Device is the package's device the memory belongs to.
func (bt *BufferType) Device() core.Device { return bt.dev.cfg.Core }

// Alloc allocates a zeroed buffer of size bytes: a core.HostBuffer for host memory. A negative
// size and one above MaxSize are errors.
func (bt *BufferType) Alloc(size int64) (core.Buffer, error) {
	p := bt.dev.cfg.API.prefix()
	if size < 0 {
		return nil, core.Errorf("%s%s buffer: negative size %d", p, bt.name, size)
	}
	if size > bt.maxSize {
		return nil, core.Errorf("%s%s buffer of %d bytes exceeds the maximum of %d (device %s)", p, bt.name, size, bt.maxSize, bt.dev.cfg.Physical)
	}
	mem, err := bt.dev.cfg.Memory.Alloc(uint64(size), bt.host)
	if err != nil {
		return nil, core.Errorf("%s%s buffer of %d bytes: %w", p, bt.name, size, err)
	}
	b := &Buffer{bt: bt, mem: mem}
	if bt.host {
		m, ok := mem.(Mapped)
		if !ok {
			mem.Destroy()
			return nil, core.Errorf("%s%s buffer: internal error: host memory is a %T, not mapped", p, bt.name, mem)
		}
		return &HostBuffer{Buffer: b, mapped: m}, nil
	}
	return b, nil
}

// Buffer is a core.Buffer in one Allocation of a device.
type Buffer struct {
	bt    *BufferType
	mem   Allocation
	usage atomic.Int32
}

// HostBuffer is a Buffer of host memory: its bytes are addressable.
type HostBuffer struct {
	*Buffer
	mapped Mapped
}

var (
	_ core.Buffer       = (*Buffer)(nil)
	_ core.TensorCopier = (*Buffer)(nil)
	_ core.HostBuffer   = (*HostBuffer)(nil)
)

// Bytes returns the mapped memory.
func (h *HostBuffer) Bytes() []byte { return h.mapped.Mapped() }

// bufferOf returns the shell buffer behind a core.Buffer (nil, false for any other buffer).
func bufferOf(cb core.Buffer) (*Buffer, bool) {
	switch b := cb.(type) {
	case *Buffer:
		return b, true
	case *HostBuffer:
		return b.Buffer, true
	}
	return nil, false
}

// bufName names a tensor's buffer in errors.
func bufName(b core.Buffer) string {
	if b == nil {
		return "none"
	}
	return b.Type().Name()
}

// Type is the buffer's type.
func (b *Buffer) Type() core.BufferType { return b.bt }

// Size is the buffer's size in bytes.
func (b *Buffer) Size() int64 { return int64(b.mem.Size()) }

// Usage is what the buffer holds (weights, compute, any).
func (b *Buffer) Usage() core.BufferUsage { return core.BufferUsage(b.usage.Load()) }

// SetUsage sets what the buffer holds.
func (b *Buffer) SetUsage(u core.BufferUsage) { b.usage.Store(int32(u)) }

// errorf starts a buffer error with the API's prefix.
func (b *Buffer) errorf(format string, args ...any) error {
	return core.Errorf(b.bt.dev.cfg.API.prefix()+format, args...)
}

// span checks that t is a tensor of this buffer and that [t.Offset+offset, +n) lies in the
// buffer (without overflowing), and returns its start.
func (b *Buffer) span(op string, t *core.Tensor, offset, n int64) (uint64, error) {
	if t == nil {
		return 0, b.errorf("%s: nil tensor", op)
	}
	if tb, ok := bufferOf(t.Buffer); !ok || tb != b {
		return 0, b.errorf("%s: tensor %v is not in this %s buffer (its buffer: %v)", op, t, b.bt.name, bufName(t.Buffer))
	}
	size := b.Size()
	if t.Offset < 0 || offset < 0 || n < 0 || t.Offset > size || offset > size-t.Offset || n > size-t.Offset-offset {
		return 0, b.errorf("%s: tensor %v bytes at offset %d+%d, %d long, lie outside its %d-byte %s buffer",
			op, t, t.Offset, offset, n, size, b.bt.name)
	}
	return uint64(t.Offset + offset), nil
}

// SetTensor writes data to t's bytes from offset. A nil t, a tensor of another buffer, a range
// outside the buffer and a freed buffer are errors.
func (b *Buffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	off, err := b.span("SetTensor", t, offset, int64(len(data)))
	if err != nil {
		return err
	}
	if err := b.mem.Write(off, data); err != nil {
		return b.errorf("SetTensor %v: %w", t, err)
	}
	return nil
}

// GetTensor reads len(dst) bytes of t from offset; errors as SetTensor's.
func (b *Buffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	off, err := b.span("GetTensor", t, offset, int64(len(dst)))
	if err != nil {
		return err
	}
	if err := b.mem.Read(off, dst); err != nil {
		return b.errorf("GetTensor %v: %w", t, err)
	}
	return nil
}

// MemsetTensor sets size bytes of t from offset to value; errors as SetTensor's.
func (b *Buffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	off, err := b.span("MemsetTensor", t, offset, size)
	if err != nil {
		return err
	}
	if err := b.mem.Memset(off, uint64(size), value); err != nil {
		return b.errorf("MemsetTensor %v: %w", t, err)
	}
	return nil
}

// Clear sets every byte to value; on a freed buffer it is an error.
func (b *Buffer) Clear(value byte) error {
	if err := b.mem.Memset(0, b.mem.Size(), value); err != nil {
		return b.errorf("clearing a %s buffer: %w", b.bt.name, err)
	}
	return nil
}

// Free releases the buffer; later uses are errors. Freeing twice does nothing.
func (b *Buffer) Free() error {
	b.mem.Destroy()
	return nil
}

// CopyTensor copies src into dst (in b) on the device when src is in a buffer of the same device,
// or from host memory otherwise; ok is false when it can do neither (layouts differ, or src is in
// another device's memory). A nil src or dst is an error.
func (b *Buffer) CopyTensor(src, dst *core.Tensor) (bool, error) {
	if src == nil || dst == nil {
		return true, b.errorf("CopyTensor: nil tensor (src %v, dst %v)", src, dst)
	}
	if !core.SameLayout(src, dst) || src.Buffer == nil {
		return false, nil
	}
	n := src.NBytes()
	if sb, ok := bufferOf(src.Buffer); ok && sb.bt.dev == b.bt.dev {
		so, err := sb.span("CopyTensor", src, 0, n)
		if err != nil {
			return true, err
		}
		do, err := b.span("CopyTensor", dst, 0, n)
		if err != nil {
			return true, err
		}
		if err := b.bt.dev.cfg.Memory.Copy(b.mem, do, sb.mem, so, uint64(n)); err != nil {
			return true, b.errorf("copying %v to %v: %w", src, dst, err)
		}
		return true, nil
	}
	if data := src.Data(); data != nil {
		return true, b.SetTensor(dst, data, 0)
	}
	return false, nil
}
