package gguf

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// BenchmarkLoad loads a 64 MiB file (16 f32 tensors of 4 MiB, in the page cache) into host memory
// by copying (NoMmap), by mapping (the load itself), and by mapping then touching every page (what
// a first graph run pays), reporting MB/s of tensor data. Run with
// go test -run '^$' -bench BenchmarkLoad -benchtime 10x ./core/gguf
func BenchmarkLoad(b *testing.B) {
	w := NewWriter()
	for i := range 16 {
		addPattern(b, w, fmt.Sprintf("blk.%d.w", i), core.TypeF32, 1<<18, 4)
	}
	path := filepath.Join(b.TempDir(), "bench.gguf")
	if err := w.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var size int64
	for _, ti := range f.Tensors {
		size += ti.Size
	}
	for _, c := range []struct {
		name   string
		noMmap bool
		touch  bool
	}{{"copy", true, false}, {"mmap", false, false}, {"mmap+touch", false, true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			var sink byte
			for b.Loop() {
				m, err := f.Load(&LoadOptions{NoMmap: c.noMmap})
				if err != nil {
					b.Fatal(err)
				}
				if c.touch {
					for _, x := range m.Ctx.Tensors() {
						d := x.Data()
						for i := 0; i < len(d); i += 4096 {
							sink += d[i]
						}
					}
				}
				m.Close()
			}
			_ = sink
		})
	}
}
