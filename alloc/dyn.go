package alloc

import (
	"math"

	"github.com/tandem-ml/tandem/core"
)

// Addr is a place in a logical buffer made of chunks: chunk index and byte offset inside it.
type Addr struct {
	Chunk  int
	Offset int64
}

// unlimited stands for "no maximum buffer size" (ggml: SIZE_MAX/2, clamped to avoid overflows).
const unlimited = int64(1) << 62

type freeBlock struct {
	off, size int64
}

type dynChunk struct {
	free []freeBlock // sorted by offset; the last one is the chunk's open-ended tail
	max  int64       // high-water mark
}

// DynAllocator is a measuring allocator: it hands out addresses (chunk, offset) and tracks free
// space and the high-water mark of each chunk without touching memory. It is ggml's
// ggml_dyn_tallocr: free blocks kept in address order and merged with their neighbours on free, best
// fit among the inner blocks of every chunk (ties go to the later block), otherwise the chunk tail
// that wastes least (or grows least), otherwise a new chunk. Unlike ggml there is no limit on free
// blocks (ggml asserts at 256) nor on chunks (ggml stops at 16): the lists grow.
//
// A chunk holds at most the maximum size given to NewDynAllocator; a single request larger than
// that gets a chunk of its own, of its size (backends may refuse it when the buffer is allocated).
// The zero DynAllocator works as NewDynAllocator(1, 0): alignment 1, one unlimited chunk.
type DynAllocator struct {
	align    int64
	maxChunk int64
	chunks   []dynChunk
}

// NewDynAllocator returns an allocator whose sizes are rounded up to alignment (a power of two) and
// whose chunks hold at most maxSize bytes (0 or less: unlimited, one chunk).
func NewDynAllocator(alignment, maxSize int64) *DynAllocator {
	if alignment <= 0 {
		alignment = 1
	}
	if maxSize <= 0 || maxSize > unlimited {
		maxSize = unlimited
	}
	return &DynAllocator{align: alignment, maxChunk: maxSize}
}

// Alignment is the rounding applied to every size (1 for a zero allocator, 0 for a nil one).
func (d *DynAllocator) Alignment() int64 {
	if d == nil {
		return 0
	}
	return max(d.align, 1)
}

// Reset frees everything (chunks are forgotten); nothing for a nil allocator.
func (d *DynAllocator) Reset() {
	if d == nil {
		return
	}
	for i := range d.chunks {
		d.chunks[i].free = d.chunks[i].free[:0]
	}
	d.chunks = d.chunks[:0]
}

// NumChunks is the number of chunks opened so far (0 for a nil allocator).
func (d *DynAllocator) NumChunks() int {
	if d == nil {
		return 0
	}
	return len(d.chunks)
}

// ChunkSize is the high-water mark of chunk i (0 when it does not exist or d is nil).
func (d *DynAllocator) ChunkSize(i int) int64 {
	if d == nil || i < 0 || i >= len(d.chunks) {
		return 0
	}
	return d.chunks[i].max
}

// Size is the sum of the chunks' high-water marks: the memory the allocations seen so far need
// (saturating at math.MaxInt64; 0 for a nil allocator).
func (d *DynAllocator) Size() int64 {
	if d == nil {
		return 0
	}
	var s int64
	for i := range d.chunks {
		var ok bool
		if s, ok = core.CheckedAdd(s, d.chunks[i].max); !ok {
			return math.MaxInt64
		}
	}
	return s
}

// FreeBlocks is the number of free blocks over all chunks, the tails included (0 for a nil
// allocator).
func (d *DynAllocator) FreeBlocks() int {
	if d == nil {
		return 0
	}
	n := 0
	for i := range d.chunks {
		n += len(d.chunks[i].free)
	}
	return n
}

func (d *DynAllocator) newChunk(minSize int64) int {
	maxChunk := d.maxChunk
	if maxChunk <= 0 {
		maxChunk = unlimited // the zero DynAllocator
	}
	capacity := max(minSize, maxChunk)
	if len(d.chunks) < cap(d.chunks) {
		d.chunks = d.chunks[:len(d.chunks)+1]
		c := &d.chunks[len(d.chunks)-1]
		c.free = append(c.free[:0], freeBlock{0, capacity})
		c.max = 0
	} else {
		d.chunks = append(d.chunks, dynChunk{free: []freeBlock{{0, capacity}}})
	}
	return len(d.chunks) - 1
}

// MaxAllocSize is the largest size DynAllocator.Alloc accepts; sizes are otherwise unchecked, so
// that the offsets it computes cannot overflow.
const MaxAllocSize = unlimited

// Alloc reserves size bytes (rounded up to the alignment) and returns where. A negative size counts
// as 0 and a size above MaxAllocSize as MaxAllocSize (callers check sizes first: the graph
// allocator rejects graphs whose tensors need more than that in all). A nil allocator has no place
// to give: it returns Addr{Chunk: -1}.
func (d *DynAllocator) Alloc(size int64) Addr {
	if d == nil {
		return Addr{Chunk: -1}
	}
	size = core.AlignUp(min(max(size, 0), MaxAllocSize), max(d.align, 1))
	bestChunk, bestBlock := -1, -1

	// Best fit among the blocks that are not a chunk's last one. As in ggml the best size is tracked
	// per chunk, so a later chunk with any fitting block wins over an earlier one.
	for c := range d.chunks {
		ch := &d.chunks[c]
		bestSize := int64(-1)
		for i := 0; i < len(ch.free)-1; i++ {
			b := ch.free[i]
			if b.size >= size && (bestSize < 0 || b.size <= bestSize) {
				bestChunk, bestBlock, bestSize = c, i, b.size
			}
		}
	}

	if bestBlock < 0 {
		// The tails: prefer one that fits under the chunk's high-water mark with the least waste,
		// else the one that grows the high-water mark least.
		bestReuse := int64(-1 << 63)
		for c := range d.chunks {
			ch := &d.chunks[c]
			if len(ch.free) == 0 {
				continue
			}
			i := len(ch.free) - 1
			b := ch.free[i]
			reuse := ch.max - b.off - size
			betterReuse := bestReuse < 0 && reuse > bestReuse
			betterFit := reuse >= 0 && reuse < bestReuse
			if b.size >= size && (betterReuse || betterFit) {
				bestChunk, bestBlock, bestReuse = c, i, reuse
			}
		}
	}

	if bestBlock < 0 {
		bestChunk, bestBlock = d.newChunk(size), 0
	}

	ch := &d.chunks[bestChunk]
	b := &ch.free[bestBlock]
	addr := Addr{Chunk: bestChunk, Offset: b.off}
	b.off += size
	b.size -= size
	if b.size == 0 {
		ch.free = append(ch.free[:bestBlock], ch.free[bestBlock+1:]...)
	}
	ch.max = max(ch.max, addr.Offset+size)
	return addr
}

// Free returns size bytes (rounded up to the alignment) at a to the free list, merging with the
// neighbouring free blocks. Freeing nothing (size 0) does nothing (ggml would insert an empty
// block), and so does freeing on a nil allocator or outside every chunk.
func (d *DynAllocator) Free(a Addr, size int64) {
	if d == nil {
		return
	}
	size = core.AlignUp(min(max(size, 0), MaxAllocSize), max(d.align, 1))
	if size <= 0 || a.Offset < 0 || a.Chunk < 0 || a.Chunk >= len(d.chunks) {
		return
	}
	ch := &d.chunks[a.Chunk]
	for i := range ch.free {
		b := &ch.free[i]
		if b.off+b.size == a.Offset {
			// the freed range follows block i: extend it, then maybe swallow the next block
			b.size += size
			if i+1 < len(ch.free) && b.off+b.size == ch.free[i+1].off {
				b.size += ch.free[i+1].size
				ch.free = append(ch.free[:i+1], ch.free[i+2:]...)
			}
			return
		}
		if a.Offset+size == b.off {
			// the freed range precedes block i: extend it backwards, then maybe join the previous one
			b.off = a.Offset
			b.size += size
			if i > 0 && ch.free[i-1].off+ch.free[i-1].size == b.off {
				ch.free[i-1].size += b.size
				ch.free = append(ch.free[:i], ch.free[i+1:]...)
			}
			return
		}
	}
	// a block of its own, in address order
	pos := 0
	for pos < len(ch.free) && ch.free[pos].off < a.Offset {
		pos++
	}
	ch.free = append(ch.free, freeBlock{})
	copy(ch.free[pos+1:], ch.free[pos:])
	ch.free[pos] = freeBlock{a.Offset, size}
}
