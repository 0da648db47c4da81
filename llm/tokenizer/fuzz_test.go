package tokenizer

import (
	"testing"

	"github.com/tandem-ml/tandem/core/gguf"
)

// fuzzReader hands out values from fuzz bytes, zeros when they run out.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) str(max int) string {
	n := int(r.byte()) % (max + 1)
	if n > len(r.b) {
		n = len(r.b)
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}

var fuzzPieces = []string{"<s>", "</s>", "<unk>", "▁", "a", "b", "ab", "Ġ", "Ġa", "<0x41>", "<0xE4>", "<0x", "<|im_end|>", "<|endoftext|>", "<|eot_id|>", "<|end|>", "<|return|>", "<|call|>", "<|channel|>", "<tool>", "'s", "\n", "12", "你", "\xff"}

// fuzzMetadata builds tokenizer metadata from fuzz bytes: a choice of model and pre-tokenizer, a
// token list mixing known pieces and raw strings, token types, scores and merges of varying
// lengths and types, and special ids.
func fuzzMetadata(r *fuzzReader) *gguf.Metadata {
	md := &gguf.Metadata{}
	models := []string{ModelSPM, ModelBPE, "bert", ""}
	mustSet(md, keyModel, models[int(r.byte())%len(models)])
	pres := []string{"", "default", "llama-bpe", "qwen2", "gpt-2", "falcon", "starcoder", "deepseek-coder", "bloom"}
	if p := int(r.byte()) % (len(pres) + 1); p < len(pres) {
		mustSet(md, keyPre, pres[p])
	}
	n := int(r.byte()) % 40
	toks := make([]string, n)
	for i := range toks {
		if c := r.byte(); c < 160 {
			toks[i] = fuzzPieces[int(c)%len(fuzzPieces)]
		} else {
			toks[i] = r.str(6)
		}
	}
	if c := r.byte(); c != 7 {
		mustSet(md, keyTokens, toks)
	} else {
		mustSet(md, keyTokens, uint32(n))
	}
	if c := r.byte(); c%3 != 0 {
		types := make([]int32, max(0, n+int(c%5)-2))
		for i := range types {
			types[i] = int32(r.byte()%9) - 1
		}
		mustSet(md, keyTokenType, types)
	}
	switch c := r.byte(); c % 4 {
	case 1:
		s := make([]float32, max(0, n+int(c%3)-1))
		for i := range s {
			s[i] = float32(int8(r.byte()))
		}
		mustSet(md, keyScores, s)
	case 2:
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(int8(r.byte()))
		}
		mustSet(md, keyScores, s)
	case 3:
		mustSet(md, keyScores, "x")
	}
	if c := r.byte(); c%4 != 0 && n > 0 {
		var ms []string
		for range int(c % 12) {
			a, b := toks[int(r.byte())%n], toks[int(r.byte())%n]
			if r.byte()%8 == 0 {
				ms = append(ms, a+b)
			} else {
				ms = append(ms, a+" "+b)
			}
		}
		mustSet(md, keyMerges, ms)
	}
	for _, k := range []string{keyBOS, keyEOS, keyEOT, keyUNK, keyFIMPad} {
		if c := r.byte(); c%3 == 0 {
			mustSet(md, k, uint32(r.byte())%uint32(n+3))
		} else if c%3 == 1 && c > 200 {
			mustSet(md, k, int32(-1))
		}
	}
	for _, k := range []string{keyAddBOS, keyAddEOS, keyAddPrefix} {
		if c := r.byte(); c%3 != 0 {
			mustSet(md, k, c%3 == 1)
		}
	}
	if r.byte()%4 == 0 {
		mustSet(md, keyName, "phi-3")
	}
	return md
}

// FuzzFromGGUF loads vocabularies built from fuzz bytes and, where they load, tokenizes and
// detokenizes text from the same bytes: errors are fine, panics are not. Keep runs short
// (go test -fuzz FuzzFromGGUF -fuzztime 20s).
func FuzzFromGGUF(f *testing.F) {
	f.Add([]byte{0, 1, 10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 'a', 'b'})
	f.Add([]byte{1, 4, 12, 4, 5, 6, 7, 8, 22, 13, 14, 15, 0, 0, 0, 0, 5, 4, 5, 6, 7, 8, 9, 10, 11, 1, 0, 0, 3, 3})
	f.Add([]byte{1, 3, 30, 200, 3, 'a', ' ', 'b', 7, 8, 9, 10, 11, 12, 13, 14, 1, 2, 3, 9, 3, 5, 1, 2, 3, 4})
	f.Add([]byte("\x00\x02\x08abcdefghijklmnopqrstuvwxyz<s> hello\xff"))
	f.Fuzz(fuzzBody)
}

// fuzzBody is the fuzz target: errors are fine, panics and ids outside the vocabulary are not.
func fuzzBody(t *testing.T, data []byte) {
	r := &fuzzReader{data}
	v, err := FromGGUF(fuzzMetadata(r))
	if err != nil {
		return
	}
	text := string(r.b)
	for _, parse := range []bool{false, true} {
		ids, err := v.Encode(text, true, parse)
		if err != nil {
			continue
		}
		for _, id := range ids {
			if id < 0 || int(id) >= v.Len() {
				t.Fatalf("Encode(%q) gave id %d outside [0, %d)", text, id, v.Len())
			}
		}
		_ = v.Detokenize(ids)
		_ = v.DetokenizeWith(ids, true, true)
	}
	d := v.NewDecoder()
	for _, b := range data {
		id := int32(b) - 8
		_, _ = d.Add(id)
		_, _ = v.Piece(id, b&1 == 0)
		_ = v.IsEOG(id) || v.IsControl(id)
		_ = v.Text(id)
	}
	_ = d.Flush()
	_ = v.Detokenize([]int32{-1, 0, int32(v.Len()), 1 << 30})
}
