package alloc

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/tandem-ml/tandem/core"
)

// ErrNothingToAllocate is returned (wrapped) by AllocCtxTensors when no tensor of the context needs
// memory: the context is empty, or every tensor already has memory or is a view (views of
// allocated tensors are still initialised). No buffer is made, and the returned buffer is nil.
var ErrNothingToAllocate = errors.New("no tensor of the context needs memory")

// AllocCtxTensors allocates every tensor of a NoAlloc context that has no memory yet in the
// backend's default buffer type, weights that the device keeps in a layout of its own in its extra
// buffer types. See AllocCtxTensorsFromBufferType. A nil ctx or backend is an error.
func AllocCtxTensors(ctx *core.Context, backend core.Backend) (core.Buffer, error) {
	if backend == nil {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: nil backend")
	}
	bt := backend.DefaultBufferType()
	if bt == nil {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: backend %s has no default buffer type", backend.Name())
	}
	return AllocCtxTensorsFromBufferType(ctx, bt)
}

// CtxAllocOptions configure AllocCtxTensorsWithOptions.
type CtxAllocOptions struct {
	// NoExtraBufferTypes keeps every tensor in the buffer type asked for: no weight goes to the
	// device's extra buffer types (such as the CPU's repacked "CPU_REPACK").
	NoExtraBufferTypes bool
}

// AllocCtxTensorsFromBufferType gives every tensor of the NoAlloc context ctx that has no memory a
// place in new buffers of type bt, in creation order, and initialises views. Tensors are packed in
// runs no larger than bt's maximum size (a tensor larger than that gets a buffer of its own); one run
// gives one buffer, several give a MultiBuffer that behaves as one. Tensors of 0 bytes get a place
// too (in a buffer of at least one byte). It never returns a nil buffer with a nil error: when no
// tensor needs memory the error wraps ErrNothingToAllocate. A nil ctx or bt, a context that
// allocates its own memory or holds a construction error, and sizes that overflow are errors. On
// failure the buffers made so far are freed and the tensors they held are left without memory.
//
// Weights and extra buffer types: when bt is the buffer type of a device with extra buffer types
// (core.ExtraBufferTypesFor; the CPU registers its CPU_REPACK for core.HostBufferType()), each
// weight goes to the first extra buffer type that accepts it (core.WeightAcceptor), as llama.cpp
// places its weights; WeightBufferTypes tells where each goes. The extra buffer type is told which
// nodes of ctx read the weight when ctx holds any tensor computed by an op other than a view (the
// uses are then known, and a weight read by none is not placed there), and otherwise only the
// views of the weight (a weights context; then type and shape decide: the CPU repacks every Q4_0,
// Q4_1 and Q8_0 weight that has no view). The returned buffer then joins buffers of several types
// (a MultiBuffer whose Type is bt). AllocCtxTensorsWithOptions with NoExtraBufferTypes turns this
// off.
func AllocCtxTensorsFromBufferType(ctx *core.Context, bt core.BufferType) (core.Buffer, error) {
	return AllocCtxTensorsWithOptions(ctx, bt, CtxAllocOptions{})
}

// AllocCtxTensorsWithOptions is AllocCtxTensorsFromBufferType with options; a nil ctx or bt is an
// error.
func AllocCtxTensorsWithOptions(ctx *core.Context, bt core.BufferType, o CtxAllocOptions) (core.Buffer, error) {
	if ctx == nil || bt == nil {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: nil context or buffer type (ctx %v, buffer type %v)", ctx != nil, bt != nil)
	}
	if !ctx.NoAlloc() {
		return nil, fmt.Errorf("tandem: alloc: AllocCtxTensors: the context allocates its own memory (NoAlloc is false)")
	}
	if err := ctx.Err(); err != nil {
		return nil, core.Errorf("tandem: alloc: AllocCtxTensors: the context holds an error: %w", err)
	}
	return allocTensors(ctx.Tensors(), bt, o)
}

// AllocTensors is AllocCtxTensorsWithOptions over a list of tensors instead of a context: it gives
// each tensor of ts that has no memory a place in new buffers of type bt (in the order of ts),
// weights going to the device's extra buffer types as WeightBufferTypes says (unless
// o.NoExtraBufferTypes), and initialises the views of ts whose source has memory. The rules,
// errors and the returned buffer are AllocCtxTensorsWithOptions's; a nil bt, a nil tensor in ts and
// a tensor that stands for a construction error are errors too. gguf.Load places the tensors of a
// file it does not map with it.
func AllocTensors(ts []*core.Tensor, bt core.BufferType, o CtxAllocOptions) (core.Buffer, error) {
	if bt == nil {
		return nil, fmt.Errorf("tandem: alloc: AllocTensors: nil buffer type")
	}
	for i, t := range ts {
		if t == nil {
			return nil, fmt.Errorf("tandem: alloc: AllocTensors: tensor %d of %d is nil", i, len(ts))
		}
		if err := t.Err(); err != nil {
			return nil, core.Errorf("tandem: alloc: AllocTensors: tensor %d stands for a failed op: %w", i, err)
		}
	}
	return allocTensors(ts, bt, o)
}

// WeightBufferTypes returns, for each weight of ts that one of the extra buffer types of bt's
// device accepts (core.ExtraBufferTypesFor, core.WeightAcceptor), the extra buffer type that
// AllocTensors and AllocCtxTensors put it in; weights that stay in bt are not in the map. A weight
// is a tensor of ts that is not computed, not a view, has no memory yet and is not marked input,
// output or parameter. Its uses are the tensors of ts that read it when ts holds a tensor computed
// by an op other than a view; otherwise (a list of weights only, as a file's) only its views are
// known, and the extra buffer type decides from its type and shape: the CPU's CPU_REPACK takes
// every Q4_0, Q4_1 and Q8_0 weight with dense strides, as llama.cpp does when it loads a model.
// It returns nil for a nil bt and when bt's device has no extra buffer types.
func WeightBufferTypes(ts []*core.Tensor, bt core.BufferType) map[*core.Tensor]core.BufferType {
	placed, _ := placeWeights(ts, core.ExtraBufferTypesFor(bt))
	return placed
}

// allocTensors is AllocTensors on checked arguments.
func allocTensors(ts []*core.Tensor, bt core.BufferType, o CtxAllocOptions) (core.Buffer, error) {
	var placed map[*core.Tensor]core.BufferType
	var extraOrder []core.BufferType
	if !o.NoExtraBufferTypes {
		placed, extraOrder = placeWeights(ts, core.ExtraBufferTypesFor(bt))
	}
	var bufs []core.Buffer
	fail := func(err error) (core.Buffer, error) {
		for _, b := range bufs {
			for _, t := range ts {
				if t.Buffer == b {
					t.Buffer, t.Offset = nil, 0
				}
			}
			_ = b.Free()
		}
		return nil, err
	}
	main, err := allocCtxRuns(bt, ts, func(t *core.Tensor) bool { return placed[t] == nil })
	bufs = append(bufs, main...)
	if err != nil {
		return fail(err)
	}
	for _, xbt := range extraOrder {
		more, err := allocCtxRuns(xbt, ts, func(t *core.Tensor) bool { return placed[t] == xbt })
		bufs = append(bufs, more...)
		if err != nil {
			return fail(err)
		}
	}
	// views of tensors that had memory before, or got it in another run or buffer type
	for _, t := range ts {
		if t.ViewSrc != nil && t.Buffer == nil && t.ViewSrc.Buffer != nil {
			if err := core.ViewInit(t); err != nil {
				return fail(core.Errorf("tandem: alloc: AllocCtxTensors: %w", err))
			}
		}
	}
	switch len(bufs) {
	case 0:
		return nil, core.Errorf("tandem: alloc: AllocCtxTensors: %w (%d tensors, all with memory or views)", ErrNothingToAllocate, len(ts))
	case 1:
		return bufs[0], nil
	}
	return NewMultiBuffer(bufs...), nil
}

// placeWeights picks an extra buffer type for each weight of ts that one accepts, and lists the
// extra buffer types used in order of first use.
func placeWeights(ts []*core.Tensor, extras []core.BufferType) (map[*core.Tensor]core.BufferType, []core.BufferType) {
	if len(extras) == 0 {
		return nil, nil
	}
	// the nodes reading each tensor (views included), and whether any tensor is computed by an op
	// other than a view (then the uses are known)
	uses := map[*core.Tensor][]*core.Tensor{}
	known := false
	for _, t := range ts {
		if t.Op == core.OpNone {
			continue
		}
		known = known || !t.Op.IsView()
		srcs := t.Src[:]
		if t.ViewSrc != nil {
			srcs = append([]*core.Tensor{t.ViewSrc}, srcs...)
		}
		for _, s := range srcs {
			if s != nil && (len(uses[s]) == 0 || uses[s][len(uses[s])-1] != t) {
				uses[s] = append(uses[s], t)
			}
		}
	}
	placed := map[*core.Tensor]core.BufferType{}
	var order []core.BufferType
	for _, t := range ts {
		if t.Buffer != nil || t.ViewSrc != nil || t.Op != core.OpNone ||
			t.Flags&(core.FlagInput|core.FlagOutput|core.FlagParam) != 0 {
			continue
		}
		u := uses[t] // views of a weight count even where the other uses are not known
		if known && u == nil {
			u = []*core.Tensor{}
		}
		xbt := core.PickExtraBufferType(extras, t, u)
		if xbt == nil {
			continue
		}
		if !slices.Contains(order, xbt) {
			order = append(order, xbt)
		}
		placed[t] = xbt
	}
	return placed, order
}

// allocCtxRuns places the tensors of ts that need memory and that keep says belong to bt, packed
// in runs no larger than bt's maximum size, one buffer per run, and initialises the views whose
// source has memory by then. It returns the buffers made, also on failure.
func allocCtxRuns(bt core.BufferType, ts []*core.Tensor, keep func(*core.Tensor) bool) ([]core.Buffer, error) {
	align := max(1, bt.Alignment())
	maxSize := bt.MaxSize()
	type run struct {
		first, last int
		size        int64
	}
	var runs []run
	first, cur, pending := 0, int64(0), 0
	for i, t := range ts {
		mine := t.Buffer == nil && t.ViewSrc == nil && keep(t)
		var size int64
		if mine {
			if _, err := t.CheckedBytes(); err != nil {
				return nil, core.Errorf("tandem: alloc: AllocCtxTensors: tensor %v: %w", t, err)
			}
			raw := bt.AllocSize(t)
			var ok bool
			if size, ok = core.CheckedAlignUp(raw, align); !ok {
				return nil, core.Errorf("tandem: alloc: AllocCtxTensors: tensor %v: size %d aligned to %d: %w", t, raw, align, core.ErrOverflow)
			}
		}
		next, ok := core.CheckedAdd(cur, size)
		if !ok {
			return nil, core.Errorf("tandem: alloc: AllocCtxTensors: the tensors need more than an int64 of bytes (at %v): %w", t, core.ErrOverflow)
		}
		if cur > 0 && maxSize > 0 && next > maxSize {
			runs = append(runs, run{first, i, cur})
			first, cur, pending = i, size, 0
		} else {
			cur = next
		}
		if mine {
			pending++
		}
	}
	if cur > 0 || pending > 0 {
		runs = append(runs, run{first, len(ts), max(cur, 1)})
	}
	var bufs []core.Buffer
	for _, r := range runs {
		b, err := allocBuffer(bt, r.size)
		if err != nil {
			return bufs, err
		}
		bufs = append(bufs, b)
		ta := NewTensorAllocator(b)
		for _, t := range ts[r.first:r.last] {
			if t.Buffer == nil && t.ViewSrc == nil && !keep(t) {
				continue
			}
			if err := initCtxTensor(ta, t); err != nil {
				return bufs, core.Errorf("tandem: alloc: AllocCtxTensors: %w", err)
			}
		}
	}
	return bufs, nil
}

func initCtxTensor(ta *TensorAllocator, t *core.Tensor) error {
	if t.Buffer != nil {
		return nil
	}
	if t.ViewSrc == nil {
		return ta.Alloc(t)
	}
	if t.ViewSrc.Buffer != nil {
		return core.ViewInit(t)
	}
	return nil
}

// MultiBuffer joins several buffers into one handle (ggml's multi-buffer): its size is the sum, and
// setting the usage, clearing and freeing apply to every part. The parts are of one type, except
// where AllocCtxTensors placed weights in extra buffer types; Type is the first part's. Tensors live in the
// parts; tensor transfers through the MultiBuffer go to the part that holds the tensor.
type MultiBuffer struct {
	bufs  []core.Buffer
	size  int64
	usage core.BufferUsage
	freed bool
}

var _ core.Buffer = (*MultiBuffer)(nil)

// NewMultiBuffer wraps bufs (at least one, normally all of the same type); nil entries are left out.
func NewMultiBuffer(bufs ...core.Buffer) *MultiBuffer {
	m := &MultiBuffer{}
	for _, b := range bufs {
		if b == nil {
			continue
		}
		m.bufs = append(m.bufs, b)
		if s, ok := core.CheckedAdd(m.size, b.Size()); ok {
			m.size = s
		} else {
			m.size = math.MaxInt64
		}
	}
	if len(m.bufs) > 0 {
		m.usage = m.bufs[0].Usage()
	}
	return m
}

// Freed reports whether Free was called (core.FreedReporter); a nil m counts as freed.
func (m *MultiBuffer) Freed() bool { return m == nil || m.freed }

// Buffers returns the parts (nil for a nil m).
func (m *MultiBuffer) Buffers() []core.Buffer {
	if m == nil {
		return nil
	}
	return append([]core.Buffer(nil), m.bufs...)
}

// Type is the parts' buffer type (nil for an empty or nil MultiBuffer).
func (m *MultiBuffer) Type() core.BufferType {
	if m == nil || len(m.bufs) == 0 {
		return nil
	}
	return m.bufs[0].Type()
}

// Size is the sum of the parts' sizes (0 for a nil m).
func (m *MultiBuffer) Size() int64 {
	if m == nil {
		return 0
	}
	return m.size
}

// Usage is the usage last set (BufferUsageAny for a nil m).
func (m *MultiBuffer) Usage() core.BufferUsage {
	if m == nil {
		return core.BufferUsageAny
	}
	return m.usage
}

// SetUsage sets the usage of every part (nothing for a nil m).
func (m *MultiBuffer) SetUsage(u core.BufferUsage) {
	if m == nil {
		return
	}
	m.usage = u
	for _, b := range m.bufs {
		b.SetUsage(u)
	}
}

// Contains reports whether b is one of the parts or the MultiBuffer itself (false for a nil m or b).
func (m *MultiBuffer) Contains(b core.Buffer) bool {
	if m == nil || b == nil {
		return false
	}
	if b == core.Buffer(m) {
		return true
	}
	for _, p := range m.bufs {
		if p == b {
			return true
		}
	}
	return false
}

func (m *MultiBuffer) part(t *core.Tensor, op string) (core.Buffer, error) {
	if t == nil {
		return nil, fmt.Errorf("tandem: alloc: multi-buffer %s: nil tensor", op)
	}
	if m == nil {
		return nil, fmt.Errorf("tandem: alloc: multi-buffer %s: nil multi-buffer", op)
	}
	if m.freed {
		return nil, core.Errorf("tandem: alloc: multi-buffer %s: tensor %v: %w", op, t, core.ErrBufferFreed)
	}
	for _, p := range m.bufs {
		if t.Buffer == p {
			return p, nil
		}
	}
	return nil, fmt.Errorf("tandem: alloc: multi-buffer %s: tensor %v is not in any of its %d buffers", op, t, len(m.bufs))
}

// SetTensor writes into t, which must live in one of the parts (a nil t is an error).
func (m *MultiBuffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	p, err := m.part(t, "SetTensor")
	if err != nil {
		return err
	}
	return p.SetTensor(t, data, offset)
}

// GetTensor reads from t, which must live in one of the parts (a nil t is an error).
func (m *MultiBuffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	p, err := m.part(t, "GetTensor")
	if err != nil {
		return err
	}
	return p.GetTensor(t, dst, offset)
}

// MemsetTensor fills bytes of t, which must live in one of the parts (a nil t is an error).
func (m *MultiBuffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	p, err := m.part(t, "MemsetTensor")
	if err != nil {
		return err
	}
	return p.MemsetTensor(t, value, offset, size)
}

// Clear fills every part with value (an error after Free and for a nil m).
func (m *MultiBuffer) Clear(value byte) error {
	if m == nil || m.freed {
		return core.Errorf("tandem: alloc: multi-buffer Clear: %w", core.ErrBufferFreed)
	}
	for _, b := range m.bufs {
		if err := b.Clear(value); err != nil {
			return err
		}
	}
	return nil
}

// Free frees every part (the first error is returned, all parts are tried); nothing for a nil m.
func (m *MultiBuffer) Free() error {
	if m == nil {
		return nil
	}
	var first error
	for _, b := range m.bufs {
		if err := b.Free(); err != nil && first == nil {
			first = err
		}
	}
	m.bufs = nil
	m.size = 0
	m.freed = true
	return first
}
