package llm_test

import (
	"context"
	"testing"

	"github.com/tandem-ml/tandem/llm"
)

// BenchmarkDecode generates one token per iteration with small models (the per-token overhead of
// building, planning and launching a graph shows here more than with a big one), f32 on one
// worker, Q4_0 dense and mixture-of-experts on two: tokens/s and allocations per token.
func BenchmarkDecode(b *testing.B) {
	for _, c := range []struct {
		name    string
		threads int
	}{{"llama-f32", 1}, {"llama-q4_0", 2}, {"qwen3moe-q4_0", 2}} {
		b.Run(c.name, func(b *testing.B) { benchDecode(b, c.name, c.threads) })
	}
}

func benchDecode(b *testing.B, name string, threads int) {
	c := caseByName(b, name)
	m := openCase(b, c.Name, llm.Options{Threads: threads})
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
