package core

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// hostAlignment is the byte alignment of host buffers and of tensor data inside them (ggml's
// TENSOR_ALIGNMENT).
const hostAlignment = 32

// maxHostBufferSize is the largest host buffer tandem asks the Go runtime for (64 TiB); a request
// larger than the machine's physical memory is refused too, because the runtime cannot report that
// failure as an error (it aborts the process).
const maxHostBufferSize = 1 << 46

func alignUp(n, a int64) int64 { return (n + a - 1) / a * a }

// AlignUp rounds n up to a multiple of a (a > 0). It saturates at the largest multiple of a that
// an int64 holds instead of wrapping; use CheckedAlignUp to detect that.
func AlignUp(n, a int64) int64 {
	if r, ok := CheckedAlignUp(n, a); ok {
		return r
	}
	if a <= 0 {
		return n
	}
	if n < 0 {
		return alignUp(n, a)
	}
	return math.MaxInt64 / a * a
}

// ErrBufferFreed is wrapped by errors about tensors whose buffer was freed.
var ErrBufferFreed = errors.New("buffer was freed")

// FreedReporter is an optional Buffer capability: Freed reports whether Free was called. Set/Get/
// Memset/Copy helpers check it and fail with ErrBufferFreed instead of touching released memory.
type FreedReporter interface {
	Freed() bool
}

// FreedBuffer returns a stand-in for b after b was freed, for allocators to leave in the tensors
// that pointed into b when b cannot report Free itself (no FreedReporter): it keeps b's type, has
// size 0, reports Freed, and fails every transfer with ErrBufferFreed. A nil b gives a stand-in
// without a type.
func FreedBuffer(b Buffer) Buffer {
	fb := &freedBuffer{}
	if b != nil {
		fb.bt, fb.usage = b.Type(), b.Usage()
	}
	return fb
}

type freedBuffer struct {
	bt    BufferType
	usage BufferUsage
}

func (b *freedBuffer) Type() BufferType       { return b.bt }
func (b *freedBuffer) Size() int64            { return 0 }
func (b *freedBuffer) Usage() BufferUsage     { return b.usage }
func (b *freedBuffer) SetUsage(u BufferUsage) { b.usage = u }
func (b *freedBuffer) Free() error            { return nil }
func (b *freedBuffer) Freed() bool            { return true }
func (b *freedBuffer) err(op string) error {
	name := "untyped"
	if b.bt != nil {
		name = b.bt.Name()
	}
	return fmt.Errorf("tandem: %s: the %s %w", op, name, ErrBufferFreed)
}
func (b *freedBuffer) Clear(byte) error                               { return b.err("Clear") }
func (b *freedBuffer) SetTensor(*Tensor, []byte, int64) error         { return b.err("SetTensor") }
func (b *freedBuffer) GetTensor(*Tensor, []byte, int64) error         { return b.err("GetTensor") }
func (b *freedBuffer) MemsetTensor(*Tensor, byte, int64, int64) error { return b.err("MemsetTensor") }

// bufferFreed reports whether b says it was freed.
func bufferFreed(b Buffer) bool {
	f, ok := b.(FreedReporter)
	return ok && f.Freed()
}

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
	return tryNewHostBuffer(bt, size)
}

// hostBuffer is host memory; its Bytes are 32-byte aligned.
type hostBuffer struct {
	bt    BufferType
	data  []byte
	usage BufferUsage
	freed bool
}

// tryNewHostBuffer allocates size bytes of host memory or says why it cannot.
func tryNewHostBuffer(bt BufferType, size int64) (b *hostBuffer, err error) {
	name := "CPU"
	if bt != nil {
		name = bt.Name()
	}
	if size < 0 {
		return nil, fmt.Errorf("tandem: %s buffer: negative size %d", name, size)
	}
	if size > maxHostBufferSize {
		return nil, fmt.Errorf("tandem: %s buffer: cannot allocate %d bytes (more than %d)", name, size, int64(maxHostBufferSize))
	}
	if phys := physicalMemory(); phys > 0 && size > phys {
		return nil, fmt.Errorf("tandem: %s buffer: cannot allocate %d bytes: the machine has %d bytes of memory", name, size, phys)
	}
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("tandem: %s buffer: cannot allocate %d bytes: %v", name, size, r)
		}
	}()
	return newHostBuffer(bt, size), nil
}

func newHostBuffer(bt BufferType, size int64) *hostBuffer {
	raw := make([]byte, size+hostAlignment)
	adviseHugePages(raw)
	// Safe: only the address is read, to find the aligned start inside raw.
	mis := int64(uintptr(unsafe.Pointer(unsafe.SliceData(raw))) % hostAlignment)
	start := (hostAlignment - mis) % hostAlignment
	return &hostBuffer{bt: bt, data: raw[start : start+size : start+size]}
}

// NewHostBuffer allocates size bytes of host memory (32-byte aligned) as a buffer reporting buffer
// type bt, for backends whose host-visible memory is plain host memory; bt may be nil (the buffer
// then reports no type). A negative size, or one beyond the machine's memory, is an error: the
// allocation is refused rather than left to abort the process.
func NewHostBuffer(bt BufferType, size int64) (HostBuffer, error) {
	b, err := tryNewHostBuffer(bt, size)
	if err != nil {
		return nil, err
	}
	return b, nil
}

func (b *hostBuffer) Type() BufferType       { return b.bt }
func (b *hostBuffer) Size() int64            { return int64(len(b.data)) }
func (b *hostBuffer) Usage() BufferUsage     { return b.usage }
func (b *hostBuffer) SetUsage(u BufferUsage) { b.usage = u }
func (b *hostBuffer) Bytes() []byte          { return b.data }
func (b *hostBuffer) Free() error            { b.data, b.freed = nil, true; return nil }

// Freed reports whether Free was called (FreedReporter).
func (b *hostBuffer) Freed() bool { return b.freed }

func (b *hostBuffer) Clear(value byte) error {
	if b.freed {
		return fmt.Errorf("tandem: %s buffer: Clear: %w", b.typeName(), ErrBufferFreed)
	}
	fill(b.data, value)
	return nil
}

func (b *hostBuffer) typeName() string {
	if b.bt == nil {
		return "host"
	}
	return b.bt.Name()
}

// span returns t's bytes [offset, offset+size) inside the buffer, with every sum checked.
func (b *hostBuffer) span(t *Tensor, offset, size int64) ([]byte, error) {
	if t == nil {
		return nil, fmt.Errorf("tandem: %w", errNilTensor)
	}
	if b.freed {
		return nil, fmt.Errorf("tandem: tensor %v: its %s %w", t, b.typeName(), ErrBufferFreed)
	}
	start, ok1 := CheckedAdd(t.Offset, offset)
	end, ok2 := CheckedAdd(start, size)
	if !ok1 || !ok2 {
		return nil, overflowf("tensor %v: offset %d + %d + size %d", t, t.Offset, offset, size)
	}
	if t.Offset < 0 || offset < 0 || size < 0 || start < 0 || end > int64(len(b.data)) {
		return nil, fmt.Errorf("tandem: tensor %v bytes [%d,%d) lie outside its %d-byte buffer",
			t, start, end, len(b.data))
	}
	return b.data[start:end], nil
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
	if src == nil || dst == nil {
		return false, fmt.Errorf("tandem: CopyTensor: %w", errNilTensor)
	}
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
