package llm_test

import (
	"context"
	"testing"

	"github.com/tandem-ml/tandem/llm"
)

// A generated token (EvalTo of one token with room in dst) allocates nothing, with f32 weights
// and with quantized ones: the mat-vecs on repacked Q4_0 and Q8_0 weights, the one-token
// MUL_MAT_ID of a mixture of experts, and the K-quant dots (each fixing its own non-finite
// outputs without scratch of its own), on two workers.
func TestDecodeNoAllocs(t *testing.T) {
	for _, name := range []string{"llama-f32", "llama-q4_0", "llama-q8_0", "llama-q4_k", "qwen3moe-q4_0"} {
		t.Run(name, func(t *testing.T) {
			c := caseByName(t, name)
			m := openCase(t, c.Name, llm.Options{Threads: 2})
			s, err := m.NewSession(llm.SessionOptions{ContextSize: 256})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			if _, err := s.Eval(ctx, c.IDs, llm.LastLogits); err != nil {
				t.Fatal(err)
			}
			buf := make([]float32, 0, m.HParams.NVocab)
			allocs := testing.AllocsPerRun(20, func() {
				if buf, err = s.EvalTo(ctx, []int32{5}, llm.LastLogits, buf[:0]); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per generated token, want 0", allocs)
			}
		})
	}
}
