package gguf

import (
	"errors"
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// mappedType is the buffer type of file mappings: host memory the CPU reads in place. It cannot
// allocate; mappings come from Load.
type mappedType struct{}

var mappedBufferType = mappedType{}

// MappedBufferType is the buffer type of tensors Load serves from a mapping of the file
// ("CPU_Mapped"): host memory with the host alignment, usable wherever host memory is.
func MappedBufferType() core.BufferType { return mappedBufferType }

func (mappedType) Name() string                   { return "CPU_Mapped" }
func (mappedType) Alignment() int64               { return core.HostBufferType().Alignment() }
func (mappedType) MaxSize() int64                 { return 0 }
func (mappedType) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (mappedType) IsHost() bool                   { return true }
func (mappedType) Device() core.Device            { return nil }
func (mappedType) Alloc(int64) (core.Buffer, error) {
	return nil, errors.New("gguf: mapped buffers come from Load, not Alloc")
}

// mappedBuffer is a read-only view of a mapped file. Bytes returns the mapping: the pages are
// private to the process (copy-on-write), so a stray write never reaches the file, but tensor
// writes through the Buffer interface are refused.
type mappedBuffer struct {
	data  []byte
	unmap func([]byte) error
	usage core.BufferUsage
}

func (b *mappedBuffer) Type() core.BufferType       { return mappedBufferType }
func (b *mappedBuffer) Size() int64                 { return int64(len(b.data)) }
func (b *mappedBuffer) Usage() core.BufferUsage     { return b.usage }
func (b *mappedBuffer) SetUsage(u core.BufferUsage) { b.usage = u }
func (b *mappedBuffer) Bytes() []byte               { return b.data }

func (b *mappedBuffer) Free() error {
	if b.data == nil {
		return nil
	}
	err := b.unmap(b.data)
	b.data = nil
	return err
}

func (b *mappedBuffer) SetTensor(t *core.Tensor, _ []byte, _ int64) error {
	return fmt.Errorf("gguf: tensor %v lives in a read-only mapping of its file; load with NoMmap to modify it", t)
}

func (b *mappedBuffer) MemsetTensor(t *core.Tensor, _ byte, _, _ int64) error {
	return b.SetTensor(t, nil, 0)
}

func (b *mappedBuffer) Clear(byte) error {
	return errors.New("gguf: a read-only file mapping cannot be cleared")
}

func (b *mappedBuffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	start := t.Offset + offset
	if t.Offset < 0 || offset < 0 || start+int64(len(dst)) > int64(len(b.data)) {
		return fmt.Errorf("gguf: tensor %v bytes [%d,%d) lie outside its %d-byte mapping",
			t, start, start+int64(len(dst)), len(b.data))
	}
	copy(dst, b.data[start:])
	return nil
}
