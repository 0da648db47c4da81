package cpu

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/tandem-ml/tandem/backends/cpu/internal/kern"
	"github.com/tandem-ml/tandem/core"
)

// RepackBufferTypeName is the name of the CPU's repacked weight buffer type.
const RepackBufferTypeName = "CPU_REPACK"

// repackBufType is the CPU's extra buffer type for MUL_MAT weights (ggml's CPU_REPACK): Q4_0, Q4_1
// and Q8_0 tensors are stored with the rows of each 16-row group interleaved block by block, the
// layout the repacked GEMM reads (kern.GemmRepacked).
type repackBufType struct{}

var repackBufferType = &repackBufType{}

// RepackBufferType is the CPU's repacked weight buffer type, "CPU_REPACK" (also listed by the CPU
// device's ExtraBufferTypes). What it stores and how:
//
//   - Q4_0, Q4_1, Q8_0 and Q4_K tensors that are not views and have dense strides are stored
//     repacked: each 2-D slice (ne2, ne3 index the slices) has its rows in groups of 16
//     interleaved block by block, the last group padded with zero rows. AllocSize is that size.
//     (Q4_K rows hold 256-element super-blocks, their scales unpacked to bytes: 2.8% more
//     memory than the standard rows. AcceptsWeight takes Q4_K only where the kernel set is
//     avx2, which has its micro-kernels; elsewhere the products run a pure-Go twin.)
//   - Every other tensor (other types, or tensors with other strides) is stored as-is, in the
//     standard layout; such tensors work, but the CPU backend reads them through a copy, so they
//     gain nothing here.
//
// The buffers speak the standard layout at their interface: TensorSet writes standard bytes (any
// offset and length inside the tensor, partial rows included) and TensorGet reads them back
// exactly; TensorMemset and Clear act as if the standard bytes had been set. A fresh tensor reads as
// zero bytes. The memory is not host memory in the standard layout (IsHost is false, Tensor.Data is
// nil), so other devices never read it directly: the scheduler copies the standard bytes for them.
// The CPU backend runs MUL_MAT with such a tensor as src0 by the repacked GEMM, GET_ROWS by
// unpacking the rows it gathers, and every other use through an unpacked copy, so results never
// depend on where a weight lives.
func RepackBufferType() core.BufferType { return repackBufferType }

var (
	_ core.BufferType     = (*repackBufType)(nil)
	_ core.WeightAcceptor = (*repackBufType)(nil)
)

// Name is "CPU_REPACK".
func (*repackBufType) Name() string { return RepackBufferTypeName }

// Alignment is the host alignment (32 bytes).
func (*repackBufType) Alignment() int64 { return core.HostBufferType().Alignment() }

// MaxSize is 0: no limit.
func (*repackBufType) MaxSize() int64 { return 0 }

// IsHost is false: the memory is host memory, but not in the standard layout.
func (*repackBufType) IsHost() bool { return false }

// Device is the CPU device.
func (*repackBufType) Device() core.Device { return theDevice }

// AllocSize is the repacked size of t (whole 16-row groups per 2-D slice) for a tensor stored
// repacked, t.NBytes() for any other, and 0 for a nil t.
func (*repackBufType) AllocSize(t *core.Tensor) int64 {
	if t == nil {
		return 0
	}
	if l, ok := repackLayoutOf(t); ok {
		return l.size()
	}
	return t.NBytes()
}

// Alloc returns a buffer of size bytes.
func (bt *repackBufType) Alloc(size int64) (core.Buffer, error) {
	if size < 0 {
		return nil, fmt.Errorf("tandem: cpu: %s buffer: negative size %d", bt.Name(), size)
	}
	raw, err := core.NewHostBuffer(nil, size)
	if err != nil {
		return nil, fmt.Errorf("tandem: cpu: %s buffer: %w", bt.Name(), err)
	}
	return &repackBuffer{raw: raw.Bytes(), tensors: map[*core.Tensor]int64{}}, nil
}

// AcceptsWeight reports whether w should be stored repacked: a Q4_0, Q4_1, Q8_0 or (where the
// kernel set is avx2) Q4_K tensor with dense strides that is not a view, not computed, and not a
// parameter, input or output (those are written by graphs, and graphs write only standard memory). When the nodes reading w are known,
// at least one must be a MUL_MAT (or MUL_MAT_ID) with w as src0 that the repacked GEMM serves, and
// the others MUL_MATs, MUL_MAT_IDs or GET_ROWS with w as src0; any other use keeps w in the
// standard layout. When they are not known (uses nil), every such weight is accepted, as llama.cpp
// does for its MUL_MAT weights.
func (*repackBufType) AcceptsWeight(w *core.Tensor, uses []*core.Tensor) bool {
	if w == nil || w.Op != core.OpNone || w.Flags&(core.FlagParam|core.FlagInput|core.FlagOutput) != 0 {
		return false
	}
	if _, ok := repackLayoutOf(w); !ok {
		return false
	}
	if w.Type == core.TypeQ4_K && !kern.HasQ4_KStd() {
		// Without the repacked Q4_K micro-kernels in assembly (the generic set) Q4_K weights
		// stay in the standard layout for their tile kernels.
		return false
	}
	if uses == nil {
		return true
	}
	gemm := false
	for _, u := range uses {
		if u == nil || u.Src[0] != w {
			return false
		}
		for _, s := range u.Src[1:] {
			if s == w {
				return false
			}
		}
		switch u.Op {
		case core.OpMulMat:
			b := u.Src[1]
			if b != nil && (b.Type == core.TypeF32 || b.Type == w.Type.VecDotType()) {
				gemm = true
			}
		case core.OpMulMatID: // expert weights
			if mulMatIDSupports(u) {
				gemm = true
			}
		case core.OpGetRows:
		default:
			return false
		}
	}
	return gemm
}

// repackTypeOf returns the repacked format of weight type t and whether it has one (Q4_0, Q4_1,
// Q8_0 and Q4_K do).
func repackTypeOf(t core.Type) (kern.RepackType, bool) {
	if t == core.TypeQ4_K {
		return kern.RepackQ4_K, true
	}
	return gemmStdTypeOf(t)
}

// gemmStdTypeOf returns the repacked format kern.GemmStd builds on the fly from standard weights
// of type t, and whether it has one (Q4_0, Q4_1 and Q8_0; Q4_K has its own, kern.GemmQ4_KStd).
func gemmStdTypeOf(t core.Type) (kern.RepackType, bool) {
	switch t {
	case core.TypeQ4_0:
		return kern.RepackQ4_0, true
	case core.TypeQ4_1:
		return kern.RepackQ4_1, true
	case core.TypeQ8_0:
		return kern.RepackQ8_0, true
	}
	return 0, false
}

// repackLayout describes a tensor stored repacked: its kern type, rows and elements per 2-D slice,
// and the number of slices.
type repackLayout struct {
	rt     kern.RepackType
	m, k   int
	slices int64
}

// repackLayoutOf returns the layout of t if t is stored repacked in a CPU_REPACK buffer: served
// type, not a view, dense strides, at least one element.
func repackLayoutOf(t *core.Tensor) (repackLayout, bool) {
	rt, ok := repackTypeOf(t.Type)
	if !ok {
		return repackLayout{}, false
	}
	if t.ViewSrc != nil || t.NElements() <= 0 || t.Ne[0]%int64(kern.BlockElems(rt)) != 0 || !t.IsContiguous() {
		return repackLayout{}, false
	}
	if t.Ne[1] > 1<<30 || t.Ne[0] > 1<<30 {
		return repackLayout{}, false
	}
	return repackLayout{rt: rt, m: int(t.Ne[1]), k: int(t.Ne[0]), slices: t.Ne[2] * t.Ne[3]}, true
}

func (l repackLayout) rowBytes() int64 {
	return int64(l.k/kern.BlockElems(l.rt)) * int64(repackBlockBytes(l.rt))
}
func (l repackLayout) sliceStd() int64   { return int64(l.m) * l.rowBytes() }
func (l repackLayout) sliceBytes() int64 { return int64(kern.RepackedSize(l.rt, l.m, l.k)) }
func (l repackLayout) size() int64       { return l.slices * l.sliceBytes() }

func repackBlockBytes(rt kern.RepackType) int {
	switch rt {
	case kern.RepackQ4_0:
		return kern.BlockQ4_0Size
	case kern.RepackQ4_1:
		return kern.BlockQ4_1Size
	case kern.RepackQ4_K:
		return int(core.TypeQ4_K.Size())
	}
	return kern.BlockQ8_0Size
}

// repackBuffer is a CPU_REPACK buffer: host memory the CPU backend reads in the repacked layout. It
// remembers the tensors placed in it (InitializeTensor) so that Clear can act on each.
type repackBuffer struct {
	mu      sync.Mutex // guards tensors and freed against concurrent placement, Clear and Free
	raw     []byte
	usage   core.BufferUsage
	freed   bool
	tensors map[*core.Tensor]int64 // placed tensors and their offsets
	// dirty bounds the bytes written since allocation: raw[dirty:] is still the zeroed memory
	// the buffer started with, which InitializeTensor need not clear again (a model's weights
	// are placed in fresh memory, then set: clearing them first only touched every page twice).
	dirty int64
}

// touch records that raw[:end] may have been written.
func (b *repackBuffer) touch(end int64) { b.dirty = max(b.dirty, end) }

var (
	_ core.Buffer            = (*repackBuffer)(nil)
	_ core.FreedReporter     = (*repackBuffer)(nil)
	_ core.TensorInitializer = (*repackBuffer)(nil)
)

func (b *repackBuffer) Type() core.BufferType       { return repackBufferType }
func (b *repackBuffer) Size() int64                 { return int64(len(b.raw)) }
func (b *repackBuffer) Usage() core.BufferUsage     { return b.usage }
func (b *repackBuffer) SetUsage(u core.BufferUsage) { b.usage = u }

// Freed reports whether Free was called.
func (b *repackBuffer) Freed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.freed
}

// Free releases the memory.
func (b *repackBuffer) Free() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.raw, b.freed, b.tensors = nil, true, nil
	return nil
}

var errRepackFreed = fmt.Errorf("the %s %w", RepackBufferTypeName, core.ErrBufferFreed)

// InitializeTensor records t and makes its memory read as zero bytes.
func (b *repackBuffer) InitializeTensor(t *core.Tensor) error {
	if t == nil {
		return errors.New("nil tensor")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return errRepackFreed
	}
	raw, err := b.rootBytes(t)
	if err != nil {
		return err
	}
	if t.Offset < b.dirty {
		clear(raw)
	}
	b.touch(t.Offset + int64(len(raw)))
	if l, ok := repackLayoutOf(t); ok {
		// Zero raw bytes are not zero standard bytes in every layout (Q8_0 quants are stored
		// offset by 128): lay one repacked group of zero rows over every group.
		zeroRepacked(l, b.raw[t.Offset:t.Offset+l.size()])
	}
	b.tensors[t] = t.Offset
	return nil
}

// Clear fills the memory as if every standard byte of every tensor placed in the buffer were
// value (bytes no tensor uses are set to value).
func (b *repackBuffer) Clear(value byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed {
		return fmt.Errorf("tandem: cpu: Clear: %w", errRepackFreed)
	}
	fill(b.raw, value)
	b.touch(int64(len(b.raw)))
	for t, off := range b.tensors {
		if t.Buffer != core.Buffer(b) || t.Offset != off {
			delete(b.tensors, t) // placed elsewhere since
			continue
		}
		if l, ok := repackLayoutOf(t); ok {
			if err := b.transfer(t, l, nil, value, 0, t.NBytes(), xferMemset); err != nil {
				return err
			}
		}
	}
	return nil
}

// fill sets every byte of p to v.
func fill(p []byte, v byte) {
	if v == 0 {
		clear(p)
		return
	}
	for i := range p {
		p[i] = v
	}
}

// rootBytes returns the raw bytes of root tensor t, checked against the buffer.
func (b *repackBuffer) rootBytes(t *core.Tensor) ([]byte, error) {
	size := repackBufferType.AllocSize(t)
	end, ok := core.CheckedAdd(t.Offset, size)
	if !ok || t.Offset < 0 || end > int64(len(b.raw)) {
		return nil, fmt.Errorf("tensor %v: bytes [%d,%d+%d) lie outside its %d-byte %s buffer", t, t.Offset, t.Offset, size, len(b.raw), RepackBufferTypeName)
	}
	return b.raw[t.Offset:end:end], nil
}

// resolve returns the tensor whose layout t's bytes follow (t itself, or the root of its views)
// and the offset of t's byte offset within it, checking that [off, off+size) lies inside both.
func (b *repackBuffer) resolve(op string, t *core.Tensor, off, size int64) (*core.Tensor, int64, error) {
	if t == nil {
		return nil, 0, fmt.Errorf("tandem: cpu: %s %s: nil tensor", RepackBufferTypeName, op)
	}
	if b.freed {
		return nil, 0, fmt.Errorf("tandem: cpu: %s: tensor %v: %w", op, t, errRepackFreed)
	}
	root := t.DataSource()
	if root.Buffer != core.Buffer(b) {
		return nil, 0, fmt.Errorf("tandem: cpu: %s: tensor %v: its data source %v does not live in this %s buffer", op, t, root, RepackBufferTypeName)
	}
	rel, ok1 := core.CheckedAdd(t.Offset-root.Offset, off)
	end, ok2 := core.CheckedAdd(rel, size)
	if !ok1 || !ok2 || off < 0 || size < 0 || rel < 0 || end > root.NBytes() {
		return nil, 0, fmt.Errorf("tandem: cpu: %s: tensor %v bytes [%d,%d+%d) lie outside %v (%d bytes in the standard layout)", op, t, off, off, size, root, root.NBytes())
	}
	return root, rel, nil
}

type xferKind int

const (
	xferSet xferKind = iota
	xferGet
	xferMemset
)

// SetTensor writes standard bytes into t (or the part of its data source it views) from offset.
func (b *repackBuffer) SetTensor(t *core.Tensor, data []byte, offset int64) error {
	return b.xfer("SetTensor", t, data, 0, offset, int64(len(data)), xferSet)
}

// GetTensor reads t's standard bytes from offset.
func (b *repackBuffer) GetTensor(t *core.Tensor, dst []byte, offset int64) error {
	return b.xfer("GetTensor", t, dst, 0, offset, int64(len(dst)), xferGet)
}

// MemsetTensor sets size standard bytes of t from offset to value.
func (b *repackBuffer) MemsetTensor(t *core.Tensor, value byte, offset, size int64) error {
	return b.xfer("MemsetTensor", t, nil, value, offset, size, xferMemset)
}

func (b *repackBuffer) xfer(op string, t *core.Tensor, data []byte, value byte, offset, size int64, kind xferKind) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	root, rel, err := b.resolve(op, t, offset, size)
	if err != nil {
		return err
	}
	if kind != xferGet {
		b.touch(root.Offset + b.rootSize(root))
	}
	if l, ok := repackLayoutOf(root); ok {
		if _, err := b.rootBytes(root); err != nil {
			return fmt.Errorf("tandem: cpu: %s: %w", op, err)
		}
		return b.transfer(root, l, data, value, rel, size, kind)
	}
	raw, err := b.rootBytes(root)
	if err != nil {
		return fmt.Errorf("tandem: cpu: %s: %w", op, err)
	}
	span := raw[rel : rel+size]
	switch kind {
	case xferSet:
		copy(span, data)
	case xferGet:
		copy(data, span)
	default:
		fill(span, value)
	}
	return nil
}

// transfer moves standard bytes [rel, rel+size) of the repacked root tensor: whole slices at once,
// other ranges row by row (a partial row is unpacked, patched and repacked).
func (b *repackBuffer) transfer(root *core.Tensor, l repackLayout, data []byte, value byte, rel, size int64, kind xferKind) error {
	raw := b.raw[root.Offset : root.Offset+l.size()]
	rowBytes, sliceStd, sliceRp := l.rowBytes(), l.sliceStd(), l.sliceBytes()
	var row []byte
	for pos, end := rel, rel+size; pos < end; {
		s, within := pos/sliceStd, pos%sliceStd
		slice := raw[s*sliceRp : (s+1)*sliceRp]
		d := pos - rel // offset in data
		if within == 0 && end-pos >= sliceStd && kind != xferMemset {
			if kind == xferSet {
				repackParallel(l, slice, data[d:d+sliceStd])
			} else {
				kern.Unpack(l.rt, data[d:d+sliceStd], slice, l.m, l.k)
			}
			pos += sliceStd
			continue
		}
		i, ro := int(within/rowBytes), within%rowBytes
		if kind == xferSet && ro == 0 && i%kern.RepackRows == 0 {
			// whole groups of 16 rows at once (a model's weights arrive in chunks of MiBs)
			if ng := int(min((end-pos)/rowBytes, int64(l.m-i)) / kern.RepackRows); ng > 0 {
				repackGroupsParallel(l, slice, i, ng, data[d:d+int64(ng*kern.RepackRows)*rowBytes])
				pos += int64(ng*kern.RepackRows) * rowBytes
				continue
			}
		}
		n := min(rowBytes-ro, end-pos)
		whole := ro == 0 && n == rowBytes
		switch {
		case kind == xferGet && whole:
			kern.UnpackRow(l.rt, slice, l.k, i, data[d:d+n])
		case kind == xferSet && whole:
			kern.RepackRow(l.rt, slice, l.k, i, data[d:d+n])
		default:
			if row == nil {
				row = make([]byte, rowBytes)
			}
			if !whole || kind == xferGet {
				kern.UnpackRow(l.rt, slice, l.k, i, row)
			}
			switch kind {
			case xferGet:
				copy(data[d:d+n], row[ro:ro+n])
			case xferSet:
				copy(row[ro:ro+n], data[d:d+n])
			default:
				fill(row[ro:ro+n], value)
			}
			if kind != xferGet {
				kern.RepackRow(l.rt, slice, l.k, i, row)
			}
		}
		pos += n
	}
	return nil
}

// repackedOf returns the repacked bytes and layout of t when t is a tensor stored repacked in a
// CPU_REPACK buffer (not a view), for the kernels that read that layout.
func repackedOf(t *core.Tensor) ([]byte, repackLayout, bool) {
	if t == nil || t.ViewSrc != nil {
		return nil, repackLayout{}, false
	}
	b, ok := t.Buffer.(*repackBuffer)
	if !ok {
		return nil, repackLayout{}, false
	}
	l, ok := repackLayoutOf(t)
	if !ok {
		return nil, repackLayout{}, false
	}
	end := t.Offset + l.size()
	if b.freed || t.Offset < 0 || end > int64(len(b.raw)) {
		return nil, repackLayout{}, false
	}
	return b.raw[t.Offset:end:end], l, true
}

// inRepackBuffer reports whether t's memory (its own or its views' source's) is a CPU_REPACK buffer.
func inRepackBuffer(t *core.Tensor) bool {
	if t == nil {
		return false
	}
	_, ok := t.Buffer.(*repackBuffer)
	return ok
}

// rootSize is the bytes root occupies in the buffer (its repacked size when it is repacked).
func (b *repackBuffer) rootSize(root *core.Tensor) int64 {
	if l, ok := repackLayoutOf(root); ok {
		return l.size()
	}
	return root.NBytes()
}

// zeroRepacked writes zero rows over every slice of the repacked tensor with layout l (raw):
// one group of RepackRows zero rows is repacked, then copied to each group unless its bytes are
// all zero (raw is zeroed already).
func zeroRepacked(l repackLayout, raw []byte) {
	rows := min(l.m, kern.RepackRows)
	grp := make([]byte, kern.RepackedSize(l.rt, rows, l.k))
	kern.Repack(l.rt, grp, make([]byte, int64(rows)*l.rowBytes()), rows, l.k)
	if !slices.ContainsFunc(grp, func(v byte) bool { return v != 0 }) {
		return
	}
	for off := 0; off < len(raw); off += len(grp) {
		copy(raw[off:], grp)
	}
}

// repackGroupsParallel is kern.RepackGroups shared out among goroutines when the rows are many.
func repackGroupsParallel(l repackLayout, slice []byte, i0, ng int, src []byte) {
	nw := min(runtime.GOMAXPROCS(0), len(src)>>18, ng) // a worker per 256 KiB at most
	if nw <= 1 {
		kern.RepackGroups(l.rt, slice, l.k, i0, ng, src)
		return
	}
	gs := int64(kern.RepackRows) * l.rowBytes() // standard bytes of a group
	var wg sync.WaitGroup
	for w := range nw {
		g0, g1 := ng*w/nw, ng*(w+1)/nw
		wg.Go(func() {
			kern.RepackGroups(l.rt, slice, l.k, i0+g0*kern.RepackRows, g1-g0, src[int64(g0)*gs:int64(g1)*gs])
		})
	}
	wg.Wait()
}

// repackParallel repacks one whole slice (std: l.m standard rows) into dst, the groups of rows
// shared out among goroutines when the slice is large (loading a model repacks every weight).
func repackParallel(l repackLayout, dst, std []byte) {
	groups := (l.m + kern.RepackRows - 1) / kern.RepackRows
	nw := min(runtime.GOMAXPROCS(0), len(std)>>18) // a worker per 256 KiB at most
	if nw <= 1 || groups < 2 {
		kern.Repack(l.rt, dst, std, l.m, l.k)
		return
	}
	gb := len(dst) / groups // bytes of one repacked group
	var wg sync.WaitGroup
	for w := range nw {
		g0, g1 := groups*w/nw, groups*(w+1)/nw
		if g0 == g1 {
			continue
		}
		r0, r1 := g0*kern.RepackRows, min(l.m, g1*kern.RepackRows)
		wg.Go(func() {
			kern.Repack(l.rt, dst[g0*gb:g1*gb], std[int64(r0)*l.rowBytes():int64(r1)*l.rowBytes()], r1-r0, l.k)
		})
	}
	wg.Wait()
}
