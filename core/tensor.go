package core

import (
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

	// Extra is backend-private per-tensor state (set by Buffer.InitTensor implementations).
	Extra any

	ctx *Context
	id  int
}

// String describes the tensor for error messages: name, op, type and shape.
func (t *Tensor) String() string {
	if t == nil {
		return "<nil tensor>"
	}
	name := t.Name
	if name == "" {
		name = fmt.Sprintf("#%d", t.id)
	}
	return fmt.Sprintf("%s(%v %v [%d,%d,%d,%d])", name, t.Op, t.Type, t.Ne[0], t.Ne[1], t.Ne[2], t.Ne[3])
}

// SetName sets the tensor's name (truncated to 63 bytes as in ggml) and returns t.
func (t *Tensor) SetName(name string) *Tensor {
	if len(name) > MaxNameBytes-1 {
		name = name[:MaxNameBytes-1]
	}
	t.Name = name
	return t
}

// SetInput marks t as a graph input: allocators give it memory of its own at graph start.
func (t *Tensor) SetInput() *Tensor { t.Flags |= FlagInput; return t }

// SetOutput marks t as a graph output: allocators never free or reuse its memory.
func (t *Tensor) SetOutput() *Tensor { t.Flags |= FlagOutput; return t }

// SetParam marks t as a trainable parameter (it becomes a graph node, not a leaf).
func (t *Tensor) SetParam() *Tensor { t.Flags |= FlagParam; return t }

// Context returns the context that created t.
func (t *Tensor) Context() *Context { return t.ctx }

// ParamI32 returns op parameter word i as an int32.
func (t *Tensor) ParamI32(i int) int32 { return t.Params[i] }

// ParamF32 returns op parameter word i reinterpreted as a float32.
func (t *Tensor) ParamF32(i int) float32 { return math.Float32frombits(uint32(t.Params[i])) }

// SetParamI32 sets op parameter word i.
func (t *Tensor) SetParamI32(i int, v int32) { t.Params[i] = v }

// SetParamF32 stores a float32 in op parameter word i.
func (t *Tensor) SetParamF32(i int, v float32) { t.Params[i] = int32(math.Float32bits(v)) }

// NElements is the number of elements.
func (t *Tensor) NElements() int64 { return t.Ne[0] * t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NRows is the number of rows (all dimensions but the first).
func (t *Tensor) NRows() int64 { return t.Ne[1] * t.Ne[2] * t.Ne[3] }

// NBytes is the span of bytes the tensor covers given its strides (ggml_nbytes).
func (t *Tensor) NBytes() int64 {
	for i := 0; i < MaxDims; i++ {
		if t.Ne[i] <= 0 {
			return 0
		}
	}
	bs := t.Type.BlockSize()
	var n int64
	if bs == 1 {
		n = t.Type.Size()
		for i := 0; i < MaxDims; i++ {
			n += (t.Ne[i] - 1) * t.Nb[i]
		}
	} else {
		n = t.Ne[0] * t.Nb[0] / bs
		for i := 1; i < MaxDims; i++ {
			n += (t.Ne[i] - 1) * t.Nb[i]
		}
	}
	return n
}

// RowBytes is the size in bytes of one contiguous row of Ne[0] elements.
func (t *Tensor) RowBytes() int64 { return t.Type.RowSize(t.Ne[0]) }

// IsEmpty reports whether some dimension is zero.
func (t *Tensor) IsEmpty() bool { return t.NElements() == 0 }

// IsContiguous reports whether the elements are laid out densely in row-major order.
func (t *Tensor) IsContiguous() bool { return t.isContiguousN(0) }

// IsContiguousRows reports whether each row is dense (dims ≥ 1 may have gaps).
func (t *Tensor) IsContiguousRows() bool {
	return t.Ne[0] == t.Type.BlockSize() || t.Nb[0] == t.Type.Size()
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

// IsTransposed reports whether dim 0 strides further than dim 1.
func (t *Tensor) IsTransposed() bool { return t.Nb[0] > t.Nb[1] }

// IsPermuted reports whether the strides are not in increasing order.
func (t *Tensor) IsPermuted() bool {
	return t.Nb[0] > t.Nb[1] || t.Nb[1] > t.Nb[2] || t.Nb[2] > t.Nb[3]
}

// IsView reports whether the tensor aliases another tensor's memory.
func (t *Tensor) IsView() bool { return t.ViewSrc != nil }

// SameShape reports whether a and b have equal Ne.
func SameShape(a, b *Tensor) bool { return a.Ne == b.Ne }

// SameLayout reports whether a and b have equal type, shape and strides.
func SameLayout(a, b *Tensor) bool { return a.Type == b.Type && a.Ne == b.Ne && a.Nb == b.Nb }

// CanRepeat reports whether b can be broadcast (tiled) to a's shape: every a.Ne[i] is a multiple
// of b.Ne[i]. An empty b repeats only into an empty a.
func CanRepeat(b, a *Tensor) bool {
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

// DataSource returns the tensor that owns the memory t uses: t itself, or the root of its views.
func (t *Tensor) DataSource() *Tensor {
	for t.ViewSrc != nil {
		t = t.ViewSrc
	}
	return t
}

// Allocated reports whether the tensor has memory.
func (t *Tensor) Allocated() bool { return t.Buffer != nil }

// Data returns the tensor's bytes (NBytes long, starting at its first element) when it lives in host
// memory, or nil.
func (t *Tensor) Data() []byte {
	if t.Buffer == nil {
		return nil
	}
	hb, ok := t.Buffer.(HostBuffer)
	if !ok {
		return nil
	}
	b := hb.Bytes()
	n := t.NBytes()
	if t.Offset < 0 || t.Offset+n > int64(len(b)) {
		return nil
	}
	return b[t.Offset : t.Offset+n : t.Offset+n]
}

// Float32s returns the host data of an F32 tensor as float32 values (NBytes/4 of them, strided as
// the tensor is), or nil when t is not F32 or not in host memory.
func (t *Tensor) Float32s() []float32 {
	if t.Type != TypeF32 {
		return nil
	}
	return f32View(t.Data())
}

// Int32s returns the host data of an I32 tensor, or nil when t is not I32 or not in host memory.
func (t *Tensor) Int32s() []int32 {
	if t.Type != TypeI32 {
		return nil
	}
	return i32View(t.Data())
}

// rowOffset returns the byte offset of element (0, i1, i2, i3).
func (t *Tensor) rowOffset(i1, i2, i3 int64) int64 { return i1*t.Nb[1] + i2*t.Nb[2] + i3*t.Nb[3] }
