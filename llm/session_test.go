package llm_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/tandem-ml/tandem/llm"
	"github.com/tandem-ml/tandem/tests"
)

// TestChunkedPrefill: the prompt whole, in uneven chunks, token by token and through small
// micro-batches gives the same logits, for each KV type and attention path.
func TestChunkedPrefill(t *testing.T) {
	for _, name := range []string{"llama-f32", "qwen3moe-f32", "qwen2-f32", "qwen3-f32"} {
		c := caseByName(t, name)
		m := openCase(t, name, llm.Options{})
		for _, so := range []llm.SessionOptions{
			{KVType: llm.KVF32, FlashAttn: llm.FlashAttnOff},
			{KVType: llm.KVF16},
			{KVType: llm.KVQ8_0}, // Q8_0 blocks of 32 need head_dim 32: only qwen3's has it
			{KVType: llm.KVF16, FlashAttn: llm.FlashAttnOff},
		} {
			if so.KVType == llm.KVQ8_0 && m.HParams.HeadDimK%32 != 0 {
				if _, err := m.NewSession(so); err == nil || !strings.Contains(err.Error(), "head") {
					t.Errorf("%s: a Q8_0 cache with head size %d: error %v, want one naming the head size", name, m.HParams.HeadDimK, err)
				}
				continue
			}
			so.ContextSize = 64
			what := name + " kv " + so.KVType.String()
			whole := evalAll(t, m, so, c.IDs)
			// GEMM and mat-vec kernels add in different orders: agreement to ~1e-9, not bits
			sameLogits(t, what+" chunks 5,2", evalAll(t, m, so, c.IDs, 5, 2), whole, 1e-7)
			sameLogits(t, what+" token by token", evalAll(t, m, so, c.IDs, 1), whole, 1e-7)
			so.BatchSize = 3
			sameLogits(t, what+" micro-batches of 3", evalAll(t, m, so, c.IDs), whole, 1e-7)
		}
	}
}

// TestSessionPositions: Pos, Truncate and Reset move the cache's end, and evaluating again from a
// truncated position gives the logits of the shorter history.
func TestSessionPositions(t *testing.T) {
	c := caseByName(t, "llama-f32")
	m := openCase(t, c.Name, llm.Options{})
	ctx := context.Background()
	s, err := m.NewSession(llm.SessionOptions{ContextSize: 32, KVType: llm.KVF32})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.ContextSize() != 256 {
		t.Errorf("ContextSize() = %d, want 32 rounded up to 256", s.ContextSize())
	}
	ref, err := s.Eval(ctx, c.IDs[:6], llm.AllLogits)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(ctx, c.IDs[6:], llm.NoLogits); err != nil {
		t.Fatal(err)
	}
	if s.Pos() != len(c.IDs) {
		t.Fatalf("Pos() = %d", s.Pos())
	}
	if err := s.Truncate(5); err != nil {
		t.Fatal(err)
	}
	last, err := s.Eval(ctx, c.IDs[5:6], llm.LastLogits)
	if err != nil {
		t.Fatal(err)
	}
	if len(last) != 1 {
		t.Fatalf("LastLogits gave %d rows", len(last))
	}
	sameLogits(t, "after Truncate", last, ref[5:6], 1e-7)
	if err := s.Truncate(7); err == nil {
		t.Error("Truncate past Pos() is not an error")
	}
	s.Reset()
	again, err := s.Eval(ctx, c.IDs[:6], llm.AllLogits)
	if err != nil {
		t.Fatal(err)
	}
	sameLogits(t, "after Reset", again, ref, 1e-7)
}

// TestConcurrentSessions runs sessions of one model from several goroutines: each gets the logits
// of a session run alone.
func TestConcurrentSessions(t *testing.T) {
	c := caseByName(t, "qwen3-f32")
	m := openCase(t, c.Name, llm.Options{})
	so := llm.SessionOptions{ContextSize: 64}
	ref := evalAll(t, m, so, c.IDs)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := m.NewSession(so)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for _, id := range c.IDs {
				if _, err := s.Eval(context.Background(), []int32{id}, llm.LastLogits); err != nil {
					errs <- err
					return
				}
			}
			if err := s.Truncate(len(c.IDs) - 1); err != nil {
				errs <- err
				return
			}
			rows, err := s.Eval(context.Background(), c.IDs[len(c.IDs)-1:], llm.AllLogits)
			if err != nil {
				errs <- err
				return
			}
			if e := tests.NMSE(rows[0], ref[len(ref)-1]); e > 1e-7 {
				errs <- errors.New("goroutine " + strconv.Itoa(g) + ": logits differ")
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestGenerateSampling: seeded sampling repeats itself, greedy equals temperature 0, OnToken sees
// every token with text that joins to the detokenized output, and ErrStop ends early.
func TestGenerateSampling(t *testing.T) {
	c := caseByName(t, "llama-f32")
	m := openCase(t, c.Name, llm.Options{})
	gen := func(o llm.GenerateOptions) []int32 {
		t.Helper()
		s, err := m.NewSession(llm.SessionOptions{ContextSize: 64})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		out, err := s.Generate(context.Background(), c.IDs, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	sampler := func(seed uint64) llm.Sampler {
		smp, err := llm.NewSampler(llm.SamplerOptions{Temp: 1.5, TopK: 50, TopP: 0.95, MinP: 0.01, RepeatPenalty: 1.1, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return smp
	}
	a := gen(llm.GenerateOptions{MaxTokens: 16, Sampler: sampler(7), IgnoreEOG: true})
	b := gen(llm.GenerateOptions{MaxTokens: 16, Sampler: sampler(7), IgnoreEOG: true})
	if !slices.Equal(a, b) || len(a) != 16 {
		t.Errorf("seeded sampling is not deterministic: %v vs %v", a, b)
	}
	d := gen(llm.GenerateOptions{MaxTokens: 16, Sampler: sampler(8), IgnoreEOG: true})
	if slices.Equal(a, d) {
		t.Errorf("seeds 7 and 8 sampled the same 16 tokens %v", a)
	}
	greedy := gen(llm.GenerateOptions{MaxTokens: 6, IgnoreEOG: true})
	t0, _ := llm.NewSampler(llm.SamplerOptions{Temp: 0})
	if g2 := gen(llm.GenerateOptions{MaxTokens: 6, Sampler: t0, IgnoreEOG: true}); !slices.Equal(greedy, g2) {
		t.Errorf("temperature 0 %v differs from greedy %v", g2, greedy)
	}
	var text strings.Builder
	var seen []int32
	out := gen(llm.GenerateOptions{MaxTokens: 10, Sampler: sampler(3), IgnoreEOG: true, OnToken: func(id int32, s string) error {
		if id >= 0 {
			seen = append(seen, id)
		}
		text.WriteString(s)
		return nil
	}})
	if !slices.Equal(seen, out) {
		t.Errorf("OnToken saw %v, Generate returned %v", seen, out)
	}
	// the stream is valid UTF-8 (bytes that never complete a character become U+FFFD); where the
	// detokenized bytes are valid, the two agree
	if want := m.Detokenize(out); !utf8.ValidString(text.String()) || utf8.ValidString(want) && text.String() != want {
		t.Errorf("streamed text %q, detokenized %q", text.String(), want)
	}
	stopped := gen(llm.GenerateOptions{MaxTokens: 10, IgnoreEOG: true, OnToken: func(id int32, _ string) error {
		return llm.ErrStop
	}})
	if len(stopped) != 1 {
		t.Errorf("ErrStop after the first token left %d tokens", len(stopped))
	}
}

// TestTokenizeThroughModel: the model's tokenizer round-trips text and adds BOS as SPM models do.
func TestTokenizeThroughModel(t *testing.T) {
	m := openCase(t, "llama-f32", llm.Options{})
	ids, err := m.Tokenize("Once upon a time", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) < 2 || ids[0] != m.Vocab().BOS() {
		t.Fatalf("ids %v do not start with BOS %d", ids, m.Vocab().BOS())
	}
	if got := m.Detokenize(ids[1:]); got != "Once upon a time" && got != " Once upon a time" {
		t.Errorf("Detokenize = %q", got)
	}
}

// TestGraphReuse: generating token after token within one block of 256 cells reuses one graph and
// one scheduler plan; crossing into the next block makes one more.
func TestGraphReuse(t *testing.T) {
	c := caseByName(t, "llama-f32")
	m := openCase(t, c.Name, llm.Options{})
	s, err := m.NewSession(llm.SessionOptions{ContextSize: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if _, err := s.Eval(ctx, c.IDs, llm.LastLogits); err != nil {
		t.Fatal(err)
	}
	st0 := s.Stats()
	for range 250 - len(c.IDs) {
		if _, err := s.Eval(ctx, []int32{7}, llm.LastLogits); err != nil {
			t.Fatal(err)
		}
	}
	st1 := s.Stats()
	if st1.Builds != st0.Builds+1 || st1.Plans != st0.Plans+1 {
		t.Errorf("%d tokens in one block: %d builds and %d plans, want 1 each", 250-len(c.IDs), st1.Builds-st0.Builds, st1.Plans-st0.Plans)
	}
	for range 10 { // into the second block of 256 cells
		if _, err := s.Eval(ctx, []int32{7}, llm.LastLogits); err != nil {
			t.Fatal(err)
		}
	}
	if st2 := s.Stats(); st2.Plans != st1.Plans+1 {
		t.Errorf("crossing a block boundary made %d plans, want 1", st2.Plans-st1.Plans)
	}
}

// EvalTo appends the same logits Eval returns after what dst holds and leaves dst as it was on an
// error (that it allocates nothing per generated token is TestDecodeNoAllocs').
func TestEvalTo(t *testing.T) {
	c := caseByName(t, "llama-f32")
	m := openCase(t, c.Name, llm.Options{Threads: 2})
	ctx := context.Background()
	a, err := m.NewSession(llm.SessionOptions{ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := m.NewSession(llm.SessionOptions{ContextSize: 256})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	rows, err := a.Eval(ctx, c.IDs, llm.AllLogits)
	if err != nil {
		t.Fatal(err)
	}
	prefix := []float32{7, 8}
	flat, err := b.EvalTo(ctx, c.IDs, llm.AllLogits, prefix)
	if err != nil {
		t.Fatal(err)
	}
	nv := m.HParams.NVocab
	if len(flat) != 2+len(rows)*nv || flat[0] != 7 || flat[1] != 8 {
		t.Fatalf("EvalTo gave %d values (prefix %v), want the prefix then %d rows of %d", len(flat), flat[:2], len(rows), nv)
	}
	for i, r := range rows {
		for j, v := range r {
			if flat[2+i*nv+j] != v {
				t.Fatalf("row %d logit %d: EvalTo %v, Eval %v", i, j, flat[2+i*nv+j], v)
			}
		}
	}
	if st := b.Stats(); st.ComputeBytes <= 0 || st.ComputeBytes > 64<<20 {
		t.Errorf("ComputeBytes %d after evaluating a prompt: want the compute buffers' size (0 < size ≤ 64 MiB for this model)", st.ComputeBytes)
	}
	kept := []float32{1}
	got, err := b.EvalTo(ctx, []int32{int32(nv) + 5}, llm.LastLogits, kept)
	if err == nil || len(got) != 1 || got[0] != 1 {
		t.Fatalf("EvalTo of a bad id: %v, %v; want an error and dst unchanged", got, err)
	}
}
