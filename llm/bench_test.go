package llm_test

import (
	"context"
	"testing"

	"github.com/tandem-ml/tandem/llm"
)

// BenchmarkDecode generates one token per iteration with a small model (the per-token overhead of
// building, planning and launching a graph shows here more than with a big one): tokens/s and
// allocations per token.
func BenchmarkDecode(b *testing.B) {
	c := caseByName(b, "llama-f32")
	m := openCase(b, c.Name, llm.Options{Threads: 1})
	s, err := m.NewSession(llm.SessionOptions{ContextSize: 256})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Eval(ctx, c.IDs, llm.LastLogits); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var logits []float32
	for i := 0; i < b.N; i++ {
		if s.Pos() >= 250 {
			b.StopTimer()
			s.Truncate(len(c.IDs))
			b.StartTimer()
		}
		if logits, err = s.EvalTo(ctx, []int32{int32(i % 300)}, llm.LastLogits, logits[:0]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
}
