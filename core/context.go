package core

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
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
// arena of MemSize bytes from which tensor data is carved. A Context is safe for concurrent use:
// tensors and ops may be created from several goroutines (creation order is then the order in
// which the calls got the context's lock). It holds no resources beyond memory: there is nothing
// to close, and its arena goes away with its last tensor.
type Context struct {
	params  ContextParams
	used    int64
	arena   *hostBuffer
	tensors []*Tensor

	initErr error  // NewContext's failure: every tensor creation fails with it
	seq     uint64 // the context's number (from 1, in creation order); 0 for a zero Context

	mem sync.Mutex // guards used, arena carving and tensors: ops may be built from several goroutines

	mu  sync.Mutex // guards err
	err error
}

// contextSeq numbers contexts, so unnamed tensors of different contexts print differently.
var contextSeq atomic.Uint64

// maxContextMemSize bounds the host arena of a context (the same limit as a host buffer).
const maxContextMemSize = maxHostBufferSize

// NewContext creates a context. A MemSize ≤ 0 with NoAlloc means "no limit". A MemSize that
// cannot be allocated (negative, or larger than the host can address with NoAlloc false) does not
// panic: as with an op's error, the context records it, Err returns it, every tensor the context
// creates fails with it, and a graph built from them reports it — so checking ctx.Err() once,
// after building, catches a bad context as well as a bad op.
func NewContext(p ContextParams) *Context {
	c := &Context{params: p, seq: contextSeq.Add(1)}
	if p.NoAlloc {
		return c
	}
	switch {
	case p.MemSize < 0:
		c.initErr = fmt.Errorf("tandem: NewContext: negative MemSize %d", p.MemSize)
	case p.MemSize > maxContextMemSize:
		c.initErr = fmt.Errorf("tandem: NewContext: MemSize %d is more than a host arena can hold (%d bytes)", p.MemSize, int64(maxContextMemSize))
	case p.MemSize > 0:
		arena, err := tryNewHostBuffer(hostBufferType, p.MemSize)
		if err != nil {
			c.initErr = fmt.Errorf("tandem: NewContext: %w", err)
		} else {
			c.arena = arena
		}
	}
	c.err = c.initErr
	return c
}

// Err returns the first error recorded while building tensors and ops in this context (for a nil
// context, an error saying so).
func (c *Context) Err() error {
	if c == nil {
		return errNilContext
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil && c.seq == 0 {
		return fmt.Errorf("tandem: %w", errZeroContext)
	}
	return c.err
}

// setErr records err unless an earlier one exists. Every error recorded is an *OpError: one of
// another kind becomes one whose message reads "OP: reason" the same way.
func (c *Context) setErr(err error) {
	if c == nil {
		return
	}
	err = asOpError("", err)
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// errorf records a construction error and returns a placeholder tensor so that building can go on.
// The format reads "OP: reason" (OP as the caller wrote it, in ggml's spelling); the error is an
// *OpError of that op naming the tensors among args.
func (c *Context) errorf(format string, args ...any) *Tensor {
	return c.failErr(newOpError(fmt.Sprintf(format, args...), args, nil))
}

// failErr records err as an *OpError (an error of another kind becomes one whose message reads
// "OP: reason" the same way) and returns a placeholder that carries it.
func (c *Context) failErr(err error) *Tensor {
	oe := asOpError("", err)
	c.setErr(oe)
	t := c.placeholder()
	t.err = oe
	return t
}

// placeholder is a metadata-only 1-element tensor standing in for a failed op. It carries the
// context's first error (or, for a nil context, the nil-context error), so a graph built from it
// reports the failure even when the context is not at hand.
func (c *Context) placeholder() *Tensor {
	t := &Tensor{Type: TypeF32, ctx: c, Name: "invalid", id: -1}
	t.Ne = [4]int64{1, 1, 1, 1}
	t.Nb = [4]int64{4, 4, 4, 4}
	t.err = c.Err()
	return t
}

var (
	errNilContext  = errors.New("nil context (create one with core.NewContext)")
	errZeroContext = errors.New("zero Context: create one with core.NewContext")
)

// NoAlloc reports whether the context creates tensors without memory (false for a nil context).
func (c *Context) NoAlloc() bool { return c != nil && c.params.NoAlloc }

// MemSize is the context's size limit; Used is how much of it tensors take (0 for a nil context).
func (c *Context) MemSize() int64 {
	if c == nil {
		return 0
	}
	return c.params.MemSize
}

// Used reports the bytes of MemSize consumed so far (0 for a nil context).
func (c *Context) Used() int64 {
	if c == nil {
		return 0
	}
	c.mem.Lock()
	defer c.mem.Unlock()
	return c.used
}

// Tensors returns the tensors created so far, in creation order (nil for a nil context).
func (c *Context) Tensors() []*Tensor {
	if c == nil {
		return nil
	}
	c.mem.Lock()
	defer c.mem.Unlock()
	return c.tensors[:len(c.tensors):len(c.tensors)]
}

// TensorByName returns the first tensor with the given name, or nil (also for a nil context).
func (c *Context) TensorByName(name string) *Tensor {
	for _, t := range c.Tensors() {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// contiguousStrides fills nb for a dense layout of ne in type typ (the shape must have been checked
// with checkedStrides).
func contiguousStrides(typ Type, ne [4]int64) [4]int64 {
	var nb [4]int64
	nb[0] = typ.Size()
	nb[1] = nb[0] * (ne[0] / typ.BlockSize())
	nb[2] = nb[1] * ne[1]
	nb[3] = nb[2] * ne[2]
	return nb
}

// NewTensor creates a tensor of type typ with up to four dimensions (missing ones are 1). Sizes
// must be ≥ 0 (a zero size makes an empty tensor, see the package documentation), and the element
// count and byte size must fit in an int64 and in MaxTensorBytes; otherwise the error goes to
// Err and a placeholder is returned. A nil context returns a placeholder carrying that error.
func (c *Context) NewTensor(typ Type, ne ...int64) *Tensor {
	if c == nil {
		return c.fail("new tensor", errNilContext)
	}
	if len(ne) < 1 || len(ne) > MaxDims {
		return c.errorf("new tensor: %d dimensions given, want 1 to %d", len(ne), MaxDims)
	}
	var shape [4]int64
	for i := range shape {
		shape[i] = 1
	}
	copy(shape[:], ne)
	return c.newTensor("new tensor", typ, shape, nil, 0)
}

// NewTensor1D creates a 1-D tensor (see NewTensor: bad sizes and a nil context give placeholders).
func (c *Context) NewTensor1D(typ Type, ne0 int64) *Tensor { return c.NewTensor(typ, ne0) }

// NewTensor2D creates a tensor with ne0 columns and ne1 rows (see NewTensor: bad sizes and a nil
// context give placeholders).
func (c *Context) NewTensor2D(typ Type, ne0, ne1 int64) *Tensor { return c.NewTensor(typ, ne0, ne1) }

// NewTensor3D creates a 3-D tensor (see NewTensor: bad sizes and a nil context give placeholders).
func (c *Context) NewTensor3D(typ Type, ne0, ne1, ne2 int64) *Tensor {
	return c.NewTensor(typ, ne0, ne1, ne2)
}

// NewTensor4D creates a 4-D tensor (see NewTensor: bad sizes and a nil context give placeholders).
func (c *Context) NewTensor4D(typ Type, ne0, ne1, ne2, ne3 int64) *Tensor {
	return c.NewTensor(typ, ne0, ne1, ne2, ne3)
}

// NewTensorLike creates a tensor of a's type and shape (contiguous). A nil a records an error and
// returns a placeholder.
func (c *Context) NewTensorLike(a *Tensor) *Tensor {
	if err := c.check("NewTensorLike", a); err != nil {
		return c.fail("NewTensorLike", err)
	}
	return c.newTensor("NewTensorLike", a.Type, a.Ne, nil, 0)
}

// NewF32 creates a 1-element F32 tensor holding v. The context must allocate memory: in a NoAlloc
// context the value has nowhere to go, so that is an error (recorded on the context) rather than a
// tensor silently missing its value. A nil context returns a placeholder carrying that error.
func (c *Context) NewF32(v float32) *Tensor {
	if c == nil {
		return c.fail("NewF32", errNilContext)
	}
	if c.params.NoAlloc {
		return c.errorf("NewF32: the context is NoAlloc, so the value %g cannot be stored (create the tensor, allocate it, then SetFloat32s)", v)
	}
	t := c.NewTensor1D(TypeF32, 1)
	if t.err != nil {
		return t
	}
	if err := SetFloat32s(t, []float32{v}); err != nil {
		return c.fail("NewF32", err)
	}
	return t
}

// newTensor creates a tensor; with view != nil it aliases view's memory at byte offset offs. Its
// errors are of op, the constructor the caller called ("new tensor", "MUL_MAT", ...).
func (c *Context) newTensor(op string, typ Type, ne [4]int64, view *Tensor, offs int64) *Tensor {
	return c.newTensorStrided(op, typ, ne, nil, view, offs)
}

// newTensorStrided is newTensor with explicit strides (nil: contiguous). It is the gate every
// tensor passes: sizes and strides non-negative, element count and byte span free of overflow and
// within MaxTensorBytes, a view's first and last byte inside its source, and the context's memory
// accounting free of overflow.
func (c *Context) newTensorStrided(op string, typ Type, ne [4]int64, nb *[4]int64, view *Tensor, offs int64) *Tensor {
	if c == nil {
		return c.fail(op, errNilContext)
	}
	if c.seq == 0 {
		return c.errorf("%s: %v", op, errZeroContext)
	}
	if c.initErr != nil {
		// NewContext failed: every tensor of this context fails with its error.
		return c.failErr(c.initErr)
	}
	if !typ.Valid() {
		return c.errorf("%s: unknown type %d", op, int32(typ))
	}
	for i, n := range ne {
		if n < 0 {
			return c.errorf("%s: negative size %d in dimension %d", op, n, i)
		}
	}
	if ne[0]%typ.BlockSize() != 0 {
		return c.errorf("%s: %d elements in dimension 0 is not a multiple of the %v block size %d",
			op, ne[0], typ, typ.BlockSize())
	}
	of := func() string { // built only for an error
		if view != nil {
			return " (a view of " + view.String() + ")"
		}
		return ""
	}
	strides, err := checkedStrides(typ, ne)
	if err != nil {
		return c.failErr(&OpError{Op: op, Reason: fmt.Sprintf("%v %v%s: %v", typ, ne, of(), err), Err: err})
	}
	if nb != nil {
		strides = *nb
	}
	nbytes, err := layoutBytes(typ, ne, strides)
	if err != nil {
		return c.failErr(&OpError{Op: op, Reason: fmt.Sprintf("%v %v strides %v%s: %v", typ, ne, strides, of(), err), Err: err})
	}
	if nbytes == 0 {
		// An empty tensor covers no bytes whatever its strides say; giving it the dense strides of
		// its shape makes every row offset a kernel may compute 0 (a [0, n] view has n rows of no
		// elements, all at its first byte), so strides never lead a kernel outside its memory.
		// The dense strides cannot overflow: checkedStrides passed above.
		strides = contiguousStrides(typ, ne)
	}
	if view != nil && view.ViewSrc != nil {
		o, ok := CheckedAdd(offs, view.ViewOffs)
		if !ok {
			return c.failErr(overflowErr("%s: view of %v at offset %d", op, view, offs))
		}
		offs = o
		view = view.ViewSrc
	}
	t := &Tensor{Type: typ, Ne: ne, Nb: strides, ctx: c, ViewSrc: view, ViewOffs: offs}
	c.mem.Lock()
	defer c.mem.Unlock()
	dataSize, dataOffs := int64(0), int64(0)
	if view == nil && !c.params.NoAlloc {
		if c.arena == nil {
			return c.errorf("%s: context has no memory (MemSize %d with NoAlloc false)", op, c.params.MemSize)
		}
		var ok1, ok2 bool
		dataSize, ok1 = CheckedAlignUp(nbytes, hostAlignment)
		dataOffs, ok2 = CheckedAlignUp(c.used+TensorOverhead, hostAlignment)
		if !ok1 || !ok2 {
			return c.failErr(overflowErr("%s: context out of memory: tensor %v %v of %d bytes", op, typ, ne, nbytes))
		}
	}
	need := int64(TensorOverhead)
	if dataSize > 0 {
		need = dataOffs - c.used + dataSize // cannot overflow: dataSize ≤ MaxTensorBytes+32, c.used ≤ MemSize
	}
	if total, ok := CheckedAdd(c.used, need); !ok || (c.params.MemSize > 0 && total > c.params.MemSize) {
		return c.errorf("%s: context out of memory: tensor %v %v needs %d bytes, %d of %d used",
			op, typ, ne, need, c.used, c.params.MemSize)
	}
	if view != nil {
		if err := checkViewExtent(view, offs, nbytes); err != nil {
			return c.fail(op, err)
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

// checkViewExtent checks that a view of nbytes bytes at byte offset offs lies inside src: its first
// byte at offs ≥ 0 and its last byte (offs+nbytes-1, strides being non-negative) inside src's span.
// An empty view must start inside or at the end of src.
func checkViewExtent(src *Tensor, offs, nbytes int64) error {
	srcBytes, err := layoutBytes(src.Type, src.Ne, src.Nb)
	if err != nil {
		return fmt.Errorf("tandem: view source %v: %w", src, err)
	}
	if offs < 0 {
		return fmt.Errorf("tandem: view of %v at negative offset %d", src, offs)
	}
	end, ok := CheckedAdd(offs, nbytes)
	if !ok {
		return overflowf("view of %v at offset %d with %d bytes", src, offs, nbytes)
	}
	if end > srcBytes || offs > srcBytes {
		return fmt.Errorf("tandem: view bytes [%d,%d) lie outside its source %v of %d bytes", offs, end, src, srcBytes)
	}
	return nil
}
