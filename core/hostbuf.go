package core

import (
	"fmt"
	"unsafe"
)

// hostAlignment is the byte alignment of host buffers and of tensor data inside them (ggml's
// TENSOR_ALIGNMENT).
const hostAlignment = 32

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// AlignUp rounds n up to a multiple of a (a > 0).
func AlignUp(n, a int64) int64 { return alignUp(n, a) }

type hostBufType struct{}

var hostBufferType = &hostBufType{}

// HostBufferType is plain host memory ("CPU"): 32-byte aligned, no size limit, usable by the CPU
// backend and by any backend that accepts host memory.
func HostBufferType() BufferType { return hostBufferType }

func (*hostBufType) Name() string              { return "CPU" }
func (*hostBufType) Alignment() int64          { return hostAlignment }
func (*hostBufType) MaxSize() int64            { return 0 }
func (*hostBufType) AllocSize(t *Tensor) int64 { return t.NBytes() }
func (*hostBufType) IsHost() bool              { return true }
func (*hostBufType) Device() Device            { return nil }

func (bt *hostBufType) Alloc(size int64) (Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("tandem: %s buffer: negative size %d", bt.Name(), size)
	}
	if size > 1<<46 {
		return nil, fmt.Errorf("tandem: %s buffer: cannot allocate %d bytes", bt.Name(), size)
	}
	return newHostBuffer(bt, size), nil
}

// hostBuffer is host memory; its Bytes are 32-byte aligned.
type hostBuffer struct {
	bt    BufferType
	data  []byte
	usage BufferUsage
}

func newHostBuffer(bt BufferType, size int64) *hostBuffer {
	raw := make([]byte, size+hostAlignment)
	// Safe: only the address is read, to find the aligned start inside raw.
	mis := int64(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % hostAlignment)
	start := (hostAlignment - mis) % hostAlignment
	return &hostBuffer{bt: bt, data: raw[start : start+size : start+size]}
}

// NewHostBuffer wraps a new host allocation of size bytes reporting buffer type bt (for backends
// whose host-visible memory types are plain host memory).
func NewHostBuffer(bt BufferType, size int64) HostBuffer { return newHostBuffer(bt, size) }

func (b *hostBuffer) Type() BufferType       { return b.bt }
func (b *hostBuffer) Size() int64            { return int64(len(b.data)) }
func (b *hostBuffer) Usage() BufferUsage     { return b.usage }
func (b *hostBuffer) SetUsage(u BufferUsage) { b.usage = u }
func (b *hostBuffer) Bytes() []byte          { return b.data }
func (b *hostBuffer) Free() error            { b.data = nil; return nil }

func (b *hostBuffer) Clear(value byte) error {
	fill(b.data, value)
	return nil
}

func (b *hostBuffer) span(t *Tensor, offset, size int64) ([]byte, error) {
	if t.Offset < 0 || t.Offset+offset+size > int64(len(b.data)) {
		return nil, fmt.Errorf("tandem: tensor %v bytes [%d,%d) lie outside its %d-byte buffer",
			t, t.Offset+offset, t.Offset+offset+size, len(b.data))
	}
	return b.data[t.Offset+offset : t.Offset+offset+size], nil
}

func (b *hostBuffer) SetTensor(t *Tensor, data []byte, offset int64) error {
	dst, err := b.span(t, offset, int64(len(data)))
	if err != nil {
		return err
	}
	copy(dst, data)
	return nil
}

func (b *hostBuffer) GetTensor(t *Tensor, dst []byte, offset int64) error {
	src, err := b.span(t, offset, int64(len(dst)))
	if err != nil {
		return err
	}
	copy(dst, src)
	return nil
}

func (b *hostBuffer) MemsetTensor(t *Tensor, value byte, offset, size int64) error {
	dst, err := b.span(t, offset, size)
	if err != nil {
		return err
	}
	fill(dst, value)
	return nil
}

// CopyTensor copies from any host-resident source.
func (b *hostBuffer) CopyTensor(src, dst *Tensor) (bool, error) {
	data := src.Data()
	if data == nil {
		return false, nil
	}
	return true, b.SetTensor(dst, data, 0)
}

func fill(b []byte, v byte) {
	if v == 0 {
		clear(b)
		return
	}
	for i := range b {
		b[i] = v
	}
}
