package gguf

import (
	"bytes"
	"testing"

	"github.com/tandem-ml/tandem/core"
)

// FuzzRead: any bytes either fail to parse with an error or give a file whose rewrite is stable
// (write → read → write reproduces the bytes) and whose tensors load into host memory.
func FuzzRead(f *testing.F) {
	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	a := ctx.NewTensor2D(core.TypeF32, 4, 2).SetName("blk.0.w")
	q := ctx.NewTensor2D(core.TypeQ8_0, 32, 1).SetName("q")
	var small Metadata
	_ = small.Set("general.architecture", "llama")
	_ = small.Set("a.str", []string{"x", "yz"})
	_ = small.Set("a.f32", []float32{1, 2})
	var buf bytes.Buffer
	_ = Write(&buf, &small, []*core.Tensor{a, q})
	f.Add(buf.Bytes())
	buf.Reset()
	_ = Write(&buf, &small, nil)
	f.Add(buf.Bytes())
	f.Add(hdr(2, 0).tensor("a", core.TypeF32, 0, 16).tensor("b", core.TypeF32, 64, 16).data(128).b)
	f.Add(new(raw).header(2, 0, 1).str(KeyAlignment).u32(uint32(TypeUint32)).u32(64).b)

	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if file != nil {
				t.Fatal("file returned with an error")
			}
			return
		}
		if file.Alignment() > 1<<16 && len(file.Tensors) == 0 {
			return // valid, but its rewrite is padded to the alignment: too big to fuzz quickly
		}
		b1 := rewrite(t, file)
		f2, err := Read(bytes.NewReader(b1), int64(len(b1)))
		if err != nil {
			t.Fatalf("rewritten file does not read back: %v", err)
		}
		if b2 := rewrite(t, f2); !bytes.Equal(b1, b2) {
			t.Fatal("write → read → write differs")
		}
		m, err := file.Load(&LoadOptions{NoMmap: true, ChunkSize: 64})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		for i, x := range m.Ctx.Tensors() {
			want := make([]byte, file.Tensors[i].Size)
			r, _ := file.TensorReader(x.Name)
			if _, err := r.ReadAt(want, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(x.Data(), want) {
				t.Fatalf("tensor %s loaded wrong", x.Name)
			}
		}
		m.Close()
	})
}
