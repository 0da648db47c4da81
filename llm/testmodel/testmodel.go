// Package testmodel writes GGUF language models with seeded random weights: the small files
// tandem's llm tests compare against llama.cpp, and models of real shapes (TinyLlama-1.1B's, an MoE)
// for benchmarks. The files load in llama.cpp as well as in tandem.
package testmodel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// Spec describes a model to write.
type Spec struct {
	Arch        string // llama, qwen2, qwen3, qwen3moe
	NVocab      int    // at least the vocabulary's own size (VocabSPM: 259 + pieces; BPE: 256 + merges)
	NEmbd       int
	NLayer      int
	NHead       int
	NHeadKV     int
	HeadDim     int // 0: NEmbd / NHead
	NFF         int // per expert for MoE
	NExpert     int
	NExpertUsed int
	CtxLen      int     // context_length (0: 4096)
	RopeBase    float32 // 0: 10000
	NormEps     float32 // 0: 1e-5
	// WeightType is the type of the 2-D/3-D matrices (norms and biases stay F32).
	WeightType core.Type
	// OutputType is the type of output.weight (0 = WeightType; F32 is type 0, so use OutputF32).
	OutputType core.Type
	OutputF32  bool
	Tied       bool // no output.weight: the token embeddings are reused
	Bias       bool // q/k/v biases (qwen2 has them)
	RopeFreqs  bool // a rope_freqs.weight tensor (Llama 3.1 style frequency factors)
	Vocab      string
	Seed       uint64
}

// Tiny returns a small spec of arch for tests: 2 layers, n_embd 64, 4 heads, 2 KV heads.
func Tiny(arch string) Spec {
	s := Spec{Arch: arch, NVocab: 384, NEmbd: 64, NLayer: 2, NHead: 4, NHeadKV: 2, NFF: 96,
		WeightType: core.TypeF32, OutputF32: true, Vocab: "spm", Seed: 1}
	switch arch {
	case "qwen2":
		s.Bias, s.Vocab, s.Tied = true, "bpe", true
	case "qwen3":
		s.Vocab = "bpe"
		s.HeadDim = 32 // qwen3 has head_dim != n_embd/n_head
	case "qwen3moe":
		s.Vocab, s.NExpert, s.NExpertUsed, s.NFF = "bpe", 4, 2, 32
	case "llama-moe":
		s.Arch, s.NExpert, s.NExpertUsed, s.NFF = "llama", 4, 2, 48
	}
	return s
}

// TinyLlama returns TinyLlama-1.1B's shapes (n_embd 2048, 22 layers, 32 heads, 4 KV heads, ff 5632,
// vocab 32000) in weight type t.
func TinyLlama(t core.Type) Spec {
	return Spec{Arch: "llama", NVocab: 32000, NEmbd: 2048, NLayer: 22, NHead: 32, NHeadKV: 4, NFF: 5632,
		CtxLen: 2048, WeightType: t, Vocab: "spm", Seed: 42}
}

func (s *Spec) headDim() int {
	if s.HeadDim > 0 {
		return s.HeadDim
	}
	return s.NEmbd / s.NHead
}

// tensor is one tensor to write: its shape, type and the standard deviation of its values
// (norm weights are 1 + noise).
type tensor struct {
	name string
	ne   []int64
	typ  core.Type
	std  float64
	one  bool
}

func (s *Spec) tensors() []tensor {
	e, hd := int64(s.NEmbd), int64(s.headDim())
	nq, nkv, ff, v := int64(s.NHead)*hd, int64(s.NHeadKV)*hd, int64(s.NFF), int64(s.NVocab)
	w := s.WeightType
	out := s.OutputType
	if out == 0 && !s.OutputF32 {
		out = w
	}
	if s.OutputF32 {
		out = core.TypeF32
	}
	std := func(fanIn int64) float64 { return 1 / math.Sqrt(float64(fanIn)) }
	ts := []tensor{
		{"token_embd.weight", []int64{e, v}, w, 1, false},
		{"output_norm.weight", []int64{e}, core.TypeF32, 0.1, true},
	}
	if !s.Tied {
		ts = append(ts, tensor{"output.weight", []int64{e, v}, out, std(e), false})
	}
	if s.RopeFreqs {
		ts = append(ts, tensor{"rope_freqs.weight", []int64{int64(s.headDim() / 2)}, core.TypeF32, 0.2, true})
	}
	qk := s.Arch == "qwen3" || s.Arch == "qwen3moe"
	for il := 0; il < s.NLayer; il++ {
		n := func(x string) string { return fmt.Sprintf("blk.%d.%s", il, x) }
		ts = append(ts,
			tensor{n("attn_norm.weight"), []int64{e}, core.TypeF32, 0.1, true},
			tensor{n("attn_q.weight"), []int64{e, nq}, w, std(e), false},
			tensor{n("attn_k.weight"), []int64{e, nkv}, w, std(e), false},
			tensor{n("attn_v.weight"), []int64{e, nkv}, w, std(e), false},
			tensor{n("attn_output.weight"), []int64{nq, e}, w, std(nq), false},
			tensor{n("ffn_norm.weight"), []int64{e}, core.TypeF32, 0.1, true})
		if s.Bias {
			ts = append(ts,
				tensor{n("attn_q.bias"), []int64{nq}, core.TypeF32, 0.1, false},
				tensor{n("attn_k.bias"), []int64{nkv}, core.TypeF32, 0.1, false},
				tensor{n("attn_v.bias"), []int64{nkv}, core.TypeF32, 0.1, false})
		}
		if qk {
			ts = append(ts,
				tensor{n("attn_q_norm.weight"), []int64{hd}, core.TypeF32, 0.1, true},
				tensor{n("attn_k_norm.weight"), []int64{hd}, core.TypeF32, 0.1, true})
		}
		if s.NExpert == 0 {
			ts = append(ts,
				tensor{n("ffn_gate.weight"), []int64{e, ff}, w, std(e), false},
				tensor{n("ffn_up.weight"), []int64{e, ff}, w, std(e), false},
				tensor{n("ffn_down.weight"), []int64{ff, e}, w, std(ff), false})
		} else {
			x := int64(s.NExpert)
			ts = append(ts,
				tensor{n("ffn_gate_inp.weight"), []int64{e, x}, core.TypeF32, std(e), false},
				tensor{n("ffn_gate_exps.weight"), []int64{e, ff, x}, w, std(e), false},
				tensor{n("ffn_up_exps.weight"), []int64{e, ff, x}, w, std(e), false},
				tensor{n("ffn_down_exps.weight"), []int64{ff, e, x}, w, std(ff), false})
		}
	}
	return ts
}

// Metadata returns the GGUF metadata of the model (hyper-parameters and vocabulary).
func (s *Spec) Metadata() (*gguf.Metadata, error) {
	md := &gguf.Metadata{}
	a := s.Arch
	ctxLen := s.CtxLen
	if ctxLen == 0 {
		ctxLen = 4096
	}
	base, eps := s.RopeBase, s.NormEps
	if base == 0 {
		base = 10000
	}
	if eps == 0 {
		eps = 1e-5
	}
	type kv struct {
		k string
		v any
	}
	kvs := []kv{
		{"general.architecture", a},
		{"general.name", "tandem-testmodel"},
		{a + ".context_length", uint32(ctxLen)},
		{a + ".embedding_length", uint32(s.NEmbd)},
		{a + ".block_count", uint32(s.NLayer)},
		{a + ".feed_forward_length", uint32(s.NFF)},
		{a + ".attention.head_count", uint32(s.NHead)},
		{a + ".attention.head_count_kv", uint32(s.NHeadKV)},
		{a + ".attention.layer_norm_rms_epsilon", eps},
		{a + ".rope.freq_base", base},
		{a + ".rope.dimension_count", uint32(s.headDim())},
	}
	if s.HeadDim > 0 {
		kvs = append(kvs, kv{a + ".attention.key_length", uint32(s.HeadDim)}, kv{a + ".attention.value_length", uint32(s.HeadDim)})
	}
	if s.NExpert > 0 {
		kvs = append(kvs, kv{a + ".expert_count", uint32(s.NExpert)}, kv{a + ".expert_used_count", uint32(s.NExpertUsed)})
		if a == "qwen3moe" {
			kvs = append(kvs, kv{a + ".expert_feed_forward_length", uint32(s.NFF)})
		}
	}
	if ft, ok := fileTypes[s.WeightType]; ok { // llama.cpp's general.file_type (enum llama_ftype)
		kvs = append(kvs, kv{"general.file_type", ft})
	}
	for _, e := range kvs {
		if err := md.Set(e.k, e.v); err != nil {
			return nil, err
		}
	}
	var err error
	switch s.Vocab {
	case "spm", "":
		err = spmVocab(md, s.NVocab)
	case "bpe":
		err = bpeVocab(md, s.NVocab, s.Arch)
	default:
		err = fmt.Errorf("tandem: testmodel: unknown vocab %q (spm or bpe)", s.Vocab)
	}
	if err != nil {
		return nil, err
	}
	return md, nil
}

// fileTypes are llama.cpp's file types (enum llama_ftype) of the weight types; a K-quant stands for
// its _M mix.
var fileTypes = map[core.Type]uint32{
	core.TypeF32: 0, core.TypeF16: 1, core.TypeQ4_0: 2, core.TypeQ4_1: 3, core.TypeQ8_0: 7, core.TypeQ5_0: 8,
	core.TypeQ5_1: 9, core.TypeQ2_K: 10, core.TypeQ3_K: 12, core.TypeQ4_K: 15, core.TypeQ5_K: 17,
	core.TypeQ6_K: 18, core.TypeIQ4_NL: 25, core.TypeIQ4_XS: 30, core.TypeBF16: 32,
}

// Write writes the model to path.
func Write(path string, s Spec) error {
	if s.NEmbd <= 0 || s.NLayer <= 0 || s.NHead <= 0 || s.NHeadKV <= 0 || s.NFF <= 0 || s.NVocab <= 0 {
		return fmt.Errorf("tandem: testmodel: incomplete spec %+v", s)
	}
	md, err := s.Metadata()
	if err != nil {
		return err
	}
	w := gguf.NewWriter()
	for _, kv := range md.KVs() {
		if err := w.Metadata.Set(kv.Key, kv.Value); err != nil {
			return err
		}
	}
	for i, t := range s.tensors() {
		if !t.typ.CanConvert() || t.typ.IsQuantized() && t.ne[0]%t.typ.BlockSize() != 0 {
			return fmt.Errorf("tandem: testmodel: tensor %s: type %v cannot hold rows of %d", t.name, t.typ, t.ne[0])
		}
		info := gguf.TensorInfo{Name: t.name, Type: t.typ, NDims: len(t.ne)}
		for d := range info.Ne {
			info.Ne[d] = 1
		}
		copy(info.Ne[:], t.ne)
		gen := &lazy{t: t, seed: s.Seed*1000003 + uint64(i)}
		if err := w.AddTensorData(info, gen.read); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// lazy makes a tensor's bytes when the writer first asks for them and drops them after the last.
type lazy struct {
	t    tensor
	seed uint64
	data []byte
}

func (l *lazy) read(dst []byte, off int64) error {
	if l.data == nil {
		l.data = l.make()
	}
	copy(dst, l.data[off:])
	if off+int64(len(dst)) >= int64(len(l.data)) {
		l.data = nil
	}
	return nil
}

func (l *lazy) make() []byte {
	t := l.t
	rng := rand.New(rand.NewPCG(l.seed, 0x6d6f64656c))
	row := t.ne[0]
	n := int64(1)
	for _, v := range t.ne {
		n *= v
	}
	vals := make([]float32, row)
	out := make([]byte, 0, n/t.typ.BlockSize()*t.typ.Size())
	buf := make([]byte, t.typ.RowSize(row))
	for r := int64(0); r < n/row; r++ {
		for i := range vals {
			x := rng.NormFloat64() * t.std
			if t.one {
				x += 1
			}
			vals[i] = float32(x)
		}
		if t.typ == core.TypeF32 {
			for i, v := range vals {
				binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
			}
		} else if err := t.typ.FromFloat(vals, buf); err != nil {
			panic(err) // the spec's types are checked convertible: a bug here, not user input
		}
		out = append(out, buf...)
	}
	return out
}

// MoE returns the MoE benchmark shapes (n_embd 1024, 12 layers, 8 experts with 2 used, ff
// 2816 per expert, vocab 32000) in the llama architecture with weight type t.
func MoE(t core.Type) Spec {
	return Spec{Arch: "llama", NVocab: 32000, NEmbd: 1024, NLayer: 12, NHead: 16, NHeadKV: 4, NFF: 2816,
		NExpert: 8, NExpertUsed: 2, CtxLen: 2048, WeightType: t, Vocab: "spm", Seed: 42}
}
