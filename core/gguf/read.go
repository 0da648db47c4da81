package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"

	"github.com/tandem-ml/tandem/core"
)

// Format constants.
const (
	// Magic is the first four bytes of every GGUF file.
	Magic = "GGUF"
	// Version is the version Write produces; Read accepts 2 and 3 (both with 64-bit counts).
	Version = 3
	// DefaultAlignment is the data alignment when general.alignment is absent.
	DefaultAlignment = 32
	// KeyAlignment is the metadata key holding the alignment (a u32 power of two).
	KeyAlignment = "general.alignment"
	// MaxNameBytes bounds tensor names (ggml's GGML_MAX_NAME, including the terminating zero).
	MaxNameBytes = core.MaxNameBytes
)

// minimum encoded sizes, to bound counts by the bytes that remain
const (
	minKVBytes     = 8 + 1 + 4 + 1     // key length, a 1-byte key, type, a 1-byte value
	minTensorBytes = 8 + 4 + 8 + 4 + 8 // empty name, n_dims, one dimension, type, offset
	readBufBytes   = 64 << 10          // buffered reads of the header
	maxInt64       = int64(math.MaxInt64)
	maxOffset      = uint64(math.MaxInt64)
)

// TensorInfo describes one tensor of a file.
type TensorInfo struct {
	Name string
	Type core.Type
	// Ne is the shape, ne[0] fastest; dimensions past NDims are 1.
	Ne [core.MaxDims]int64
	// NDims is the number of dimensions stored in the file (1 to 4).
	NDims int
	// Offset is the byte offset of the data from the start of the data section.
	Offset int64
	// Size is the number of data bytes (without padding).
	Size int64
}

// NElements is the number of elements.
func (ti TensorInfo) NElements() int64 { return ti.Ne[0] * ti.Ne[1] * ti.Ne[2] * ti.Ne[3] }

func (ti TensorInfo) String() string {
	return fmt.Sprintf("%s(%v %v)", ti.Name, ti.Type, ti.Ne[:ti.NDims])
}

// File is a parsed GGUF file: its metadata (the embedded Metadata gives the typed accessors), its
// tensor infos and where its data lies. Tensor data is read on demand (Load, TensorReader).
type File struct {
	Metadata
	// Version is the file's GGUF version (2 or 3).
	Version uint32
	// Tensors are the tensor infos in file order.
	Tensors []TensorInfo

	alignment  int64
	dataOffset int64
	size       int64
	byName     map[string]int

	r      io.ReaderAt
	closer io.Closer
	path   string
}

// Open reads and checks the header of the GGUF file at path. The file stays open for Load and
// TensorReader until Close.
func Open(path string) (*File, error) {
	osf, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	st, err := osf.Stat()
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Read(osf, st.Size())
	if err != nil {
		osf.Close()
		return nil, fmt.Errorf("%w (file %s)", err, path)
	}
	f.closer, f.path = osf, path
	return f, nil
}

// Read parses and checks the GGUF file held by r, which has size bytes. Tensor data is read from r
// later, so r must stay readable while the File is used.
func Read(r io.ReaderAt, size int64) (*File, error) {
	if r == nil {
		return nil, errors.New("gguf: nil reader")
	}
	if size < 0 {
		return nil, fmt.Errorf("gguf: negative file size %d", size)
	}
	p := &parser{br: bufio.NewReaderSize(io.NewSectionReader(r, 0, size), readBufBytes), size: size}
	f := &File{r: r, size: size}
	if err := p.parse(f); err != nil {
		return nil, err
	}
	return f, nil
}

// Close closes the underlying file (for files from Open); loaded models stay valid.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// Alignment is the file's data alignment (general.alignment or 32).
func (f *File) Alignment() int64 { return f.alignment }

// DataOffset is the byte offset of the data section from the start of the file.
func (f *File) DataOffset() int64 { return f.dataOffset }

// Size is the file's size in bytes.
func (f *File) Size() int64 { return f.size }

// Tensor returns the info of the tensor called name.
func (f *File) Tensor(name string) (TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return TensorInfo{}, false
	}
	return f.Tensors[i], true
}

// TensorReader returns a reader over the data of the tensor called name.
func (f *File) TensorReader(name string) (*io.SectionReader, error) {
	ti, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("gguf: no tensor %q in the file", name)
	}
	return io.NewSectionReader(f.r, f.dataOffset+ti.Offset, ti.Size), nil
}

// parser reads the header sequentially, counting the bytes consumed.
type parser struct {
	br   *bufio.Reader
	pos  int64
	size int64
	tmp  [8]byte
}

func (p *parser) remain() int64 { return p.size - p.pos }

func (p *parser) truncated(what string, n int64) error {
	return fmt.Errorf("gguf: file truncated at byte %d reading %s: %d bytes needed, %d left", p.pos, what, n, p.remain())
}

// read fills b (whose length is bounded by the caller against remain).
func (p *parser) read(b []byte, what string) error {
	if int64(len(b)) > p.remain() {
		return p.truncated(what, int64(len(b)))
	}
	if _, err := io.ReadFull(p.br, b); err != nil {
		return fmt.Errorf("gguf: reading %s at byte %d: %w", what, p.pos, err)
	}
	p.pos += int64(len(b))
	return nil
}

func (p *parser) u32(what string) (uint32, error) {
	if err := p.read(p.tmp[:4], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(p.tmp[:4]), nil
}

func (p *parser) u64(what string) (uint64, error) {
	if err := p.read(p.tmp[:8], what); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(p.tmp[:8]), nil
}

// str reads a length-prefixed string whose length must fit in the rest of the file.
func (p *parser) str(what string) (string, error) {
	start := p.pos
	n, err := p.u64(what + " length")
	if err != nil {
		return "", err
	}
	if n > uint64(p.remain()) {
		return "", fmt.Errorf("gguf: %s at byte %d has length %d, past the end of the file (%d bytes left)",
			what, start, n, p.remain())
	}
	b := make([]byte, n)
	if err := p.read(b, what); err != nil {
		return "", err
	}
	return string(b), nil
}

func (p *parser) parse(f *File) error {
	var hdr [8]byte
	if p.size < 4 {
		return fmt.Errorf("gguf: file of %d bytes is too short for the magic %q", p.size, Magic)
	}
	if err := p.read(hdr[:4], "magic"); err != nil {
		return err
	}
	if string(hdr[:4]) != Magic {
		return fmt.Errorf("gguf: bad magic %q, want %q (not a GGUF file)", hdr[:4], Magic)
	}
	v, err := p.u32("version")
	if err != nil {
		return err
	}
	switch {
	case v == 1:
		return errors.New("gguf: GGUF version 1 is not supported (only versions 2 and 3)")
	case v != 0 && v&0xffff == 0:
		return fmt.Errorf("gguf: unknown GGUF version %#x (a big-endian file? only little-endian versions 2 and 3 are supported)", v)
	case v != 2 && v != 3:
		return fmt.Errorf("gguf: unknown GGUF version %d (only versions 2 and 3 are supported)", v)
	}
	f.Version = v
	nt, err := p.u64("tensor count")
	if err != nil {
		return err
	}
	nkv, err := p.u64("metadata key count")
	if err != nil {
		return err
	}
	left := uint64(p.remain())
	if nkv > left/minKVBytes {
		return fmt.Errorf("gguf: header: %d metadata keys cannot fit in the %d bytes left in the file", nkv, left)
	}
	if nt > (left-nkv*minKVBytes)/minTensorBytes {
		return fmt.Errorf("gguf: header: %d tensors (after %d metadata keys) cannot fit in the %d bytes left in the file", nt, nkv, left)
	}

	for i := uint64(0); i < nkv; i++ {
		if err := p.kv(&f.Metadata, i); err != nil {
			return err
		}
	}
	f.alignment = DefaultAlignment
	if v, ok := f.Lookup(KeyAlignment); ok {
		a, ok := v.(uint32)
		if !ok {
			return fmt.Errorf("gguf: %s must be u32, but it is %s", KeyAlignment, typeName(v))
		}
		if a == 0 || a&(a-1) != 0 {
			return fmt.Errorf("gguf: %s %d is not a power of two", KeyAlignment, a)
		}
		f.alignment = int64(a)
	}

	f.Tensors = make([]TensorInfo, 0, nt)
	f.byName = make(map[string]int, nt)
	for i := uint64(0); i < nt; i++ {
		ti, err := p.tensorInfo(i, f.alignment)
		if err != nil {
			return err
		}
		if j, dup := f.byName[ti.Name]; dup {
			return fmt.Errorf("gguf: duplicate tensor name %q (tensors %d and %d)", ti.Name, j, i)
		}
		f.byName[ti.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, ti)
	}
	f.dataOffset = core.AlignUp(p.pos, f.alignment)
	return checkData(f)
}

// checkData checks that every tensor lies inside the data section and that none overlap.
func checkData(f *File) error {
	if len(f.Tensors) == 0 {
		return nil
	}
	if f.dataOffset > f.size {
		return fmt.Errorf("gguf: file truncated: the data section starts at byte %d but the file has %d bytes", f.dataOffset, f.size)
	}
	dataSize := f.size - f.dataOffset
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
		ti := &f.Tensors[i]
		if ti.Offset > dataSize || ti.Size > dataSize-ti.Offset {
			return fmt.Errorf("gguf: tensor %q: data [%d,%d) lies outside the %d-byte data section (file truncated?)",
				ti.Name, ti.Offset, ti.Offset+min(ti.Size, maxInt64-ti.Offset), dataSize)
		}
	}
	sort.Slice(order, func(a, b int) bool { return f.Tensors[order[a]].Offset < f.Tensors[order[b]].Offset })
	for k := 1; k < len(order); k++ {
		a, b := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if a.Offset+a.Size > b.Offset {
			return fmt.Errorf("gguf: tensors %q [%d,%d) and %q [%d,%d) overlap in the data section",
				a.Name, a.Offset, a.Offset+a.Size, b.Name, b.Offset, b.Offset+b.Size)
		}
	}
	return nil
}

func (p *parser) kv(m *Metadata, i uint64) error {
	at := p.pos
	key, err := p.str(fmt.Sprintf("metadata key %d", i))
	if err != nil {
		return err
	}
	if key == "" {
		return fmt.Errorf("gguf: metadata key %d at byte %d is empty", i, at)
	}
	if m.Has(key) {
		return fmt.Errorf("gguf: duplicate metadata key %q (entries %d and %d)", key, m.index[key], i)
	}
	typ, err := p.u32(fmt.Sprintf("type of metadata key %q", key))
	if err != nil {
		return err
	}
	v, err := p.value(key, ValueType(typ))
	if err != nil {
		return err
	}
	if m.index == nil {
		m.index = map[string]int{}
	}
	m.index[key] = len(m.kvs)
	m.kvs = append(m.kvs, KV{key, v})
	return nil
}

// value reads one value of type typ (an array header and its elements for TypeArray).
func (p *parser) value(key string, typ ValueType) (any, error) {
	what := fmt.Sprintf("value of metadata key %q", key)
	if typ == TypeArray {
		et, err := p.u32("element type of " + what)
		if err != nil {
			return nil, err
		}
		elem := ValueType(et)
		n, err := p.u64("length of " + what)
		if err != nil {
			return nil, err
		}
		return p.array(key, elem, n)
	}
	if typ == TypeString {
		return p.str(what)
	}
	sz := typ.size()
	if sz == 0 {
		return nil, fmt.Errorf("gguf: metadata key %q has unknown value type %d", key, uint32(typ))
	}
	b := p.tmp[:sz]
	if err := p.read(b, what); err != nil {
		return nil, err
	}
	return decodeScalar(typ, b), nil
}

func decodeScalar(typ ValueType, b []byte) any {
	le := binary.LittleEndian
	switch typ {
	case TypeUint8:
		return b[0]
	case TypeInt8:
		return int8(b[0])
	case TypeBool:
		return b[0] != 0
	case TypeUint16:
		return le.Uint16(b)
	case TypeInt16:
		return int16(le.Uint16(b))
	case TypeUint32:
		return le.Uint32(b)
	case TypeInt32:
		return int32(le.Uint32(b))
	case TypeFloat32:
		return math.Float32frombits(le.Uint32(b))
	case TypeUint64:
		return le.Uint64(b)
	case TypeInt64:
		return int64(le.Uint64(b))
	case TypeFloat64:
		return math.Float64frombits(le.Uint64(b))
	}
	return nil
}

// array reads n elements of type elem; n is bounded by the bytes left before anything is allocated.
func (p *parser) array(key string, elem ValueType, n uint64) (any, error) {
	what := fmt.Sprintf("array of metadata key %q", key)
	switch elem {
	case TypeArray:
		return nil, fmt.Errorf("gguf: metadata key %q is an array of arrays, which GGUF does not allow", key)
	case TypeString:
		if n > uint64(p.remain())/8 {
			return nil, fmt.Errorf("gguf: %s has %d strings, past the end of the file (%d bytes left)", what, n, p.remain())
		}
		out := make([]string, n)
		for i := range out {
			s, err := p.str(fmt.Sprintf("string %d of %s", i, what))
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	sz := elem.size()
	if sz == 0 {
		return nil, fmt.Errorf("gguf: metadata key %q is an array of unknown value type %d", key, uint32(elem))
	}
	if n > uint64(p.remain()/sz) {
		return nil, fmt.Errorf("gguf: %s has %d %v elements, past the end of the file (%d bytes left)", what, n, elem, p.remain())
	}
	raw := make([]byte, int64(n)*sz)
	if err := p.read(raw, what); err != nil {
		return nil, err
	}
	return decodeArray(elem, raw, int(n)), nil
}

func decodeArray(elem ValueType, raw []byte, n int) any {
	le := binary.LittleEndian
	switch elem {
	case TypeUint8:
		return raw
	case TypeInt8:
		out := make([]int8, n)
		for i := range out {
			out[i] = int8(raw[i])
		}
		return out
	case TypeBool:
		out := make([]bool, n)
		for i := range out {
			out[i] = raw[i] != 0
		}
		return out
	case TypeUint16:
		out := make([]uint16, n)
		for i := range out {
			out[i] = le.Uint16(raw[2*i:])
		}
		return out
	case TypeInt16:
		out := make([]int16, n)
		for i := range out {
			out[i] = int16(le.Uint16(raw[2*i:]))
		}
		return out
	case TypeUint32:
		out := make([]uint32, n)
		for i := range out {
			out[i] = le.Uint32(raw[4*i:])
		}
		return out
	case TypeInt32:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(le.Uint32(raw[4*i:]))
		}
		return out
	case TypeFloat32:
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return out
	case TypeUint64:
		out := make([]uint64, n)
		for i := range out {
			out[i] = le.Uint64(raw[8*i:])
		}
		return out
	case TypeInt64:
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(le.Uint64(raw[8*i:]))
		}
		return out
	case TypeFloat64:
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return out
	}
	return nil
}

// tensorInfo reads and checks one tensor info.
func (p *parser) tensorInfo(i uint64, align int64) (TensorInfo, error) {
	var ti TensorInfo
	name, err := p.str(fmt.Sprintf("name of tensor %d", i))
	if err != nil {
		return ti, err
	}
	if len(name) >= MaxNameBytes {
		return ti, fmt.Errorf("gguf: tensor %d: name of %d bytes is too long (at most %d)", i, len(name), MaxNameBytes-1)
	}
	ti.Name = name
	nd, err := p.u32(fmt.Sprintf("dimension count of tensor %q", name))
	if err != nil {
		return ti, err
	}
	if nd == 0 || nd > core.MaxDims {
		return ti, fmt.Errorf("gguf: tensor %q has %d dimensions, want 1 to %d", name, nd, core.MaxDims)
	}
	ti.NDims = int(nd)
	ti.Ne = [core.MaxDims]int64{1, 1, 1, 1}
	for j := 0; j < int(nd); j++ {
		v, err := p.u64(fmt.Sprintf("dimension %d of tensor %q", j, name))
		if err != nil {
			return ti, err
		}
		if int64(v) <= 0 {
			return ti, fmt.Errorf("gguf: tensor %q: dimension %d has %d elements, want at least 1", name, j, int64(v))
		}
		ti.Ne[j] = int64(v)
	}
	n := ti.Ne[0]
	for j := 1; j < core.MaxDims; j++ {
		if ti.Ne[j] > maxInt64/n {
			return ti, fmt.Errorf("gguf: tensor %q: shape %v has more than %d elements", name, ti.Ne[:nd], maxInt64)
		}
		n *= ti.Ne[j]
	}
	typ, err := p.u32(fmt.Sprintf("type of tensor %q", name))
	if err != nil {
		return ti, err
	}
	ti.Type = core.Type(int32(typ))
	if typ > math.MaxInt32 || !ti.Type.Valid() || ti.Type.Size() <= 0 {
		return ti, fmt.Errorf("gguf: tensor %q has unknown type %d", name, typ)
	}
	bs := ti.Type.BlockSize()
	if ti.Ne[0]%bs != 0 {
		return ti, fmt.Errorf("gguf: tensor %q: row of %d elements is not a multiple of the %v block size %d",
			name, ti.Ne[0], ti.Type, bs)
	}
	if n/bs > maxInt64/ti.Type.Size() {
		return ti, fmt.Errorf("gguf: tensor %q: shape %v of %v is more than %d bytes", name, ti.Ne[:nd], ti.Type, maxInt64)
	}
	ti.Size = n / bs * ti.Type.Size()
	off, err := p.u64(fmt.Sprintf("data offset of tensor %q", name))
	if err != nil {
		return ti, err
	}
	if off > maxOffset {
		return ti, fmt.Errorf("gguf: tensor %q: data offset %d is past the end of the file", name, off)
	}
	ti.Offset = int64(off)
	if ti.Offset%align != 0 {
		return ti, fmt.Errorf("gguf: tensor %q: data offset %d is not a multiple of the alignment %d", name, off, align)
	}
	return ti, nil
}
