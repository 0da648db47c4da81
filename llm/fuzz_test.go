package llm

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

// microModel is the smallest model of each family the fuzzer starts from.
func microModel(t testing.TB, arch string, experts int) []byte {
	spec := testmodel.Spec{Arch: arch, NVocab: 300, NEmbd: 8, NLayer: 1, NHead: 2, NHeadKV: 1, NFF: 8,
		NExpert: experts, WeightType: core.TypeF32, OutputF32: true, Vocab: "spm", Seed: 9}
	if arch != "llama" {
		spec.Vocab = "bpe"
	}
	if experts > 0 {
		spec.NExpertUsed = 1
	}
	p := filepath.Join(t.TempDir(), "m.gguf")
	if err := testmodel.Write(p, spec); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FuzzLoad feeds mutated model files to the loader (on top of core/gguf's FuzzRead): a hostile file
// is an error, never a panic, and a file that loads evaluates a token or says why not.
func FuzzLoad(f *testing.F) {
	f.Add(microModel(f, "llama", 0))
	f.Add(microModel(f, "qwen2", 0))
	f.Add(microModel(f, "qwen3moe", 2))
	f.Fuzz(func(t *testing.T, data []byte) {
		gf, err := gguf.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		m, err := load(gf, Options{Threads: 1})
		if err != nil {
			return
		}
		defer m.Close()
		if m.HParams.NEmbd*m.HParams.NVocab > 1<<22 || m.HParams.NLayer > 8 {
			return // loads, but too big to evaluate in a fuzz iteration
		}
		s, err := m.NewSession(SessionOptions{ContextSize: 8})
		if err != nil {
			return
		}
		defer s.Close()
		s.Eval(context.Background(), []int32{1, 0}, AllLogits)
		ids, err := m.Tokenize("hi there 12", true)
		if err == nil {
			m.Detokenize(ids)
		}
	})
}
