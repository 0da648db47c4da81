package testmodel

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tandem-ml/tandem/core/gguf"
)

// Token types of tokenizer.ggml.token_type (llama.cpp's llama_token_type).
const (
	tokNormal  = 1
	tokUnknown = 2
	tokControl = 3
	tokUser    = 4
	tokByte    = 6
)

// corpus seeds the generated vocabularies' pieces and merges.
const corpus = "Once upon a time there was a little girl who lived in a village near the forest. " +
	"Whenever she went out, the little girl wore a red riding cloak, so everyone in the village " +
	"called her Little Red Riding Hood. The quick brown fox jumps over the lazy dog 0123456789 times; " +
	"it's what they've said and we'll see. Hello world! Bonjour le monde, ça va? こんにちは世界 你好世界"

// spmVocab sets a SentencePiece-style vocabulary of n tokens: <unk> <s> </s>, the 256 byte tokens,
// then pieces ("▁"-prefixed words and sub-words of the corpus, letters) with falling scores.
func spmVocab(md *gguf.Metadata, n int) error {
	tokens := []string{"<unk>", "<s>", "</s>"}
	types := []int32{tokUnknown, tokControl, tokControl}
	for b := 0; b < 256; b++ {
		tokens = append(tokens, fmt.Sprintf("<0x%02X>", b))
		types = append(types, tokByte)
	}
	seen := map[string]bool{}
	for _, t := range tokens {
		seen[t] = true
	}
	var pieces []string
	add := func(p string) {
		if p != "" && !seen[p] {
			seen[p] = true
			pieces = append(pieces, p)
		}
	}
	add("▁")
	for _, r := range "etaoinshrdlucmfwypvbgkqjxzETAOINSHRDLUCMFWYPVBGKQJXZ0123456789.,!?;:'-" {
		add(string(r))
	}
	for _, w := range strings.Fields(corpus) {
		w = strings.Trim(w, ".,!?;")
		rs := []rune(w)
		for i := 2; i <= len(rs); i++ {
			add("▁" + string(rs[:i]))
		}
		for i := 0; i+2 <= len(rs); i++ {
			add(string(rs[i : i+2]))
		}
		for _, r := range rs {
			add(string(r))
		}
	}
	need := n - len(tokens)
	if need < 1 {
		return fmt.Errorf("tandem: testmodel: an SPM vocabulary needs more than %d tokens", len(tokens))
	}
	for i := 0; len(pieces) < need; i++ {
		add(fmt.Sprintf("▁extra%d", i))
	}
	pieces = pieces[:need]
	scores := make([]float32, 0, n)
	for range tokens {
		scores = append(scores, 0)
	}
	for i, p := range pieces {
		tokens = append(tokens, p)
		types = append(types, tokNormal)
		// longer pieces score higher so that whole words win, as in trained models
		scores = append(scores, float32(len([]rune(p)))-float32(i)*1e-3)
	}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"tokenizer.ggml.model", "llama"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.scores", scores},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.bos_token_id", uint32(1)},
		{"tokenizer.ggml.eos_token_id", uint32(2)},
		{"tokenizer.ggml.unknown_token_id", uint32(0)},
	} {
		if err := md.Set(kv.k, kv.v); err != nil {
			return err
		}
	}
	return nil
}

// byteSymbols is GPT-2's byte-to-unicode table: printable bytes stand for themselves, the others
// are shifted past U+0100.
func byteSymbols() [256]string {
	var out [256]string
	next := 256
	for b := 0; b < 256; b++ {
		if (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF) {
			out[b] = string(rune(b))
		} else {
			out[b] = string(rune(next))
			next++
		}
	}
	return out
}

// bpeVocab sets a byte-level BPE vocabulary of n tokens: the 256 byte symbols, merges learned
// greedily from the corpus (its words, split as GPT-2's pre-tokenizer roughly would), then special
// tokens. pre is chosen from the architecture (qwen2 for the qwen family, llama-bpe otherwise).
func bpeVocab(md *gguf.Metadata, n int, arch string) error {
	specials := []string{"<|endoftext|>", "<|im_start|>", "<|im_end|>"}
	syms := byteSymbols()
	tokens := append([]string(nil), syms[:]...)
	seen := map[string]bool{}
	for _, t := range tokens {
		seen[t] = true
	}
	// words of the corpus as symbol sequences (a leading space joins the word, as Ġ)
	var words [][]string
	for i, w := range strings.Fields(corpus) {
		if i > 0 {
			w = " " + w
		}
		var seq []string
		for _, b := range []byte(w) {
			seq = append(seq, syms[b])
		}
		words = append(words, seq)
	}
	var merges []string
	for len(tokens)+len(specials) < n {
		counts := map[[2]string]int{}
		for _, w := range words {
			for i := 0; i+1 < len(w); i++ {
				counts[[2]string{w[i], w[i+1]}]++
			}
		}
		if len(counts) == 0 {
			break
		}
		pairs := make([][2]string, 0, len(counts))
		for p := range counts {
			pairs = append(pairs, p)
		}
		sort.Slice(pairs, func(i, j int) bool {
			if counts[pairs[i]] != counts[pairs[j]] {
				return counts[pairs[i]] > counts[pairs[j]]
			}
			return pairs[i][0]+" "+pairs[i][1] < pairs[j][0]+" "+pairs[j][1]
		})
		best := pairs[0]
		merged := best[0] + best[1]
		merges = append(merges, best[0]+" "+best[1])
		if !seen[merged] {
			seen[merged] = true
			tokens = append(tokens, merged)
		}
		for wi, w := range words {
			var out []string
			for i := 0; i < len(w); i++ {
				if i+1 < len(w) && w[i] == best[0] && w[i+1] == best[1] {
					out = append(out, merged)
					i++
				} else {
					out = append(out, w[i])
				}
			}
			words[wi] = out
		}
	}
	firstExtra := len(tokens)
	for i := 0; len(tokens)+len(specials) < n; i++ {
		tokens = append(tokens, fmt.Sprintf("<|extra_%d|>", i))
	}
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = tokNormal
		if i >= firstExtra {
			types[i] = tokUser
		}
	}
	eos := uint32(len(tokens))
	for _, s := range specials {
		tokens = append(tokens, s)
		types = append(types, tokControl)
	}
	pre := "llama-bpe"
	if strings.HasPrefix(arch, "qwen") {
		pre = "qwen2"
	}
	for _, kv := range []struct {
		k string
		v any
	}{
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", pre},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", merges},
		{"tokenizer.ggml.bos_token_id", eos},
		{"tokenizer.ggml.eos_token_id", eos},
		{"tokenizer.ggml.add_bos_token", false},
	} {
		if err := md.Set(kv.k, kv.v); err != nil {
			return err
		}
	}
	return nil
}
