package core

import (
	"errors"
	"fmt"
	"math"
)

// MaxDims is the number of dimensions a tensor has; MaxSrc bounds the sources of an op.
const (
	MaxDims      = 4
	MaxSrc       = 10
	MaxOpParams  = 16 // 32-bit words, 64 bytes as in ggml
	MaxNameBytes = 64
)

// Flags mark tensors for allocators and schedulers.
type Flags uint32

// Tensor flags (ggml's values).
const (
	FlagInput  Flags = 1
	FlagOutput Flags = 2
	FlagParam  Flags = 4
	FlagLoss   Flags = 8
)

// Tensor is an n-dimensional array (n ≤ 4) or the recipe for one: Op and Src say how it is
// computed. Ne[0] is the fastest-varying dimension; Nb holds byte strides. Data lives in Buffer at
// byte Offset; views share their ViewSrc's buffer.
type Tensor struct {
	Type     Type
	Ne       [MaxDims]int64
	Nb       [MaxDims]int64
	Op       Op
	Params   [MaxOpParams]int32
	Src      [MaxSrc]*Tensor
	ViewSrc  *Tensor
	ViewOffs int64
	Flags    Flags
	Name     string

	// Buffer holds the tensor's bytes, starting at Offset; nil until allocated.
	Buffer Buffer
	Offset int64

	ctx    *Context
	id     int
	err    error     // set on placeholders: the construction error they stand for
	unset  bool      // ExpectWrite: placed where other bytes were, not written since
	custom *customOp // the Go function of a MAP_CUSTOM1..3 or CUSTOM node (ops_custom.go)
}

// Err returns the construction error a placeholder tensor stands for (nil for a real tensor; for a
// nil tensor, an error saying so). Op constructors return placeholders when they fail.
func (t *Tensor) Err() error {
	if t == nil {
		return errNilTensor
	}
	return t.err
}

var errNilTensor = errors.New("nil tensor")

// String describes the tensor for error messages: name, op, type and shape ("<nil tensor>" for a
// nil t).
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	return fmt.Sprintf("%s(%v %v [%d,%d,%d,%d])", t.displayName(), t.Op, t.Type, t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3])
}

// displayName is the tensor's name, or for an unnamed tensor "c<context>#<index>": the number of
// its context (contexts are numbered from 1 in creation order) and its creation index there, so
// unnamed tensors of different contexts never read the same.
func (t *Tensor) displayName() string {
	if t.Name != "" {
		return t.Name
	}
	if t.ctx == nil {
		return fmt.Sprintf("#%d", t.id)
	}
	return fmt.Sprintf("c%d#%d", t.ctx.seq, t.id)
}

// SetName sets the tensor's name (truncated to 63 bytes as in ggml) and returns t (a nil t is
// returned unchanged).
func (t *Tensor) SetName(name string) *Tensor {
	if t == nil {
		return nil
	}
	if len(name) > MaxNameBytes-1 {
		name = name[:MaxNameBytes-1]
	}
	t.Name = name
	return t
}

// SetInput marks t as a graph input: allocators give it memory of its own at graph start. A nil t
// is returned unchanged.
func (t *Tensor) SetInput() *Tensor { return t.setFlag(FlagInput) }

// SetOutput marks t as a graph output: allocators never free or reuse its memory. A nil t is
// returned unchanged.
func (t *Tensor) SetOutput() *Tensor { return t.setFlag(FlagOutput) }

// SetParam marks t as a trainable parameter (it becomes a graph node, not a leaf). A nil t is
// returned unchanged.
func (t *Tensor) SetParam() *Tensor { return t.setFlag(FlagParam) }

func (t *Tensor) setFlag(f Flags) *Tensor {
	if t != nil {
		t.Flags |= f
	}
	return t
}

// Context returns the context that created t (nil for a nil t).
func (t *Tensor) Context() *Context {
	if t == nil {
		return nil
	}
	return t.ctx
}

// ParamI32 returns op parameter word i as an int32 (0 for a nil t or i out of range).
func (t *Tensor) ParamI32(i int) int32 {
	if t == nil || i < 0 || i >= MaxOpParams {
		return 0
	}
	return t.Params[i]
}

// ParamF32 returns op parameter word i reinterpreted as a float32 (0 for a nil t or i out of
// range).
func (t *Tensor) ParamF32(i int) float32 { return math.Float32frombits(uint32(t.ParamI32(i))) }

// SetParamI32 sets op parameter word i (nothing for a nil t or i out of range).
func (t *Tensor) SetParamI32(i int, v int32) {
	if t != nil && i >= 0 && i < MaxOpParams {
		t.Params[i] = v
	}
}

// SetParamF32 stores a float32 in op parameter word i (nothing for a nil t or i out of range).
func (t *Tensor) SetParamF32(i int, v float32) { t.SetParamI32(i, int32(math.Float32bits(v))) }

// NElements is the number of elements (0 for a nil t). Tensors made by a Context never overflow it;
// for fields changed by hand it saturates at math.MaxInt64.
func (t *Tensor) NElements() int64 {
	if t == nil {
		return 0
	}
	n, ok := checkedProduct(t.Ne[:]...)
	if !ok {
		return math.MaxInt64
	}
	return n
}

// NRows is the number of rows, all dimensions but the first (0 for a nil t; saturating like
// NElements).
func (t *Tensor) NRows() int64 {
	if t == nil {
		return 0
	}
	n, ok := checkedProduct(t.Ne[1:]...)
	if !ok {
		return math.MaxInt64
	}
	return n
}

// NBytes is the span of bytes the tensor covers given its strides (ggml_nbytes); 0 for a nil or
// empty t. Tensors made by a Context never overflow it; for fields changed by hand into an invalid
// layout it returns math.MaxInt64, which no range check accepts (CheckedBytes says what is wrong).
func (t *Tensor) NBytes() int64 {
	if t == nil {
		return 0
	}
	n, err := layoutBytes(t.Type, t.Ne, t.Nb)
	if err != nil {
		return math.MaxInt64
	}
	return n
}

// RowBytes is the size in bytes of one contiguous row of Ne[0] elements (0 for a nil t).
func (t *Tensor) RowBytes() int64 {
	if t == nil {
		return 0
	}
	return t.Type.RowSize(t.Ne[0])
}

// IsEmpty reports whether some dimension is zero (true for a nil t).
func (t *Tensor) IsEmpty() bool { return t.NElements() == 0 }

// IsContiguous reports whether the elements are laid out densely in row-major order (false for a
// nil t).
func (t *Tensor) IsContiguous() bool { return t != nil && t.isContiguousN(0) }

// IsContiguousRows reports whether each row is dense, dims ≥ 1 may have gaps (false for a nil t).
func (t *Tensor) IsContiguousRows() bool {
	return t != nil && (t.Ne[0] == t.Type.BlockSize() || t.Nb[0] == t.Type.Size())
}

// isContiguousN reports whether dims above n are dense (n = 0: fully contiguous), ignoring
// dimensions of size 1 as ggml does.
func (t *Tensor) isContiguousN(n int) bool {
	next := t.Type.Size()
	if t.Ne[0] != t.Type.BlockSize() && t.Nb[0] != next {
		return false
	}
	next *= t.Ne[0] / t.Type.BlockSize()
	for i := 1; i < MaxDims; i++ {
		if t.Ne[i] != 1 {
			if i > n {
				if t.Nb[i] != next {
					return false
				}
				next *= t.Ne[i]
			} else {
				next = t.Ne[i] * t.Nb[i]
			}
		}
	}
	return true
}

// IsTransposed reports whether dim 0 strides further than dim 1 (false for a nil t).
func (t *Tensor) IsTransposed() bool { return t != nil && t.Nb[0] > t.Nb[1] }

// IsPermuted reports whether the strides are not in increasing order (false for a nil t).
func (t *Tensor) IsPermuted() bool {
	return t != nil && (t.Nb[0] > t.Nb[1] || t.Nb[1] > t.Nb[2] || t.Nb[2] > t.Nb[3])
}

// IsView reports whether the tensor aliases another tensor's memory (false for a nil t).
func (t *Tensor) IsView() bool { return t != nil && t.ViewSrc != nil }

// SameShape reports whether a and b have equal Ne (false when either is nil).
func SameShape(a, b *Tensor) bool { return a != nil && b != nil && a.Ne == b.Ne }

// SameLayout reports whether a and b have equal type, shape and strides (false when either is nil).
func SameLayout(a, b *Tensor) bool {
	return a != nil && b != nil && a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb
}

// CanRepeat reports whether b can be broadcast (tiled) to a's shape: every a.Ne[i] is a multiple
// of b.Ne[i]. An empty b repeats only into an empty a; nil tensors never repeat.
func CanRepeat(b, a *Tensor) bool {
	if a == nil || b == nil {
		return false
	}
	if b.IsEmpty() {
		return a.IsEmpty()
	}
	for i := 0; i < MaxDims; i++ {
		if a.Ne[i]%b.Ne[i] != 0 {
			return false
		}
	}
	return true
}

// DataSource returns the tensor that owns the memory t uses: t itself, or the root of its views
// (nil for a nil t).
func (t *Tensor) DataSource() *Tensor {
	if t == nil {
		return nil
	}
	for t.ViewSrc != nil {
		t = t.ViewSrc
	}
	return t
}

// Allocated reports whether the tensor has memory (false for a nil t).
func (t *Tensor) Allocated() bool { return t != nil && t.Buffer != nil }

// Data returns the tensor's bytes (NBytes long, starting at its first element) when it lives in host
// memory, or nil: for a nil t, a tensor without memory, in a device buffer, in a freed buffer, or
// outside its buffer. HostData says which.
func (t *Tensor) Data() []byte {
	b, _ := t.hostData()
	if b != nil {
		noteWrite(t) // the caller may write through it
	}
	return b
}

// hostData reasons why a tensor has no host bytes, without building an error (Data is called on
// hot paths to test host residency).
type hostDataReason int

const (
	hostOK hostDataReason = iota
	hostNilTensor
	hostNoMemory
	hostFreed
	hostNotHost
	hostBadLayout
	hostOutside
)

func (t *Tensor) hostData() ([]byte, hostDataReason) {
	switch {
	case t == nil:
		return nil, hostNilTensor
	case t.Buffer == nil:
		return nil, hostNoMemory
	case bufferFreed(t.Buffer):
		return nil, hostFreed
	}
	hb, ok := t.Buffer.(HostBuffer)
	if !ok {
		return nil, hostNotHost
	}
	n, err := layoutBytes(t.Type, t.Ne, t.Nb)
	if err != nil {
		return nil, hostBadLayout
	}
	b := hb.Bytes()
	end, ok := CheckedAdd(t.Offset, n)
	if !ok || t.Offset < 0 || end > int64(len(b)) {
		return nil, hostOutside
	}
	return b[t.Offset:end:end], hostOK
}

// HostData returns the tensor's bytes like Data, or an error saying why there are none: a nil
// tensor, no memory yet, a buffer that is not host memory (use TensorGet/TensorSet), a freed
// buffer, an invalid layout, or a span outside the buffer. An empty tensor in host memory gives an
// empty slice.
func (t *Tensor) HostData() ([]byte, error) {
	b, why := t.hostData()
	switch why {
	case hostOK:
		noteWrite(t) // the caller may write through it
		return b, nil
	case hostNilTensor:
		return nil, fmt.Errorf("tandem: %w", errNilTensor)
	case hostNoMemory:
		return nil, noMemory("HostData", t)
	case hostFreed:
		return nil, fmt.Errorf("tandem: tensor %v: its %w", t, ErrBufferFreed)
	case hostNotHost:
		return nil, fmt.Errorf("tandem: tensor %v lives in a %s buffer, not in host memory (use SetFloat32s/GetFloat32s or TensorSet/TensorGet)",
			t, bufferTypeName(t.Buffer))
	case hostBadLayout:
		_, err := layoutBytes(t.Type, t.Ne, t.Nb)
		return nil, fmt.Errorf("tandem: tensor %v: %w", t, err)
	}
	return nil, fmt.Errorf("tandem: tensor %v bytes at offset %d lie outside its %d-byte buffer", t, t.Offset, t.Buffer.Size())
}

func bufferTypeName(b Buffer) string {
	if bt := b.Type(); bt != nil {
		return bt.Name()
	}
	return "untyped"
}

// Float32s returns the host data of an F32 tensor as float32 values (NBytes/4 of them, strided as
// the tensor is), for reading and writing in place, or nil when t is nil, not F32, or not in host
// memory — a tensor in a device buffer or a NoAlloc context included, so copy(t.Float32s(), x)
// copies nothing there. SetFloat32s and GetFloat32s work wherever the tensor lives, convert from
// and to any type, and return an error saying why they cannot.
func (t *Tensor) Float32s() []float32 {
	if t == nil || t.Type != TypeF32 {
		return nil
	}
	return f32View(t.Data())
}

// Int32s returns the host data of an I32 tensor, or nil when t is nil, not I32 or not in host
// memory; SetInt32s and GetInt32s work wherever the tensor lives and say why they cannot.
func (t *Tensor) Int32s() []int32 {
	if t == nil || t.Type != TypeI32 {
		return nil
	}
	return i32View(t.Data())
}

// rowOffset returns the byte offset of element (0, i1, i2, i3).
func (t *Tensor) rowOffset(i1, i2, i3 int64) int64 { return i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3] }
