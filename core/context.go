package core

import (
	"fmt"
	"sync"
)

// TensorOverhead is the number of bytes of a context's MemSize that each tensor's metadata counts
// for (ggml_tensor_overhead), so that memory sizes computed as in ggml's examples fit.
const TensorOverhead = 368

// GraphOverhead is what ggml_graph_overhead returns for the default graph size; tandem graphs do not
// live in the context, but examples that add it to MemSize keep working.
const GraphOverhead = 82272

// ContextParams configure a Context.
type ContextParams struct {
	// MemSize bounds the context: each tensor counts TensorOverhead bytes plus, when NoAlloc is
	// false, its data rounded up to 32 bytes.
	MemSize int64
	// NoAlloc creates tensors without memory; alloc.AllocCtxTensors places them later.
	NoAlloc bool
}

// Context creates tensors and remembers them in creation order. With NoAlloc false it owns a host
// arena of MemSize bytes from which tensor data is carved.
type Context struct {
	params  ContextParams
	used    int64
	arena   *hostBuffer
	tensors []*Tensor

	mu  sync.Mutex
	err error
}

// NewContext creates a context. A MemSize ≤ 0 with NoAlloc means "no limit".
func NewContext(p ContextParams) *Context {
	c := &Context{params: p}
	if !p.NoAlloc && p.MemSize > 0 {
		c.arena = newHostBuffer(hostBufferType, p.MemSize)
	}
	return c
}

// Err returns the first error recorded while building tensors and ops in this context.
func (c *Context) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// setErr records err unless an earlier one exists.
func (c *Context) setErr(err error) {
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// errorf records a construction error and returns a placeholder tensor so that building can go on.
func (c *Context) errorf(format string, args ...any) *Tensor {
	c.setErr(fmt.Errorf("tandem: "+format, args...))
	return c.placeholder()
}

// placeholder is a metadata-only 1-element tensor standing in for a failed op.
func (c *Context) placeholder() *Tensor {
	t := &Tensor{Type: TypeF32, ctx: c, id: len(c.tensors), Name: "invalid"}
	t.Ne = [4]int64{1, 1, 1, 1}
	t.Nb = [4]int64{4, 4, 4, 4}
	return t
}

// NoAlloc reports whether the context creates tensors without memory.
func (c *Context) NoAlloc() bool { return c.params.NoAlloc }

// MemSize is the context's size limit; Used is how much of it tensors take.
func (c *Context) MemSize() int64 { return c.params.MemSize }

// Used reports the bytes of MemSize consumed so far.
func (c *Context) Used() int64 { return c.used }

// Tensors returns the tensors created so far, in creation order.
func (c *Context) Tensors() []*Tensor { return c.tensors }

// TensorByName returns the first tensor with the given name, or nil.
func (c *Context) TensorByName(name string) *Tensor {
	for _, t := range c.tensors {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// contiguousStrides fills nb for a dense layout of ne in type typ.
func contiguousStrides(typ Type, ne [4]int64) [4]int64 {
	var nb [4]int64
	nb[0] = typ.Size()
	nb[1] = nb[0] * (ne[0] / typ.BlockSize())
	nb[2] = nb[1] * ne[1]
	nb[3] = nb[2] * ne[2]
	return nb
}

// NewTensor creates a tensor of type typ with up to four dimensions (missing ones are 1).
func (c *Context) NewTensor(typ Type, ne ...int64) *Tensor {
	if len(ne) < 1 || len(ne) > MaxDims {
		return c.errorf("new tensor: %d dimensions given, want 1 to %d", len(ne), MaxDims)
	}
	var shape [4]int64
	for i := range shape {
		shape[i] = 1
	}
	copy(shape[:], ne)
	return c.newTensor(typ, shape, nil, 0)
}

// NewTensor1D creates a 1-D tensor.
func (c *Context) NewTensor1D(typ Type, ne0 int64) *Tensor { return c.NewTensor(typ, ne0) }

// NewTensor2D creates a tensor with ne0 columns and ne1 rows.
func (c *Context) NewTensor2D(typ Type, ne0, ne1 int64) *Tensor { return c.NewTensor(typ, ne0, ne1) }

// NewTensor3D creates a 3-D tensor.
func (c *Context) NewTensor3D(typ Type, ne0, ne1, ne2 int64) *Tensor {
	return c.NewTensor(typ, ne0, ne1, ne2)
}

// NewTensor4D creates a 4-D tensor.
func (c *Context) NewTensor4D(typ Type, ne0, ne1, ne2, ne3 int64) *Tensor {
	return c.NewTensor(typ, ne0, ne1, ne2, ne3)
}

// NewTensorLike creates a tensor of a's type and shape (contiguous).
func (c *Context) NewTensorLike(a *Tensor) *Tensor { return c.newTensor(a.Type, a.Ne, nil, 0) }

// NewF32 creates a 1-element F32 tensor holding v (the context must allocate memory).
func (c *Context) NewF32(v float32) *Tensor {
	t := c.NewTensor1D(TypeF32, 1)
	if d := t.Float32s(); d != nil {
		d[0] = v
	} else if !c.params.NoAlloc {
		c.setErr(fmt.Errorf("tandem: NewF32: tensor has no host memory"))
	}
	return t
}

// newTensor creates a tensor; with view != nil it aliases view's memory at byte offset offs.
func (c *Context) newTensor(typ Type, ne [4]int64, view *Tensor, offs int64) *Tensor {
	return c.newTensorStrided(typ, ne, nil, view, offs)
}

// newTensorStrided is newTensor with explicit strides (nil: contiguous).
func (c *Context) newTensorStrided(typ Type, ne [4]int64, nb *[4]int64, view *Tensor, offs int64) *Tensor {
	if !typ.Valid() {
		return c.errorf("new tensor: unknown type %d", int32(typ))
	}
	for i, n := range ne {
		if n < 0 {
			return c.errorf("new tensor: negative size %d in dimension %d", n, i)
		}
	}
	if ne[0]%typ.BlockSize() != 0 {
		return c.errorf("new tensor: %d elements in dimension 0 is not a multiple of the %v block size %d",
			ne[0], typ, typ.BlockSize())
	}
	if view != nil && view.ViewSrc != nil {
		offs += view.ViewOffs
		view = view.ViewSrc
	}
	t := &Tensor{Type: typ, Ne: ne, Nb: contiguousStrides(typ, ne), ctx: c, ViewSrc: view, ViewOffs: offs}
	if nb != nil {
		t.Nb = *nb
	}
	dataSize, dataOffs := int64(0), int64(0)
	if view == nil && !c.params.NoAlloc {
		if c.arena == nil {
			return c.errorf("new tensor: context has no memory (MemSize %d with NoAlloc false)", c.params.MemSize)
		}
		dataSize = alignUp(t.NBytes(), hostAlignment)
		dataOffs = alignUp(c.used+TensorOverhead, hostAlignment)
	}
	need := TensorOverhead + dataSize
	if dataSize > 0 {
		need = dataOffs + dataSize - c.used
	}
	if c.params.MemSize > 0 && c.used+need > c.params.MemSize {
		return c.errorf("context out of memory: tensor %v %v needs %d bytes, %d of %d used",
			typ, ne, need, c.used, c.params.MemSize)
	}
	if view != nil {
		if offs < 0 || (view.NBytes() > 0 && offs+t.NBytes() > view.NBytes()) {
			return c.errorf("view of %v at offset %d with %d bytes exceeds its %d bytes", view, offs, t.NBytes(), view.NBytes())
		}
		if view.Buffer != nil {
			t.Buffer = view.Buffer
			t.Offset = view.Offset + offs
		}
	} else if dataSize > 0 {
		t.Buffer = c.arena
		t.Offset = dataOffs
	}
	c.used += need
	t.id = len(c.tensors)
	c.tensors = append(c.tensors, t)
	return t
}
