package gguf

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tandem-ml/tandem/alloc"
	"github.com/tandem-ml/tandem/core"
)

// DefaultChunkSize is the number of bytes Load reads at once when copying tensor data.
const DefaultChunkSize = 4 << 20

// Placement chooses the buffer type of each tensor of a file.
type Placement func(name string, info TensorInfo) core.BufferType

// LoadOptions configure File.Load. The zero value places every tensor in host memory, mapping the
// file where it can.
type LoadOptions struct {
	// Placement picks each tensor's buffer type; nil (or a nil result) means core.HostBufferType().
	Placement Placement
	// NoMmap copies host tensors into allocated buffers instead of mapping the file.
	NoMmap bool
	// ChunkSize bounds the bytes read from the file at once (0: DefaultChunkSize).
	ChunkSize int
	// Progress, when not nil, is called after each chunk with the data bytes placed so far and the
	// total (mapped tensors count when they are placed).
	Progress func(done, total int64)
	// NoExtraBufferTypes keeps every tensor in the buffer type Placement picks. By default a tensor
	// placed in a buffer type with extra buffer types (core.ExtraBufferTypesFor; the CPU backend
	// registers CPU_REPACK for core.HostBufferType()) goes where alloc.WeightBufferTypes says, the
	// rule alloc.AllocCtxTensors follows; a file's uses of a tensor are unknown, so its type and
	// shape decide, as when llama.cpp loads its weights: with the CPU backend imported, Q4_0, Q4_1
	// and Q8_0 tensors are stored repacked and are neither mapped nor host data (an op other than
	// MUL_MAT or GET_ROWS reads such a tensor through a copy in the standard layout); the others are
	// mapped as before.
	NoExtraBufferTypes bool
}

// Model is a file's tensors loaded into tandem buffers.
type Model struct {
	// Ctx is a NoAlloc context holding the file's tensors in file order, named as in the file.
	Ctx *core.Context
	// Buffers are the file mapping when one is used, then the buffers alloc.AllocTensors made for
	// the other tensors, grouped by buffer type (a type with a maximum buffer size may have several).
	Buffers []core.Buffer
	// Infos are the file's tensor infos, in the order of Ctx.Tensors().
	Infos []TensorInfo
	// MappedBytes is the tensor data served by mapping the file (0 when nothing was mapped).
	MappedBytes int64
}

// Tensor returns the tensor called name, or nil.
func (m *Model) Tensor(name string) *core.Tensor { return m.Ctx.TensorByName(name) }

// Close frees the buffers (and unmaps the file); the tensors lose their memory.
func (m *Model) Close() error {
	var errs []error
	for _, b := range m.Buffers {
		errs = append(errs, b.Free())
	}
	for _, t := range m.Ctx.Tensors() {
		t.Buffer, t.Offset = nil, 0
	}
	m.Buffers = nil
	return errors.Join(errs...)
}

// BlockIndex returns N for a tensor named "blk.N.…" (llama.cpp's layer naming).
func BlockIndex(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ".")
	if !ok || num == "" || (len(num) > 1 && num[0] == '0') {
		return 0, false
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// ByBlock places the tensors of blocks 0 to n-1 ("blk.N.…") in first and every other tensor
// (other blocks, embeddings, output) in rest, like llama.cpp's -ngl with the device first.
func ByBlock(n int, first, rest core.BufferType) Placement {
	return func(name string, _ TensorInfo) core.BufferType {
		if b, ok := BlockIndex(name); ok && b < n {
			return first
		}
		return rest
	}
}

// Load creates a NoAlloc context with the file's tensors, gives each tensor memory of the buffer
// type opts.Placement picks, and streams the data in bounded chunks. Tensors it does not map are
// placed by alloc.AllocTensors (one buffer per type, or several where the type's MaxSize
// requires), with its checks and its rule for extra buffer types. Tensors placed in core.HostBufferType() are served from a
// read-only mapping of the file instead where the platform and the alignment allow (see
// LoadOptions.NoMmap); such tensors cannot be written with core.TensorSet. opts may be nil. On
// failure everything allocated is freed.
func (f *File) Load(opts *LoadOptions) (*Model, error) {
	var o LoadOptions
	if opts != nil {
		o = *opts
	}
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	m := &Model{Ctx: ctx, Infos: f.Tensors}
	// each tensor's buffer type: Placement's, or the extra buffer type alloc puts the weight in
	bts := make([]core.BufferType, len(f.Tensors))
	var order []core.BufferType
	groups := map[core.BufferType][]*core.Tensor{}
	for i, ti := range f.Tensors {
		t := ctx.NewTensor(ti.Type, ti.Ne[:]...)
		t.SetName(ti.Name)
		var bt core.BufferType
		if o.Placement != nil {
			bt = o.Placement(ti.Name, ti)
		}
		if bt == nil {
			bt = core.HostBufferType()
		}
		if _, ok := groups[bt]; !ok {
			order = append(order, bt)
		}
		groups[bt] = append(groups[bt], t)
		bts[i] = bt
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("gguf: load: %w", err)
	}
	ts := ctx.Tensors()
	if !o.NoExtraBufferTypes {
		for _, bt := range order {
			extra := alloc.WeightBufferTypes(groups[bt], bt)
			for i, t := range ts {
				if xbt := extra[t]; xbt != nil {
					bts[i] = xbt
				}
			}
		}
	}
	fail := func(err error) (*Model, error) {
		m.Close()
		return nil, fmt.Errorf("gguf: load: %w", err)
	}

	// the mapping: host tensors whose file offset has the host alignment
	mapped := make([]bool, len(ts))
	if !o.NoMmap && f.canMap() {
		align := core.HostBufferType().Alignment()
		var anyMapped bool
		for i, ti := range f.Tensors {
			mapped[i] = bts[i] == core.HostBufferType() && (f.dataOffset+ti.Offset)%align == 0
			anyMapped = anyMapped || mapped[i]
		}
		if anyMapped {
			mb, err := f.mapFile()
			if err != nil {
				clear(mapped) // fall back to copying
			} else {
				m.Buffers = append(m.Buffers, mb)
				for i, t := range ts {
					if !mapped[i] {
						continue
					}
					if err := core.TensorAlloc(mb, t, f.dataOffset+f.Tensors[i].Offset); err != nil {
						return fail(err)
					}
					m.MappedBytes += f.Tensors[i].Size
				}
			}
		}
	}

	// the rest in buffers placed by alloc, per buffer type in order of first use
	order = order[:0]
	clear(groups)
	for i, bt := range bts {
		if mapped[i] {
			continue
		}
		if _, ok := groups[bt]; !ok {
			order = append(order, bt)
		}
		groups[bt] = append(groups[bt], ts[i])
	}
	for _, bt := range order {
		buf, err := alloc.AllocTensors(groups[bt], bt, alloc.CtxAllocOptions{NoExtraBufferTypes: true})
		if err != nil {
			return fail(fmt.Errorf("allocating the %s tensors: %w", bt.Name(), err))
		}
		if mb, ok := buf.(*alloc.MultiBuffer); ok {
			m.Buffers = append(m.Buffers, mb.Buffers()...) // one per run of MaxSize
		} else {
			m.Buffers = append(m.Buffers, buf)
		}
	}
	for _, b := range m.Buffers {
		b.SetUsage(core.BufferUsageWeights)
	}

	// the data, read in file order so the file is read sequentially
	var total, done int64
	for _, ti := range f.Tensors {
		total += ti.Size
	}
	byOffset := make([]int, len(ts))
	for i := range byOffset {
		byOffset[i] = i
	}
	sort.Slice(byOffset, func(a, b int) bool { return f.Tensors[byOffset[a]].Offset < f.Tensors[byOffset[b]].Offset })
	var chunk []byte
	for _, i := range byOffset {
		ti, t := f.Tensors[i], ts[i]
		if mapped[i] {
			done += ti.Size
			if o.Progress != nil {
				o.Progress(done, total)
			}
			continue
		}
		dst := t.Data() // host memory: read straight into it
		if dst == nil && chunk == nil {
			chunk = make([]byte, min(int64(o.ChunkSize), maxTensorSize(f.Tensors)))
		}
		for off := int64(0); off < ti.Size; {
			k := min(int64(o.ChunkSize), ti.Size-off)
			var b []byte
			if dst != nil {
				b = dst[off : off+k]
			} else {
				b = chunk[:k]
			}
			if _, err := f.r.ReadAt(b, f.dataOffset+ti.Offset+off); err != nil {
				return fail(fmt.Errorf("reading tensor %q: %w", ti.Name, err))
			}
			if dst == nil {
				if err := core.TensorSet(t, b, off); err != nil {
					return fail(err)
				}
			}
			off += k
			done += k
			if o.Progress != nil {
				o.Progress(done, total)
			}
		}
	}
	return m, nil
}

func maxTensorSize(ts []TensorInfo) int64 {
	var n int64
	for _, t := range ts {
		n = max(n, t.Size)
	}
	return n
}
