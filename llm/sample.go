package llm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
)

// Sampler picks the next token from a row of logits. Accept tells it the token chosen (for
// repetition penalties); Reset forgets the history.
type Sampler interface {
	Sample(logits []float32) int32
	Accept(id int32)
	Reset()
}

// Greedy returns a sampler that always picks the most likely token (the lowest id among ties).
func Greedy() Sampler { return greedy{} }

type greedy struct{}

func (greedy) Sample(logits []float32) int32 { return argmax(logits) }
func (greedy) Accept(int32)                  {}
func (greedy) Reset()                        {}

func argmax(x []float32) int32 {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return int32(best)
}

// SamplerOptions configure NewSampler with llama.cpp's sampling parameters and its order:
// repetition penalty, top-k, top-p, min-p, temperature, then a seeded draw.
type SamplerOptions struct {
	Temp          float32 // temperature; ≤ 0 picks greedily (after the penalty)
	TopK          int     // keep the k most likely tokens (≤ 0: all)
	TopP          float32 // keep the smallest set whose probability reaches p (≥ 1 or ≤ 0: off)
	MinP          float32 // drop tokens below MinP × the top probability (≤ 0: off)
	RepeatPenalty float32 // divide positive (multiply negative) logits of recent tokens (1 or 0: off)
	RepeatLastN   int     // how many recent tokens the penalty looks at (0: 64)
	Seed          uint64  // the draw's seed: equal seeds give equal choices
}

// NewSampler returns a sampler with o's settings, deterministic for a given seed.
func NewSampler(o SamplerOptions) (Sampler, error) {
	switch {
	case math.IsNaN(float64(o.Temp)) || math.IsNaN(float64(o.TopP)) || math.IsNaN(float64(o.MinP)):
		return nil, fmt.Errorf("tandem: llm: sampler: NaN parameter in %+v", o)
	case o.RepeatPenalty < 0:
		return nil, fmt.Errorf("tandem: llm: sampler: negative repeat penalty %g", o.RepeatPenalty)
	case o.RepeatLastN < 0:
		return nil, fmt.Errorf("tandem: llm: sampler: negative RepeatLastN %d", o.RepeatLastN)
	}
	if o.RepeatLastN == 0 {
		o.RepeatLastN = 64
	}
	return &chain{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x7a6e64656d))}, nil
}

type chain struct {
	o       SamplerOptions
	rng     *rand.Rand
	history []int32
	cand    []cand
}

type cand struct {
	id int32
	p  float32
}

func (c *chain) Accept(id int32) {
	c.history = append(c.history, id)
	if n := c.o.RepeatLastN; len(c.history) > 4*n {
		c.history = append(c.history[:0], c.history[len(c.history)-n:]...)
	}
}

func (c *chain) Reset() {
	c.history = c.history[:0]
	c.rng = rand.New(rand.NewPCG(c.o.Seed, 0x7a6e64656d))
}

func (c *chain) Sample(logits []float32) int32 {
	o := c.o
	c.cand = c.cand[:0]
	for i, l := range logits {
		c.cand = append(c.cand, cand{int32(i), l})
	}
	if o.RepeatPenalty != 0 && o.RepeatPenalty != 1 {
		recent := c.history[max(0, len(c.history)-o.RepeatLastN):]
		seen := map[int32]bool{}
		for _, id := range recent {
			if id < 0 || int(id) >= len(c.cand) || seen[id] {
				continue
			}
			seen[id] = true
			if l := c.cand[id].p; l > 0 {
				c.cand[id].p = l / o.RepeatPenalty
			} else {
				c.cand[id].p = l * o.RepeatPenalty
			}
		}
	}
	if o.Temp <= 0 {
		best := 0
		for i, x := range c.cand {
			if x.p > c.cand[best].p {
				best = i
			}
		}
		return c.cand[best].id
	}
	sort.SliceStable(c.cand, func(i, j int) bool { return c.cand[i].p > c.cand[j].p })
	if o.TopK > 0 && o.TopK < len(c.cand) {
		c.cand = c.cand[:o.TopK]
	}
	softmax := func() {
		top, sum := c.cand[0].p, float32(0)
		for i := range c.cand {
			c.cand[i].p = float32(math.Exp(float64(c.cand[i].p - top)))
			sum += c.cand[i].p
		}
		for i := range c.cand {
			c.cand[i].p /= sum
		}
	}
	logit := make([]float32, len(c.cand))
	for i, x := range c.cand {
		logit[i] = x.p
	}
	softmax()
	keep := len(c.cand)
	if o.TopP > 0 && o.TopP < 1 {
		var acc float32
		for i, x := range c.cand {
			acc += x.p
			if acc >= o.TopP {
				keep = i + 1
				break
			}
		}
	}
	if o.MinP > 0 {
		lim := c.cand[0].p * o.MinP
		for i := 1; i < keep; i++ {
			if c.cand[i].p < lim {
				keep = i
				break
			}
		}
	}
	c.cand = c.cand[:keep]
	for i := range c.cand {
		c.cand[i].p = logit[i] / o.Temp
	}
	softmax()
	r := c.rng.Float32()
	var acc float32
	for _, x := range c.cand {
		acc += x.p
		if r < acc {
			return x.id
		}
	}
	return c.cand[len(c.cand)-1].id
}
