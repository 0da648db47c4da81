package llm_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/llm/testmodel"
)

func readGolden(t *testing.T, name string) *testmodel.Golden {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "golden", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := testmodel.ReadGolden(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGoldenLogits compares every position's logits and the greedy continuation with llama.cpp's
// for each architecture (KV cache F32, soft_max attention: llama.cpp's exact setting).
func TestGoldenLogits(t *testing.T) {
	for _, c := range testmodel.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			g := readGolden(t, c.Name)
			if !slices.Equal(g.IDs, c.IDs) {
				t.Fatalf("golden ids %v, case ids %v", g.IDs, c.IDs)
			}
			m := openCase(t, c.Name, llm.Options{})
			limit := 1e-6
			if c.Spec.WeightType != core.TypeF32 {
				limit = 1e-4
			}
			so := llm.SessionOptions{KVType: llm.KVF32, FlashAttn: llm.FlashAttnOff, ContextSize: 256}
			sameLogits(t, "soft_max, KV f32", evalAll(t, m, so, c.IDs), g.Logits, limit)

			s, err := m.NewSession(so)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			gen, err := s.Generate(context.Background(), c.IDs, llm.GenerateOptions{MaxTokens: c.Gen, Sampler: llm.Greedy(), IgnoreEOG: true})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gen, g.Gen) {
				t.Errorf("greedy tokens %v, llama.cpp %v", gen, g.Gen)
			}

			// flash attention over an F32 cache computes the same function
			fa := llm.SessionOptions{KVType: llm.KVF32, FlashAttn: llm.FlashAttnOn, ContextSize: 256}
			sameLogits(t, "flash attention, KV f32", evalAll(t, m, fa, c.IDs), g.Logits, limit)
			// llama.cpp's defaults (F16 cache, flash attention) move logits a little
			def := llm.SessionOptions{ContextSize: 256}
			sameLogits(t, "defaults (flash, KV f16)", evalAll(t, m, def, c.IDs), g.Logits, 1e-3)
		})
	}
}
