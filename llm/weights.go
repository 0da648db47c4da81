package llm

import (
	"fmt"

	"github.com/tandem-ml/tandem/core"
	"github.com/tandem-ml/tandem/core/gguf"
)

// layer holds one transformer block's weights (nil where the file has no such optional tensor).
type layer struct {
	attnNorm          *core.Tensor
	wq, wk, wv, wo    *core.Tensor
	bq, bk, bv, bo    *core.Tensor
	qNorm, kNorm      *core.Tensor
	ffnNorm           *core.Tensor
	ffnGate, ffnUp    *core.Tensor
	ffnDown           *core.Tensor
	gateB, upB, downB *core.Tensor
	gateInp           *core.Tensor
	gateExps, upExps  *core.Tensor
	downExps          *core.Tensor
	ropeFreqs         *core.Tensor
	dev               int // index of the backend holding the layer's weights and KV cache
}

// tensorSpec is one tensor the architecture reads: its name, expected shape and whether it must be
// present.
type tensorSpec struct {
	name     string
	ne       []int64
	optional bool
}

// layerSpecs lists the tensors of block il for h's architecture.
func layerSpecs(h *HParams, il int) []tensorSpec {
	e, hd, hdv := int64(h.NEmbd), int64(h.HeadDimK), int64(h.HeadDimV)
	nq, nkv := int64(h.NHead)*hd, int64(h.NHeadKV)*hd
	nv := int64(h.NHeadKV) * hdv
	ff := int64(h.NFF)
	n := func(s string) string { return fmt.Sprintf("blk.%d.%s", il, s) }
	specs := []tensorSpec{
		{n("attn_norm.weight"), []int64{e}, false},
		{n("attn_q.weight"), []int64{e, nq}, false},
		{n("attn_k.weight"), []int64{e, nkv}, false},
		{n("attn_v.weight"), []int64{e, nv}, false},
		{n("attn_output.weight"), []int64{int64(h.NHead) * hdv, e}, false},
		{n("attn_q.bias"), []int64{nq}, true},
		{n("attn_k.bias"), []int64{nkv}, true},
		{n("attn_v.bias"), []int64{nv}, true},
		{n("attn_output.bias"), []int64{e}, true},
		{n("ffn_norm.weight"), []int64{e}, false},
	}
	qkNorm := h.Arch == ArchQwen3 || h.Arch == ArchQwen3MoE
	specs = append(specs,
		tensorSpec{n("attn_q_norm.weight"), []int64{hd}, !qkNorm},
		tensorSpec{n("attn_k_norm.weight"), []int64{hd}, !qkNorm})
	if h.NExpert == 0 {
		specs = append(specs,
			tensorSpec{n("ffn_gate.weight"), []int64{e, ff}, false},
			tensorSpec{n("ffn_up.weight"), []int64{e, ff}, false},
			tensorSpec{n("ffn_down.weight"), []int64{ff, e}, false},
			tensorSpec{n("ffn_gate.bias"), []int64{ff}, true},
			tensorSpec{n("ffn_up.bias"), []int64{ff}, true},
			tensorSpec{n("ffn_down.bias"), []int64{e}, true})
	} else {
		x := int64(h.NExpert)
		specs = append(specs,
			tensorSpec{n("ffn_gate_inp.weight"), []int64{e, x}, false},
			tensorSpec{n("ffn_gate_exps.weight"), []int64{e, ff, x}, false},
			tensorSpec{n("ffn_up_exps.weight"), []int64{e, ff, x}, false},
			tensorSpec{n("ffn_down_exps.weight"), []int64{ff, e, x}, false})
	}
	if h.Arch == ArchLlama {
		specs = append(specs, tensorSpec{n("rope_freqs.weight"), []int64{int64(h.NRot / 2)}, true})
	}
	return specs
}

// globalSpecs lists the tensors outside the blocks.
func globalSpecs(h *HParams) []tensorSpec {
	e, v := int64(h.NEmbd), int64(h.NVocab)
	return []tensorSpec{
		{"token_embd.weight", []int64{e, v}, false},
		{"output_norm.weight", []int64{e}, false},
		{"output.weight", []int64{e, v}, true},
		{"output.bias", []int64{v}, true},
		{"rope_freqs.weight", []int64{int64(h.NRot / 2)}, true},
	}
}

// sameShape reports whether info has exactly the dims ne (trailing 1s ignored).
func sameShape(info gguf.TensorInfo, ne []int64) bool {
	for i := 0; i < 4; i++ {
		want := int64(1)
		if i < len(ne) {
			want = ne[i]
		}
		if info.Ne[i] != want {
			return false
		}
	}
	return true
}

func shapeString(ne []int64) string { return fmt.Sprint(ne) }

// checkTensors verifies that f has every tensor h's architecture needs, with the right shapes and
// types, before anything is loaded. It also sets h.NVocab from token_embd.
func checkTensors(f *gguf.File, h *HParams) error {
	te, ok := f.Tensor("token_embd.weight")
	if !ok {
		return fmt.Errorf("tandem: llm: tensor token_embd.weight is missing (want [%d, n_vocab])", h.NEmbd)
	}
	if te.Ne[0] != int64(h.NEmbd) || te.Ne[1] <= 0 || te.Ne[2] != 1 || te.Ne[3] != 1 {
		return fmt.Errorf("tandem: llm: tensor token_embd.weight has shape %v, want [%d, n_vocab]", te.Ne[:te.NDims], h.NEmbd)
	}
	if te.Ne[1] > 1<<31-1 {
		return fmt.Errorf("tandem: llm: token_embd.weight has %d rows, more than an int32 token id can name", te.Ne[1])
	}
	h.NVocab = int(te.Ne[1])
	specs := globalSpecs(h)
	for il := 0; il < h.NLayer; il++ {
		specs = append(specs, layerSpecs(h, il)...)
	}
	for _, s := range specs {
		info, ok := f.Tensor(s.name)
		if !ok {
			if s.optional {
				continue
			}
			return fmt.Errorf("tandem: llm: %s model: tensor %s is missing (want shape %s)", h.Arch, s.name, shapeString(s.ne))
		}
		if !sameShape(info, s.ne) {
			return fmt.Errorf("tandem: llm: %s model: tensor %s has shape %v, want %s", h.Arch, s.name, info.Ne[:max(info.NDims, 1)], shapeString(s.ne))
		}
		if !info.Type.CanDequantize() || info.Type == core.TypeI32 {
			return fmt.Errorf("tandem: llm: tensor %s has type %v, which tandem cannot read as weights", s.name, info.Type)
		}
	}
	return nil
}
