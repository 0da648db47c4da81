package llm

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// GenerateOptions configure Session.Generate.
type GenerateOptions struct {
	// MaxTokens is the most tokens to generate (> 0).
	MaxTokens int
	// Sampler picks each token (nil: Greedy()).
	Sampler Sampler
	// OnToken, when set, sees each generated token with the text it completes (bytes of a UTF-8
	// character split over several tokens come with the token that completes it). Returning an
	// error stops generation; Generate returns the tokens so far and that error (ErrStop: none).
	OnToken func(id int32, text string) error
	// IgnoreEOG keeps generating past end-of-generation tokens (EOS, EOT, ...).
	IgnoreEOG bool
}

// ErrStop, returned by an OnToken callback, ends generation without an error.
var ErrStop = errors.New("tandem: llm: stop")

// Timings measure the last Generate call.
type Timings struct {
	PromptTokens    int
	PromptDuration  time.Duration
	GenTokens       int // tokens evaluated after the prompt
	GenDuration     time.Duration
	FirstTokenDelay time.Duration // from the call to the first sampled token
}

// PromptTPS is the prompt's tokens per second.
func (t Timings) PromptTPS() float64 { return tps(t.PromptTokens, t.PromptDuration) }

// GenTPS is the generated tokens per second.
func (t Timings) GenTPS() float64 { return tps(t.GenTokens, t.GenDuration) }

func tps(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// Generate evaluates prompt (at least one token, after the positions the session holds) and
// samples up to MaxTokens new tokens, stopping after an end-of-generation token unless IgnoreEOG.
// It returns the generated ids (an end-of-generation token included).
func (s *Session) Generate(ctx context.Context, prompt []int32, o GenerateOptions) ([]int32, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if s.m == nil {
		return nil, errZeroSession
	}
	if o.MaxTokens <= 0 {
		return nil, fmt.Errorf("tandem: llm: Generate: MaxTokens %d must be positive", o.MaxTokens)
	}
	if len(prompt) == 0 {
		return nil, errors.New("tandem: llm: Generate needs a prompt of at least one token")
	}
	smp := o.Sampler
	if smp == nil {
		smp = Greedy()
	}
	for _, id := range prompt {
		smp.Accept(id)
	}
	vocab := s.m.vocab
	dec := vocab.NewDecoder()
	var t Timings
	start := time.Now()
	// one logits buffer for the whole generation (EvalTo appends into its capacity)
	logits, err := s.EvalTo(ctx, prompt, LastLogits, nil)
	t.PromptTokens, t.PromptDuration = len(prompt), time.Since(start)
	s.setTimings(t)
	if err != nil {
		return nil, err
	}
	var out []int32
	genStart := time.Now()
	for {
		id := smp.Sample(logits)
		smp.Accept(id)
		if len(out) == 0 {
			t.FirstTokenDelay = time.Since(start)
		}
		out = append(out, id)
		if o.OnToken != nil {
			var text string
			if int(id) < vocab.Len() { // rows past the vocabulary (padded embeddings) have no text
				var derr error
				if text, derr = dec.Add(id); derr != nil {
					return out, derr
				}
			}
			if err := o.OnToken(id, text); err != nil {
				if errors.Is(err, ErrStop) {
					err = nil
				}
				return out, err
			}
		}
		if len(out) >= o.MaxTokens || (!o.IgnoreEOG && vocab.IsEOG(id)) {
			break
		}
		logits, err = s.EvalTo(ctx, []int32{id}, LastLogits, logits[:0])
		t.GenTokens++
		t.GenDuration = time.Since(genStart)
		s.setTimings(t)
		if err != nil {
			return out, err
		}
	}
	if o.OnToken != nil {
		if rest := dec.Flush(); rest != "" {
			if err := o.OnToken(-1, rest); err != nil && !errors.Is(err, ErrStop) {
				return out, err
			}
		}
	}
	t.GenDuration = time.Since(genStart)
	s.setTimings(t)
	return out, nil
}

func (s *Session) setTimings(t Timings) {
	s.mu.Lock()
	s.timings = t
	s.mu.Unlock()
}

// LastTimings returns the timings of the last Generate call.
func (s *Session) LastTimings() Timings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.timings
}
