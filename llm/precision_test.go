package llm_test

import (
	"testing"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/llm/testmodel"
	"github.com/tandem-ml/tandem/tests"
)

// TestF16PromptProducts: a model with F16 weights over a 96-token prompt. With F32Products its
// logits are those of the same prompt fed in chunks of 16 (below the rows at which any product
// rounds to bf16) to float32 rounding; by default the prompt's products may round to bf16
// (core.PrecBF16), which moves the logits by a bounded amount and, on a CPU with AVX-512 BF16,
// by more than float32 rounding.
func TestF16PromptProducts(t *testing.T) {
	spec := testmodel.Tiny("llama")
	spec.WeightType, spec.Seed = core.TypeF16, 11
	path := modelFile(t, "llama-f16-prec", spec)
	ids := make([]int32, 96)
	for i := range ids {
		ids[i] = int32(1 + (i*37+11)%(spec.NVocab-1))
	}
	so := llm.SessionOptions{KVType: llm.KVF32, ContextSize: 128}
	open := func(o llm.Options) *llm.Model {
		m, err := llm.Open(path, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { m.Close() })
		return m
	}
	exact := open(llm.Options{F32Products: true})
	ref := evalAll(t, exact, so, ids, 16)
	sameLogits(t, "F32Products, one batch against chunks of 16", evalAll(t, exact, so, ids), ref, 1e-10)
	def := evalAll(t, open(llm.Options{}), so, ids)
	sameLogits(t, "default (bf16 allowed) against f32 products", def, ref, 1e-4)
	if hasBF16Pairs() {
		worst := 0.0
		for i := range ref {
			worst = max(worst, tests.NMSE(def[i], ref[i]))
		}
		if worst < 1e-10 {
			t.Errorf("AVX-512 BF16 CPU: the default logits are within %.3g of f32 products: the prompt's products did not round to bf16", worst)
		}
	}
}

// hasBF16Pairs reads the CPU device's BF16_GEMM feature.
func hasBF16Pairs() bool {
	for _, d := range core.Devices() {
		fl, ok := d.(core.FeatureLister)
		if d.Type() != core.DeviceCPU || !ok {
			continue
		}
		for _, f := range fl.Features() {
			if f.Name == "BF16_GEMM" {
				return f.Value == "1"
			}
		}
	}
	return false
}
