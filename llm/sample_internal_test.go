package llm

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// naiveFilter is the chain's definition written plainly: a stable sort of the whole vocabulary,
// then top-k, softmax, top-p, min-p and the temperature.
func naiveFilter(o SamplerOptions, logits []float32) []int32 {
	type c struct {
		id int32
		l  float64
	}
	cs := make([]c, len(logits))
	for i, l := range logits {
		cs[i] = c{int32(i), float64(l)}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].l > cs[j].l })
	if o.TopK > 0 && o.TopK < len(cs) {
		cs = cs[:o.TopK]
	}
	var sum float64
	for _, x := range cs {
		sum += math.Exp(x.l - cs[0].l)
	}
	keep := len(cs)
	if o.TopP > 0 && o.TopP < 1 {
		var acc float64
		for i, x := range cs {
			acc += math.Exp(x.l-cs[0].l) / sum
			if acc >= float64(o.TopP) {
				keep = i + 1
				break
			}
		}
	}
	if o.MinP > 0 {
		for i := 1; i < keep; i++ {
			if math.Exp(cs[i].l-cs[0].l) < float64(o.MinP) {
				keep = i
				break
			}
		}
	}
	ids := make([]int32, keep)
	for i := range ids {
		ids[i] = cs[i].id
	}
	return ids
}

// TestSamplerFilterMatchesFullSort checks the partial selection against a full sort: same
// survivors in the same order, ties broken by the lower id, over top-k, top-p and min-p settings.
func TestSamplerFilterMatchesFullSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	opts := []SamplerOptions{
		{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05},
		{Temp: 1, TopK: 1},
		{Temp: 1, TopK: 7},
		{Temp: 1.5, MinP: 0.01},
		{Temp: 1, TopP: 0.5},
		{Temp: 1, TopK: 3000, MinP: 0.2},
		{Temp: 0.5},
		{Temp: 1, MinP: 5}, // p > 1: only the most likely token (and its ties' first) is left
		{Temp: 1, MinP: 1},
	}
	for trial := 0; trial < 20; trial++ {
		n := 1 + rng.IntN(5000)
		logits := make([]float32, n)
		for i := range logits {
			// few distinct values in some trials, so ties are common
			if trial%3 == 0 {
				logits[i] = float32(rng.IntN(8))
			} else {
				logits[i] = float32(rng.NormFloat64() * 3)
			}
		}
		for _, o := range opts {
			s, err := NewSampler(o)
			if err != nil {
				t.Fatal(err)
			}
			kept, tsum := s.(*chain).filter(logits)
			want := naiveFilter(o, logits)
			if len(kept) != len(want) {
				t.Fatalf("trial %d %+v: %d survivors, want %d", trial, o, len(kept), len(want))
			}
			var sum float64
			for i, x := range kept {
				if x.id != want[i] {
					t.Fatalf("trial %d %+v: survivor %d is %d, want %d", trial, o, i, x.id, want[i])
				}
				sum += float64(x.p)
			}
			if math.Abs(sum-tsum) > 1e-6*tsum {
				t.Fatalf("trial %d: weights sum to %g, reported %g", trial, sum, tsum)
			}
		}
	}
}

func TestSelectTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(300)
		k := 1 + rng.IntN(n)
		c := make([]cand, n)
		for i := range c {
			c[i] = cand{int32(i), float32(rng.IntN(10))}
		}
		ref := append([]cand(nil), c...)
		sort.SliceStable(ref, func(i, j int) bool { return ref[i].p > ref[j].p })
		got := selectTop(c, k)
		in := map[int32]bool{}
		for _, x := range got {
			in[x.id] = true
		}
		for _, x := range ref[:k] {
			if !in[x.id] {
				t.Fatalf("n=%d k=%d: %v missing from the top", n, k, x)
			}
		}
	}
}

func BenchmarkSample(b *testing.B) {
	rng := rand.New(rand.NewPCG(5, 6))
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64() * 3)
	}
	s, _ := NewSampler(SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1})
	b.ReportAllocs()
	for b.Loop() {
		s.Accept(s.Sample(logits))
	}
}
