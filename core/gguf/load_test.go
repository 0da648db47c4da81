package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// sinkType is a device-like (not host) buffer type whose buffers keep no data: they checksum what
// is written, so loading into them measures the loader's own memory.
type sinkType struct {
	name    string
	align   int64
	maxSize int64
}

func (s *sinkType) Name() string                   { return s.name }
func (s *sinkType) Alignment() int64               { return s.align }
func (s *sinkType) MaxSize() int64                 { return s.maxSize }
func (s *sinkType) AllocSize(t *core.Tensor) int64 { return t.NBytes() }
func (s *sinkType) IsHost() bool                   { return false }
func (s *sinkType) Device() core.Device            { return nil }
func (s *sinkType) Alloc(size int64) (core.Buffer, error) {
	if s.maxSize > 0 && size > s.maxSize {
		return nil, fmt.Errorf("sink: %d bytes over the maximum %d", size, s.maxSize)
	}
	return &sinkBuffer{bt: s, size: size, sums: map[string]uint32{}, offs: map[string]int64{}}, nil
}

type sinkBuffer struct {
	bt    *sinkType
	size  int64
	usage core.BufferUsage
	sums  map[string]uint32 // running crc32 per tensor
	offs  map[string]int64  // next expected offset per tensor
	freed bool
}

func (b *sinkBuffer) Type() core.BufferType       { return b.bt }
func (b *sinkBuffer) Size() int64                 { return b.size }
func (b *sinkBuffer) Usage() core.BufferUsage     { return b.usage }
func (b *sinkBuffer) SetUsage(u core.BufferUsage) { b.usage = u }
func (b *sinkBuffer) Clear(byte) error            { return nil }
func (b *sinkBuffer) Free() error                 { b.freed = true; return nil }
func (b *sinkBuffer) GetTensor(*core.Tensor, []byte, int64) error {
	return errors.New("sink: no data")
}
func (b *sinkBuffer) MemsetTensor(*core.Tensor, byte, int64, int64) error { return nil }
func (b *sinkBuffer) SetTensor(t *core.Tensor, data []byte, off int64) error {
	if t.Offset%b.bt.align != 0 || t.Offset+t.NBytes() > b.size {
		return fmt.Errorf("sink: tensor %v badly placed at %d", t, t.Offset)
	}
	if off != b.offs[t.Name] {
		return fmt.Errorf("sink: tensor %v written at %d, want %d", t, off, b.offs[t.Name])
	}
	b.offs[t.Name] = off + int64(len(data))
	b.sums[t.Name] = crc32.Update(b.sums[t.Name], crc32.IEEETable, data)
	return nil
}

// patternTensor adds a tensor whose bytes are a function of its name and position, so large files
// are written and checked without holding their data.
func patternByte(name string, i int64) byte { return byte(int64(len(name))*7 + i*13 + i>>9) }

func addPattern(t testing.TB, w *Writer, name string, typ core.Type, ne ...int64) {
	t.Helper()
	ti := TensorInfo{Name: name, Type: typ, NDims: len(ne), Ne: [4]int64{1, 1, 1, 1}}
	copy(ti.Ne[:], ne)
	err := w.AddTensorData(ti, func(dst []byte, off int64) error {
		for i := range dst {
			dst[i] = patternByte(name, off+int64(i))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func patternSum(name string, size int64) uint32 {
	b := make([]byte, size)
	for i := range b {
		b[i] = patternByte(name, int64(i))
	}
	return crc32.ChecksumIEEE(b)
}

// modelFile writes a llama-like file: token_embd, nBlocks blocks of attn_q/ffn_down, output.
func modelFile(t testing.TB, nBlocks int, rowLen, rows int64) string {
	t.Helper()
	w := NewWriter()
	_ = w.Metadata.Set("general.architecture", "llama")
	_ = w.Metadata.Set("llama.block_count", uint32(nBlocks))
	addPattern(t, w, "token_embd.weight", core.TypeF32, rowLen, rows)
	for b := range nBlocks {
		addPattern(t, w, fmt.Sprintf("blk.%d.attn_q.weight", b), core.TypeQ8_0, rowLen, rows)
		addPattern(t, w, fmt.Sprintf("blk.%d.ffn_norm.weight", b), core.TypeF32, rowLen)
	}
	addPattern(t, w, "output.weight", core.TypeF16, rowLen, rows)
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBlockIndex(t *testing.T) {
	for _, c := range []struct {
		name string
		n    int
		ok   bool
	}{
		{"blk.0.attn_q.weight", 0, true}, {"blk.31.ffn_down.weight", 31, true},
		{"blk.x.attn", 0, false}, {"blk.01.a", 0, false}, {"blk.", 0, false}, {"blk.3", 0, false},
		{"token_embd.weight", 0, false}, {"output.weight", 0, false}, {"blk.-1.a", 0, false},
	} {
		n, ok := BlockIndex(c.name)
		if n != c.n || ok != c.ok {
			t.Errorf("BlockIndex(%q) = %d %v, want %d %v", c.name, n, ok, c.n, c.ok)
		}
	}
}

// Load with every tensor copied or mapped: same shapes, names and bytes; mapped tensors are
// read-only; progress reaches the total.
func TestLoadHostMappedAndCopied(t *testing.T) {
	path := modelFile(t, 3, 64, 8)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, noMmap := range []bool{false, true} {
		var last, total int64
		calls := 0
		m, err := f.Load(&LoadOptions{NoMmap: noMmap, ChunkSize: 100, Progress: func(d, tot int64) {
			if d < last || d > tot {
				t.Fatalf("progress %d of %d after %d", d, tot, last)
			}
			last, total = d, tot
			calls++
		}})
		if err != nil {
			t.Fatal(err)
		}
		var want int64
		for _, ti := range f.Tensors {
			want += ti.Size
		}
		if last != want || total != want || calls < len(f.Tensors) {
			t.Fatalf("progress ended at %d of %d after %d calls, want %d", last, total, calls, want)
		}
		if noMmap == (m.MappedBytes != 0) && canMapHere {
			t.Fatalf("NoMmap %v: %d bytes mapped", noMmap, m.MappedBytes)
		}
		if got := len(m.Ctx.Tensors()); got != len(f.Tensors) || !m.Ctx.NoAlloc() {
			t.Fatalf("%d tensors (NoAlloc %v), want %d", got, m.Ctx.NoAlloc(), len(f.Tensors))
		}
		for i, x := range m.Ctx.Tensors() {
			ti := f.Tensors[i]
			if x.Name != ti.Name || x.Type != ti.Type || x.Ne != ti.Ne || m.Tensor(ti.Name) != x {
				t.Fatalf("tensor %v, want %v", x, ti)
			}
			if crc32.ChecksumIEEE(standardBytes(t, x)) != patternSum(ti.Name, ti.Size) {
				t.Fatalf("tensor %s: wrong data (mapped %v)", ti.Name, !noMmap)
			}
		}
		x := m.Ctx.Tensors()[0]
		err = core.TensorSet(x, []byte{1, 2, 3, 4}, 0)
		if !noMmap && canMapHere {
			if err == nil || !strings.Contains(err.Error(), "read-only mapping") {
				t.Fatalf("TensorSet on a mapped tensor: %v", err)
			}
			if x.Buffer.Type() != MappedBufferType() || !x.Buffer.Type().IsHost() {
				t.Fatalf("mapped tensor in %s", x.Buffer.Type().Name())
			}
		} else if err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if x.Buffer != nil {
			t.Fatal("tensor keeps its buffer after Close")
		}
	}
}

// ByBlock puts the first blocks in one buffer type and the rest in another; each type gets its
// buffers (split at MaxSize) with aligned offsets, and every byte arrives.
func TestLoadByBlockPlacement(t *testing.T) {
	path := modelFile(t, 4, 64, 8)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gpu := &sinkType{name: "GPU", align: 256, maxSize: 1200}
	m, err := f.Load(&LoadOptions{Placement: ByBlock(2, gpu, core.HostBufferType()), ChunkSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var nGPU int
	for _, b := range m.Buffers {
		if b.Type() == gpu {
			nGPU++
			if b.Size() > gpu.maxSize || b.Usage() != core.BufferUsageWeights {
				t.Fatalf("GPU buffer of %d bytes, usage %v", b.Size(), b.Usage())
			}
		}
	}
	for i, x := range m.Ctx.Tensors() {
		ti := f.Tensors[i]
		blk, isBlk := BlockIndex(ti.Name)
		onGPU := isBlk && blk < 2
		if (x.Buffer.Type() == gpu) != onGPU {
			t.Fatalf("%s in %s", ti.Name, x.Buffer.Type().Name())
		}
		if onGPU {
			sb := x.Buffer.(*sinkBuffer)
			if x.Offset%256 != 0 || sb.sums[ti.Name] != patternSum(ti.Name, ti.Size) || sb.offs[ti.Name] != ti.Size {
				t.Fatalf("%s: offset %d, %d bytes arrived, checksum ok %v", ti.Name, x.Offset, sb.offs[ti.Name],
					sb.sums[ti.Name] == patternSum(ti.Name, ti.Size))
			}
		} else if crc32.ChecksumIEEE(standardBytes(t, x)) != patternSum(ti.Name, ti.Size) {
			t.Fatalf("%s: wrong host data", ti.Name)
		}
	}
	// 2 blocks × (544 B of q8_0 padded to 768 + 256 B of norm) = 2048 B in 1200-byte buffers: two
	if nGPU != 2 {
		t.Fatalf("%d GPU buffers, want 2 (MaxSize 1200)", nGPU)
	}
}

// A failing allocation frees what was made and says which type failed.
func TestLoadAllocFailure(t *testing.T) {
	f, err := Open(modelFile(t, 1, 64, 8))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tiny := &sinkType{name: "Tiny", align: 32, maxSize: 16}
	_, err = f.Load(&LoadOptions{Placement: func(string, TensorInfo) core.BufferType { return tiny }})
	if err == nil || !strings.Contains(err.Error(), "gguf: load: allocating") || !strings.Contains(err.Error(), "Tiny") {
		t.Fatalf("got %v", err)
	}
}

// Loading streams in bounded chunks: the loader's allocations do not grow with the file. Loaded
// into buffers that keep no data, a 64 MiB file costs the same few MiB as a 16 MiB one.
func TestLoadMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 80 MiB")
	}
	sink := &sinkType{name: "Sink", align: 32}
	measure := func(mib int64) (alloc, data int64) {
		// rows of 1 MiB of f32: mib/4 tensors of 4 MiB
		w := NewWriter()
		for i := range mib / 4 {
			addPattern(t, w, fmt.Sprintf("blk.%d.w", i), core.TypeF32, 1<<18, 4)
		}
		path := filepath.Join(t.TempDir(), "big.gguf")
		if err := w.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m, err := f.Load(&LoadOptions{Placement: func(string, TensorInfo) core.BufferType { return sink }})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range m.Ctx.Tensors() {
			ti, _ := f.Tensor(x.Name)
			if got := x.Buffer.(*sinkBuffer).offs[x.Name]; got != ti.Size {
				t.Fatalf("%s: %d of %d bytes arrived", x.Name, got, ti.Size)
			}
			data += ti.Size
		}
		return int64(after.TotalAlloc - before.TotalAlloc), data
	}
	a16, d16 := measure(16)
	a64, d64 := measure(64)
	t.Logf("loader allocations: %d bytes for a %d-byte file, %d bytes for a %d-byte file (chunk %d)",
		a16, d16, a64, d64, DefaultChunkSize)
	if a64 > DefaultChunkSize+1<<20 || a64 > a16+256<<10 {
		t.Fatalf("loading %d bytes allocated %d (%d for %d bytes): memory grows with the file", d64, a64, a16, d16)
	}
}

// The mapping serves host tensors without copying: loading allocates almost nothing.
func TestLoadMappedAllocatesNothing(t *testing.T) {
	if !canMapHere {
		t.Skip("no mapping on this platform")
	}
	w := NewWriter()
	for i := range 4 {
		addPattern(t, w, fmt.Sprintf("blk.%d.w", i), core.TypeF32, 1<<18, 4)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m, err := f.Load(nil)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	a := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("mapped load of %d bytes allocated %d bytes", m.MappedBytes, a)
	if m.MappedBytes != 16<<20 || a > 1<<20 {
		t.Fatalf("mapped %d bytes, allocated %d", m.MappedBytes, a)
	}
	x := m.Tensor("blk.2.w")
	got := make([]byte, 1000)
	if err := core.TensorGet(x, got, 5000); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != patternByte(x.Name, 5000+int64(i)) {
			t.Fatalf("byte %d: %d", i, v)
		}
	}
	if !bytes.Equal(x.Data()[5000:6000], got) {
		t.Fatal("Data and TensorGet disagree")
	}
}

// Tensors whose file offset misses the host alignment are copied; the others are mapped.
func TestLoadMapsOnlyAlignedTensors(t *testing.T) {
	if !canMapHere {
		t.Skip("no mapping on this platform")
	}
	w := NewWriter()
	_ = w.Metadata.Set(KeyAlignment, uint32(16))
	for i := range 4 {
		addPattern(t, w, fmt.Sprintf("t%d", i), core.TypeF32, 4) // 16 bytes each
	}
	path := filepath.Join(t.TempDir(), "a16.gguf")
	if err := w.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := f.Load(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var mapped int
	for i, x := range m.Ctx.Tensors() {
		ti := f.Tensors[i]
		isMapped := x.Buffer.Type() == MappedBufferType()
		if isMapped != ((f.DataOffset()+ti.Offset)%32 == 0) {
			t.Fatalf("%s at file offset %d: mapped %v", ti.Name, f.DataOffset()+ti.Offset, isMapped)
		}
		if !isMapped && x.Offset%32 != 0 {
			t.Fatalf("%s copied to a misaligned offset %d", ti.Name, x.Offset)
		}
		if crc32.ChecksumIEEE(standardBytes(t, x)) != patternSum(ti.Name, ti.Size) {
			t.Fatalf("%s: wrong data", ti.Name)
		}
		if isMapped {
			mapped++
		}
	}
	if mapped != 2 || m.MappedBytes != 32 {
		t.Fatalf("%d tensors (%d bytes) mapped, want 2 (32)", mapped, m.MappedBytes)
	}
}

// standardBytes reads x's bytes in the standard layout wherever it lives (host, mapped, or a
// buffer type with a layout of its own such as CPU_REPACK).
func standardBytes(t testing.TB, x *core.Tensor) []byte {
	t.Helper()
	b := make([]byte, x.NBytes())
	if err := core.TensorGet(x, b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}
