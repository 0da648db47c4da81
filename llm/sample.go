package llm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Sampler picks the next token from a row of logits (-1 from an empty row). Accept tells it the
// token chosen (for repetition penalties); Reset forgets the history.
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

// argmax is the index of the first largest value of x (ignoring NaNs after x[0]), -1 when x is
// empty.
func argmax(x []float32) int32 {
	if len(x) == 0 {
		return -1
	}
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
	logit   []float32
	pen     []float32 // the logits with the repetition penalty applied (penalized)
	seen    map[int32]struct{}
}

type cand struct {
	id int32
	p  float32
}

// better orders candidates by value, highest first, the lower id first among ties.
func better(a, b cand) bool { return a.p > b.p || (a.p == b.p && a.id < b.id) }

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

// Sample runs the chain on logits. Only the candidates that can survive top-k and min-p are
// sorted (a vocabulary-wide sort per token would cost more than a small model's forward pass);
// the probabilities top-p and min-p see are still normalized over every candidate top-k kept.
func (c *chain) Sample(logits []float32) int32 {
	if len(logits) == 0 {
		return -1
	}
	kept, tsum := c.filter(logits)
	if len(kept) == 1 {
		return kept[0].id
	}
	r := float64(c.rng.Float32()) * tsum
	var acc float64
	for _, x := range kept {
		acc += float64(x.p)
		if r < acc {
			return x.id
		}
	}
	return kept[len(kept)-1].id
}

// filter applies the penalty, top-k, top-p, min-p and the temperature to logits. It returns the
// surviving candidates, most likely first, each with its unnormalized weight, and their sum.
// A greedy pick scans the logits, and top-k makes candidate records only for the logits that
// enter its heap (MoE Q4_0 generates a token in ~3.6 ms on two Zen 5 cores; a record per token of
// a 32000-token vocabulary took 33-54 µs of it).
func (c *chain) filter(logits []float32) ([]cand, float64) {
	o := c.o
	if cap(c.cand) < len(logits) {
		c.cand = make([]cand, len(logits))
	}
	lg := c.penalized(logits)
	best := argmax(lg)
	if o.Temp <= 0 || len(lg) == 1 {
		c.cand = append(c.cand[:0], cand{int32(best), 1})
		return c.cand, 1
	}
	top := lg[best]
	var all []cand
	if o.TopK > 0 && o.TopK < len(lg) {
		all = selectTopLogits(lg, o.TopK, c.cand[:o.TopK])
	} else {
		all = c.cand[:len(lg)]
		for i, l := range lg {
			all[i] = cand{int32(i), l}
		}
	}
	// The normalizer of the first softmax, over every candidate left by top-k.
	var sum float64
	for _, x := range all {
		sum += math.Exp(float64(x.p - top))
	}
	kept := all
	if o.MinP > 0 {
		// p < MinP·p_top ⇔ logit < top + ln(MinP): drop those before sorting (with slack; the
		// exact test runs below on the sorted survivors).
		// The most likely token always stays (llama.cpp's min-p keeps the first, whatever p).
		lim := min(top, top+float32(math.Log(float64(o.MinP)))-1e-3)
		n := 0
		for _, x := range all {
			if x.p >= lim {
				all[n] = x // all is no longer needed past the sum above
				n++
			}
		}
		kept = all[:n]
	}
	slices.SortFunc(kept, func(a, b cand) int {
		if better(a, b) {
			return -1
		}
		if better(b, a) {
			return 1
		}
		return 0
	})
	c.logit = c.logit[:0]
	for _, x := range kept {
		c.logit = append(c.logit, x.p)
	}
	keep := len(kept)
	if o.TopP > 0 && o.TopP < 1 {
		var acc float64
		for i, l := range c.logit {
			acc += math.Exp(float64(l-top)) / sum
			if acc >= float64(o.TopP) {
				keep = i + 1
				break
			}
		}
	}
	if o.MinP > 0 {
		for i := 1; i < keep; i++ {
			if math.Exp(float64(c.logit[i]-top)) < float64(o.MinP) {
				keep = i
				break
			}
		}
	}
	kept = kept[:keep]
	var tsum float64
	for i := range kept {
		e := math.Exp(float64((c.logit[i] - c.logit[0]) / o.Temp))
		kept[i].p = float32(e)
		tsum += e
	}
	return kept, tsum
}

// penalized returns logits with the repetition penalty applied once to each token of the last
// RepeatLastN accepted (positive logits divided, negative ones multiplied): logits itself when
// the penalty is off or nothing was accepted, else a copy the chain keeps.
func (c *chain) penalized(logits []float32) []float32 {
	o := c.o
	if o.RepeatPenalty == 0 || o.RepeatPenalty == 1 || len(c.history) == 0 {
		return logits
	}
	c.pen = append(c.pen[:0], logits...)
	if c.seen == nil {
		c.seen = map[int32]struct{}{}
	}
	clear(c.seen)
	for _, id := range c.history[max(0, len(c.history)-o.RepeatLastN):] {
		if _, dup := c.seen[id]; dup || id < 0 || int(id) >= len(c.pen) {
			continue
		}
		c.seen[id] = struct{}{}
		if l := c.pen[id]; l > 0 {
			c.pen[id] = l / o.RepeatPenalty
		} else {
			c.pen[id] = l * o.RepeatPenalty
		}
	}
	return c.pen
}

// selectTopLogits gathers the k best candidates (i, x[i]) of a row of logits (by better: the
// higher value, the lower id among ties) into dst (k long, returned) in no particular order. A
// min-heap of the best k seen so far makes it one comparison per logit for most of a vocabulary,
// and only the logits that enter the heap become candidates. A logit after the first k beats the
// heap's worst only by value: every id in the heap is lower, so a tie keeps the heap's.
func selectTopLogits(x []float32, k int, dst []cand) []cand {
	h := dst[:k]
	for i := range h {
		h[i] = cand{int32(i), x[i]}
	}
	for i := k/2 - 1; i >= 0; i-- {
		heapDown(h, i)
	}
	for i := k; i < len(x); i++ {
		if v := x[i]; v > h[0].p {
			h[0] = cand{int32(i), v}
			heapDown(h, 0)
		}
	}
	return h
}

// heapDown moves h[i] down the min-heap h (by better: the worst candidate at the root) to its
// place.
func heapDown(h []cand, i int) {
	k := len(h)
	for {
		w, l, r := i, 2*i+1, 2*i+2
		if l < k && better(h[w], h[l]) {
			w = l
		}
		if r < k && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}
