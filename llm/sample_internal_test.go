package llm

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// naiveFilter is the chain's definition written plainly: the repetition penalty on each distinct
// token of the last RepeatLastN (64 when 0) of history, a stable sort of the whole vocabulary,
// then the first token when greedy (Temp ≤ 0), else top-k, softmax, top-p, min-p and the
// temperature.
func naiveFilter(o SamplerOptions, logits []float32, history []int32) []int32 {
	type c struct {
		id int32
		l  float64
	}
	pen := append([]float32(nil), logits...)
	if o.RepeatPenalty != 0 && o.RepeatPenalty != 1 {
		n := o.RepeatLastN
		if n == 0 {
			n = 64
		}
		done := map[int32]bool{}
		for _, id := range history[max(0, len(history)-n):] {
			if done[id] || id < 0 || int(id) >= len(pen) {
				continue
			}
			done[id] = true
			if pen[id] > 0 {
				pen[id] /= o.RepeatPenalty
			} else {
				pen[id] *= o.RepeatPenalty
			}
		}
	}
	cs := make([]c, len(pen))
	for i, l := range pen {
		cs[i] = c{int32(i), float64(l)}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].l > cs[j].l })
	if o.Temp <= 0 {
		return []int32{cs[0].id}
	}
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
		{Temp: 0},
		{Temp: 0, RepeatPenalty: 1.3},
		{Temp: 0, RepeatPenalty: 0.5, RepeatLastN: 3}, // below 1 the penalty raises the recent tokens
		{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1},
		{Temp: 1, TopK: 5, RepeatPenalty: 0.25, RepeatLastN: 8},
		{Temp: 1, RepeatPenalty: 2},
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
			// recent tokens with repeats, the most likely ones among them, and ids out of range
			history := []int32{argmax(logits), int32(rng.IntN(n)), argmax(logits), int32(n), -1, int32(rng.IntN(n))}
			for _, id := range history {
				s.Accept(id)
			}
			kept, tsum := s.(*chain).filter(logits)
			want := naiveFilter(o, logits, history)
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

// TestSelectTop: the heap keeps exactly the k best of few distinct values, the lower ids among
// ties (a stable sort's first k).
func TestSelectTop(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := 0; trial < 200; trial++ {
		n := 1 + rng.IntN(300)
		k := 1 + rng.IntN(n)
		x := make([]float32, n)
		ref := make([]cand, n)
		for i := range x {
			x[i] = float32(rng.IntN(10))
			ref[i] = cand{int32(i), x[i]}
		}
		sort.SliceStable(ref, func(i, j int) bool { return ref[i].p > ref[j].p })
		got := selectTopLogits(x, k, make([]cand, k))
		if len(got) != k {
			t.Fatalf("n=%d k=%d: %d candidates", n, k, len(got))
		}
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

// samplerBenchOpts are tandem-llm run's defaults, greedy, and the defaults with a repetition
// penalty.
var samplerBenchOpts = []struct {
	name string
	o    SamplerOptions
}{
	{"defaults", SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1}},
	{"greedy", SamplerOptions{Temp: 0, RepeatPenalty: 1}},
	{"penalty", SamplerOptions{Temp: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.1}},
}

// vocabLogits is a row of logits of TinyLlama's vocabulary size, with 64 tokens accepted by s.
func vocabLogits(s Sampler) []float32 {
	rng := rand.New(rand.NewPCG(1, 2))
	logits := make([]float32, 32000)
	for i := range logits {
		logits[i] = float32(rng.NormFloat64() * 3)
	}
	for i := 0; i < 64; i++ {
		s.Accept(int32(i * 31))
	}
	return logits
}

// TestSampleNoAllocs: after its first token a sampler allocates nothing per token.
func TestSampleNoAllocs(t *testing.T) {
	for _, c := range samplerBenchOpts {
		s, err := NewSampler(c.o)
		if err != nil {
			t.Fatal(err)
		}
		logits := vocabLogits(s)
		s.Sample(logits)
		if a := testing.AllocsPerRun(20, func() { s.Sample(logits) }); a != 0 {
			t.Errorf("%s: %.1f allocations per token, want 0", c.name, a)
		}
	}
}

// BenchmarkSample: one token's sampling over a 32000-token vocabulary, the token accepted.
func BenchmarkSample(b *testing.B) {
	for _, c := range samplerBenchOpts {
		b.Run(c.name, func(b *testing.B) {
			s, err := NewSampler(c.o)
			if err != nil {
				b.Fatal(err)
			}
			logits := vocabLogits(s)
			b.ReportAllocs()
			for b.Loop() {
				s.Accept(s.Sample(logits))
			}
		})
	}
}

// TestSampleEmptyRow: every sampler answers -1 for an empty row of logits, without panicking.
func TestSampleEmptyRow(t *testing.T) {
	samplers := []Sampler{Greedy()}
	for _, c := range samplerBenchOpts {
		s, err := NewSampler(c.o)
		if err != nil {
			t.Fatal(err)
		}
		s.Accept(3)
		samplers = append(samplers, s)
	}
	for i, s := range samplers {
		if id := s.Sample(nil); id != -1 {
			t.Errorf("sampler %d: %d from an empty row, want -1", i, id)
		}
	}
}
