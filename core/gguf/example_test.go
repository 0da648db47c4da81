package gguf_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// Write a small file with metadata and one tensor, then open it, read the metadata back and load
// the tensor into host memory.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "gguf-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "tiny.gguf")

	ctx := core.NewContext(core.ContextParams{MemSize: 1 << 16})
	w := ctx.NewTensor2D(core.TypeF32, 3, 2).SetName("blk.0.weight")
	copy(w.Float32s(), []float32{1, 2, 3, 4, 5, 6})
	var md gguf.Metadata
	_ = md.Set("general.architecture", "tiny")
	_ = md.Set("tiny.block_count", uint32(1))
	_ = md.Set("tokenizer.ggml.tokens", []string{"<s>", "hello"})
	if err := gguf.WriteFile(path, &md, []*core.Tensor{w}); err != nil {
		log.Fatal(err)
	}

	f, err := gguf.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	arch, _ := f.GetString("general.architecture")
	tokens, _ := f.GetStrings("tokenizer.ggml.tokens")
	_, err = f.GetInt32("tiny.block_count") // stored as u32: a wrong type is an error
	fmt.Println(f.Version, f.Keys(), arch, tokens)
	fmt.Println(err)
	for _, ti := range f.Tensors {
		fmt.Println(ti.Name, ti.Type, ti.Ne, ti.Offset, ti.Size)
	}

	m, err := f.Load(nil)
	if err != nil {
		log.Fatal(err)
	}
	defer m.Close()
	vals, _ := core.GetFloat32s(m.Tensor("blk.0.weight"))
	fmt.Println(vals)
	// Output:
	// 3 [general.architecture tiny.block_count tokenizer.ggml.tokens] tiny [<s> hello]
	// gguf: metadata key "tiny.block_count" is u32, not i32
	// blk.0.weight f32 [3 2 1 1] 0 24
	// [1 2 3 4 5 6]
}
