package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"github.com/tandem-ml/tandem/backends/cpu"
	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/llm"
)

// The model families (-model FILE) run a GGUF language model through package llm as llama-bench
// does: pp N evaluates a prompt of N seeded random tokens in one Eval, tg N generates N tokens one
// Eval at a time, both from an empty KV cache (F16, llm's default) and timed in tokens per second.
// Each case has a row per CPU thread count (ngl 0), per device with every layer offloaded (the
// token embeddings stay on the CPU, as in llama.cpp) and per device+CPU scheduler at each split
// value (-ngl). Every row's logits (the prompt's last token for pp, every generated token for tg)
// are compared with the CPU's.

// Family IDs of the model families.
const (
	modelPP = "model/pp"
	modelTG = "model/tg"
)

// modelLimit is the model families' NMSE limit. With F32 weights a device's logits match the
// CPU's to ~1e-12, and so do F16 ones but where the CPU rounds a prompt's F16 products to bf16
// (llm's default on AVX-512 BF16 CPUs: ~1e-4 on TinyLlama's shapes with random weights); with
// quantized weights the CPU quantizes the activations to Q8 for its dot products and other devices
// may not, which compounds over the layers (Vulkan on lavapipe: ~1e-4 for the tiny Q8_0 and Q4_0
// models). A wrong kernel is off by far more (0.1 and up).
const modelLimit = 1e-3

// modelSource is the language model of -model: its file and what the bench needs to know of it.
type modelSource struct {
	Path   string
	Info   llm.ModelInfo
	Layers int // offloadable layers: the blocks and the output layer (the -ngl of "all")
	NVocab int // token ids are drawn from [0, NVocab)
}

// openModelSource reads the model at path once (on the CPU alone) for its description and sizes.
func openModelSource(path string) (*modelSource, error) {
	m, err := llm.Open(path, llm.Options{})
	if err != nil {
		return nil, fmt.Errorf("-model: %w", err)
	}
	src := &modelSource{Path: path, Info: m.Info(), Layers: m.HParams.NLayer + 1, NVocab: m.Vocab().Len()}
	if err := m.Close(); err != nil {
		return nil, fmt.Errorf("-model: %w", err)
	}
	return src, nil
}

// modelFamilies returns the prompt (pp) and generation (tg) families of src.
func modelFamilies(src *modelSource) []*Family {
	xlabel := fmt.Sprintf("layers offloaded (-ngl, of %d)", src.Layers)
	pp := &Family{ID: modelPP, Title: "MODEL " + src.Info.Desc + " pp", XLabel: xlabel, Metric: MetricTokens,
		Ladder: []int64{64, 512}, Quick: []int64{16}, Limit: modelLimit, Sched: true, model: src}
	tg := &Family{ID: modelTG, Title: "MODEL " + src.Info.Desc + " tg", XLabel: xlabel, Metric: MetricTokens,
		Ladder: []int64{16, 128}, Quick: []int64{4}, Limit: modelLimit, Sched: true, model: src}
	for _, f := range []*Family{pp, tg} {
		f.make = func(n int64) *Case {
			c := &Case{Family: f, N: n, Shape: fmt.Sprintf("pp%d", n)}
			// ≈ 2 FLOPs per weight per token (attention left out); tg reads every weight per token.
			c.FLOPs = 2 * float64(src.Info.Params) * float64(n)
			c.Bytes = float64(src.Info.Bytes)
			if f.ID == modelTG {
				c.Shape = fmt.Sprintf("tg%d", n)
				c.Bytes *= float64(n)
			}
			return c
		}
	}
	return []*Family{pp, tg}
}

// splitLayers returns the -ngl values of a model's split rows, increasing and below layers (all
// layers is the device's own row): the -ngl list when given, else 0 and the quarter steps.
func splitLayers(list []int, layers int) []int {
	set := map[int]bool{}
	if list == nil {
		for k := range 4 {
			list = append(list, (2*k*layers+4)/8) // k·layers/4, rounded
		}
	}
	for _, n := range list {
		if n >= 0 && n < layers {
			set[n] = true
		}
	}
	out := make([]int, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// modelTokens are the case's seeded random token ids (the same on every row).
func modelTokens(c *Case) []int32 {
	rng := rand.New(rand.NewPCG(seedOf(c), 1))
	ids := make([]int32, c.N)
	for i := range ids {
		ids[i] = int32(rng.IntN(max(c.Family.model.NVocab, 1)))
	}
	return ids
}

// loadedModel is the model a target has loaded, with its layers offloaded.
type loadedModel struct {
	src *modelSource
	ngl int
	m   *llm.Model
}

// loadModel returns src loaded on t's backends with ngl layers offloaded, reusing the target's
// model when it is the same, else closing it first (one model per target is loaded at a time).
func (r *Runner) loadModel(src *modelSource, t *Target, ngl int) (*llm.Model, error) {
	if lm := r.models[t]; lm != nil {
		if lm.src == src && lm.ngl == ngl {
			return lm.m, nil
		}
		delete(r.models, t)
		if err := lm.m.Close(); err != nil {
			return nil, fmt.Errorf("closing the model loaded before: %w", err)
		}
	}
	var bs []core.Backend
	switch t.Kind {
	case KindCPU:
		bs = []core.Backend{t.Backend}
	case KindDevice:
		if t.CPU == nil { // the device's row keeps the token embeddings on a CPU backend of its own
			cb, err := cpu.New(cpu.Options{Threads: r.baseThreads()})
			if err != nil {
				return nil, err
			}
			if r.Logger != nil {
				cb.SetLogger(r.Logger)
			}
			t.CPU = cb
		}
		bs = []core.Backend{t.Backend, t.CPU}
	case KindSched:
		bs = []core.Backend{t.Backend, t.CPU}
	}
	m, err := llm.Open(src.Path, llm.Options{GPULayers: ngl, Backends: bs})
	if err != nil {
		return nil, err
	}
	r.models[t] = &loadedModel{src: src, ngl: ngl, m: m}
	return m, nil
}

// baseThreads is the baseline CPU's thread count (the CPU part of the device rows).
func (r *Runner) baseThreads() int {
	for _, t := range r.Targets {
		if t.Kind == KindCPU && t.Baseline {
			return t.Threads
		}
	}
	return 0
}

// closeModels closes every loaded model (before the targets' backends are closed).
func (r *Runner) closeModels() error {
	var errs []error
	for t, lm := range r.models {
		if err := lm.m.Close(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", t.Name, err))
		}
		delete(r.models, t)
	}
	if len(errs) > 0 {
		return fmt.Errorf("closing the models: %v", errs)
	}
	return nil
}

// runModelOn runs model case c on target t with ngl layers offloaded, as runOn runs a graph: the
// same budget, estimates, warm-ups and repeats. It returns the row and the logits of the last run.
func (r *Runner) runModelOn(c *Case, t *Target, ngl int, refOnly bool) (*Result, []float32) {
	src := c.Family.model
	res := &Result{Family: c.Family, Case: c, Target: t.Name, Kind: t.Kind, Baseline: t.Baseline, NGL: ngl, Layers: src.Layers}
	skip := func(format string, args ...any) (*Result, []float32) {
		res.Status, res.Reason = StatusSkipped, fmt.Sprintf(format, args...)
		return res, nil
	}
	fail := func(what string, err error) (*Result, []float32) {
		res.Status, res.Reason = StatusError, what+": "+err.Error()
		return res, nil
	}
	if why, ok := r.broken[t]; ok {
		return skip("%s", why)
	}
	key := fmt.Sprintf("%s@ngl%d", c.Family.ID, ngl)
	if !refOnly {
		if r.spent[t] > r.Policy.Device {
			return skip("device time budget spent (-device-budget %v)", r.Policy.Device)
		}
		if why := r.skipEstimate(c, t, key); why != "" {
			return skip("%s", why)
		}
		start := time.Now()
		defer func() { r.spent[t] += time.Since(start) }()
	}
	if err := t.open(r.Logger); err != nil {
		r.broken[t] = "device failed to start"
		return fail("starting "+t.Name, err)
	}
	m, err := r.loadModel(src, t, ngl)
	if err != nil {
		return fail("loading the model", err)
	}
	sess, err := m.NewSession(llm.SessionOptions{ContextSize: int(c.N)})
	if err != nil {
		return fail("session", err)
	}
	defer sess.Close()
	res.FlashAttn = sess.FlashAttn()

	ids := modelTokens(c)
	gen := c.Family.ID == modelTG
	ctx := context.Background()
	var out []float32
	compute := func() error {
		sess.Reset()
		out = out[:0]
		var err error
		if !gen {
			out, err = sess.EvalTo(ctx, ids, llm.LastLogits, out)
			return err
		}
		for _, id := range ids {
			if out, err = sess.EvalTo(ctx, []int32{id}, llm.LastLogits, out); err != nil {
				return err
			}
		}
		return nil
	}
	var before llm.SessionStats
	if err := r.measure(res, t.Hidden || refOnly, compute, func() { before = sess.Stats() }); err != nil {
		return fail("eval", err)
	}
	if st := sess.Stats(); len(res.Times) > 0 {
		graphs := float64(st.Graphs-before.Graphs) / float64(len(res.Times))
		res.Splits, res.Copies = st.Splits, st.Copies
		res.CopiesPerRun = float64(st.Copies) * graphs
	}
	res.Status = StatusOK
	if !refOnly {
		r.est[t].Observe(key, c.Family.Metric, c.Work(), res.Median)
	}
	return res, out
}
