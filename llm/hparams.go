package llm

import (
	"fmt"
	"math"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// Arch is a model architecture, as general.architecture names it.
type Arch string

// The architectures tandem runs.
const (
	ArchLlama    Arch = "llama"
	ArchQwen2    Arch = "qwen2"
	ArchQwen3    Arch = "qwen3"
	ArchQwen3MoE Arch = "qwen3moe"
)

var supportedArchs = []Arch{ArchLlama, ArchQwen2, ArchQwen3, ArchQwen3MoE}

// HParams are a model's hyper-parameters, read from its GGUF metadata.
type HParams struct {
	Arch        Arch
	NVocab      int
	NCtxTrain   int // context length the model was trained with
	NEmbd       int
	NLayer      int
	NFF         int // feed-forward width (per expert for MoE models)
	NHead       int
	NHeadKV     int
	HeadDimK    int // key (and query) head size
	HeadDimV    int // value head size
	NRot        int // dimensions RoPE rotates
	RopeMode    int // core.RopeNormal (llama) or core.RopeNeox (qwen)
	RopeBase    float32
	RopeScale   float32 // position scale (1/factor for linear scaling)
	NCtxOrig    int
	NormEps     float32
	NExpert     int
	NExpertUsed int
	ExpertScale float32 // expert_weights_scale (0: none)
	NormExperts bool    // divide the selected experts' weights by their sum
}

// NEmbdKGQA is the width of one token's keys across the KV heads.
func (h *HParams) NEmbdKGQA() int { return h.HeadDimK * h.NHeadKV }

// NEmbdVGQA is the width of one token's values across the KV heads.
func (h *HParams) NEmbdVGQA() int { return h.HeadDimV * h.NHeadKV }

// metaInt reads an integer key of any integer type; def is used when the key is absent and
// required is false.
func metaInt(md *gguf.Metadata, key string, def int, required bool) (int, error) {
	if !md.Has(key) {
		if required {
			return 0, fmt.Errorf("tandem: llm: metadata key %s is missing", key)
		}
		return def, nil
	}
	v, err := md.GetUint(key)
	if err != nil {
		// a per-layer array (head_count_kv can be one): every entry must agree
		if arr, aerr := md.GetUint32s(key); aerr == nil && len(arr) > 0 {
			for _, x := range arr {
				if x != arr[0] {
					return 0, fmt.Errorf("tandem: llm: %s varies per layer (%v): not supported", key, arr)
				}
			}
			v, err = uint64(arr[0]), nil
		} else if arr, aerr := md.GetInt32s(key); aerr == nil && len(arr) > 0 {
			for _, x := range arr {
				if x != arr[0] {
					return 0, fmt.Errorf("tandem: llm: %s varies per layer (%v): not supported", key, arr)
				}
			}
			if arr[0] < 0 {
				return 0, fmt.Errorf("tandem: llm: %s is negative (%d)", key, arr[0])
			}
			v, err = uint64(arr[0]), nil
		}
		if err != nil {
			return 0, core.Errorf("tandem: llm: metadata key %s: %w", key, err)
		}
	}
	if v > 1<<31-1 {
		return 0, fmt.Errorf("tandem: llm: metadata key %s = %d is too large", key, v)
	}
	return int(v), nil
}

// metaFloat reads a float key (f32 or f64); def when absent.
func metaFloat(md *gguf.Metadata, key string, def float32) (float32, error) {
	v, ok := md.Lookup(key)
	if !ok {
		return def, nil
	}
	switch x := v.(type) {
	case float32:
		return x, nil
	case float64:
		return float32(x), nil
	}
	return 0, fmt.Errorf("tandem: llm: metadata key %s is %T, want a float", key, v)
}

// readHParams reads the hyper-parameters of md's architecture and checks them.
func readHParams(md *gguf.Metadata) (*HParams, error) {
	archName, err := md.GetString("general.architecture")
	if err != nil {
		return nil, core.Errorf("tandem: llm: general.architecture: %w", err)
	}
	h := &HParams{Arch: Arch(archName)}
	known := false
	for _, a := range supportedArchs {
		known = known || a == h.Arch
	}
	if !known {
		return nil, fmt.Errorf("tandem: llm: unknown architecture %q (supported: %v)", archName, supportedArchs)
	}
	k := func(s string) string { return archName + "." + s }
	ints := []struct {
		dst      *int
		key      string
		def      int
		required bool
	}{
		{&h.NEmbd, k("embedding_length"), 0, true},
		{&h.NLayer, k("block_count"), 0, true},
		{&h.NHead, k("attention.head_count"), 0, true},
		{&h.NCtxTrain, k("context_length"), 2048, false},
		{&h.NExpert, k("expert_count"), 0, false},
		{&h.NExpertUsed, k("expert_used_count"), 0, false},
	}
	for _, e := range ints {
		if *e.dst, err = metaInt(md, e.key, e.def, e.required); err != nil {
			return nil, err
		}
	}
	if h.NEmbd <= 0 || h.NLayer <= 0 || h.NHead <= 0 {
		return nil, fmt.Errorf("tandem: llm: embedding_length %d, block_count %d and head_count %d must be positive", h.NEmbd, h.NLayer, h.NHead)
	}
	if h.NLayer > 4096 || h.NEmbd > 1<<20 || h.NHead > 1<<14 {
		return nil, fmt.Errorf("tandem: llm: block_count %d, embedding_length %d or head_count %d is implausibly large", h.NLayer, h.NEmbd, h.NHead)
	}
	if h.NHeadKV, err = metaInt(md, k("attention.head_count_kv"), h.NHead, false); err != nil {
		return nil, err
	}
	if h.NHeadKV <= 0 || h.NHead%h.NHeadKV != 0 {
		return nil, fmt.Errorf("tandem: llm: head_count %d is not a multiple of head_count_kv %d", h.NHead, h.NHeadKV)
	}
	if h.NEmbd%h.NHead != 0 && !md.Has(k("attention.key_length")) {
		return nil, fmt.Errorf("tandem: llm: embedding_length %d is not a multiple of head_count %d", h.NEmbd, h.NHead)
	}
	if h.HeadDimK, err = metaInt(md, k("attention.key_length"), h.NEmbd/h.NHead, false); err != nil {
		return nil, err
	}
	if h.HeadDimV, err = metaInt(md, k("attention.value_length"), h.HeadDimK, false); err != nil {
		return nil, err
	}
	if h.HeadDimK <= 0 || h.HeadDimV <= 0 || h.HeadDimK%2 != 0 {
		return nil, fmt.Errorf("tandem: llm: head sizes %d (keys) and %d (values) must be positive, keys even", h.HeadDimK, h.HeadDimV)
	}
	if h.NRot, err = metaInt(md, k("rope.dimension_count"), h.HeadDimK, false); err != nil {
		return nil, err
	}
	if h.NRot <= 0 || h.NRot%2 != 0 || h.NRot > h.HeadDimK {
		return nil, fmt.Errorf("tandem: llm: rope.dimension_count %d must be even and at most the head size %d", h.NRot, h.HeadDimK)
	}
	if h.NExpert > 0 {
		if h.NExpertUsed <= 0 || h.NExpertUsed > h.NExpert {
			return nil, fmt.Errorf("tandem: llm: expert_used_count %d must be in 1..expert_count %d", h.NExpertUsed, h.NExpert)
		}
		if h.NExpert > 512 {
			return nil, fmt.Errorf("tandem: llm: expert_count %d is more than 512", h.NExpert)
		}
	}
	ffKey := k("feed_forward_length")
	if h.Arch == ArchQwen3MoE && md.Has(k("expert_feed_forward_length")) {
		ffKey = k("expert_feed_forward_length")
	}
	if h.NFF, err = metaInt(md, ffKey, 0, true); err != nil {
		return nil, err
	}
	if h.NormEps, err = metaFloat(md, k("attention.layer_norm_rms_epsilon"), 1e-5); err != nil {
		return nil, err
	}
	if h.RopeBase, err = metaFloat(md, k("rope.freq_base"), 10000); err != nil {
		return nil, err
	}
	h.RopeScale = 1
	if f, err := metaFloat(md, k("rope.scaling.factor"), 0); err != nil {
		return nil, err
	} else if f != 0 && f != 1 {
		typ, _ := md.GetString(k("rope.scaling.type"))
		switch typ {
		case "", "linear", "none":
			if typ != "none" {
				h.RopeScale = 1 / f
			}
		default:
			return nil, fmt.Errorf("tandem: llm: rope scaling %q is not supported (none or linear)", typ)
		}
	}
	if h.NCtxOrig, err = metaInt(md, k("rope.scaling.original_context_length"), h.NCtxTrain, false); err != nil {
		return nil, err
	}
	if h.ExpertScale, err = metaFloat(md, k("expert_weights_scale"), 0); err != nil {
		return nil, err
	}
	if math.IsNaN(float64(h.NormEps)) || h.NormEps < 0 || math.IsNaN(float64(h.RopeBase)) || h.RopeBase <= 0 {
		return nil, fmt.Errorf("tandem: llm: layer_norm_rms_epsilon %g or rope.freq_base %g is invalid", h.NormEps, h.RopeBase)
	}
	h.NormExperts = true // llama (Mixtral) and qwen3moe both renormalize the top-k weights
	if v, ok := md.Lookup(k("expert_weights_norm")); ok {
		if b, isBool := v.(bool); isBool {
			h.NormExperts = b
		}
	}
	h.RopeMode = core.RopeNormal
	if h.Arch != ArchLlama {
		h.RopeMode = core.RopeNeox
	}
	return h, nil
}
