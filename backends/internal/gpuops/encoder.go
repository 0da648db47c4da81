package gpuops

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
)

// Encoder records a backend's graph nodes through its Runtime. It keeps the state one graph
// needs (accesses since the last barrier, index checks) and is used by one goroutine at a time.
type Encoder struct {
	rt   Runtime
	dev  *Device
	name string // "tandem: vulkan: Vulkan0", prefixed to the errors found after a graph ran
	api  string // "Vulkan", named when an op is not supported

	push  Push
	binds []Binding
	// Byte ranges written and read since the last barrier (ggml's unsynced_nodes_written/read):
	// a node that touches one of them gets a barrier first; independent nodes run without.
	written, read []span
	barriers      int
	// Index checks of GET_ROWS/SET_ROWS nodes (status.go): one status word per node.
	status StatusBuffer
	checks []indexCheck
	// The scratch buffer (scratch.go), sized by Start for the graph's largest need.
	scratch ScratchBuffer
	node    int // position of the node being encoded
	// The kernel family MUL_MAT takes (kernels.go), read from the environment once per graph.
	soft    bool
	softErr error

	mulMat   func(*Encoder, *core.Tensor) error // MUL_MAT's encoder when a test forces one
	faOneRow bool                               // FLASH_ATTN_EXT never splits its keys (UseFlashAttnSplit)
	faBatch  FABatches                          // the key split's load batches, zero: the device's (UseFlashAttnBatches)
	// The graph's nodes and their fused pairs (fuse.go); noFuse turns fusion off (UseFusion).
	nodes  []*core.Tensor
	fused  []fusion
	noFuse bool
	gen    uint64 // counts the Use* calls (Setting)
}

// NewEncoder returns an encoder that records through rt for device dev. api names the backend in
// errors about unsupported ops ("Vulkan"), prefix starts the errors GraphCompute returns after the
// graph ran ("tandem: vulkan: Vulkan0").
func NewEncoder(rt Runtime, dev *Device, api, prefix string) *Encoder {
	return &Encoder{rt: rt, dev: dev, api: api, name: prefix}
}

// Start prepares the encoder for the graph whose nodes are nodes: no access is pending, each
// GET_ROWS and SET_ROWS node has a zeroed status word and the scratch buffer is as large as the
// nodes need.
func (e *Encoder) Start(nodes []*core.Tensor) error {
	e.written, e.read = e.written[:0], e.read[:0]
	e.soft, e.softErr = readKernelsEnv(e.dev)
	e.nodes, e.fused = nodes, e.planFusions(nodes)
	if err := e.reserveScratch(e.scratchNeed(nodes)); err != nil {
		return err
	}
	return e.resetChecks(checksNeeded(nodes))
}

// Encode records node n, at position i of the graph's nodes.
func (e *Encoder) Encode(i int, n *core.Tensor) error {
	if !Supports(e.dev, n) {
		return fmt.Errorf("op %v with types %v not supported by the %s backend", n.Op, srcTypes(n), e.api)
	}
	e.node = i
	if i < len(e.fused) && e.nodes[i] == n {
		switch e.fused[i] {
		case fuseInNext:
			return nil // recorded with the next node
		case fuseRMSMul:
			return e.encodeRMSNormMul(nil, e.nodes[i-1], n)
		case fuseAddRMSMul:
			return e.encodeRMSNormMul(e.nodes[i-2], e.nodes[i-1], n)
		case fuseRopeSetRows:
			return e.encodeRopeSetRows(n.Src[1].ViewSrc, n)
		}
	}
	if n.Op == core.OpMulMat && e.mulMat != nil {
		return e.mulMat(e, n)
	}
	return opTable[n.Op].encode(e, n)
}

// Barriers returns the number of barriers recorded so far.
func (e *Encoder) Barriers() int { return e.barriers }

// Close releases the status and scratch buffers.
func (e *Encoder) Close() {
	if e.status != nil {
		e.status.Destroy()
		e.status = nil
	}
	if e.scratch != nil {
		e.scratch.Destroy()
		e.scratch = nil
	}
}

// span is a byte range of a runtime buffer.
type span struct {
	buf      any
	from, to uint64
}

func (s span) overlaps(o span) bool { return s.buf == o.buf && s.from < o.to && o.from < s.to }

// tensorSpan returns the byte range of t in its buffer.
func (e *Encoder) tensorSpan(t *core.Tensor) (span, error) {
	buf, size, err := e.rt.Locate(t)
	if err != nil {
		return span{}, err
	}
	n := t.NBytes()
	if t.Offset < 0 || n < 0 || t.Offset > size || n > size-t.Offset {
		return span{}, fmt.Errorf("tensor %v bytes at offset %d, %d long, lie outside its %d-byte buffer", t, t.Offset, n, size)
	}
	return span{buf: buf, from: uint64(t.Offset), to: uint64(t.Offset + n)}, nil
}

// operand is a tensor bound for a dispatch: the binding (at an aligned-down offset) and the
// tensor's first element relative to it, in units of unit bytes.
type operand struct {
	t    *core.Tensor
	bind Binding
	sp   span
	offs uint32
}

// bindTensor binds t for a shader that addresses it in units of unit bytes.
func (e *Encoder) bindTensor(t *core.Tensor, unit int64) (operand, error) {
	sp, err := e.tensorSpan(t)
	if err != nil {
		return operand{}, err
	}
	align := e.dev.MinStorageBufferOffsetAlignment
	base := sp.from / align * align
	mis := sp.from - base
	if mis%uint64(unit) != 0 {
		return operand{}, fmt.Errorf("tensor %v starts at byte %d, not a multiple of %d", t, sp.from, unit)
	}
	size := sp.to - base
	if unit == 1 {
		// Bytes are read through 16- or 32-bit arrays: bind the whole last 32-bit word. Runtimes
		// allocate buffers in whole 32-bit words (Vulkan rounds to 4 bytes, GL to 16), so it is
		// inside.
		size = (size + 3) &^ 3
	}
	if size > uint64(e.dev.MaxStorageBufferRange) {
		return operand{}, fmt.Errorf("tensor %v spans %d bytes, more than the device binds at once (%d)", t, size, e.dev.MaxStorageBufferRange)
	}
	return operand{t: t, bind: Binding{Buf: sp.buf, Off: base, Size: size}, sp: sp, offs: uint32(mis / uint64(unit))}, nil
}

// use is one source operand of a node: the tensor and the unit (bytes) its shader addresses it in.
type use struct {
	t    *core.Tensor
	unit int64
}

// bindNode binds a node's sources and its destination (in dstUnit units) and records the barrier
// the node needs. It returns the operands in order: the sources, then the destination.
func (e *Encoder) bindNode(dst *core.Tensor, dstUnit int64, srcs ...use) ([]operand, error) {
	ops := make([]operand, 0, len(srcs)+1)
	for _, s := range srcs {
		o, err := e.bindTensor(s.t, s.unit)
		if err != nil {
			return nil, err
		}
		ops = append(ops, o)
	}
	od, err := e.bindTensor(dst, dstUnit)
	if err != nil {
		return nil, err
	}
	if err := e.sync(od, ops...); err != nil {
		return nil, err
	}
	return append(ops, od), nil
}

// bindF32Slots binds a node's first ns sources and its destination, all f32 (4-byte units), for
// a shader with nslots source bindings: it returns the sources followed by the destination in
// every slot the op leaves unused (a shader's declared bindings must all be bound), and the
// destination.
func (e *Encoder) bindF32Slots(n *core.Tensor, ns, nslots int) ([]operand, operand, error) {
	srcs := make([]use, ns)
	for i, s := range n.Src[:ns] {
		srcs[i] = use{s, 4}
	}
	ops, err := e.bindNode(n, 4, srcs...)
	if err != nil {
		return nil, operand{}, err
	}
	od := ops[len(ops)-1]
	binds := make([]operand, nslots)
	for i := range binds {
		binds[i] = od
	}
	copy(binds, ops[:ns])
	return binds, od, nil
}

// writeSpan returns the range a write to o is tracked by: o's bytes, widened to whole words where
// 16-bit stores rewrite words.
func (e *Encoder) writeSpan(o operand) span {
	sp := o.sp
	if e.dev.WordWrites {
		sp.from, sp.to = sp.from&^3, (sp.to+3)&^3
	}
	return sp
}

// sync records a barrier when dst or srcs conflict with unsynchronized accesses, then notes the
// node's accesses.
func (e *Encoder) sync(dst operand, srcs ...operand) error {
	dsp := e.writeSpan(dst)
	need := false
	for _, w := range e.written {
		if w.overlaps(dsp) {
			need = true
		}
		for _, s := range srcs {
			if w.overlaps(s.sp) {
				need = true
			}
		}
	}
	for _, r := range e.read {
		if r.overlaps(dsp) {
			need = true
		}
	}
	if need {
		if err := e.barrier(); err != nil {
			return err
		}
	}
	e.written = append(e.written, dsp)
	for _, s := range srcs {
		e.read = append(e.read, s.sp)
	}
	return nil
}

// syncWrites is sync for a node that writes several tensors (each dst is also read).
func (e *Encoder) syncWrites(dsts []operand, srcs ...operand) error {
	need := false
	for _, d := range dsts {
		for _, w := range e.written {
			if w.overlaps(d.sp) {
				need = true
			}
		}
		for _, r := range e.read {
			if r.overlaps(d.sp) {
				need = true
			}
		}
	}
	for _, w := range e.written {
		for _, s := range srcs {
			if w.overlaps(s.sp) {
				need = true
			}
		}
	}
	if need {
		if err := e.barrier(); err != nil {
			return err
		}
	}
	for _, d := range dsts {
		e.written = append(e.written, d.sp)
	}
	for _, s := range srcs {
		e.read = append(e.read, s.sp)
	}
	return nil
}

// barrier records a barrier and forgets the accesses it orders.
func (e *Encoder) barrier() error {
	if err := e.rt.Barrier(); err != nil {
		return err
	}
	e.barriers++
	e.written, e.read = e.written[:0], e.read[:0]
	return nil
}

// pipeline returns the runtime's pipeline for a shader variant of package shaders.
func (e *Encoder) pipeline(name string, bindings int, push uint32, spec ...uint32) (Pipeline, error) {
	return e.rt.Pipeline(name, bindings, push, spec)
}

// dispatch records p over groups with push constants push and the bindings in order.
func (e *Encoder) dispatch(p Pipeline, groups [3]uint32, push []byte, bindings ...Binding) error {
	e.binds = append(e.binds[:0], bindings...)
	return e.rt.Dispatch(p, groups, push, e.binds)
}

// groups returns the workgroup count for n items of per items each, capped by the device limit of
// dimension dim (shaders loop over the rest).
func (e *Encoder) groups(n, per int64, dim int) uint32 { return e.dev.groups(n, per, dim) }

// u32 converts a size known to fit (Supports bounds every tensor by MaxStorageBufferRange) to
// uint32.
func u32(v int64) uint32 { return uint32(v) }

// b2u is 1 for true and 0 for false.
func b2u(v bool) uint32 {
	if v {
		return 1
	}
	return 0
}
