//go:build cgo && !novulkan

package vulkan

import (
	"fmt"
	"sync/atomic"

	"github.com/tandem-ml/tandem/backends/vulkan/internal/vkrt"
	"github.com/tandem-ml/tandem/core"
)

// maxBufferSize caps device buffers (ggml's suballocation block size) so that
// allocators split large requests.
const maxBufferSize = 1 << 30

// bufferType is a device's memory ("Vulkan0") or its pinned host memory
// ("Vulkan0_Host").
type bufferType struct {
	dev  *device
	kind vkrt.BufferKind
	name string
}

var _ core.BufferType = (*bufferType)(nil)

func (bt *bufferType) Name() string { return bt.name }

// Alignment is minStorageBufferOffsetAlignment (at least 32 for host memory,
// like core's host buffers), so tensors can be bound where they start.
func (bt *bufferType) Alignment() int64 {
	a := int64(bt.dev.info.Limits.MinStorageBufferOffsetAlignment)
	if bt.kind == vkrt.HostBuffer {
		a = max(a, 32)
	}
	return max(a, 4)
}

// MaxSize is 1 GiB, or the device's maxMemoryAllocationSize if smaller.
func (bt *bufferType) MaxSize() int64 {
	n := int64(maxBufferSize)
	if m := int64(bt.dev.info.Limits.MaxMemoryAllocationSize); m > 0 && m < n {
		n = m
	}
	return n
}

// AllocSize is t's byte size (0 for a nil t).
func (bt *bufferType) AllocSize(t *core.Tensor) int64 {
	if t == nil {
		return 0
	}
	return t.NBytes()
}

func (bt *bufferType) IsHost() bool { return bt.kind == vkrt.HostBuffer }

func (bt *bufferType) Device() core.Device { return bt.dev }

func (bt *bufferType) Alloc(size int64) (core.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("tandem: vulkan: %s buffer: negative size %d", bt.name, size)
	}
	if size > bt.MaxSize() {
		return nil, fmt.Errorf("tandem: vulkan: %s buffer of %d bytes exceeds the maximum of %d (device %s)", bt.name, size, bt.MaxSize(), bt.dev.info.Name)
	}
	vd, err := bt.dev.open()
	if err != nil {
		return nil, err
	}
	vb, err := vd.NewBuffer(uint64(size), bt.kind)
	if err != nil {
		return nil, fmt.Errorf("tandem: vulkan: %s buffer of %d bytes: %w", bt.name, size, err)
	}
	b := &buffer{bt: bt, vb: vb}
	if bt.kind == vkrt.HostBuffer {
		return &hostBuffer{b}, nil
	}
	return b, nil
}

// buffer is a core.Buffer in a Vulkan buffer.
type buffer struct {
	bt    *bufferType
	vb    *vkrt.Buffer
	usage atomic.Int32
}

var (
	_ core.Buffer       = (*buffer)(nil)
	_ core.TensorCopier = (*buffer)(nil)
	_ core.HostBuffer   = (*hostBuffer)(nil)
)

// hostBuffer is a buffer of pinned host memory: its bytes are addressable.
type hostBuffer struct{ *buffer }

// Bytes returns the mapped memory.
func (h *hostBuffer) Bytes() []byte { return h.vb.Mapped() }

func (b *buffer) Type() core.BufferType       { return b.bt }
func (b *buffer) Size() int64                 { return int64(b.vb.Size()) }
func (b *buffer) Usage() core.BufferUsage     { return core.BufferUsage(b.usage.Load()) }
func (b *buffer) SetUsage(u core.BufferUsage) { b.usage.Store(int32(u)) }

// span checks that t is a tensor of this buffer and that [t.Offset+offset, +n) lies in the
// buffer (without overflowing), and returns its start.
func (b *buffer) span(op string, t *core.Tensor, offset, n int64) (uint64, error) {
	if t == nil {
		return 0, fmt.Errorf("tandem: vulkan: %s: nil tensor", op)
	}
	if vb, ok := vkBuffer(t.Buffer); !ok || vb != b {
		return 0, fmt.Errorf("tandem: vulkan: %s: tensor %v is not in this %s buffer (its buffer: %v)", op, t, b.bt.name, bufName(t.Buffer))
	}
	size := b.Size()
	if t.Offset < 0 || offset < 0 || n < 0 || t.Offset > size || offset > size-t.Offset || n > size-t.Offset-offset {
		return 0, fmt.Errorf("tandem: vulkan: %s: tensor %v bytes at offset %d+%d, %d long, lie outside its %d-byte %s buffer",
			op, t, t.Offset, offset, n, size, b.bt.name)
	}
	return uint64(t.Offset + offset), nil
}

// SetTensor writes data to t's bytes from offset. A nil t, a tensor of another buffer, a range
// outside the buffer and a freed buffer are errors.
func (b *buffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	off, err := b.span("SetTensor", t, offset, int64(len(data)))
	if err != nil {
		return err
	}
	if err := b.vb.Write(off, data); err != nil {
		return fmt.Errorf("tandem: vulkan: SetTensor %v: %w", t, err)
	}
	return nil
}

// GetTensor reads len(dst) bytes of t from offset; errors as SetTensor's.
func (b *buffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	off, err := b.span("GetTensor", t, offset, int64(len(dst)))
	if err != nil {
		return err
	}
	if err := b.vb.Read(off, dst); err != nil {
		return fmt.Errorf("tandem: vulkan: GetTensor %v: %w", t, err)
	}
	return nil
}

// MemsetTensor sets size bytes of t from offset to value; errors as SetTensor's.
func (b *buffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	off, err := b.span("MemsetTensor", t, offset, size)
	if err != nil {
		return err
	}
	if err := b.vb.Memset(off, uint64(size), value); err != nil {
		return fmt.Errorf("tandem: vulkan: MemsetTensor %v: %w", t, err)
	}
	return nil
}

func (b *buffer) Clear(value byte) error {
	if err := b.vb.Memset(0, b.vb.Size(), value); err != nil {
		return fmt.Errorf("tandem: vulkan: clearing a %s buffer: %w", b.bt.name, err)
	}
	return nil
}

func (b *buffer) Free() error {
	b.vb.Destroy()
	return nil
}

// vkBuffer returns the Vulkan buffer behind a core.Buffer of this package.
func vkBuffer(cb core.Buffer) (*buffer, bool) {
	switch b := cb.(type) {
	case *buffer:
		return b, true
	case *hostBuffer:
		return b.buffer, true
	}
	return nil, false
}

// CopyTensor copies src into dst (in b) on the device when src is in a Vulkan
// buffer of the same device, or from host memory otherwise. A nil src or dst is
// an error.
func (b *buffer) CopyTensor(src, dst *core.Tensor) (bool, error) {
	if src == nil || dst == nil {
		return true, fmt.Errorf("tandem: vulkan: CopyTensor: nil tensor (src %v, dst %v)", src, dst)
	}
	if !core.SameLayout(src, dst) || src.Buffer == nil {
		return false, nil
	}
	n := src.NBytes()
	if sb, ok := vkBuffer(src.Buffer); ok && sb.bt.dev == b.bt.dev {
		so, err := sb.span("CopyTensor", src, 0, n)
		if err != nil {
			return true, err
		}
		do, err := b.span("CopyTensor", dst, 0, n)
		if err != nil {
			return true, err
		}
		vd, err := b.bt.dev.open()
		if err != nil {
			return true, err
		}
		if err := vd.CopyBuffer(b.vb, do, sb.vb, so, uint64(n)); err != nil {
			return true, fmt.Errorf("tandem: vulkan: copying %v to %v: %w", src, dst, err)
		}
		return true, nil
	}
	if data := src.Data(); data != nil {
		return true, b.SetTensor(dst, data, 0)
	}
	return false, nil
}
