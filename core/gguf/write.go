package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/tandem-ml/tandem/core"
)

// writeChunk bounds the bytes of tensor data held in memory at once while writing.
const writeChunk = 1 << 20

// Writer builds a GGUF file from metadata and tensors, in the order they were added, as ggml's
// gguf_write_to_file does: header, key/value pairs, tensor infos, padding to the alignment, then
// each tensor's data padded with zeros to the alignment. The zero value is ready to use.
type Writer struct {
	// Version is the GGUF version written (2 or 3; 0 means 3).
	Version uint32
	// Metadata is written in its order. general.alignment, when set, sets the alignment.
	Metadata Metadata

	tensors []wtensor
	names   map[string]bool
}

// wtensor is a tensor to write: its info (Offset is filled in by WriteTo) and its data source.
type wtensor struct {
	info TensorInfo
	read func(dst []byte, offset int64) error
}

// NewWriter returns an empty writer for version 3.
func NewWriter() *Writer { return &Writer{Version: Version} }

// WriterFrom returns a writer holding f's version, metadata and tensors (their data read from f
// when written), so that WriteTo reproduces f. A nil f is an error.
func WriterFrom(f *File) (*Writer, error) {
	if f == nil {
		return nil, errors.New("gguf: WriterFrom: nil file")
	}
	w := &Writer{Version: f.Version}
	for _, kv := range f.KVs() {
		if err := w.Metadata.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	for _, ti := range f.Tensors {
		base := f.dataOffset + ti.Offset
		r := f.r
		err := w.AddTensorData(ti, func(dst []byte, off int64) error {
			_, err := r.ReadAt(dst, base+off)
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return w, nil
}

// NDims is the number of dimensions ggml records for t: trailing dimensions of size 1 dropped,
// at least 1 (ggml_n_dims); 1 for a nil t.
func NDims(t *core.Tensor) int {
	if t == nil {
		return 1
	}
	for i := core.MaxDims - 1; i >= 1; i-- {
		if t.Ne[i] != 1 {
			return i + 1
		}
	}
	return 1
}

// AddTensor adds t, whose data is read with core.TensorGet when the file is written (t must be
// contiguous and have memory by then). The number of dimensions written is NDims(t). A nil t is an
// error.
func (w *Writer) AddTensor(t *core.Tensor) error { return w.AddTensorNDims(t, 0) }

// AddTensorNDims is AddTensor writing nDims dimensions (0: NDims(t)); dimensions past nDims must
// be 1. Use it to reproduce a file that stores trailing dimensions of size 1. A nil t is an error.
func (w *Writer) AddTensorNDims(t *core.Tensor, nDims int) error {
	if t == nil {
		return errors.New("gguf: AddTensor: nil tensor")
	}
	if !t.IsContiguous() {
		return fmt.Errorf("gguf: AddTensor: tensor %v is not contiguous", t)
	}
	if nDims == 0 {
		nDims = NDims(t)
	}
	ti := TensorInfo{Name: t.Name, Type: t.Type, Ne: t.Ne, NDims: nDims, Size: t.NBytes()}
	return w.AddTensorData(ti, func(dst []byte, off int64) error { return core.TensorGet(t, dst, off) })
}

// AddTensorData adds a tensor described by info (Offset is ignored; Size is recomputed) whose
// bytes read(dst, offset) fills from offset within the tensor's data.
func (w *Writer) AddTensorData(info TensorInfo, read func(dst []byte, offset int64) error) error {
	if read == nil {
		return fmt.Errorf("gguf: tensor %q: nil data source", info.Name)
	}
	if err := checkInfo(&info); err != nil {
		return err
	}
	if w.names[info.Name] {
		return fmt.Errorf("gguf: duplicate tensor name %q", info.Name)
	}
	if w.names == nil {
		w.names = map[string]bool{}
	}
	w.names[info.Name] = true
	w.tensors = append(w.tensors, wtensor{info: info, read: read})
	return nil
}

// checkInfo validates a tensor to be written and sets its Size.
func checkInfo(ti *TensorInfo) error {
	if len(ti.Name) >= MaxNameBytes {
		return fmt.Errorf("gguf: tensor name %q is longer than %d bytes", ti.Name, MaxNameBytes-1)
	}
	if !ti.Type.Valid() || ti.Type.Size() <= 0 {
		return fmt.Errorf("gguf: tensor %q has unknown type %d", ti.Name, int32(ti.Type))
	}
	if ti.NDims < 1 || ti.NDims > core.MaxDims {
		return fmt.Errorf("gguf: tensor %q has %d dimensions, want 1 to %d", ti.Name, ti.NDims, core.MaxDims)
	}
	n := int64(1)
	for j, v := range ti.Ne {
		if v < 1 || (j >= ti.NDims && v != 1) {
			return fmt.Errorf("gguf: tensor %q: shape %v with %d dimensions is not writable", ti.Name, ti.Ne, ti.NDims)
		}
		if v > maxInt64/n {
			return fmt.Errorf("gguf: tensor %q: shape %v overflows", ti.Name, ti.Ne)
		}
		n *= v
	}
	if ti.Ne[0]%ti.Type.BlockSize() != 0 {
		return fmt.Errorf("gguf: tensor %q: row of %d elements is not a multiple of the %v block size %d",
			ti.Name, ti.Ne[0], ti.Type, ti.Type.BlockSize())
	}
	ti.Size = n / ti.Type.BlockSize() * ti.Type.Size()
	return nil
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w   *bufio.Writer
	n   int64
	buf [8]byte
	err error
}

func (c *countWriter) bytes(b []byte) {
	if c.err != nil {
		return
	}
	var n int
	n, c.err = c.w.Write(b)
	c.n += int64(n)
}

func (c *countWriter) u32(v uint32) {
	binary.LittleEndian.PutUint32(c.buf[:4], v)
	c.bytes(c.buf[:4])
}

func (c *countWriter) u64(v uint64) {
	binary.LittleEndian.PutUint64(c.buf[:8], v)
	c.bytes(c.buf[:8])
}

func (c *countWriter) str(s string) {
	c.u64(uint64(len(s)))
	if c.err == nil {
		var n int
		n, c.err = c.w.WriteString(s)
		c.n += int64(n)
	}
}

func (c *countWriter) pad(align int64) {
	var zeros [256]byte
	for c.err == nil && c.n%align != 0 {
		k := min(align-c.n%align, int64(len(zeros)))
		c.bytes(zeros[:k])
	}
}

// WriteTo writes the file to dst and returns the number of bytes written.
func (w *Writer) WriteTo(dst io.Writer) (int64, error) {
	version := w.Version
	if version == 0 {
		version = Version
	}
	if version != 2 && version != 3 {
		return 0, fmt.Errorf("gguf: cannot write GGUF version %d (only 2 and 3)", version)
	}
	align := w.Metadata.Alignment()
	cw := &countWriter{w: bufio.NewWriterSize(dst, 256<<10)}
	cw.bytes([]byte(Magic))
	cw.u32(version)
	cw.u64(uint64(len(w.tensors)))
	cw.u64(uint64(w.Metadata.Len()))
	for _, kv := range w.Metadata.KVs() {
		writeKV(cw, kv)
	}
	var off int64
	for i := range w.tensors {
		ti := &w.tensors[i].info
		ti.Offset = off
		off += core.AlignUp(ti.Size, align)
		cw.str(ti.Name)
		cw.u32(uint32(ti.NDims))
		for j := 0; j < ti.NDims; j++ {
			cw.u64(uint64(ti.Ne[j]))
		}
		cw.u32(uint32(ti.Type))
		cw.u64(uint64(ti.Offset))
	}
	cw.pad(align)
	if cw.err != nil {
		return cw.n, fmt.Errorf("gguf: writing the header: %w", cw.err)
	}
	var chunk []byte
	for _, t := range w.tensors {
		for done := int64(0); done < t.info.Size; {
			if chunk == nil {
				chunk = make([]byte, min(writeChunk, t.info.Size))
			}
			k := min(int64(len(chunk)), t.info.Size-done)
			if err := t.read(chunk[:k], done); err != nil {
				return cw.n, fmt.Errorf("gguf: reading the data of tensor %q: %w", t.info.Name, err)
			}
			cw.bytes(chunk[:k])
			done += k
		}
		cw.pad(align)
		if cw.err != nil {
			return cw.n, fmt.Errorf("gguf: writing the data of tensor %q: %w", t.info.Name, cw.err)
		}
	}
	if err := cw.w.Flush(); err != nil {
		return cw.n, fmt.Errorf("gguf: %w", err)
	}
	return cw.n, nil
}

// WriteFile writes the file to path (created or truncated).
func (w *Writer) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

func writeKV(cw *countWriter, kv KV) {
	typ, elem, _ := valueTypeOf(kv.Value) // Metadata.Set accepts GGUF value types only
	cw.str(kv.Key)
	cw.u32(uint32(typ))
	if typ == TypeArray {
		cw.u32(uint32(elem))
		cw.u64(uint64(arrayLen(kv.Value)))
	}
	switch v := kv.Value.(type) {
	case uint8:
		cw.bytes([]byte{v})
	case int8:
		cw.bytes([]byte{byte(v)})
	case bool:
		cw.bytes([]byte{boolByte(v)})
	case uint16:
		cw.bytes(binary.LittleEndian.AppendUint16(nil, v))
	case int16:
		cw.bytes(binary.LittleEndian.AppendUint16(nil, uint16(v)))
	case uint32:
		cw.u32(v)
	case int32:
		cw.u32(uint32(v))
	case float32:
		cw.u32(math.Float32bits(v))
	case uint64:
		cw.u64(v)
	case int64:
		cw.u64(uint64(v))
	case float64:
		cw.u64(math.Float64bits(v))
	case string:
		cw.str(v)
	case []uint8:
		cw.bytes(v)
	case []int8:
		for _, x := range v {
			cw.bytes([]byte{byte(x)})
		}
	case []bool:
		for _, x := range v {
			cw.bytes([]byte{boolByte(x)})
		}
	case []uint16:
		for _, x := range v {
			cw.bytes(binary.LittleEndian.AppendUint16(cw.buf[:0], x))
		}
	case []int16:
		for _, x := range v {
			cw.bytes(binary.LittleEndian.AppendUint16(cw.buf[:0], uint16(x)))
		}
	case []uint32:
		for _, x := range v {
			cw.u32(x)
		}
	case []int32:
		for _, x := range v {
			cw.u32(uint32(x))
		}
	case []float32:
		for _, x := range v {
			cw.u32(math.Float32bits(x))
		}
	case []uint64:
		for _, x := range v {
			cw.u64(x)
		}
	case []int64:
		for _, x := range v {
			cw.u64(uint64(x))
		}
	case []float64:
		for _, x := range v {
			cw.u64(math.Float64bits(x))
		}
	case []string:
		for _, x := range v {
			cw.str(x)
		}
	}
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// Write writes a GGUF file to dst holding md (nil: no metadata) and tensors in the given order
// (each contiguous, named uniquely, with memory on any device).
func Write(dst io.Writer, md *Metadata, tensors []*core.Tensor) error {
	w, err := newWriterFor(md, tensors)
	if err != nil {
		return err
	}
	_, err = w.WriteTo(dst)
	return err
}

// WriteFile is Write to the file at path (created or truncated); nil md and tensors are treated as
// Write treats them.
func WriteFile(path string, md *Metadata, tensors []*core.Tensor) error {
	w, err := newWriterFor(md, tensors)
	if err != nil {
		return err
	}
	return w.WriteFile(path)
}

func newWriterFor(md *Metadata, tensors []*core.Tensor) (*Writer, error) {
	w := NewWriter()
	if md != nil {
		for _, kv := range md.KVs() {
			if err := w.Metadata.Set(kv.Key, kv.Value); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range tensors {
		if err := w.AddTensor(t); err != nil {
			return nil, err
		}
	}
	return w, nil
}
