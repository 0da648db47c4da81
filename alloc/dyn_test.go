package alloc

import (
	"math/rand/v2"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

func TestDynAllocatorBasics(t *testing.T) {
	d := NewDynAllocator(32, 0)
	a := d.Alloc(10) // rounded to 32
	b := d.Alloc(100)
	c := d.Alloc(32)
	if a != (Addr{0, 0}) || b != (Addr{0, 32}) || c != (Addr{0, 160}) {
		t.Fatalf("addresses %v %v %v", a, b, c)
	}
	if d.Size() != 192 {
		t.Fatalf("high-water mark %d, want 192", d.Size())
	}
	d.Free(b, 100)
	// best fit: a 64-byte request goes into the 128-byte hole, not the tail
	if x := d.Alloc(64); x != (Addr{0, 32}) {
		t.Fatalf("64 bytes at %v, want the hole at 32", x)
	}
	d.Reset()

	var p [4]Addr
	for i := range p {
		p[i] = d.Alloc(32)
	}
	d.Free(p[0], 32)
	d.Free(p[2], 32)
	// two equal inner blocks: ggml's best fit takes the later one
	x := d.Alloc(32)
	if x != p[2] {
		t.Fatalf("32 bytes at %v, want %v", x, p[2])
	}
	d.Free(x, 32)
	d.Free(p[1], 32) // joins both neighbours: [0,96) is one block
	if n := d.FreeBlocks(); n != 2 {
		t.Fatalf("%d free blocks after merging, want 2 (the hole and the tail)", n)
	}
	if x := d.Alloc(96); x != (Addr{0, 0}) || d.Size() != 128 {
		t.Fatalf("96 bytes at %v, size %d", x, d.Size())
	}
	d.Reset()
	if d.Size() != 0 || d.NumChunks() != 0 {
		t.Fatal("Reset kept chunks")
	}
}

// The tail rule: a request that fits no inner block goes to the tail that wastes least (here the
// tail's free space under the high-water mark), not to a new chunk.
func TestDynAllocatorTail(t *testing.T) {
	d := NewDynAllocator(1, 0)
	x := d.Alloc(100)
	y := d.Alloc(50)
	d.Free(y, 50) // tail now starts at 100, high-water mark 150
	d.Free(x, 100)
	if d.FreeBlocks() != 1 {
		t.Fatalf("%d blocks", d.FreeBlocks())
	}
	if a := d.Alloc(120); a.Offset != 0 || d.Size() != 150 {
		t.Fatalf("120 bytes at %v, size %d", a, d.Size())
	}
}

// No fixed limit on free blocks (ggml asserts at 256): the list grows.
func TestDynAllocatorManyFreeBlocks(t *testing.T) {
	d := NewDynAllocator(16, 0)
	var addrs []Addr
	for i := 0; i < 2000; i++ {
		addrs = append(addrs, d.Alloc(16))
	}
	for i := 0; i < len(addrs); i += 2 {
		d.Free(addrs[i], 16)
	}
	if d.FreeBlocks() < 1000 {
		t.Fatalf("%d free blocks", d.FreeBlocks())
	}
	for i := 1; i < len(addrs); i += 2 {
		d.Free(addrs[i], 16)
	}
	if d.FreeBlocks() != 1 {
		t.Fatalf("%d free blocks after freeing everything, want 1", d.FreeBlocks())
	}
}

// Chunks: a maximum size splits the allocations; a request larger than it gets a chunk of its own;
// there is no limit on the number of chunks (ggml stops at 16).
func TestDynAllocatorChunks(t *testing.T) {
	d := NewDynAllocator(64, 1000)
	a := d.Alloc(600)
	b := d.Alloc(600)
	c := d.Alloc(3000)
	if a.Chunk != 0 || b.Chunk != 1 || c.Chunk != 2 || c.Offset != 0 {
		t.Fatalf("addresses %v %v %v", a, b, c)
	}
	if d.ChunkSize(0) != 640 || d.ChunkSize(2) != 3008 {
		t.Fatalf("chunk sizes %d %d", d.ChunkSize(0), d.ChunkSize(2))
	}
	if x := d.Alloc(256); x.Chunk != 0 || x.Offset != 640 {
		t.Fatalf("256 bytes at %v", x) // fits in the first tail under the maximum
	}
	for i := 0; i < 40; i++ {
		d.Alloc(900)
	}
	if d.NumChunks() < 40 {
		t.Fatalf("%d chunks", d.NumChunks())
	}
	for i := 0; i < d.NumChunks(); i++ {
		if d.ChunkSize(i) > 1000 && i != 2 {
			t.Fatalf("chunk %d holds %d bytes, over the maximum", i, d.ChunkSize(i))
		}
	}
}

// Random alloc/free sequences never hand out overlapping live ranges, and the high-water mark is at
// least the live bytes.
func TestDynAllocatorRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 50; round++ {
		align := int64(1) << r.IntN(8)
		maxSize := int64(0)
		if r.IntN(2) == 0 {
			maxSize = 1 << (8 + r.IntN(6))
		}
		d := NewDynAllocator(align, maxSize)
		type blk struct {
			a    Addr
			size int64
		}
		var live []blk
		for step := 0; step < 400; step++ {
			if len(live) > 0 && r.IntN(2) == 0 {
				i := r.IntN(len(live))
				d.Free(live[i].a, live[i].size)
				live = append(live[:i], live[i+1:]...)
				continue
			}
			size := int64(r.IntN(2000))
			a := d.Alloc(size)
			if a.Offset%align != 0 {
				t.Fatalf("offset %d not %d-aligned", a.Offset, align)
			}
			as := core.AlignUp(size, align)
			for _, o := range live {
				os := core.AlignUp(o.size, align)
				if as > 0 && os > 0 && o.a.Chunk == a.Chunk && a.Offset < o.a.Offset+os && o.a.Offset < a.Offset+as {
					t.Fatalf("round %d step %d: [%d,%d) overlaps live [%d,%d) in chunk %d", round, step, a.Offset, a.Offset+as, o.a.Offset, o.a.Offset+os, a.Chunk)
				}
			}
			if a.Offset+as > d.ChunkSize(a.Chunk) {
				t.Fatalf("high-water mark %d below %d", d.ChunkSize(a.Chunk), a.Offset+as)
			}
			live = append(live, blk{a, size})
		}
	}
}

func TestTensorAllocator(t *testing.T) {
	bt := &hostBT{align: 64, maxSize: 0}
	buf, _ := bt.Alloc(256)
	ta := NewTensorAllocator(buf)
	ctx := core.NewContext(core.ContextParams{NoAlloc: true})
	a := ctx.NewTensor1D(core.TypeF32, 3) // 12 bytes → 64
	b := ctx.NewTensor1D(core.TypeF32, 40)
	v := ctx.View1D(b, 4, 16)
	c := ctx.NewTensor1D(core.TypeF32, 40)
	for _, x := range []*core.Tensor{a, b, v} {
		if err := ta.Alloc(x); err != nil {
			t.Fatal(err)
		}
	}
	if a.Offset != 0 || b.Offset != 64 || v.Buffer != buf || v.Offset != 80 || ta.Offset() != 64+192 {
		t.Fatalf("offsets a %d b %d v %d, next %d", a.Offset, b.Offset, v.Offset, ta.Offset())
	}
	if err := ta.Alloc(c); err == nil || c.Buffer != nil {
		t.Fatal("allocation past the end of the buffer succeeded")
	}
}
